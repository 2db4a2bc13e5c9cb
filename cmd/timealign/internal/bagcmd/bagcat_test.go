package bagcmd

import (
	"encoding/csv"
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timealign/timealign/cmd/timealign/internal/clitest"
	"github.com/timealign/timealign/pkg/stamp"
)

// catRows runs bag cat and returns its rows (without the header).
func catRows(t *testing.T, args ...string) [][]string {
	t.Helper()
	out, errOut, code := runCmd(t, "", append([]string{"bag", "cat"}, args...)...)
	require.Equal(t, 0, code, errOut)
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	require.NoError(t, err)
	require.Equal(t, []string{"topic", "log_time_ns", "publish_time_ns", "header_stamp_ns"}, rows[0])
	return rows[1:]
}

// TestBagCat: bag cat prints every message's log time and header stamp,
// as reading the bag finds them, for the topics asked; --start and --end
// (relative or absolute) select a time range.
func TestBagCat(t *testing.T) {
	dir := t.TempDir()
	in, _ := simBag(t, dir, "--streams", "imu,lidar", "--duration", "3s")
	msgs, _ := clitest.ReadBag(t, in)
	start := msgs[0].Log
	for _, m := range msgs {
		start = min(start, m.Log)
	}
	rows := catRows(t, in, "--topics", "/scan")
	var want []clitest.BagMessage
	for _, m := range msgs {
		if m.Topic == "/scan" {
			want = append(want, m)
		}
	}
	require.Len(t, rows, len(want))
	for i, r := range rows {
		require.Equal(t, "/scan", r[0])
		require.Equal(t, strconv.FormatInt(int64(want[i].Log), 10), r[1])
		require.Equal(t, strconv.FormatInt(int64(want[i].Hdr), 10), r[3])
	}
	all := catRows(t, in)
	require.Len(t, all, len(msgs))

	from, to := start.Add(time.Second), start.Add(2*time.Second)
	inRange := func(l stamp.Time) bool { return l >= from && l <= to }
	n := 0
	for _, m := range msgs {
		if inRange(m.Log) {
			n++
		}
	}
	for _, args := range [][]string{
		{"--start", "1s", "--end", "2s"},
		{"--start", strconv.FormatInt(int64(from), 10), "--end", strconv.FormatInt(int64(to), 10)},
	} {
		rows := catRows(t, append([]string{in}, args...)...)
		require.Len(t, rows, n, "%v", args)
		for _, r := range rows {
			l, err := strconv.ParseInt(r[1], 10, 64)
			require.NoError(t, err)
			require.True(t, inRange(stamp.Time(l)), "%v: %d", args, l)
		}
	}

	// bag fix --start/--end: OUT holds the range only.
	out := filepath.Join(dir, "fixed")
	_, errOut, code := runCmd(t, "", "bag", "fix", "--quiet", in, out, "--apply", "/imu/data_raw=timestamp_estimator", "--start", "1s", "--end", "2s")
	require.Equal(t, 0, code, errOut)
	fixed, _ := clitest.ReadBag(t, out)
	require.Len(t, fixed, n)
	for _, m := range fixed {
		require.True(t, inRange(m.Log))
	}

	// bag report --start/--end: the counts of the range.
	js := filepath.Join(dir, "r.json")
	_, errOut, code = runCmd(t, "", "bag", "report", "--quiet", in, "--json-out", js, "--start", "1s", "--end", "2s")
	require.Equal(t, 0, code, errOut)
	var rep struct {
		Topics []struct {
			Name  string `json:"name"`
			Count uint64 `json:"count"`
		} `json:"topics"`
	}
	require.NoError(t, json.Unmarshal(clitest.ReadFile(t, js), &rep))
	total := uint64(0)
	for _, tp := range rep.Topics {
		total += tp.Count
	}
	require.Equal(t, uint64(n), total)

	// Bad ranges and topics: usage errors, nothing on standard output.
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--start", "5"}, `"5" is neither an absolute time in ns since the epoch nor a duration: give a unit`},
		{[]string{"--start", "2s", "--end", "1s"}, "--end (1s) is before --start (2s)"},
		{[]string{"--start", "-1s"}, "before the bag's start"},
		{[]string{"--topics", "/nope,/scan"}, "--topics: /nope not in the bag"},
	} {
		stdout, errOut, code := runCmd(t, "", append([]string{"bag", "cat", in}, tc.args...)...)
		require.Equal(t, 2, code, errOut)
		require.Empty(t, stdout)
		require.Contains(t, errOut, tc.want)
		require.Contains(t, errOut, "timealign bag cat: ")
	}
}
