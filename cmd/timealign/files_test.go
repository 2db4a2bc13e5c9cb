package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timealign/timealign/cmd/timealign/internal/cli"
	"github.com/timealign/timealign/cmd/timealign/internal/clitest"
)

// TestMain lets the tests run the real command as a child process (the
// test binary re-executed with TIMEALIGN_TEST_MAIN=1), for what only a
// process shows: signals and exit statuses.
func TestMain(m *testing.M) {
	if os.Getenv("TIMEALIGN_TEST_MAIN") == "1" {
		main()
		return
	}
	os.Exit(m.Run())
}

// child returns the command for timealign args, run as a process.
func child(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), "TIMEALIGN_TEST_MAIN=1")
	return cmd
}

const pllIn = "receive_ns,ticks\n1000000000,1\n1040000000,40001\n1080000000,80001\n"

// outputCases feed the tests of output safety: a command line whose
// outputs are written to files, with its input.
var outputCases = []struct {
	name  string
	in    string
	args  []string
	flags []string // its output flags
}{
	{"estimate", "event,stamp_ns,index\nsample,1000,\nsample,2000,\n", []string{"estimate"}, []string{"--out", "--status"}},
	{"pll", pllIn, []string{"pll"}, []string{"--out", "--status"}},
	{"sync", "topic,stamp_ns\n0,5\n1,5\n", []string{"sync"}, []string{"--out", "--drops", "--status"}},
	{"align", "event,stream,stamp_ns\npush,0,5\ndrain,,\n", []string{"align", "--periods", "1ms"}, []string{"--out", "--drops", "--status"}},
}

// TestOutputIsInput: no output may name the input, however it is spelled
// (another path, a symlink, standard input redirected from it); the input
// is left as it was.
func TestOutputIsInput(t *testing.T) {
	for _, tc := range outputCases {
		for _, flag := range tc.flags {
			t.Run(tc.name+flag, func(t *testing.T) {
				dir := t.TempDir()
				in := filepath.Join(dir, "in.csv")
				require.NoError(t, os.WriteFile(in, []byte(tc.in), 0o644))
				link := filepath.Join(dir, "link.csv")
				require.NoError(t, os.Symlink(in, link))
				for _, spell := range []string{in, link, filepath.Join(dir, ".", "sub", "..", "in.csv")} {
					require.NoError(t, os.MkdirAll(filepath.Join(dir, "sub"), 0o755))
					args := append(append([]string{}, tc.args...), flag, spell, in)
					_, errOut, code := runCmd(t, "", args...)
					require.Equal(t, 2, code, errOut)
					require.Contains(t, errOut, "is the input file")
					b, err := os.ReadFile(in)
					require.NoError(t, err)
					require.Equal(t, tc.in, string(b))
				}
				// Standard input redirected from the file (cmd < in.csv --out in.csv).
				f, err := os.Open(in)
				require.NoError(t, err)
				defer f.Close()
				fi, err := f.Stat()
				require.NoError(t, err)
				var out, errb bytes.Buffer
				e := &cli.Env{Ctx: context.Background(), Stdin: f, Stdout: &out, Stderr: &errb, StdinStat: func() os.FileInfo { return fi }}
				code := cli.Run(e, commands(), append(append([]string{}, tc.args...), flag, in))
				require.Equal(t, 2, code, errb.String())
				require.Contains(t, errb.String(), "is the input file stdin")
			})
		}
	}
}

// TestOutputsCollide: two outputs naming one file, or two on standard
// output, are refused before anything is written.
func TestOutputsCollide(t *testing.T) {
	for _, tc := range outputCases {
		if len(tc.flags) < 2 {
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			out := filepath.Join(dir, "out.csv")
			link := filepath.Join(dir, "link.csv")
			require.NoError(t, os.Symlink(out, link)) // dangling: out.csv does not exist yet
			for _, second := range []string{out, link, "-"} {
				first := out
				if second == "-" {
					first = "-"
				}
				args := append(append([]string{}, tc.args...), tc.flags[0], first, tc.flags[1], second)
				_, errOut, code := runCmd(t, tc.in, args...)
				require.Equal(t, 2, code, errOut)
				require.Regexp(t, "name the same file|both write to standard output", errOut)
			}
			require.Equal(t, []string{"link.csv"}, clitest.DirFiles(t, dir))
		})
	}
}

