package main

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// readmeExample is a "$ timealign ..." line of the README with the output
// shown under it.
type readmeExample struct {
	line int
	cmd  string
	want []string
}

// readmeExamples returns the README's examples in order: in a fenced block,
// each line starting with "$ " is a command, the lines after it its output.
func readmeExamples(t *testing.T) []readmeExample {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "README.md"))
	require.NoError(t, err)
	defer f.Close()
	var out []readmeExample
	in, open := false, false // in a fenced block; its last example takes output lines
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "```"):
			in, open = !in, false
		case in && strings.HasPrefix(line, "$ "):
			out = append(out, readmeExample{line: n, cmd: strings.TrimPrefix(line, "$ ")})
			open = true
		case open:
			ex := &out[len(out)-1]
			ex.want = append(ex.want, line)
		}
	}
	require.NoError(t, sc.Err())
	return out
}

// TestReadmeExamples runs every "$ timealign ..." example of the README in
// a scratch directory (with the repository's testdata beside it), in order,
// with bash, and requires the output the README shows: the README's
// examples work from the repository alone and say what they print.
func TestReadmeExamples(t *testing.T) {
	// The examples show what a machine without ROS 2 prints: with ROS 2
	// sourced (colcon test), message definitions would come from the
	// installed .msg files ("installed") rather than the built-in table.
	t.Setenv("AMENT_PREFIX_PATH", "")
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash to run the README's shell lines")
	}
	exe, err := os.Executable()
	require.NoError(t, err)
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	require.NoError(t, os.Mkdir(bin, 0o755))
	wrapper := "#!/bin/sh\nTIMEALIGN_TEST_MAIN=1 exec " + exe + " \"$@\"\n"
	require.NoError(t, os.WriteFile(filepath.Join(bin, "timealign"), []byte(wrapper), 0o755))
	testdata, err := filepath.Abs(filepath.Join("..", "..", "testdata"))
	require.NoError(t, err)
	work := filepath.Join(dir, "work")
	require.NoError(t, os.Mkdir(work, 0o755))
	require.NoError(t, os.Symlink(testdata, filepath.Join(work, "testdata")))
	examples := readmeExamples(t)
	require.NotEmpty(t, examples)
	for _, ex := range examples {
		if !strings.HasPrefix(ex.cmd, "timealign ") {
			continue
		}
		cmd := exec.Command(bash, "-o", "pipefail", "-c", ex.cmd)
		cmd.Dir = work
		cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 141 {
			err = nil // SIGPIPE: head stopped reading
		}
		require.NoError(t, err, "README.md:%d: %s\n%s", ex.line, ex.cmd, stderr.String())
		got := strings.Split(strings.TrimRight(stdout.String(), "\n"), "\n")
		if len(ex.want) > 0 {
			require.Equal(t, ex.want, got, "README.md:%d: %s", ex.line, ex.cmd)
		}
	}
}
