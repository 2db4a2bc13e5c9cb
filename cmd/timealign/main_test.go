package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

// runCmd runs the CLI in-process and returns its output and exit status.
func runCmd(t testing.TB, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(&env{ctx: context.Background(), stdin: strings.NewReader(stdin), stdout: &out, stderr: &errb}, args)
	return out.String(), errb.String(), code
}

func TestHelp(t *testing.T) {
	out, _, code := runCmd(t, "", "help")
	require.Equal(t, 0, code)
	for _, c := range commands() {
		require.Contains(t, out, c.name)
		t.Run(c.name, func(t *testing.T) {
			out, errOut, code := runCmd(t, "", c.name, "-help")
			require.Equal(t, 0, code, errOut)
			require.Contains(t, out, "Usage: timealign "+c.name)
			out2, _, _ := runCmd(t, "", "help", c.name)
			require.Equal(t, out, out2)
		})
	}
}

func TestUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "Usage:"},
		{[]string{"frobnicate"}, `unknown command "frobnicate"`},
		{[]string{"simulate", "--count", "abc"}, `invalid value "abc" for flag --count`},
		{[]string{"simulate", "--nope"}, "flag provided but not defined: --nope"},
		{[]string{"simulate", "--format", "xml"}, `--format is "xml"`},
		{[]string{"simulate", "--preset", "radar"}, `unknown preset "radar"`},
		{[]string{"simulate", "--period", "fast"}, `invalid value "fast" for flag --period`},
		{[]string{"simulate", "--host-step", "10s"}, "is not AT:BY"},
		{[]string{"simulate", "--count", "0"}, "--count is 0 and so is --duration"},
		{[]string{"simulate", "--count", "5", "--duration", "1s"}, "give --count or --duration, not both"},
		{[]string{"simulate", "--loss", "1.5"}, "--loss is 1.5, want 0..1"},
		{[]string{"simulate", "--period", "-1s"}, "--period is -1s, want > 0"},
		{[]string{"simulate", "--format", "pll", "--index"}, "--index is not used by --format pll (it applies to --format estimate)"},
		{[]string{"simulate", "extra.csv"}, "takes no input file"},
		{[]string{"demo", "x"}, "takes no arguments"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			_, errOut, code := runCmd(t, "", tc.args...)
			require.Equal(t, 2, code)
			require.Contains(t, errOut, tc.want)
			require.NotContains(t, errOut, "goroutine", "no stack traces")
		})
	}
}

func TestSimulateFormats(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args   []string
		header string
		rows   int // data rows of the output
		truth  string
	}{
		{[]string{"--count", "50"}, "event,stamp_ns,index", 50, "truth_ns"},
		{[]string{"--count", "50", "--loss", "0.2", "--announce-loss", "--index", "--reference-every", "10"}, "event,stamp_ns,index", -1, "truth_ns"},
		{[]string{"--format", "pll", "--preset", "lidar", "--count", "30"}, "receive_ns,ticks", 30, "truth_ns"},
		{[]string{"--format", "pll", "--preset", "lidar", "--count", "30", "--send-delay", "1ms"}, "receive_ns,ticks,scan_ticks", 30, "truth_ns"},
		{[]string{"--format", "sync", "--count", "20"}, "topic,stamp_ns", -1, "topic,seq,true_ns,receive_ns"},
		{[]string{"--format", "align", "--streams", "imu,lidar", "--count", "10"}, "event,stream,stamp_ns", 40, "topic,seq,true_ns,receive_ns"},
		{[]string{"--format", "samples", "--count", "7"}, "seq,index,true_ns", 7, ""},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			truth := filepath.Join(dir, "truth.csv")
			args := append([]string{"simulate", "--truth", truth}, tc.args...)
			out, errOut, code := runCmd(t, "", args...)
			require.Equal(t, 0, code, errOut)
			lines := strings.Split(strings.TrimSpace(out), "\n")
			require.True(t, strings.HasPrefix(lines[0], tc.header), lines[0])
			if tc.rows >= 0 {
				require.Len(t, lines, tc.rows+1)
			}
			if tc.truth != "" {
				tr, err := os.ReadFile(truth)
				require.NoError(t, err)
				require.True(t, strings.HasPrefix(string(tr), tc.truth+"\n"))
			}
			again, _, _ := runCmd(t, "", args...)
			require.Equal(t, out, again, "same seed, same output")
		})
	}
}

func TestSimulateAnnouncesLoss(t *testing.T) {
	out, _, code := runCmd(t, "", "simulate", "--count", "1000", "--loss", "0.1", "--announce-loss")
	require.Equal(t, 0, code)
	losses := strings.Count(out, "\nloss,")
	samples := strings.Count(out, "\nsample,")
	// Losses after the last delivered sample cannot be announced.
	require.LessOrEqual(t, losses+samples, 1000)
	require.Greater(t, losses+samples, 980)
	require.InDelta(t, 100, losses, 40)
}

func TestDemo(t *testing.T) {
	out, errOut, code := runCmd(t, "", "demo")
	require.Equal(t, 0, code, errOut)
	for _, s := range demoSections() {
		require.Contains(t, out, s.title)
	}
	require.Contains(t, out, "imu")
	for i, line := range strings.Split(out, "\n") {
		require.LessOrEqual(t, utf8.RuneCountInString(line), 100, "line %d is wider than 100 columns: %q", i+1, line)
	}
	require.NotContains(t, out, "worst", "one name per metric: spread")
}

func TestVersion(t *testing.T) {
	out, _, code := runCmd(t, "", "version")
	require.Equal(t, 0, code)
	require.True(t, strings.HasPrefix(out, "timealign "))
}

// TestFlagsAfterInput: flags may follow the input file, as in most tools;
// after "--" everything is an argument.
func TestFlagsAfterInput(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.csv")
	require.NoError(t, os.WriteFile(in, []byte("receive_ns,ticks\n1000,1\n"), 0o644))
	out := filepath.Join(dir, "out.csv")
	_, errOut, code := runCmd(t, "", "pll", in, "--out", out, "--mode", "sick")
	require.Equal(t, 0, code, errOut)
	b, err := os.ReadFile(out)
	require.NoError(t, err)
	require.Equal(t, "receive_ns,ticks,valid,estimate_ns\n1000,1,false,\n", string(b))
	_, errOut, code = runCmd(t, "", "pll", in, "--", "--out")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, `want at most one input file, got 2 arguments: ["`+in+`" "--out"]`)
	_, errOut, code = runCmd(t, "", "pll", in, "--bogus")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "flag provided but not defined: --bogus")
}

// TestPara: demo prose wraps at demoWidth and never between a number and
// its unit.
func TestPara(t *testing.T) {
	var b strings.Builder
	text := strings.Repeat("the estimate is off by 12.5 ms after 3 s at 100 Hz; ", 20)
	para(&b, text)
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	require.Greater(t, len(lines), 5)
	for _, l := range lines {
		require.LessOrEqual(t, utf8.RuneCountInString(l), demoWidth, l)
		for _, u := range []string{"ms", "s", "Hz"} {
			require.False(t, strings.HasPrefix(l, u+" ") || strings.HasPrefix(l, u+";"), "a unit starts the line: %q", l)
		}
	}
	require.Equal(t, strings.Join(strings.Fields(text), " "), strings.Join(lines, " "), "every word, in order")
}
