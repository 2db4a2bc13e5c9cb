package mavcmd

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/foxglove/mcap/go/mcap"
	"github.com/stretchr/testify/require"

	"github.com/timealign/timealign/cmd/timealign/internal/clitest"
	"github.com/timealign/timealign/pkg/bag"
	"github.com/timealign/timealign/pkg/mav/mavsim"
)

// TestMavSchemaUnits: the merged MCAP's JSON schema describes the values
// it holds: a column the JSON holds scaled (ATT's centidegrees, written as
// degrees) has its unit and no multiplier; one written raw (TimeUS) keeps
// its multiplier. bag info says plainly that such topics carry no Header.
func TestMavSchemaUnits(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "m.mcap")
	_, errOut, code := runCmd(t, "", "mav", "merge", "--quiet", "--out", out,
		filepath.Join("..", "..", "..", "..", "testdata", "mav", "dive.tlog"), filepath.Join("..", "..", "..", "..", "testdata", "mav", "dive.BIN"))
	require.Equal(t, 0, code, errOut)
	b, err := bag.Open(out)
	require.NoError(t, err)
	s, err := b.Summarize()
	require.NoError(t, err)
	var att *bag.Topic
	for _, ts := range s.Topics {
		if ts.Topic.Name == "/bin/ATT" {
			att = ts.Topic
		}
	}
	require.NotNil(t, att)
	var sc struct {
		Properties map[string]struct {
			Description string `json:"description"`
		} `json:"properties"`
	}
	require.NoError(t, json.Unmarshal(att.Schema.Data, &sc))
	require.Equal(t, "unit: deg", sc.Properties["Roll"].Description)
	require.Equal(t, "unit: s, multiplier: 1e-06", sc.Properties["TimeUS"].Description)

	info, errOut, code := runCmd(t, "", "bag", "info", out)
	require.Equal(t, 0, code, errOut)
	line := clitest.LineWith(t, info, "                   Topic: /bin/ATT |")
	require.Contains(t, line, "| Rate: 10 Hz |")
	require.True(t, strings.HasSuffix(line, "| Header stamp: no Header (JSON schema)"), line)
	require.NotContains(t, info, "does not parse")
	require.Contains(t, info, "Rate:              per topic, over its own first to last log time")
}

// TestMavMergeLocationFix: GPS positions are also written as
// foxglove.LocationFix (Foxglove's map), one message per GPS record with a
// fix, at the record's merged log time, in degrees and meters.
func TestMavMergeLocationFix(t *testing.T) {
	dir := t.TempDir()
	tlog, bins, _ := mavFiles(t, dir, mavsim.Scenario{Seed: 5, Duration: time.Minute, GPS: true})
	out := filepath.Join(dir, "m.mcap")
	_, errOut, code := runCmd(t, "", "mav", "merge", "--quiet", tlog, bins[0], "--out", out)
	require.Equal(t, 0, code, errOut)
	msgs := map[string][]mcapMsg{}
	for _, m := range readMCAP(t, out) {
		msgs[m.topic] = append(msgs[m.topic], m)
	}
	gps, fixes := msgs["/bin/GPS"], msgs["/bin/GPS[0]/fix"]
	require.NotEmpty(t, gps)
	require.Len(t, fixes, len(gps))
	for i, f := range fixes {
		require.Equal(t, "foxglove.LocationFix", f.schema)
		require.Equal(t, gps[i].logTime, f.logTime)
		var v struct {
			Timestamp                     struct{ Sec, Nsec int64 }
			Latitude, Longitude, Altitude float64
			PositionCovariance            []float64 `json:"position_covariance"`
		}
		require.NoError(t, json.Unmarshal(f.data, &v), "%s", f.data)
		require.Equal(t, int64(f.logTime), v.Timestamp.Sec*1e9+v.Timestamp.Nsec)
		require.InDelta(t, 47.3977419, v.Latitude, 1e-7)
		require.InDelta(t, 8.5455938, v.Longitude, 1e-7)
		require.InDelta(t, 12.0, v.Altitude, 1e-6)
		require.Len(t, v.PositionCovariance, 9)
	}
	// CSV has no LocationFix rows.
	csvOut := filepath.Join(dir, "m.csv")
	_, errOut, code = runCmd(t, "", "mav", "merge", "--quiet", tlog, bins[0], "--out", csvOut)
	require.Equal(t, 0, code, errOut)
	require.NotContains(t, string(clitest.ReadFile(t, csvOut)), "/fix,")
}

// TestMavMergeTypes: --types writes only the types named (BIN or MAVLink
// names); a name that matches nothing is a usage error and writes nothing.
func TestMavMergeTypes(t *testing.T) {
	dir := t.TempDir()
	tlog, bin := filepath.Join("..", "..", "..", "..", "testdata", "mav", "dive.tlog"), filepath.Join("..", "..", "..", "..", "testdata", "mav", "dive.BIN")
	out := filepath.Join(dir, "m.csv")
	_, errOut, code := runCmd(t, "", "mav", "merge", tlog, bin, "--out", out, "--types", "ATT,ATTITUDE")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, errOut, "of other types than --types left out")
	topics := map[string]int{}
	for _, l := range strings.Split(strings.TrimSpace(string(clitest.ReadFile(t, out))), "\n")[1:] {
		topics[strings.Split(l, ",")[2]]++
	}
	require.Equal(t, map[string]int{"/bin/ATT": 1201, "/tlog/1/1/ATTITUDE": 1183}, topics)

	bad := filepath.Join(dir, "bad.csv")
	_, errOut, code = runCmd(t, "", "mav", "merge", tlog, bin, "--out", bad, "--types", "ATT,GSP")
	require.Equal(t, 2, code, errOut)
	require.Contains(t, errOut, "timealign mav merge: --types: no message of type GSP in the logs (they hold ATT, ATTITUDE,")
	require.NoFileExists(t, bad)
}

// mcapMsg is a message of an MCAP file with its channel's topic and schema.
type mcapMsg struct {
	topic, schema string
	logTime       uint64
	data          []byte
}

// readMCAP reads every message of an MCAP file in file order.
func readMCAP(t *testing.T, path string) []mcapMsg {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	r, err := mcap.NewReader(f)
	require.NoError(t, err)
	it, err := r.Messages(mcap.UsingIndex(false))
	require.NoError(t, err)
	var out []mcapMsg
	for {
		s, ch, msg, err := it.NextInto(nil)
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		out = append(out, mcapMsg{topic: ch.Topic, schema: s.Name, logTime: msg.LogTime, data: append([]byte(nil), msg.Data...)})
	}
	return out
}
