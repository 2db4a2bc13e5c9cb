package pll

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timealign/timealign/pkg/stamp"
)

// TestGuardOnDeviceClockChanges: a 25 Hz device clock (1 µs ticks, latency
// 1 ms plus up to 2 ms) that steps by ±2 s, or whose rate jumps by
// 500 ppm, half-way. The Envelope and Offset fits give no estimate for a
// sample inconsistent with their line (it is counted as rejected, and the
// estimate is invalid until the fit locks again: clock_sync's when_invalid
// decides), so no estimate they give is after its receive time by more
// than MaxEarly, nor before it by more than the largest latency the
// accepted samples had shown: never seconds off across the step.
func TestGuardOnDeviceClockChanges(t *testing.T) {
	const n, half = 3000, 1500
	period := 40 * time.Millisecond
	for _, mode := range []Mode{Envelope, Offset} {
		for _, tc := range []struct {
			name string
			step time.Duration // device clock step at half
			ppm  float64       // device rate change at half
		}{
			{"step +2s", 2 * time.Second, 0},
			{"step -2s", -2 * time.Second, 0},
			{"rate +500ppm", 0, 500},
		} {
			t.Run(fmt.Sprintf("%v/%s", mode, tc.name), func(t *testing.T) {
				c := DefaultConfig()
				c.Mode = mode
				p, err := New(c)
				require.NoError(t, err)
				g := rand.New(rand.NewPCG(3, 4))
				start := stamp.Time(1_700_000_000 * int64(time.Second))
				dev := 5 * time.Second  // device clock reading
				lat := time.Duration(0) // the largest latency of accepted samples so far
				invalid := 0
				for i := range n {
					acq := start.Add(time.Duration(i) * period)
					step := period
					if i >= half {
						step = time.Duration(float64(period) * (1 + tc.ppm*1e-6))
					}
					if i == half {
						dev += tc.step
					}
					if i > 0 {
						dev += step
					}
					recv := acq.Add(time.Millisecond + time.Duration(g.Int64N(int64(2*time.Millisecond))))
					ticks := uint64(dev/time.Microsecond) & (1<<32 - 1)
					o := p.Update(recv, ticks)
					est, ok := p.Corrected(ticks)
					if !ok {
						invalid++
						continue
					}
					if o == Accepted {
						lat = max(lat, recv.Sub(est))
					}
					require.LessOrEqual(t, est.Sub(recv), c.MaxEarly, "sample %d: %v after its receive time", i, est.Sub(recv))
					if lat > 0 {
						require.LessOrEqual(t, recv.Sub(est), lat, "sample %d: %v before its receive time (latency seen %v)", i, recv.Sub(est), lat)
					}
				}
				st := p.Status()
				t.Logf("invalid %d, rejected %d, relocks %d, resets %d, slope %.1f ppm", invalid, st.Rejected, st.Relocks, st.Resets, st.SlopePPM)
				if tc.step != 0 {
					require.Positive(t, st.Rejected, "the step was seen")
					require.Positive(t, invalid, "and no estimate given across it")
				}
			})
		}
	}
}
