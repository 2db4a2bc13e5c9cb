package tsest

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timealign/timealign/pkg/sim"
	"github.com/timealign/timealign/pkg/stamp"
)

// TestNeverWorseThanRaw: on every scenario of the table, three seeds, from
// the first sample on, no estimate is further from its truth (less the
// stream's constant latency) than its receive stamp is, beyond a small
// tolerance (the fit's own error): not in the warm-up, not after a loss,
// not after a delay.
func TestNeverWorseThanRaw(t *testing.T) {
	for _, sc := range scenarios {
		if sc.feed == reference {
			continue // references make the estimates absolute: compared in TestAccuracy
		}
		t.Run(sc.name, func(t *testing.T) {
			for seed := uint64(1); seed <= 3; seed++ {
				samples := simulate(t, sc, seed, 4000)
				est, truth := run(t, newEstimator(t, sc), sc, samples)
				base := sim.DefaultConfig().Latency.Base
				for i, s := range sim.Delivered(samples) {
					got := (est[i].Sub(truth[i]) - base).Abs()
					raw := (s.Receive.Sub(truth[i]) - base).Abs()
					require.LessOrEqual(t, got, raw+200*time.Microsecond, "seed %d sample %d: estimate off by %v, receive stamp by %v", seed, i, got, raw)
				}
			}
		})
	}
}

// TestGapsCostNothing: a 200 Hz IMU with an exponential jitter of 0.4 ms
// that loses 1 % of its samples singly, or in runs, or pauses for seconds
// and resumes in phase or out of phase: no sample after a gap is off by
// more than the steady error (the spread of the samples away from gaps)
// plus its own jitter, and the losses are counted exactly where the
// stream resumes in phase.
func TestGapsCostNothing(t *testing.T) {
	const period = 5 * time.Millisecond
	type event struct {
		after int           // the gap comes after this many samples
		lost  int           // samples not delivered
		shift time.Duration // the stream resumes this much out of phase
	}
	for _, tc := range []struct {
		name   string
		events func(g *rand.Rand) []event
	}{
		{"single losses", func(g *rand.Rand) []event {
			var ev []event
			for i := 300; i < 6000; i += 50 + g.IntN(100) {
				ev = append(ev, event{after: i, lost: 1})
			}
			return ev
		}},
		{"runs of losses", func(g *rand.Rand) []event {
			var ev []event
			for i := 300; i < 6000; i += 200 + g.IntN(200) {
				ev = append(ev, event{after: i, lost: 2 + g.IntN(30)})
			}
			return ev
		}},
		{"pauses in phase", func(g *rand.Rand) []event {
			return []event{{after: 1500, lost: 600}, {after: 3000, lost: 1000}}
		}},
		{"pauses out of phase", func(g *rand.Rand) []event {
			return []event{{after: 1500, lost: 600, shift: 37 * period / 100}, {after: 3500, lost: 1000, shift: 81 * period / 100}}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for seed := uint64(1); seed <= 3; seed++ {
				g := rand.New(rand.NewPCG(seed, 0x67617073)) // "gaps"
				ev := tc.events(g)
				var truth, recv []stamp.Time
				var after []bool // the first samples after a gap
				tt := sim.DefaultStart
				lost, resumed := 0, 0
				for i, k := 0, 0; len(truth) < 6000; i++ {
					if k < len(ev) && len(truth) == ev[k].after {
						tt = tt.Add(time.Duration(ev[k].lost)*period + ev[k].shift)
						lost += ev[k].lost
						resumed = 4
						k++
					}
					d := time.Millisecond + time.Duration(g.ExpFloat64()*float64(400*time.Microsecond))
					truth, recv = append(truth, tt), append(recv, tt.Add(d))
					after = append(after, resumed > 0)
					resumed--
					tt = tt.Add(period)
				}
				// In-order delivery: a late sample holds up the next.
				for i := 1; i < len(recv); i++ {
					recv[i] = max(recv[i], recv[i-1])
				}
				c := changing{truth: truth, recv: recv}
				e, est := c.estimateAll(t, DefaultConfig())
				var steady []stamp.Time
				var steadyTruth []stamp.Time
				for i := 400; i < len(est); i++ {
					if !after[i] {
						steady, steadyTruth = append(steady, est[i]), append(steadyTruth, truth[i])
					}
				}
				sc := sim.ScoreStamps(steady, steadyTruth, nil, 0)
				worst := time.Duration(0)
				for i := 400; i < len(est); i++ {
					if !after[i] {
						continue
					}
					off := est[i].Sub(truth[i]) - sc.Bias
					jit := recv[i].Sub(truth[i]) - time.Millisecond
					worst = max(worst, off.Abs()-jit)
					require.LessOrEqual(t, off.Abs(), sc.Spread+jit+time.Microsecond,
						"seed %d sample %d after a gap: off by %v (steady spread %v, its jitter %v)", seed, i, off, sc.Spread, jit)
				}
				st := e.Status()
				t.Logf("seed %d: steady std %v spread %v; worst after a gap %v beyond its jitter; lost %d of %d, uncorrected %d, changes %d",
					seed, sc.Std, sc.Spread, worst, st.LostSamplesTotal, lost, st.UncorrectedSamples, st.PeriodChanges)
				if tc.name == "single losses" || tc.name == "runs of losses" {
					require.Equal(t, uint64(lost), st.LostSamplesTotal, fmt.Sprintf("seed %d", seed))
				}
			}
		})
	}
}

