package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/timealign/timealign/cmd/timealign/internal/cli"
)

// runCmd runs the CLI in-process and returns its output and exit status.
func runCmd(t testing.TB, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	code = cli.Run(&cli.Env{Ctx: context.Background(), Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb, Version: version}, commands(), args)
	return out.String(), errb.String(), code
}

func TestHelp(t *testing.T) {
	out, _, code := runCmd(t, "", "help")
	require.Equal(t, 0, code)
	for _, c := range commands() {
		require.Contains(t, out, c.Name)
		t.Run(c.Name, func(t *testing.T) {
			out, errOut, code := runCmd(t, "", c.Name, "-help")
			require.Equal(t, 0, code, errOut)
			require.Contains(t, out, "Usage: timealign "+c.Name)
			out2, _, _ := runCmd(t, "", "help", c.Name)
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
