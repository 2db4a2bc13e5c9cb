package sensorsim

import (
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timealign/timealign/nodes/internal/nodekit"
	"github.com/timealign/timealign/nodes/internal/nodekit/memros"
	"github.com/timealign/timealign/nodes/internal/nodetest"
	"github.com/timealign/timealign/nodes/internal/sensorsim/config"
	"github.com/timealign/timealign/pkg/params"
	"github.com/timealign/timealign/pkg/stamp"
)

// TestNode: the node's wiring without ROS: the sensors on their remapped
// topics at their rates, every sample's ground truth on truth naming the
// resolved topic, ~/status once a second.
func TestNode(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := memros.New()
		rec := map[string]*memros.Recorder{}
		for _, topic := range []string{"/demo/imu/data_raw", "/demo/scan_raw", "/demo/camera/image_raw", "/demo/imu/reference", "/demo/truth", "/demo/sensor_sim/status"} {
			rec[topic] = g.Record(topic)
		}
		stop := g.Start(Spec(), "--ros-args", "-r", "__ns:=/demo", "-r", "imu:=imu/data_raw", "-r", "scan:=scan_raw",
			"-r", "image:=camera/image_raw", "-r", "reference:=imu/reference", "-p", "camera.width:=64", "-p", "camera.height:=48")
		time.Sleep(2 * time.Second)
		synctest.Wait()
		code, stderr := stop()
		require.Zero(t, code, stderr)
		counts := map[string]int{}
		for _, m := range rec["/demo/truth"].Messages() {
			topic := truthTopic(t, m)
			counts[topic]++
		}
		for topic, rate := range map[string]float64{"/demo/imu/data_raw": 400, "/demo/scan_raw": 10, "/demo/camera/image_raw": 30, "/demo/imu/reference": 10} {
			n := len(rec[topic].Messages())
			require.InDelta(t, 2*rate, n, 2*rate*0.1+2, topic)
			require.Equal(t, n, counts[topic], "%s: a ground truth for every sample", topic)
		}
		require.Len(t, rec["/demo/sensor_sim/status"].Messages(), 2)
	})
}

// truthTopic returns the topic a GroundTruth names (after the header).
func truthTopic(t *testing.T, msg []byte) string {
	_, frame, err := stamp.Header(msg)
	require.NoError(t, err)
	off := 16 + len(frame) + 1
	off = 4 + (off-4+3)&^3
	n := int(msg[off]) | int(msg[off+1])<<8
	return string(msg[off+4 : off+4+n-1])
}

// TestSimTime: with use_sim_time the sensors wait for /clock and follow it.
func TestSimTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := memros.New()
		imu := g.Record("/imu")
		clock := g.Advertise("/clock", "rosgraph_msgs/msg/Clock")
		stop := g.Start(Spec(), "--ros-args", "-p", "use_sim_time:=true", "-p", "camera.width:=8", "-p", "camera.height:=8")
		time.Sleep(time.Second)
		synctest.Wait()
		require.Empty(t, imu.Messages(), "no /clock yet")
		for k := range 100 { // 0.1 s of simulated time, at a tenth of the speed
			c := nodekit.NewCDR(nil)
			c.Time(stamp.Time(1000*time.Second) + stamp.Time(k)*stamp.Time(time.Millisecond))
			require.NoError(t, clock.Publish(c.B))
			time.Sleep(10 * time.Millisecond)
		}
		synctest.Wait()
		code, stderr := stop()
		require.Zero(t, code, stderr)
		n := len(imu.Messages())
		require.InDelta(t, 38, n, 3, "0.1 s of /clock at 400 Hz, less the latency")
		for _, m := range imu.Messages() {
			st, err := stamp.HeaderStamp(m)
			require.NoError(t, err)
			require.Greater(t, st, stamp.Time(1000*time.Second))
			require.Less(t, st, stamp.Time(1001*time.Second), "stamped in /clock's time")
		}
	})
}

// TestEveryWritableParameterIsLive: every parameter but the QoS is
// writable; each, set at run time, is what the node runs with.
func TestEveryWritableParameterIsLive(t *testing.T) {
	p := config.DefaultParams()
	var changes []params.Parameter
	for _, s := range config.Settings(p.Config) {
		v := s.Value
		switch name := s.Name; {
		case strings.HasSuffix(name, ".jitter"):
			v = params.StringValue("pareto")
		case strings.HasSuffix(name, ".stamp"):
			v = params.StringValue(map[string]string{"receive_time": "device_clock", "device_clock": "receive_time"}[v.Str()])
		case name == "camera.encoding":
			v = params.StringValue("mono8")
		case v.Type() == params.String:
			v = params.StringValue(v.Str() + "_2")
		case v.Type() == params.Bool:
			v = params.BoolValue(!v.Bool())
		case v.Type() == params.Integer:
			v = params.IntValue(v.Int() + 1)
		case strings.HasSuffix(name, "_sec") || strings.HasSuffix(name, "_prob") || strings.HasSuffix(name, ".loss"):
			v = params.DoubleValue(0.25) // a whole number of nanoseconds, a valid probability
		case v.Type() == params.Double:
			v = params.DoubleValue(v.Double()*2 + 1)
		}
		changes = append(changes, params.Parameter{Name: s.Name, Value: v})
	}
	node := nodetest.Live(t, spec(&p), changes...).(*Node)
	require.Equal(t, p.Config, node.core.Status().Config)
}

// TestRejected: parameters out of range are refused with the parameter's
// name and the reason, and the node keeps the value it had.
func TestRejected(t *testing.T) {
	p := config.DefaultParams()
	srv := nodetest.Declare(t, &p, map[string]params.Override{
		"imu.rate_hz":     {Value: params.DoubleValue(-400), Source: "-p"},
		"lidar.rate_hz":   {Value: params.DoubleValue(0), Source: "-p"},
		"camera.loss":     {Value: params.DoubleValue(1.5), Source: "-p"},
		"imu.loss":        {Value: params.DoubleValue(1), Source: "-p"},
		"lidar.tick_bits": {Value: params.IntValue(0), Source: "-p"},
	})
	var issues []string
	for _, is := range srv.Issues() {
		issues = append(issues, is.String())
	}
	all := strings.Join(issues, "\n")
	for _, want := range []string{
		"imu.rate_hz", "-400.0 is not in [0.001, 100000.0]",
		"lidar.rate_hz", "0.0 is not in [0.001, 100000.0]",
		"camera.loss", "1.5 is not in [0.0, 1.0]",
		"imu.loss is 1, want 0 ≤ loss < 1",
		"lidar.tick_bits", "0 is not in [1, 64]",
	} {
		require.Contains(t, all, want)
	}
	require.Equal(t, config.DefaultConfig(), p.Config, "every rejected value keeps its default")
}
