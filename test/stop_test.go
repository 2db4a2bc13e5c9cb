//go:build ros2 && timealign_interfaces

package test

import (
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	tamsg "github.com/timealign/timealign/msgs/timealign/msg"
	"github.com/timealign/timealign/pkg/sim"
	"github.com/timealign/timealign/pkg/stamp"
)

// stopFor is how long TestPublisherStopped holds the publisher stopped:
// longer than the participant lease of Cyclone DDS (10 s) and of Fast
// DDS (20 s), so the middleware may take it out of the graph.
const stopFor = 30 * time.Second

// TestPublisherStopped: the driver of an IMU (sensor_sim, 200 Hz) is
// stopped with SIGSTOP for 30 s, then continued (a process the debugger or
// the kernel froze). timestamp_estimator neither crashes nor hangs; no
// estimate it publishes lies more than a second from its sample's stamp;
// once the driver is back, its stamps are as accurate one window later as
// before the stop, against sensor_sim's ground truth; if the middleware
// took the driver out of the graph meanwhile, the node said so, and said
// it is back.
func TestPublisherStopped(t *testing.T) {
	const ns, name = "/ta_stop", "ta_stop_est"
	topic := ns + "/imu"
	drv := start(t, "sensor_sim", "--ros-args", "-r", "__ns:="+ns, "-p", "imu.rate_hz:=200.0",
		"-p", "camera.enabled:=false", "-p", "lidar.enabled:=false")
	node := start(t, "timestamp_estimator", "--ros-args", "-r", "__node:="+name, "-r", "in:="+topic,
		"-r", "out:=/ta_test/stop_out", "-r", "reference:="+ns+"/reference", "-p", "message_type:=sensor_msgs/msg/Imu")
	out := newPeer(t, "/ta_test/unused_stop", "/ta_test/stop_out", "sensor_msgs/msg/Imu")
	truth := newPeer(t, "/ta_test/unused_stop_truth", ns+"/truth", "timealign/msg/GroundTruth")
	diag := newPeer(t, "/ta_test/unused_stop_diag", "/diagnostics", "diagnostic_msgs/msg/DiagnosticArray")
	publishers := func(want string) func() bool {
		return func() bool { v, ok := diagValue(t, diag, "/"+name, topic+".publishers"); return ok && v == want }
	}
	waitFor(t, 20*time.Second, "the driver matched", publishers("1"))
	waitFor(t, 10*time.Second, "estimates", func() bool { return len(out.received()) > 0 })
	time.Sleep(6 * time.Second) // a window (2 s) to settle, then the steady state

	stopped := stamp.Time(time.Now().UnixNano())
	require.NoError(t, drv.cmd.Process.Signal(syscall.SIGSTOP))
	t.Cleanup(func() { _ = drv.cmd.Process.Signal(syscall.SIGCONT) }) // before the kill of startEnv's cleanup
	time.Sleep(stopFor)
	left := strings.Contains(node.output.String(), topic+": no publisher any more")
	outAtCont := len(out.received())
	continued := stamp.Time(time.Now().UnixNano())
	require.NoError(t, drv.cmd.Process.Signal(syscall.SIGCONT))
	waitFor(t, 30*time.Second, "estimates after the driver continued", func() bool { return len(out.received()) > outAtCont+400 })
	if left {
		waitFor(t, 20*time.Second, "the driver back in /diagnostics", publishers("1"))
		require.Contains(t, node.output.String(), topic+": a publisher is back")
	}
	time.Sleep(6 * time.Second)

	// Every estimate against its sample's truth: its raw stamp and its
	// true acquisition time.
	truths := map[uint64]*tamsg.GroundTruth{}
	for _, b := range truth.received() {
		g := decode[*tamsg.GroundTruth](t, b, tamsg.GroundTruthTypeSupport)
		if g.Topic == topic {
			truths[g.Fingerprint] = g
		}
	}
	const window = 2 * time.Second // timestamp_estimator's default
	var before, after, rawAfter []float64
	var resumed stamp.Time
	matched := 0
	for _, m := range out.received() {
		est, err := stamp.HeaderStamp(m)
		require.NoError(t, err)
		fp, err := stamp.Fingerprint(m)
		require.NoError(t, err)
		g, ok := truths[fp]
		if !ok {
			continue // its truth came before the test's subscription matched
		}
		matched++
		tr, raw := rosStamp(t, g.TrueStamp), rosStamp(t, g.Stamp)
		require.Less(t, est.Sub(raw).Abs(), time.Second, "an estimate a second or more from its sample's stamp (true %v)", tr)
		switch {
		case tr < stopped && tr > stopped.Add(-4*time.Second):
			before = append(before, float64(est.Sub(tr)))
		case tr > continued:
			if resumed == 0 {
				resumed = tr
			}
			if tr > resumed.Add(window) {
				after = append(after, float64(est.Sub(tr)))
				rawAfter = append(rawAfter, float64(raw.Sub(tr)))
			}
		}
	}
	require.Greater(t, len(before), 400, "estimates before the stop with their truth (%d matched)", matched)
	require.Greater(t, len(after), 400, "estimates one window after the driver continued with their truth")
	sb, sa, sr := sim.ScoreErrors(before), sim.ScoreErrors(after), sim.ScoreErrors(rawAfter)
	t.Logf("driver out of the graph during the stop: %v; error std %v, max %v, bias %v before the stop; %v, %v, %v one window after it continued (raw: std %v, bias %v; load %s)",
		left, sb.Std, sb.Max, sb.Bias, sa.Std, sa.Max, sa.Bias, sr.Std, sr.Bias, loadAvg())
	require.LessOrEqual(t, sa.Std, 2*sb.Std+20*time.Microsecond)
	require.LessOrEqual(t, sa.Std, sr.Std, "not worse than the raw stamps")
	require.InDelta(t, float64(sb.Bias), float64(sa.Bias), float64(200*time.Microsecond))
	drv.terminate(t)
	node.stop(t)
}
