//go:build ros2 && timealign_interfaces

package test

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tiiuae/rclgo/pkg/rclgo"

	"github.com/timealign/timealign/internal/testutil/cdrtest"
	diagmsg "github.com/timealign/timealign/msgs/diagnostic_msgs/msg"
	rcl "github.com/timealign/timealign/msgs/rcl_interfaces/msg"
	rclsrv "github.com/timealign/timealign/msgs/rcl_interfaces/srv"
	tamsg "github.com/timealign/timealign/msgs/timealign/msg"
	"github.com/timealign/timealign/pkg/params"
	"github.com/timealign/timealign/pkg/sim"
	"github.com/timealign/timealign/pkg/stamp"
)

// paramClient calls a node's parameter services from the test's own ROS
// node, as `ros2 param` does.
type paramClient struct {
	node string
	list *rclsrv.ListParametersClient
	set  *rclsrv.SetParametersClient
	desc *rclsrv.DescribeParametersClient
}

// newParamClient makes the clients; make them before the node starts, so
// their discovery of its services begins at once.
func newParamClient(t *testing.T, node string) *paramClient {
	ctx, err := rclgo.NewContext(rclgo.ClockTypeROSTime, nil)
	require.NoError(t, err)
	n, err := ctx.NewNode(fmt.Sprintf("timealign_test_params_%d", peers.Add(1)), "")
	require.NoError(t, err)
	c := &paramClient{node: node}
	c.list, err = rclsrv.NewListParametersClient(n, node+"/list_parameters", nil)
	require.NoError(t, err)
	c.set, err = rclsrv.NewSetParametersClient(n, node+"/set_parameters", nil)
	require.NoError(t, err)
	c.desc, err = rclsrv.NewDescribeParametersClient(n, node+"/describe_parameters", nil)
	require.NoError(t, err)
	ws, err := ctx.NewWaitSet()
	require.NoError(t, err)
	ws.AddClients(c.list.Client, c.set.Client, c.desc.Client)
	run, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); _ = ws.Run(run) }()
	t.Cleanup(func() { cancel(); wg.Wait(); ctx.Close() })
	return c
}

// call retries f (a service call) until it answers: a request sent before
// the service is discovered is lost.
func (c *paramClient) call(t *testing.T, what string, f func(ctx context.Context) error) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		err := f(ctx)
		cancel()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s %s: %v", c.node, what, err)
		}
	}
}

// writable lists the node's parameters that are not read-only; every
// read-only one must give its reason.
func (c *paramClient) writable(t *testing.T) []string {
	t.Helper()
	var names []string
	c.call(t, "list_parameters", func(ctx context.Context) error {
		res, _, err := c.list.Send(ctx, &rclsrv.ListParameters_Request{})
		if err == nil {
			names = res.Result.Names
		}
		return err
	})
	var descs []rcl.ParameterDescriptor
	c.call(t, "describe_parameters", func(ctx context.Context) error {
		res, _, err := c.desc.Send(ctx, &rclsrv.DescribeParameters_Request{Names: names})
		if err == nil {
			descs = res.Descriptors
		}
		return err
	})
	require.Len(t, descs, len(names))
	var out []string
	for _, d := range descs {
		if d.ReadOnly {
			require.Contains(t, d.Description, params.ReadOnlyReason, "%s %s says why it is read-only", c.node, d.Name)
			continue
		}
		out = append(out, d.Name)
	}
	return out
}

// setParam sets one parameter and returns whether it was accepted and why
// not.
func (c *paramClient) setParam(t *testing.T, p params.Parameter) (bool, string) {
	t.Helper()
	var res rcl.SetParametersResult
	c.call(t, "set_parameters "+p.Name, func(ctx context.Context) error {
		r, _, err := c.set.Send(ctx, &rclsrv.SetParameters_Request{Parameters: []rcl.Parameter{{Name: p.Name, Value: rcl.ParameterValue(p.Value.Msg())}}})
		if err == nil {
			if len(r.Results) != 1 {
				return fmt.Errorf("%d results", len(r.Results))
			}
			res = r.Results[0]
		}
		return err
	})
	return res.Successful, res.Reason
}

