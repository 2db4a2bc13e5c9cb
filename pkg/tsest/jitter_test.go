package tsest

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timealign/timealign/pkg/sim"
)

// jitterRun feeds a 400 Hz stream with 1 ms latency and a uniform jitter
// of frac periods (no Period configured), with, if refs, a hardware
// reference (late by 0–20 µs) on every 40th sample, delivered 20 samples
// later (as the demo's sensor_sim sends them). It returns the estimator
// and the mean and worst error against the truth after 2 s (minus the
// latency without references: the estimates are then the line).
func jitterRun(t *testing.T, frac float64, refs bool, loss float64, seed uint64) (e *Estimator, mean, worst time.Duration) {
	t.Helper()
	const period, latency = 2500 * time.Microsecond, time.Millisecond
	c := sim.DefaultConfig()
	c.Seed, c.Count, c.Period = seed, 8000, period
	c.Latency.Base, c.Latency.Scale = latency, time.Duration(frac*float64(period))
	c.Loss.Prob = loss
	s, err := sim.Generate(c)
	require.NoError(t, err)
	e, err = New(DefaultConfig())
	require.NoError(t, err)
	g := rand.New(rand.NewPCG(seed, 40))
	var sum time.Duration
	n := 0
	for i, x := range s {
		if refs && i >= 20 && (i-20)%40 == 0 {
			_ = e.UpdateReference(s[i-20].True.Add(time.Duration(g.IntN(20000))))
		}
		if x.Lost {
			continue
		}
		got, err := e.Update(x.Receive)
		require.NoError(t, err)
		if i < 800 {
			continue
		}
		d := got.Sub(x.True)
		if !refs {
			d -= latency
		}
		sum += d
		n++
		if d.Abs() > worst.Abs() {
			worst = d
		}
	}
	return e, sum / time.Duration(n), worst
}

// TestJitterNearThePeriod: a uniform jitter of 50–120 % of the period,
// no Period configured (the live demo's IMU: 400 Hz, 0–2 ms). Below 0.9
// period, where a late sample can still be told from a lost one, the fit
// must find the period (not a shorter one with a loss every few samples)
// and count no loss; beyond, it must say that it cannot tell
// (Status.Ambiguous) rather than lock on a wrong period, and a stream that
// does lose samples there must be flagged. Before the fix 5 of 12 seeds
// locked on 1.8–2.0 ms at 70 % and every seed at 100 %, and with
// references the mean error ran to −5 … −53 ms.
func TestJitterNearThePeriod(t *testing.T) {
	seeds := []uint64{1, 2, 3, 4, 5, 6, 7, 12}
	if testing.Short() {
		seeds = seeds[:4]
	}
	for _, tc := range []struct {
		name string
		frac float64
		refs bool
		loss float64
		// ambiguous: the flag must be raised at the end (1), must not be
		// (−1), or either (0).
		ambiguous int
	}{
		{name: "50%", frac: 0.5, ambiguous: -1},
		{name: "60% refs", frac: 0.6, refs: true, ambiguous: -1},
		{name: "70%", frac: 0.7, ambiguous: -1},
		{name: "70% refs", frac: 0.7, refs: true, ambiguous: -1},
		{name: "80%", frac: 0.8, ambiguous: -1},
		{name: "80% refs", frac: 0.8, refs: true, ambiguous: -1},
		{name: "90% refs", frac: 0.9, refs: true},
		{name: "100%", frac: 1.0, ambiguous: 1},
		{name: "100% refs", frac: 1.0, refs: true, ambiguous: 1},
		{name: "120% refs", frac: 1.2, refs: true, ambiguous: 1},
		{name: "100% with loss", frac: 1.0, refs: true, loss: 0.01, ambiguous: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, seed := range seeds {
				e, mean, worst := jitterRun(t, tc.frac, tc.refs, tc.loss, seed)
				st := e.Status()
				t.Logf("seed %d: period %v, lost %d, ambiguous %v, mean error %v, worst %v", seed, st.Period, st.LostSamplesTotal, st.Ambiguous, mean, worst)
				switch tc.ambiguous {
				case 1:
					require.True(t, st.Ambiguous, "seed %d: a jitter of a period must be flagged", seed)
				case -1:
					// A young fit may raise it for a while (the mean of few
					// samples above an uncertain line); a mature one clears it.
					require.False(t, st.Ambiguous, "seed %d: no false alarm", seed)
				}
				if tc.loss > 0 {
					continue // flagged: the losses cannot be told from delays
				}
				require.InDelta(t, 2500*time.Microsecond, st.Period, 2500, "seed %d: the period, not a shorter one", seed)
				require.Zero(t, st.LostSamplesTotal, "seed %d", seed)
				require.Less(t, mean.Abs(), 100*time.Microsecond, "seed %d: mean error", seed)
				require.Less(t, worst.Abs(), time.Duration(tc.frac*2500)*time.Microsecond/2+200*time.Microsecond, "seed %d: worst error", seed)
			}
		})
	}
}
