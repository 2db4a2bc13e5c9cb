// Package clitest runs timealign's commands in-process for the tests of
// the command packages, and holds the helpers their tests share. Only
// tests import it.
package clitest

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/timealign/timealign/cmd/timealign/internal/cli"
)

// Run runs the command line args with cmds in-process, stdin as its
// standard input, and returns its output and exit status.
func Run(t testing.TB, cmds []*cli.Command, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	code = cli.Run(&cli.Env{Ctx: context.Background(), Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb}, cmds, args)
	return out.String(), errb.String(), code
}

// DirFiles lists the names in dir.
func DirFiles(t testing.TB, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

// ReadFile returns the contents of the file at path.
func ReadFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return b
}