// diagValue returns the value of key in the newest diagnostic of the node
// named fqn, and whether there is one.
func diagValue(t *testing.T, diag *peer, fqn, key string) (string, bool) {
	got := diag.received()
	for i := len(got) - 1; i >= 0; i-- {
		a := decode[*diagmsg.DiagnosticArray](t, got[i], diagmsg.DiagnosticArrayTypeSupport)
		for _, st := range a.Status {
			if st.HardwareId != fqn {
				continue
			}
			for _, kv := range st.Values {
				if kv.Key == key {
					return kv.Value, true
				}
			}
		}
	}
	return "", false
}

// TestEveryWritableParameterIsLive: for each node, every parameter that is
// not read-only (as the node's own parameter services describe it) is set
// at run time, and the node's diagnostics, which report the settings its
// core and its runtime (the inbox) run with, show the new value within
// three seconds. A writable
// parameter that a node's core ignored would fail here (as synchronizer's
// silent_after_sec did: the set succeeded and the core kept its copy).
func TestEveryWritableParameterIsLive(t *testing.T) {
	p := func(name string, v params.Value) params.Parameter { return params.Parameter{Name: name, Value: v} }
	nodes := []struct {
		node, fqn string
		args      []string
		changes   []params.Parameter // in an order where each set is valid on its own
	}{
		{"timestamp_estimator", "/ta_live_ts", []string{"-p", "message_type:=sensor_msgs/msg/Imu"}, []params.Parameter{
			p("stamp_source", params.StringValue("receive_time")),
			p("window_sec", params.DoubleValue(0.75)),
			p("period_sec", params.DoubleValue(0.01)),
			p("min_latency_sec", params.DoubleValue(0.002)),
			p("loss_threshold", params.IntValue(5)),
			p("never_infer_loss", params.BoolValue(true)),
		}},
		{"clock_sync", "/ta_live_cs", []string{"-p", "message_type:=sensor_msgs/msg/LaserScan"}, []params.Parameter{
			p("mode", params.StringValue("offset")),
			p("when_invalid", params.StringValue("passthrough")),
			p("fifo_size", params.IntValue(11)),
			p("max_deviation_sec", params.DoubleValue(0.02)),
			p("max_invalid", params.IntValue(7)),
			p("tick_bits", params.IntValue(32)),
			p("tick_period_sec", params.DoubleValue(1e-6)),
			p("window", params.IntValue(64)),
			p("max_skew_ppm", params.DoubleValue(200)),
			p("track_skew", params.BoolValue(true)),
		}},
		{"synchronizer", "/ta_live_sync", []string{"-p", "message_types:=[sensor_msgs/msg/Imu]"}, []params.Parameter{
			p("silent_after_sec", params.DoubleValue(10)),
			p("max_drop_share", params.DoubleValue(0.25)),
		}},
		{"stream_aligner", "/ta_live_align", []string{"-p", "message_types:=[sensor_msgs/msg/Imu]"}, []params.Parameter{
			p("timeout_sec", params.DoubleValue(0.25)),
			p("silent_after_sec", params.DoubleValue(0)),
		}},
	}
	runtime := []params.Parameter{ // every node's: the node runtime's inbox limits and jump threshold
		p("inbox.max_messages", params.IntValue(512)),
		p("inbox.max_bytes", params.IntValue(64<<20)),
		p("inbox.max_message_bytes", params.IntValue(32<<20)),
		p("time_jump_threshold_sec", params.DoubleValue(2.5)),
	}
	diag := newPeer(t, "/ta_test/unused_live_diag", "/diagnostics", "diagnostic_msgs/msg/DiagnosticArray")
	for _, n := range nodes {
		n.changes = append(n.changes, runtime...)
		t.Run(n.node, func(t *testing.T) {
			node := start(t, n.node, append([]string{"--ros-args", "-r", "__node:=" + strings.TrimPrefix(n.fqn, "/")}, n.args...)...)
			c := newParamClient(t, n.fqn)
			var names []string
			for _, ch := range n.changes {
				names = append(names, ch.Name)
			}
			require.ElementsMatch(t, names, c.writable(t), "a change for every writable parameter of %s", n.node)
			for _, ch := range n.changes {
				waitFor(t, 5*time.Second, n.fqn+" diagnostics with "+ch.Name, func() bool {
					_, ok := diagValue(t, diag, n.fqn, ch.Name)
					return ok
				})
				before, _ := diagValue(t, diag, n.fqn, ch.Name)
				require.NotEqual(t, ch.Value.String(), before, "%s: the test sets a new value", ch.Name)
				ok, reason := c.setParam(t, ch)
				require.True(t, ok, "%s: %s", ch.Name, reason)
				waitFor(t, 3*time.Second, fmt.Sprintf("%s %s = %s in the diagnostics", n.fqn, ch.Name, ch.Value), func() bool {
					v, _ := diagValue(t, diag, n.fqn, ch.Name)
					return v == ch.Value.String()
				})
			}
			node.stop(t)
		})
	}
}

