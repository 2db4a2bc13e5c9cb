package badinput_test

import (
	"math/rand/v2"
	"strconv"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timealign/timealign/internal/testutil/cdrtest"
	"github.com/timealign/timealign/nodes/internal/nodekit"
	"github.com/timealign/timealign/nodes/internal/nodekit/memros"
	"github.com/timealign/timealign/pkg/stamp"
)

// TestBagLoop: every node under use_sim_time, fed as `ros2 bag play
// --loop --clock` feeds it: /clock and the stamps of 100 Hz streams (2 ms
// of latency, up to 1 ms of jitter) run for 8 s, then start 8 s earlier
// again, three times. Each node logs each jump once, resets, and goes on:
// in the last 4 s of every loop it outputs at least half of what it would
// steadily; the estimator's and clock_sync's outputs are never more than
// 20 ms from the message's true time (before the fix, two of the
// estimator's landed more than a second away).
func TestBagLoop(t *testing.T) {
	const (
		period = 10 * time.Millisecond
		loop   = 8 * time.Second
		loops  = 3
	)
	for _, s := range subjects {
		t.Run(s.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				g := memros.New()
				stop := run(t, g, s, "-p", "use_sim_time:=true", "-p", "window_sec:=2.0")
				clock := g.Advertise("/clock", "rosgraph_msgs/msg/Clock")
				var ins []*memros.Publisher
				for _, name := range s.inputs {
					ins = append(ins, g.Advertise(name, typ))
				}
				out := g.Record(s.out0)
				time.Sleep(300 * time.Millisecond) // discovery
				r := rand.New(rand.NewPCG(7, 7))
				t0 := stamp.Time(1_700_000_000 * time.Second)
				truth := map[string]stamp.Time{}
				var perLoop [loops + 1]int // outputs seen by the end of each loop's last 4 s
				n := 0
				for l := range loops + 1 {
					for k := range int(loop / period) {
						at := t0.Add(time.Duration(k) * period)
						c := nodekit.NewCDR(nil)
						c.Time(at)
						require.NoError(t, clock.Publish(c.B))
						for i, in := range ins {
							st := at.Add(-2*time.Millisecond - time.Duration(r.IntN(1_000_000)))
							frame := strconv.Itoa(n)
							n++
							truth[frame] = at.Add(-2 * time.Millisecond)
							require.NoError(t, in.Publish(cdrtest.Message(st, frame, 8+i)))
						}
						time.Sleep(period)
						synctest.Wait()
						if k == int(loop/period)/2 {
							perLoop[l] = len(out.Messages())
						}
					}
					before := perLoop[l]
					after := len(out.Messages())
					require.GreaterOrEqual(t, after-before, int(loop/period)/2/2,
						"loop %d: outputs in its last 4 s", l)
				}
				tr := g.Node("/" + s.name)
				require.Equal(t, loops, logged(tr, nodekit.LogWarn, "time jumped back 8.0 s (/clock): "), "each jump logged once")
				if s.name == "timestamp_estimator" || s.name == "clock_sync" {
					for _, m := range out.Messages() {
						st, frame, err := stamp.Header(m)
						require.NoError(t, err)
						want, ok := truth[string(frame)]
						require.True(t, ok, "frame %q", frame)
						require.InDelta(t, 0, st.Sub(want).Seconds(), 0.020, "frame %s: %v from its true time", frame, st.Sub(want))
					}
				}
				stop()
			})
		})
	}
}
