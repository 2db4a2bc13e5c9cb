package pll_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/timealign/timealign/pkg/pll"
)

func TestModeNames(t *testing.T) {
	names := pll.ModeNames()
	require.Equal(t, []string{"sick", "regression", "envelope", "offset"}, names)
	for i, n := range names {
		m, err := pll.ParseMode(n)
		require.NoError(t, err)
		require.Equal(t, pll.Mode(i), m)
		require.Equal(t, n, m.String())
	}
	names[0] = "changed"
	require.Equal(t, "sick", pll.ModeNames()[0], "a copy")
	_, err := pll.ParseMode("fast")
	require.EqualError(t, err, `pll: unknown mode "fast" (want sick, regression, envelope or offset)`)
}