// TestLiveEffects: parameters set at run time change what the nodes do,
// observed on their outputs and status.
func TestLiveEffects(t *testing.T) {
	t.Run("timestamp_estimator", testLiveEstimator)
	t.Run("clock_sync", testLiveClockSync)
	t.Run("synchronizer", testLiveSynchronizer)
	t.Run("stream_aligner", testLiveAligner)
}

// testLiveEstimator: min_latency_sec moves the estimates back by the
// latency; stamp_source receive_time makes them follow the arrival, not
// header.stamp.
func testLiveEstimator(t *testing.T) {
	node := start(t, "timestamp_estimator", "--ros-args", "-r", "__node:=ta_live_est",
		"-r", "in:=/ta_test/live_raw", "-r", "out:=/ta_test/live", "-p", "message_type:=sensor_msgs/msg/Imu",
		"-p", "qos.in.reliability:=reliable", "-p", "qos.in.depth:=1000", "-p", "qos.out.depth:=1000")
	p := newPeer(t, "/ta_test/live_raw", "/ta_test/live", "sensor_msgs/msg/Imu")
	c := newParamClient(t, "/ta_live_est")
	waitDiscovered(t, p)
	// Header stamps on a perfect 10 ms grid, an hour in the past: with
	// stamp_source header they are the estimates.
	base := stamp.Time(time.Now().Add(-time.Hour).UnixNano())
	k := 0
	// send publishes n messages 10 ms apart and returns the header stamps by frame index.
	sent := map[int]stamp.Time{}
	send := func(n int) (from int) {
		from = k
		for range n {
			st := base.Add(time.Duration(k) * 10 * time.Millisecond)
			sent[k] = st
			require.NoError(t, p.pub.PublishSerialized(cdrtest.Message(st, frame(k), 307)))
			k++
			time.Sleep(5 * time.Millisecond)
		}
		return from
	}
	// out returns the stamps received for frames from..k-1 (waiting for the last).
	out := func(from int) map[int]stamp.Time {
		waitFor(t, 5*time.Second, "the last message", func() bool { return lastFrame(p.received()) == k-1 })
		m := map[int]stamp.Time{}
		for _, b := range p.received() {
			if i := frameIndex(b); i >= from {
				m[i], _ = stamp.HeaderStamp(b)
			}
		}
		return m
	}
	from := send(100)
	for i, st := range out(from) {
		if i >= from+10 {
			require.InDelta(t, int64(sent[i]), int64(st), float64(time.Microsecond), "frame %d: a perfect grid is its own estimate", i)
		}
	}
	ok, reason := c.setParam(t, params.Parameter{Name: "min_latency_sec", Value: params.DoubleValue(0.05)})
	require.True(t, ok, reason)
	from = send(100)
	for i, st := range out(from) {
		d := sent[i].Sub(st)
		require.True(t, d >= 50*time.Millisecond-time.Microsecond && d <= 50*time.Millisecond+time.Millisecond,
			"frame %d: estimate %v before the header stamp, want the 50 ms minimum latency", i, d)
	}
	ok, reason = c.setParam(t, params.Parameter{Name: "stamp_source", Value: params.StringValue("receive_time")})
	require.True(t, ok, reason)
	from = send(50)
	now := stamp.Time(time.Now().UnixNano())
	for i, st := range out(from) {
		require.InDelta(t, int64(now), int64(st), float64(5*time.Second), "frame %d: stamped near its arrival, not an hour back", i)
	}
	node.stop(t)
}

