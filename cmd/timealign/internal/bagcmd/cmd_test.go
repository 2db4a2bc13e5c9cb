package bagcmd

import (
	"testing"

	"github.com/timealign/timealign/cmd/timealign/internal/cli"
	"github.com/timealign/timealign/cmd/timealign/internal/clitest"
	"github.com/timealign/timealign/cmd/timealign/internal/simulate"
)

// runCmd runs bag (or simulate, which writes the bags of the tests)
// in-process.
func runCmd(t testing.TB, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return clitest.Run(t, []*cli.Command{Command(), simulate.Command()}, stdin, args...)
}