// TestFailedRunKeepsOldOutput: bad data half-way leaves no partial output
// and no temporary file; an existing output keeps its old content.
func TestFailedRunKeepsOldOutput(t *testing.T) {
	for _, tc := range outputCases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			bad := tc.in + strings.Repeat(strings.SplitN(tc.in, "\n", 3)[1]+"\n", 5000) + "x,y,z\n"
			args := append([]string{}, tc.args...)
			for i, flag := range tc.flags {
				p := filepath.Join(dir, flag[2:]+".out")
				if i == 0 {
					require.NoError(t, os.WriteFile(p, []byte("old\n"), 0o600))
				}
				args = append(args, flag, p)
			}
			_, errOut, code := runCmd(t, bad, args...)
			require.Equal(t, 1, code, errOut)
			require.Len(t, clitest.DirFiles(t, dir), 1, "only the old output")
			b, err := os.ReadFile(filepath.Join(dir, tc.flags[0][2:]+".out"))
			require.NoError(t, err)
			require.Equal(t, "old\n", string(b))

			// The same run on good data replaces it, keeping its mode.
			_, errOut, code = runCmd(t, tc.in, args...)
			require.Equal(t, 0, code, errOut)
			require.Len(t, clitest.DirFiles(t, dir), len(tc.flags))
			fi, err := os.Stat(filepath.Join(dir, tc.flags[0][2:]+".out"))
			require.NoError(t, err)
			require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
		})
	}
}

// TestOutputThroughSymlinkAndFIFO: an output that is a symlink stays one
// (its target is replaced); one that is a FIFO is written in place, never
// replaced by a regular file.
func TestOutputThroughSymlinkAndFIFO(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target.csv")
	require.NoError(t, os.WriteFile(target, []byte("old\n"), 0o644))
	link := filepath.Join(dir, "link.csv")
	require.NoError(t, os.Symlink(target, link))
	_, errOut, code := runCmd(t, pllIn, "pll", "--out", link)
	require.Equal(t, 0, code, errOut)
	fi, err := os.Lstat(link)
	require.NoError(t, err)
	require.NotZero(t, fi.Mode()&os.ModeSymlink, "still a symlink")
	b, err := os.ReadFile(target)
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(string(b), "receive_ns,ticks,valid,estimate_ns\n"))

	fifo := filepath.Join(dir, "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	got := make(chan string, 1)
	go func() {
		f, err := os.Open(fifo)
		if err != nil {
			got <- err.Error()
			return
		}
		defer f.Close()
		b, _ := io.ReadAll(f)
		got <- string(b)
	}()
	_, errOut, code = runCmd(t, pllIn, "pll", "--out", fifo)
	require.Equal(t, 0, code, errOut)
	select {
	case s := <-got:
		require.True(t, strings.HasPrefix(s, "receive_ns,ticks,valid,estimate_ns\n"), s)
	case <-time.After(10 * time.Second):
		t.Fatal("nothing read from the FIFO")
	}
	fi, err = os.Lstat(fifo)
	require.NoError(t, err)
	require.NotZero(t, fi.Mode()&os.ModeNamedPipe, "still a FIFO")
}

// cancelOnRead cancels a context at its first read, as a signal arriving
// while a command reads.
type cancelOnRead struct {
	cancel context.CancelFunc
	data   io.Reader
}

func (c *cancelOnRead) Read(p []byte) (int, error) {
	c.cancel()
	return c.data.Read(p)
}

// TestInterruptedInProcess: a command whose context ends (the signal
// handler's cancel) returns exit 130 and leaves no output.
func TestInterruptedInProcess(t *testing.T) {
	for _, tc := range outputCases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			ctx, cancel := context.WithCancel(context.Background())
			args := append([]string{}, tc.args...)
			for _, flag := range tc.flags {
				args = append(args, flag, filepath.Join(dir, flag[2:]+".out"))
			}
			var out, errb bytes.Buffer
			code := cli.Run(&cli.Env{Ctx: ctx, Stdin: &cancelOnRead{cancel, strings.NewReader(tc.in)}, Stdout: &out, Stderr: &errb}, commands(), args)
			require.Equal(t, 130, code, errb.String())
			require.Contains(t, errb.String(), "interrupted")
			require.Empty(t, clitest.DirFiles(t, dir))
		})
	}
}