// testLiveClockSync: after fifo_size changes (the fit restarts) messages
// arriving while the fit re-locks are dropped with when_invalid drop, and
// republished with their device time with when_invalid passthrough.
func testLiveClockSync(t *testing.T) {
	node := start(t, "clock_sync", "--ros-args", "-r", "__node:=ta_live_cs",
		"-r", "in:=/ta_test/live_scan_raw", "-r", "out:=/ta_test/live_scan", "-p", "message_type:=sensor_msgs/msg/LaserScan",
		"-p", "qos.in.reliability:=reliable", "-p", "qos.in.depth:=1000", "-p", "qos.out.depth:=1000")
	p := newPeer(t, "/ta_test/live_scan_raw", "/ta_test/live_scan", "sensor_msgs/msg/LaserScan")
	c := newParamClient(t, "/ta_live_cs")
	waitDiscovered(t, p)
	begin := time.Now()
	k := 0
	send := func(n int) {
		for range n {
			dev := stamp.Time(1234*time.Second) + stamp.Time(time.Since(begin)) // a device clock since boot
			require.NoError(t, p.pub.PublishSerialized(cdrtest.Message(dev, frame(k), 100)))
			k++
			time.Sleep(10 * time.Millisecond)
		}
	}
	device := func(from int) (dev, host int) {
		waitFor(t, 5*time.Second, "outputs", func() bool { return lastFrame(p.received()) >= k-3 })
		for _, b := range p.received() {
			if frameIndex(b) < from {
				continue
			}
			st, _ := stamp.HeaderStamp(b)
			if st < stamp.Time(2000*time.Second) {
				dev++
			} else {
				host++
			}
		}
		return dev, host
	}
	send(50)
	dev, host := device(0)
	require.Zero(t, dev, "when_invalid drop: no device time comes out")
	require.Greater(t, host, 30)
	for _, s := range []params.Parameter{
		{Name: "when_invalid", Value: params.StringValue("passthrough")},
		{Name: "fifo_size", Value: params.IntValue(40)}, // restarts the fit: invalid for 40 samples
	} {
		ok, reason := c.setParam(t, s)
		require.True(t, ok, reason)
	}
	from := k
	send(80)
	dev, host = device(from)
	require.GreaterOrEqual(t, dev, 30, "passthrough while the fit re-locks: device time unchanged")
	require.Greater(t, host, 10, "locked again: host time")
	node.stop(t)
}

