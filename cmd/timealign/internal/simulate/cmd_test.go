package simulate

import (
	"testing"

	"github.com/timealign/timealign/cmd/timealign/internal/cli"
	"github.com/timealign/timealign/cmd/timealign/internal/clitest"
)

// runCmd runs simulate in-process.
func runCmd(t testing.TB, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return clitest.Run(t, []*cli.Command{Command()}, stdin, args...)
}