// TestSignals: SIGINT or SIGTERM stop a command at once, whatever it is
// doing (here: waiting for more input on a pipe, or writing a long
// simulation), with exit status 130 and no output file or temporary left.
func TestSignals(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		for _, tc := range []struct {
			name  string
			args  []string
			input string // written to standard input, which stays open
		}{
			{"sync waiting for input", []string{"sync", "--num-topics", "2", "--out"}, "topic,stamp_ns\n0,1\n"},
			{"pll waiting for input", []string{"pll", "--status", "st.json", "--out"}, "receive_ns,ticks\n"},
			{"simulate writing", []string{"simulate", "--duration", "10000h", "--truth", "truth.csv", "--out"}, ""},
		} {
			t.Run(sig.String()+"/"+tc.name, func(t *testing.T) {
				dir := t.TempDir()
				cmd := child(t, append(tc.args, "out.csv")...)
				cmd.Dir = dir
				var stderr bytes.Buffer
				cmd.Stderr = &stderr
				var stdin io.WriteCloser
				if tc.input != "" {
					var err error
					stdin, err = cmd.StdinPipe()
					require.NoError(t, err)
				}
				require.NoError(t, cmd.Start())
				if tc.input != "" {
					_, err := io.WriteString(stdin, tc.input)
					require.NoError(t, err)
					defer stdin.Close()
				}
				// Let it start working (open its outputs, read or write).
				deadline := time.Now().Add(10 * time.Second)
				for len(clitest.DirFiles(t, dir)) == 0 && time.Now().Before(deadline) {
					time.Sleep(5 * time.Millisecond)
				}
				require.NotEmpty(t, clitest.DirFiles(t, dir), "the command created its temporary outputs")
				require.NoError(t, cmd.Process.Signal(sig))
				done := make(chan error, 1)
				go func() { done <- cmd.Wait() }()
				select {
				case err := <-done:
					var ee *exec.ExitError
					require.True(t, errors.As(err, &ee), "exit status: %v", err)
					require.Equal(t, 130, ee.ExitCode(), stderr.String())
				case <-time.After(10 * time.Second):
					cmd.Process.Kill()
					t.Fatal("the command did not stop")
				}
				require.Contains(t, stderr.String(), "interrupted")
				require.Empty(t, clitest.DirFiles(t, dir), "no output, no temporary")
			})
		}
	}
}

// TestWriteErrorExit1: a full disk on standard output is exit status 1.
func TestWriteErrorExit1(t *testing.T) {
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skip("no /dev/full here")
	}
	defer full.Close()
	for _, args := range [][]string{{"demo"}, {"simulate", "--count", "10"}, {"version"}} {
		cmd := child(t, args...)
		cmd.Stdout = full
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		var ee *exec.ExitError
		require.True(t, errors.As(err, &ee), "%v: %v", args, err)
		require.Equal(t, 1, ee.ExitCode(), stderr.String())
		require.Contains(t, stderr.String(), "no space left on device")
	}
}

// TestTerminalInput: a command reading standard input from a terminal says
// so (a user who forgot the file name is not left waiting in silence).
func TestTerminalInput(t *testing.T) {
	var out, errb bytes.Buffer
	e := &cli.Env{Ctx: context.Background(), Stdin: strings.NewReader(pllIn), Stdout: &out, Stderr: &errb, StdinIsTerminal: true}
	require.Equal(t, 0, cli.Run(e, commands(), []string{"pll"}))
	require.Contains(t, errb.String(), "reading CSV from the terminal (standard input); end it with Ctrl-D")
	errb.Reset()
	path := filepath.Join(t.TempDir(), "in.csv")
	require.NoError(t, os.WriteFile(path, []byte(pllIn), 0o644))
	require.Equal(t, 0, cli.Run(e, commands(), []string{"pll", path}))
	require.NotContains(t, errb.String(), "terminal", "a named file is not the terminal")
}
