package stream

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/timealign/timealign/internal/testutil/benchdata"
)

// TestAlignVectors runs Rock's StreamAligner unit tests
// (testdata/reference/align at the module root, played by the original) through the CLI, with --drops, and requires the
// original's playback order.
func TestAlignVectors(t *testing.T) {
	dir := benchdata.Dir(t, "align")
	argsFiles, err := filepath.Glob(filepath.Join(dir, "*.args"))
	require.NoError(t, err)
	require.NotEmpty(t, argsFiles, "no *.args in %s", dir)
	for _, af := range argsFiles {
		name := strings.TrimSuffix(filepath.Base(af), ".args")
		t.Run(name, func(t *testing.T) {
			args, err := os.ReadFile(af)
			require.NoError(t, err)
			inFile, wantFile := filepath.Join(dir, name+".csv"), filepath.Join(dir, name+".played.csv")
			in, err := os.ReadFile(inFile)
			require.NoError(t, err)
			want, err := os.ReadFile(wantFile)
			require.NoError(t, err)
			if name == "upstream_remove_stream" && !strings.Contains(string(in), "remove") {
				// Rock's remove_stream test unregisters stream 1 after the
				// pushes, before the first step; the data file lacks that
				// event (the CLI format had no remove), so add it.
				in = []byte(strings.Replace(string(in), "\nstep,,", "\nremove,1,\nstep,,", 1))
			}
			drops := filepath.Join(t.TempDir(), "drops.csv")
			argv := append([]string{"align", "--drops", drops}, strings.Fields(string(args))...)
			out, errOut, code := runCmd(t, string(in), argv...)
			require.Equal(t, 0, code, "%s with %s: %s", inFile, af, errOut)
			require.Equal(t, string(want), out, "output of %s differs from %s", inFile, wantFile)
			d, err := os.ReadFile(drops)
			require.NoError(t, err)
			require.True(t, strings.HasPrefix(string(d), "stream,stamp_ns,reason\n"))
		})
	}
}

func TestAlignCLI(t *testing.T) {
	in := "event,stream,stamp_ns\n" +
		"push,0,1000\npush,0,3000\npush,1,2000\npush,0,2500\n" + // 2500 goes back on stream 0
		"push,0,4000\n" + // buffer of 2 full: 1000 is pushed out
		"step,,\ndrain,,\n" +
		"push,1,1500\n" + // older than the last played: late
		"disable,1,\npush,0,9000\n" + // full again: 3000 is pushed out
		"drain,,\n" +
		"timeout,,0\nclear,,\npush,1,7\nremove,1,\npush,1,8\ndrain,,\n"
	dir := t.TempDir()
	outPath, drops, status := filepath.Join(dir, "out.csv"), filepath.Join(dir, "drops.csv"), filepath.Join(dir, "st.json")
	_, errOut, code := runCmd(t, in, "align", "--timeout", "10us", "--periods", "1us,500ns",
		"--buffer-sizes", "2,0", "--priorities", "-1,1", "--out", outPath, "--drops", drops, "--status", status)
	require.Equal(t, 0, code, errOut)
	out, err := os.ReadFile(outPath)
	require.NoError(t, err)
	// stream 1 (period 500 ns) is due at 2500: 3000 and 4000 wait for it
	// until it is disabled; after the clear stream 1's 7 is removed.
	require.Equal(t, "stream,stamp_ns\n1,2000\n0,4000\n0,9000\n", string(out))
	d, err := os.ReadFile(drops)
	require.NoError(t, err)
	require.Equal(t, "stream,stamp_ns,reason\n0,2500,backward\n0,1000,full\n1,1500,late\n0,3000,full\n1,8,bad_stream\n", string(d))
	st, err := os.ReadFile(status)
	require.NoError(t, err)
	require.Contains(t, string(st), `"removed": true`)
}

func TestAlignEndOfInput(t *testing.T) {
	// Nothing is played without step or drain, as in Rock.
	out, _, code := runCmd(t, "event,stream,stamp_ns\npush,0,1\npush,0,2\n", "align", "--periods", "0s", "--buffer-sizes", "0")
	require.Equal(t, 0, code)
	require.Equal(t, "stream,stamp_ns\n", out)
}

func TestAlignErrors(t *testing.T) {
	for _, c := range []struct {
		in   string
		args []string
		code int
		msg  string
	}{
		{"", []string{"--periods", "1s", "--priorities", "1,2"}, 2, "--priorities has 2 values"},
		{"", []string{"--periods", "1s,-1s", "--buffer-sizes", "1,2"}, 2, "value 2 of --periods is -1s, want ≥ 0"},
		{"", []string{"--periods", "1s", "--timeout", "-1s"}, 2, "timealign align: --timeout is -1s, want ≥ 0\n"},
		{"", []string{"--periods", "1s", "a.csv", "b.csv"}, 2, "at most one input"},
		{"event,stream\n", []string{"--periods", "1s"}, 1, "stamp_ns"},
		{"event,stream,stamp_ns\npush,x,1\n", []string{"--periods", "1s"}, 1, ":2:"},
		{"event,stream,stamp_ns\npush,0,1.5\n", []string{"--periods", "1s"}, 1, ":2:"},
		{"event,stream,stamp_ns\nremove,0,\nremove,0,\n", []string{"--periods", "1s"}, 1, "no such stream: 0"},
	} {
		_, errOut, code := runCmd(t, c.in, append([]string{"align"}, c.args...)...)
		require.Equal(t, c.code, code, errOut)
		require.Contains(t, errOut, c.msg)
	}
}
