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
	require.Equal(t, humanSize(int64(len(data))), m[2])
}

// TestEarlyBadLineNoOutput: a stream command whose input fails on an early
// line writes nothing to standard output (not even the header), and exits 1.
func TestEarlyBadLineNoOutput(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		args     []string
	}{
		{"estimate", "event,stamp_ns,index\nsample,1000,\nsample,x,\n", []string{"estimate"}},
		{"estimate unknown event", "event,stamp_ns,index\nsample,1000,\nfrob,2000,\n", []string{"estimate"}},
		{"pll", "receive_ns,ticks\n1000000000,1\n1040000000,-5\n", []string{"pll"}},
		{"sync", "topic,stamp_ns\n0,5\n1,x\n", []string{"sync", "--num-topics", "2"}},
		{"align", "event,stream,stamp_ns\npush,0,5\ndrain,,\npush,7,5\n", []string{"align", "--periods", "1ms"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stdout, errOut, code := runCmd(t, tc.in, tc.args...)
			require.Equal(t, 1, code, errOut)
			require.Empty(t, stdout)
			require.Contains(t, errOut, "stdin:")
		})
	}
}