// testLiveSynchronizer: an input that stopped is reported blocking in
// ~/status after silent_after_sec (2 s by default); set to a minute, it is
// not.
func testLiveSynchronizer(t *testing.T) {
	node := start(t, "synchronizer", "--ros-args", "-r", "__node:=ta_live_sync", "-p", "inputs:=2",
		"-p", "message_types:=[sensor_msgs/msg/Imu]", "-r", "in0:=/ta_test/ls0", "-r", "in1:=/ta_test/ls1",
		"-p", "qos.in.reliability:=reliable")
	in0 := newPeer(t, "/ta_test/ls0", "/ta_test/unused_ls0", "sensor_msgs/msg/Imu")
	in1 := newPeer(t, "/ta_test/ls1", "/ta_test/unused_ls1", "sensor_msgs/msg/Imu")
	status := newPeer(t, "/ta_test/unused_lss", "/ta_live_sync/status", "timealign/msg/SyncStatus")
	c := newParamClient(t, "/ta_live_sync")
	for _, p := range []*peer{in0, in1} {
		waitFor(t, 10*time.Second, "discovery", func() bool { n, err := p.pub.GetSubscriptionCount(); return err == nil && n > 0 })
	}
	blocking := func() (string, bool) {
		got := status.received()
		if len(got) == 0 {
			return "", false
		}
		return decode[*tamsg.SyncStatus](t, got[len(got)-1], tamsg.SyncStatusTypeSupport).BlockingInput, true
	}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { // in0 delivers at 50 Hz; in1 once, then never again
		defer close(done)
		for k := 0; ; k++ {
			st := stamp.Time(time.Now().UnixNano())
			_ = in0.pub.PublishSerialized(cdrtest.Message(st, frame(k), 307))
			if k == 0 {
				_ = in1.pub.PublishSerialized(cdrtest.Message(st, frame(k), 307))
			}
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	defer func() { close(stop); <-done }()
	waitFor(t, 6*time.Second, "/ta_test/ls1 reported blocking", func() bool { b, _ := blocking(); return b == "/ta_test/ls1" })
	ok, reason := c.setParam(t, params.Parameter{Name: "silent_after_sec", Value: params.DoubleValue(60)})
	require.True(t, ok, reason)
	status.reset()
	waitFor(t, 3*time.Second, "no input blocking", func() bool { b, ok := blocking(); return ok && b == "" })
	node.stop(t)
}

// testLiveAligner: with silent_after_sec 0 playback waits for a silent
// input by timeout_sec alone; shortening timeout_sec releases what was
// held; then, with a long timeout again, setting silent_after_sec releases
// the next messages once the other input has been silent that long.
func testLiveAligner(t *testing.T) {
	node := start(t, "stream_aligner", "--ros-args", "-r", "__node:=ta_live_align", "-p", "inputs:=2",
		"-p", "message_types:=[sensor_msgs/msg/Imu]", "-p", "timeout_sec:=100.0", "-p", "silent_after_sec:=0.0",
		"-r", "in0:=/ta_test/la0", "-r", "in1:=/ta_test/la1", "-r", "out0:=/ta_test/la0_out", "-r", "out1:=/ta_test/la1_out",
		"-p", "qos.in.reliability:=reliable", "-p", "qos.in.depth:=1000", "-p", "qos.out.depth:=1000")
	p := newPeer(t, "/ta_test/la0", "/ta_test/la0_out", "sensor_msgs/msg/Imu")
	c := newParamClient(t, "/ta_live_align")
	waitDiscovered(t, p)
	base := stamp.Time(time.Now().UnixNano())
	k := 0
	send := func(n int) {
		for range n {
			require.NoError(t, p.pub.PublishSerialized(cdrtest.Message(base.Add(time.Duration(k)*10*time.Millisecond), frame(k), 307)))
			k++
			time.Sleep(2 * time.Millisecond)
		}
	}
	send(50) // 0.49 s of stamps: within the 100 s timeout, so all held for in1
	time.Sleep(1500 * time.Millisecond)
	require.Empty(t, p.received(), "held: in1 is waited for by the timeout alone")
	ok, reason := c.setParam(t, params.Parameter{Name: "timeout_sec", Value: params.DoubleValue(0.2)})
	require.True(t, ok, reason)
	waitFor(t, 3*time.Second, "the messages a 0.2 s timeout releases", func() bool { return len(p.received()) >= 20 })
	held := -1
	for held != len(p.received()) { // all of them (a node built with -race takes its time)
		held = len(p.received())
		time.Sleep(300 * time.Millisecond)
	}
	require.Less(t, held, 50, "those within 0.2 s of the newest are still held")
	ok, reason = c.setParam(t, params.Parameter{Name: "timeout_sec", Value: params.DoubleValue(100)})
	require.True(t, ok, reason)
	send(10)
	time.Sleep(1500 * time.Millisecond)
	require.Len(t, p.received(), held, "held again: a long timeout, and silence does not count")
	ok, reason = c.setParam(t, params.Parameter{Name: "silent_after_sec", Value: params.DoubleValue(0.5)})
	require.True(t, ok, reason)
	waitFor(t, 3*time.Second, "every message, once in1 counts as silent", func() bool { return len(p.received()) == k })
	got := p.received()
	require.True(t, slices.IsSortedFunc(got, func(a, b []byte) int { return frameIndex(a) - frameIndex(b) }), "in stamp order")
	node.stop(t)
}

// TestReferenceTopic: hardware reference stamps on `reference`, as
// sensor_msgs/msg/TimeReference (time_ref; the default) or as a
// Header-first type named by reference_type (header.stamp), make the
// estimates absolute: without them they carry the sensor's 5-7 ms latency,
// with them (±20 µs of pulse jitter) the error is microseconds. ~/status
// counts them.
func TestReferenceTopic(t *testing.T) {
	for _, tc := range []struct{ name, refType string }{
		{"TimeReference", "sensor_msgs/msg/TimeReference"},
		{"Header-first", "sensor_msgs/msg/Imu"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{"--ros-args", "-r", "__node:=ta_ref", "-r", "in:=/ta_test/ref_raw", "-r", "out:=/ta_test/ref_out",
				"-r", "reference:=/ta_test/ref", "-p", "message_type:=sensor_msgs/msg/Imu",
				"-p", "qos.in.reliability:=reliable", "-p", "qos.in.depth:=1000", "-p", "qos.out.depth:=1000"}
			if tc.refType != "sensor_msgs/msg/TimeReference" {
				args = append(args, "-p", "reference_type:="+tc.refType)
			}
			node := start(t, "timestamp_estimator", args...)
			p := newPeer(t, "/ta_test/ref_raw", "/ta_test/ref_out", "sensor_msgs/msg/Imu")
			ref := newPeer(t, "/ta_test/ref", "/ta_test/unused_ref", tc.refType)
			status := newPeer(t, "/ta_test/unused_ref_status", "/ta_ref/status", "timealign/msg/TimestampEstimatorStatus")
			waitDiscovered(t, p)
			waitFor(t, 10*time.Second, "the node's reference subscription", func() bool {
				n, err := ref.pub.GetSubscriptionCount()
				return err == nil && n > 0
			})
			samples := imu(t, 600)
			refs := 0
			for i, s := range samples {
				if i%10 == 0 {
					// The pulse, with ±20 µs of jitter.
					pulse := s.True.Add(time.Duration(i*7919%41-20) * time.Microsecond)
					var m []byte
					if tc.refType == "sensor_msgs/msg/TimeReference" {
						// header.stamp is when the reference was taken in
						// the host's view: not the reference.
						m = cdrtest.TimeReference(s.Receive.Add(time.Hour), "gps", pulse, "pps")
					} else {
						m = pad4(cdrtest.Message(pulse, "pps", 307))
					}
					require.NoError(t, ref.pub.PublishSerialized(m))
					refs++
				}
				require.NoError(t, p.pub.PublishSerialized(cdrtest.Message(s.Receive, frame(i), 307)))
				time.Sleep(2 * time.Millisecond)
			}
			waitFor(t, 10*time.Second, "the last message back", func() bool { return lastFrame(p.received()) == len(samples)-1 })
			var sq, raw float64
			n := 0
			for _, b := range p.received() {
				i := frameIndex(b)
				if i < 300 {
					continue
				}
				st, _ := stamp.HeaderStamp(b)
				e := float64(st.Sub(samples[i].True))
				sq += e * e
				raw += float64(samples[i].Receive.Sub(samples[i].True))
				n++
			}
			require.Equal(t, 300, n)
			rms := time.Duration(math.Sqrt(sq / float64(n)))
			t.Logf("%s references: estimate error RMS %v (receive stamps %v late on average)", tc.name, rms, time.Duration(raw/float64(n)))
			require.Less(t, rms, 200*time.Microsecond, "absolute with the references")
			waitFor(t, 5*time.Second, "a status counting every reference", func() bool {
				for _, b := range status.received() {
					st := decode[*tamsg.TimestampEstimatorStatus](t, b, tamsg.TimestampEstimatorStatusTypeSupport)
					if st.References == uint64(refs) && st.MessagesIn == uint64(len(samples)) {
						require.Zero(t, st.DroppedMalformed)
						lat := time.Duration(st.Latency.Sec)*time.Second + time.Duration(st.Latency.Nanosec)
						require.InDelta(t, float64(5*time.Millisecond), float64(lat), float64(time.Millisecond), "the latency the references show")
						return true
					}
				}
				return false
			})
			node.stop(t)
		})
	}
}

// imu returns n simulated IMU samples (100 Hz, 5-7 ms latency) with their
// true acquisition times, stamped in the present.
func imu(t *testing.T, n int) []sim.Sample {
	c := sim.DefaultConfig()
	c.Count = n
	c.Start = stamp.Time(time.Now().UnixNano())
	s, err := sim.Generate(c)
	require.NoError(t, err)
	return sim.Delivered(s)
}
