package stream

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/timealign/timealign/internal/testutil/benchdata"
)

func TestPLLUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"pll", "--mode", "kalman"}, "--mode: kalman is not a mode"},
		{[]string{"pll", "--fifo-size", "0"}, "--fifo-size is 0, want 2..65536"},
		{[]string{"pll", "--max-deviation", "-1ms"}, "--max-deviation is -1ms"},
		{[]string{"pll", "--tick-bits", "65"}, "--tick-bits is 65"},
		{[]string{"pll", "--tick-period", "0s"}, "--tick-period is 0s"},
		{[]string{"pll", "--mode", "sick", "--window-samples", "9"}, "--window-samples is not used by --mode sick (it applies to --mode regression, envelope, offset)"},
		{[]string{"pll", "--track-skew"}, "--track-skew is not used by --mode envelope"},
		{[]string{"pll", "--max-early", "20ms", "--max-deviation", "5ms"}, "--max-early (20ms) is larger than --max-deviation (5ms)"},
		{[]string{"pll", "--max-invalid", "x"}, `invalid value "x"`},
		{[]string{"pll", "a.csv", "b.csv"}, "at most one input file"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			_, errOut, code := runCmd(t, "", tc.args...)
			require.Equal(t, 2, code)
			require.Contains(t, errOut, tc.want)
		})
	}
}

func TestPLLDataErrors(t *testing.T) {
	for _, tc := range []struct {
		in, want string
	}{
		{"receive_ns,tick\n", `stdin:1:2: unexpected header`},
		{"receive_ns,ticks\n1,2\n3,x\n", `stdin:3:2 (column "ticks")`},
		{"receive_ns,ticks\n1.5,2\n", `stdin:2:1 (column "receive_ns")`},
		{"receive_ns,ticks\n1,4294967296\n", `stdin:2:2 (column "ticks"): bad value: tick 4294967296 does not fit in --tick-bits 32`},
		{"receive_ns,ticks,scan_ticks\n1,2,-3\n", `stdin:2:3 (column "scan_ticks")`},
		{"receive_ns,ticks\n1,2,3\n", `stdin:2: wrong number of columns`},
		{"", `stdin: empty input`},
	} {
		t.Run(tc.want, func(t *testing.T) {
			_, errOut, code := runCmd(t, tc.in, "pll")
			require.Equal(t, 1, code)
			require.Contains(t, errOut, tc.want)
		})
	}
	_, errOut, code := runCmd(t, "", "pll", filepath.Join(t.TempDir(), "missing.csv"))
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "missing.csv")
}

func TestPLLFormat(t *testing.T) {
	var b strings.Builder
	b.WriteString("receive_ns,ticks,scan_ticks\n")
	r, tk := int64(1_700_000_000_000_000_000), uint64(4_294_000_000)
	for i := range 12 {
		r += 40_000_000 + int64(i%3)*100_000
		tk = (tk + 40_000) & 0xffffffff
		b.WriteString(strings.Join([]string{itoa(r), utoa(tk), utoa((tk - 5000) & 0xffffffff)}, ",") + "\n")
	}
	for _, mode := range []string{"sick", "regression", "envelope", "offset"} {
		t.Run(mode, func(t *testing.T) {
			dir := t.TempDir()
			out := filepath.Join(dir, "out.csv")
			st := filepath.Join(dir, "status.json")
			stdout, errOut, code := runCmd(t, b.String(), "pll", "--mode", mode, "--out", out, "--status", st)
			require.Equal(t, 0, code, errOut)
			require.Empty(t, stdout)
			data, err := os.ReadFile(out)
			require.NoError(t, err)
			lines := strings.Split(strings.TrimSpace(string(data)), "\n")
			require.Equal(t, "receive_ns,ticks,valid,estimate_ns", lines[0])
			require.Len(t, lines, 13)
			require.True(t, strings.HasSuffix(lines[1], ",false,"), lines[1])
			last := strings.Split(lines[12], ",")
			require.Equal(t, "true", last[2], lines[12])
			var status map[string]any
			js, err := os.ReadFile(st)
			require.NoError(t, err)
			require.NoError(t, json.Unmarshal(js, &status))
			require.Equal(t, mode, status["mode"])
			require.Equal(t, true, status["valid"])
			require.EqualValues(t, 12, status["updates"])
		})
	}
}

// TestPLLSickBench runs the CLI on the reference scenarios
// (testdata/reference/pll at the module root) and compares with SICK.
func TestPLLSickBench(t *testing.T) {
	dir := benchdata.Dir(t, "pll")
	names, err := filepath.Glob(filepath.Join(dir, "*.sick.csv"))
	require.NoError(t, err)
	require.NotEmpty(t, names, "no *.sick.csv in %s", dir)
	for _, ref := range names {
		in := strings.TrimSuffix(ref, ".sick.csv") + ".csv"
		out, errOut, code := runCmd(t, "", "pll", "--mode", "sick", "--fifo-size", "7", "--max-deviation", "100ms", "--tick-bits", "32", in)
		require.Equal(t, 0, code, errOut)
		want, err := os.ReadFile(ref)
		require.NoError(t, err)
		got := strings.Split(strings.TrimSpace(out), "\n")
		exp := strings.Split(strings.TrimSpace(string(want)), "\n")
		require.Equal(t, len(exp), len(got), "%s: one row per row of %s", ref, in)
		for i := 1; i < len(got); i++ {
			g := strings.Split(got[i], ",")
			e := strings.Split(exp[i], ",")
			require.Len(t, e, 2, "%s:%d: not valid,estimate_ns", ref, i+1)
			require.Equal(t, e[0], g[2], "%s:%d", ref, i+1)
			if e[0] == "true" {
				sick, err := strconv.ParseInt(e[1], 10, 64)
				require.NoError(t, err, "%s:%d", ref, i+1)
				d := atoi(t, g[3]) - sick
				require.LessOrEqual(t, max(d, -d), int64(1000), "%s:%d", ref, i+1)
			}
		}
	}
}

func itoa(v int64) string  { return strconv.FormatInt(v, 10) }
func utoa(v uint64) string { return strconv.FormatUint(v, 10) }
func atoi(t *testing.T, s string) int64 {
	v, err := strconv.ParseInt(s, 10, 64)
	require.NoError(t, err)
	return v
}
