package stream

import (
	"testing"

	"github.com/timealign/timealign/cmd/timealign/internal/clitest"
	"github.com/timealign/timealign/cmd/timealign/internal/simulate"
)

// runCmd runs a command of this package (or simulate, which writes the
// inputs of the tests) in-process.
func runCmd(t testing.TB, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return clitest.Run(t, append(Commands(), simulate.Command()), stdin, args...)
}
