package tsest

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timealign/timealign/pkg/sim"
	"github.com/timealign/timealign/pkg/stamp"
)

// interleaved is a 400 Hz IMU, stamped 1–3 ms late, with hardware
// references every 40 samples (20 µs of jitter, arriving 50 ms later),
// into whose topic a second publisher floods for 3 s from 10 s on: bursts
// every millisecond, each message stamped with that millisecond (a
// misconfigured driver on a 1 kHz clock), as the soak's imu_flood does.
type interleaved struct {
	events []floodEvent
}

type floodEvent struct {
	at    stamp.Time // the header stamp, or the reference's stamp
	truth stamp.Time // the true time of the IMU sample (or of the one a reference marks); 0 for the flood
	kind  byte       // 'i' IMU, 'r' reference, 'f' flood
}

func interleavedFlood(seed uint64, perMs int, refs bool) interleaved {
	g := rand.New(rand.NewPCG(seed, 0x666c6f6f64)) // "flood"
	const period = 2500 * time.Microsecond
	start := sim.DefaultStart
	var ev []floodEvent
	for i := range 400 * 30 {
		tr := start.Add(time.Duration(i) * period)
		ev = append(ev, floodEvent{tr.Add(time.Millisecond + time.Duration(g.Int64N(int64(2*time.Millisecond)))), tr, 'i'})
		if refs && i%40 == 0 {
			// The reference stamp: the sample's true time, late by its jitter.
			ev = append(ev, floodEvent{tr.Add(time.Duration(g.Int64N(20_000))), tr, 'r'})
		}
	}
	from := start.Add(10 * time.Second)
	for ms := range 3000 {
		q := from.Add(time.Duration(ms) * time.Millisecond)
		for range perMs {
			ev = append(ev, floodEvent{q, 0, 'f'})
		}
	}
	// In arrival order: IMU and flood messages when stamped, references
	// 50 ms after the sample they mark.
	arrival := func(e floodEvent) stamp.Time {
		if e.kind == 'r' {
			return e.truth.Add(50 * time.Millisecond)
		}
		return e.at
	}
	slices.SortStableFunc(ev, func(a, b floodEvent) int { return cmp.Compare(arrival(a), arrival(b)) })
	return interleaved{ev}
}

// TestFloodInterleaved: a flood on the IMU's own topic, beside the IMU
// (not instead of it, as in TestFloodThenSteady), with and without
// references. Throughout, no estimate of an IMU sample is further from
// its true time than its raw stamp (plus 200 µs); from 1.5 s after the
// flood the estimates are as good as before it. Found by the soak: the
// references placed on the flood's 6 µs fit left a latency of −73 s that
// placed every later reference on no sample, and the IMU's stamps stayed
// 2.8 ms off for good.
func TestFloodInterleaved(t *testing.T) {
	for _, perMs := range []int{5, 15, 50} {
		for _, refs := range []bool{false, true} {
			for seed := uint64(1); seed <= 3; seed++ {
				c := interleavedFlood(seed, perMs, refs)
				cfg := DefaultConfig()
				cfg.Window = 2 * time.Second
				cfg.Period = 2500 * time.Microsecond
				e, err := New(cfg)
				require.NoError(t, err)
				start := sim.DefaultStart
				var before, after []float64
				for _, ev := range c.events {
					switch ev.kind {
					case 'r':
						_ = e.UpdateReference(ev.at) // a rejection is counted
						continue
					}
					est, err := e.Update(ev.at)
					require.NoError(t, err)
					if ev.kind != 'i' {
						continue
					}
					d, raw := est.Sub(ev.truth), ev.at.Sub(ev.truth)
					require.LessOrEqual(t, d.Abs(), raw.Abs()+200*time.Microsecond,
						"%d/ms, refs %v, seed %d: sample at %v: estimate %v from the truth, raw %v", perMs, refs, seed, ev.truth.Sub(start), d, raw)
					switch at := ev.truth.Sub(start); {
					case at >= 5*time.Second && at < 10*time.Second:
						before = append(before, float64(d))
					case at >= 14500*time.Millisecond:
						after = append(after, float64(d))
					}
				}
				sb, sa := sim.ScoreErrors(before), sim.ScoreErrors(after)
				t.Logf("%2d/ms, refs %-5v, seed %d: error std %v, max %v before the flood; %v, %v from 1.5 s after it; bias %v, %v; latency %v",
					perMs, refs, seed, sb.Std, sb.Max, sa.Std, sa.Max, sb.Bias, sa.Bias, e.Latency())
				require.LessOrEqual(t, sa.Std, 2*sb.Std+5*time.Microsecond, "%d/ms, refs %v, seed %d", perMs, refs, seed)
				require.LessOrEqual(t, sa.Max, 2*sb.Max+20*time.Microsecond, "%d/ms, refs %v, seed %d", perMs, refs, seed)
				require.InDelta(t, float64(sb.Bias), float64(sa.Bias), float64(50*time.Microsecond), "%d/ms, refs %v, seed %d", perMs, refs, seed)
			}
		}
	}
}
