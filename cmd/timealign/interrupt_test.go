package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timealign/timealign/cmd/timealign/internal/cli"
	"github.com/timealign/timealign/cmd/timealign/internal/clitest"
)

// TestInterruptedStdoutSaysRows: interrupted with standard output
// redirected to a file, a command says how many rows went there, exactly,
// instead of "no output file written" alone.
func TestInterruptedStdoutSaysRows(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	dir := t.TempDir()
	outPath := filepath.Join(dir, "out.csv")
	out, err := os.Create(outPath)
	require.NoError(t, err)
	defer out.Close()
	cmd := child(t, "simulate", "--duration", "10000h")
	cmd.Stdout = out
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if fi, err := os.Stat(outPath); err == nil && fi.Size() > 1<<20 {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
	err = cmd.Wait()
	var ee *exec.ExitError
	require.True(t, errors.As(err, &ee), "%v", err)
	require.Equal(t, 130, ee.ExitCode(), stderr.String())
	m := regexp.MustCompile(`timealign: interrupted \(interrupt\); output to standard output stopped after (\d+) rows \(([0-9.]+ [KMG]iB)\); no output file written`).
		FindStringSubmatch(stderr.String())
	require.NotNil(t, m, stderr.String())
	data, err := os.ReadFile(outPath)
	require.NoError(t, err)
	rows, _ := strconv.Atoi(m[1])
	require.Greater(t, rows, 1000)
	require.Equal(t, bytes.Count(data, []byte{'\n'}), rows, "the rows said are the rows in the file")
	require.Equal(t, cli.HumanSize(int64(len(data))), m[2])
}

// TestBagFixSignal: SIGINT while bag fix writes: exit 130, and neither
// OUT nor a temporary directory is left.
func TestBagFixSignal(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	_, errOut, code := runCmd(t, "", "simulate", "--bag", in, "--streams", "camera", "--image-size", "1280x720", "--duration", "10s")
	require.Equal(t, 0, code, errOut)
	out := filepath.Join(dir, "out")
	cmd := child(t, "bag", "fix", in, out, "--apply", "/camera/image_raw=timestamp_estimator", "--compression", "zstd")
	require.NoError(t, cmd.Start())
	deadline := time.Now().Add(20 * time.Second)
	for {
		m, _ := filepath.Glob(filepath.Join(dir, ".out.tmp-*"))
		if len(m) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no temporary directory appeared")
		}
		time.Sleep(time.Millisecond)
	}
	require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Skipf("bag fix finished before the signal (%v)", err)
	}
	require.Equal(t, cli.ExitInterrupted, ee.ExitCode())
	require.Equal(t, []string{"in"}, clitest.DirFiles(t, dir), "no OUT, no temporary directory")
}
