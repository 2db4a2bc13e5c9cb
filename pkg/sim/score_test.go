package sim

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestPoolScores: pooling runs gives what scoring each run's errors around
// its own mean and combining gives, and never mixes the runs' biases into
// the std.
func TestPoolScores(t *testing.T) {
	a := []float64{100, 300, 200, 400} // mean 250
	b := []float64{1100, 900, 1000}    // mean 1000
	sa, sb := ScoreErrors(a), ScoreErrors(b)
	p := PoolScores([]Score{sa, {}, sb})
	require.Equal(t, 7, p.N)
	require.Equal(t, time.Duration(math.Round((4*250+3*1000)/7.0)), p.Bias)
	var within float64
	for _, e := range a {
		within += (e - 250) * (e - 250)
	}
	for _, e := range b {
		within += (e - 1000) * (e - 1000)
	}
	require.InDelta(t, math.Sqrt(within/7), float64(p.Std), 1)
	require.Less(t, p.Std, ScoreErrors(append(append([]float64{}, a...), b...)).Std, "pooled std excludes the bias difference")
	require.Equal(t, max(sa.Spread, sb.Spread), p.Spread)
	require.Equal(t, time.Duration(1100), p.Max)
	require.Equal(t, Score{}, PoolScores(nil))
}
