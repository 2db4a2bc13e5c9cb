package mavcmd

import (
	"testing"

	"github.com/timealign/timealign/cmd/timealign/internal/bagcmd"
	"github.com/timealign/timealign/cmd/timealign/internal/cli"
	"github.com/timealign/timealign/cmd/timealign/internal/clitest"
)

// runCmd runs mav (or bag, which reads the MCAP files mav merge writes)
// in-process.
func runCmd(t testing.TB, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return clitest.Run(t, []*cli.Command{Command(), bagcmd.Command()}, stdin, args...)
}
