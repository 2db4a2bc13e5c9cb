package demo

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/timealign/timealign/cmd/timealign/internal/cli"
	"github.com/timealign/timealign/cmd/timealign/internal/clitest"
)

func TestDemo(t *testing.T) {
	out, errOut, code := clitest.Run(t, []*cli.Command{Command()}, "", "demo")
	require.Equal(t, 0, code, errOut)
	for _, s := range demoSections() {
		require.Contains(t, out, s.title)
	}
	require.Contains(t, out, "imu")
	for i, line := range strings.Split(out, "\n") {
		require.LessOrEqual(t, utf8.RuneCountInString(line), 100, "line %d is wider than 100 columns: %q", i+1, line)
	}
	require.NotContains(t, out, "worst", "one name per metric: spread")
}

// TestPara: demo prose wraps at demoWidth and never between a number and
// its unit.
func TestPara(t *testing.T) {
	var b strings.Builder
	text := strings.Repeat("the estimate is off by 12.5 ms after 3 s at 100 Hz; ", 20)
	para(&b, text)
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	require.Greater(t, len(lines), 5)
	for _, l := range lines {
		require.LessOrEqual(t, utf8.RuneCountInString(l), demoWidth, l)
		for _, u := range []string{"ms", "s", "Hz"} {
			require.False(t, strings.HasPrefix(l, u+" ") || strings.HasPrefix(l, u+";"), "a unit starts the line: %q", l)
		}
	}
	require.Equal(t, strings.Join(strings.Fields(text), " "), strings.Join(lines, " "), "every word, in order")
}