// TestLossInTheWarmup: a clean stream (jitter of a few µs) that loses one
// sample at any place among its first 60: no estimate is off by more than
// the jitter, whether the window holds more samples than the warm-up
// (100 Hz) or fewer (10 Hz, a 2 s window: its hulls switch before the
// warm-up ends, which settles the losses then).
func TestLossInTheWarmup(t *testing.T) {
	for _, p := range []time.Duration{10 * time.Millisecond, 100 * time.Millisecond} {
		for at := 1; at < 60; at++ {
			e, err := New(DefaultConfig())
			require.NoError(t, err)
			tt := sim.DefaultStart
			for i := range 150 {
				if i == at {
					tt = tt.Add(p)
				}
				est, err := e.Update(tt.Add(time.Duration((i*7919)%5) * time.Microsecond))
				require.NoError(t, err)
				require.Less(t, est.Sub(tt).Abs(), 10*time.Microsecond, "period %v, loss before sample %d: sample %d", p, at, i)
				tt = tt.Add(p)
			}
			require.Equal(t, uint64(1), e.LostSamples(), "period %v, loss before sample %d", p, at)
		}
	}
}

// TestPresetsNeverWorseThanRaw: the simulator's host-stamped presets (an
// IMU, a camera with a heavy exponential jitter and 1 % loss, a bursty
// driver), 20 seeds of a minute each: no estimate is further from its
// truth than its receive stamp by more than a millisecond (a loss on a
// stream whose jitter also makes period-long delays plausible must not be
// taken for a delay, nor the other way round, without the odds for it).
func TestPresetsNeverWorseThanRaw(t *testing.T) {
	for _, p := range sim.Presets() {
		if p.Name != "imu" && p.Name != "camera" && p.Name != "bursty" {
			continue
		}
		t.Run(p.Name, func(t *testing.T) {
			worse := 0
			for seed := uint64(1); seed <= 20; seed++ {
				c := p.Config
				c.Seed, c.Count, c.Duration = seed, 0, time.Minute
				s, err := sim.Generate(c)
				require.NoError(t, err)
				e, err := New(DefaultConfig())
				require.NoError(t, err)
				for i, x := range sim.Delivered(s) {
					got, err := e.Update(x.Receive)
					require.NoError(t, err)
					off := (got.Sub(x.True) - c.Latency.Base).Abs()
					raw := (x.Receive.Sub(x.True) - c.Latency.Base).Abs()
					if off > raw+time.Millisecond {
						worse++
						t.Errorf("seed %d sample %d (seq %d): estimate off by %v, receive stamp by %v", seed, i, x.Seq, off, raw)
					}
				}
			}
			require.Zero(t, worse)
		})
	}
}
