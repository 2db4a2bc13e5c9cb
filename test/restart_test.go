//go:build ros2 && timealign_interfaces

package test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tiiuae/rclgo/pkg/rclgo"

	"github.com/timealign/timealign/internal/testutil/cdrtest"
	"github.com/timealign/timealign/pkg/sim"
	"github.com/timealign/timealign/pkg/stamp"
)

// driver is a sensor driver's publisher of sensor_msgs/Imu in a context
// of its own: closing it takes it out of the graph, as a crashed driver.
type driver struct {
	ctx *rclgo.Context
	pub *rclgo.Publisher
}

func newDriver(t *testing.T, topic string, q rclgo.QosProfile) *driver {
	ctx, err := rclgo.NewContext(rclgo.ClockTypeROSTime, nil)
	require.NoError(t, err)
	d := &driver{ctx: ctx}
	t.Cleanup(d.close)
	node, err := ctx.NewNode(fmt.Sprintf("timealign_test_driver_%d", peers.Add(1)), "")
	require.NoError(t, err)
	ts, err := rclgo.LoadDynamicMessageTypeSupport("sensor_msgs", "Imu")
	require.NoError(t, err)
	d.pub, err = node.NewPublisher(topic, ts, &rclgo.PublisherOptions{Qos: q})
	require.NoError(t, err)
	return d
}

func (d *driver) close() {
	if d.ctx != nil {
		_ = d.ctx.Close()
		d.ctx = nil
	}
}

// stream publishes n samples at period, each sample i stamped on
// arrival (its true time, 1 ms of latency and up to 1 ms of jitter), its
// frame_id prefix and i; it records each frame's true time.
func (d *driver) stream(t *testing.T, g *rand.Rand, prefix string, n int, period time.Duration, truth map[string]stamp.Time) {
	t.Helper()
	began := time.Now()
	base := stamp.Time(began.UnixNano())
	for i := range n {
		tr := base.Add(time.Duration(i) * period)
		raw := tr.Add(time.Millisecond + time.Duration(g.Int64N(int64(time.Millisecond))))
		if w := time.Until(began.Add(raw.Sub(base))); w > 0 {
			time.Sleep(w)
		}
		frame := fmt.Sprintf("%s%07d", prefix, i)
		truth[frame] = tr
		require.NoError(t, d.pub.PublishSerialized(pad4(cdrtest.Message(raw, frame, 307))))
	}
}

// TestPublisherRestart: a driver of an IMU at 200 Hz crashes (its
// publisher leaves the graph) and comes back at 100 Hz with another QoS
// (reliable still, but transient_local and 50 deep); timestamp_estimator
// logs that its input lost its publisher and that one is back, counts
// the matched publishers in /diagnostics, and follows the new stream: one
// window after its first sample the corrected stamps are as accurate as
// they were before the crash (against the true times), every message out.
// Then a driver whose QoS no longer matches (best effort, against the
// node's reliable input) is reported as any input without a matched
// publisher: none of its messages reach the node, /diagnostics counts 0
// publishers, and the node says it waits for one.
func TestPublisherRestart(t *testing.T) {
	const name, topic = "ta_restart", "/ta_test/restart_raw"
	node := start(t, "timestamp_estimator", "--ros-args", "-r", "__node:="+name, "-r", "in:="+topic, "-r", "out:=/ta_test/restart",
		"-p", "message_type:=sensor_msgs/msg/Imu", "-p", "window_sec:=1.0",
		"-p", "qos.in.reliability:=reliable", "-p", "qos.in.depth:=200", "-p", "qos.out.depth:=1000")
	out := newPeer(t, "/ta_test/unused_restart", "/ta_test/restart", "sensor_msgs/msg/Imu")
	diag := newPeer(t, "/ta_test/unused_restart_diag", "/diagnostics", "diagnostic_msgs/msg/DiagnosticArray")
	g := rand.New(rand.NewPCG(29, 2))
	truth := map[string]stamp.Time{}
	publishers := func(want string) func() bool {
		return func() bool { v, ok := diagValue(t, diag, "/"+name, topic+".publishers"); return ok && v == want }
	}

	reliable := rclgo.NewDefaultQosProfile()
	reliable.Reliability = rclgo.ReliabilityReliable
	reliable.Depth = 100
	a := newDriver(t, topic, reliable)
	waitFor(t, 15*time.Second, "the first driver matched", publishers("1"))
	a.stream(t, g, "a", 600, 5*time.Millisecond, truth) // 3 s
	a.close()
	waitFor(t, 5*time.Second, "the node sees the driver gone", publishers("0"))
	waitFor(t, 5*time.Second, "logged", func() bool {
		return strings.Contains(node.output.String(), topic+": no publisher any more (it stopped or is restarting): waiting for one")
	})

	other := rclgo.NewDefaultQosProfile()
	other.Reliability, other.Durability, other.Depth = rclgo.ReliabilityReliable, rclgo.DurabilityTransientLocal, 50
	b := newDriver(t, topic, other)
	waitFor(t, 15*time.Second, "the restarted driver matched", publishers("1"))
	b.stream(t, g, "b", 400, 10*time.Millisecond, truth) // 4 s at 100 Hz
	waitFor(t, 10*time.Second, "every message out", func() bool { return len(out.received()) == 1000 })
	require.Contains(t, node.output.String(), topic+": a publisher is back")

	// The errors: before the crash from one window on, after the restart
	// from one window after its first sample.
	var before, after []float64
	for _, m := range out.received() {
		est, f, err := stamp.Header(m)
		require.NoError(t, err)
		frame := string(f)
		tr, ok := truth[frame]
		require.True(t, ok, frame)
		i := 0
		_, err = fmt.Sscanf(frame[1:], "%d", &i)
		require.NoError(t, err)
		switch {
		case frame[0] == 'a' && i >= 200:
			before = append(before, float64(est.Sub(tr)))
		case frame[0] == 'b' && i >= 100:
			after = append(after, float64(est.Sub(tr)))
		}
	}
	sb, sa := sim.ScoreErrors(before), sim.ScoreErrors(after)
	t.Logf("error std %v, max %v, bias %v at 200 Hz before the crash; %v, %v, %v at 100 Hz one window after the restart (raw: 1–2 ms late)",
		sb.Std, sb.Max, sb.Bias, sa.Std, sa.Max, sa.Bias)
	require.LessOrEqual(t, sa.Std, 2*sb.Std+20*time.Microsecond)
	require.LessOrEqual(t, sa.Max, 2*sb.Max+50*time.Microsecond)
	require.InDelta(t, float64(sb.Bias), float64(sa.Bias), float64(100*time.Microsecond))

	// A driver whose QoS does not match the node's input.
	b.close()
	waitFor(t, 5*time.Second, "the node sees the second driver gone", publishers("0"))
	bestEffort := rclgo.NewDefaultQosProfile()
	bestEffort.Reliability = rclgo.ReliabilityBestEffort
	c := newDriver(t, topic, bestEffort)
	time.Sleep(2 * time.Second) // discovery, had it matched
	c.stream(t, g, "c", 100, 10*time.Millisecond, truth)
	time.Sleep(time.Second)
	require.Len(t, out.received(), 1000, "no message of a publisher whose QoS does not match")
	v, _ := diagValue(t, diag, "/"+name, topic+".publishers")
	require.Equal(t, "0", v, "/diagnostics: no matched publisher")
	require.Equal(t, 2, strings.Count(node.output.String(), topic+": no publisher any more"), "said once per driver gone")
	node.stop(t)
}
