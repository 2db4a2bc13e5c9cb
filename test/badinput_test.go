//go:build ros2 && timealign_interfaces

package test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tiiuae/rclgo/pkg/rclgo"

	"github.com/timealign/timealign/internal/testutil/cdrtest"
	diagmsg "github.com/timealign/timealign/msgs/diagnostic_msgs/msg"
	tamsg "github.com/timealign/timealign/msgs/timealign/msg"
	"github.com/timealign/timealign/pkg/stamp"
)

// The bad input over DDS, where the middleware has a say (the
// same cases without ROS, for every node: nodes/internal/badinput and
// nodes/internal/nodekit).

// TestTypesOnOneTopic: an input with publishers of two Header-first types
// (Imu and Temperature) before the node starts: the node takes one (it
// says which, and that there are two when it sees both at once); running,
// it logs once that a publisher of the other type is there and none of
// its messages reach it, and reports WARN; messages of the type it took
// flow; once the other publisher leaves, the node says so.
func TestTypesOnOneTopic(t *testing.T) {
	diag := newPeer(t, "/ta_test/unused_types_diag", "/diagnostics", "diagnostic_msgs/msg/DiagnosticArray")
	byType := map[string]*peer{
		"sensor_msgs/msg/Imu":         newPeer(t, "/ta_test/types", "/ta_test/types_out", "sensor_msgs/msg/Imu"),
		"sensor_msgs/msg/Temperature": newPeer(t, "/ta_test/types", "/ta_test/types_out", "sensor_msgs/msg/Temperature"),
	}
	node := start(t, "timestamp_estimator", "--ros-args", "-r", "__node:=ta_types",
		"-r", "in:=/ta_test/types", "-r", "out:=/ta_test/types_out", "-p", "qos.in.reliability:=reliable")
	var took, other string
	waitFor(t, 10*time.Second, "the node's choice", func() bool {
		for typ := range byType {
			if strings.Contains(node.output.String(), "/ta_test/types ("+typ+")") { // the line listing inputs and outputs
				took = typ
			} else {
				other = typ
			}
		}
		return took != ""
	})
	t.Logf("the node took %s", took)
	warning := "/ta_test/types: a publisher of " + other + ", not " + took + ": none of its messages reach this node"
	waitFor(t, 5*time.Second, "the warning about the other type", func() bool { return strings.Contains(node.output.String(), warning) })
	waitFor(t, 5*time.Second, "a WARN diagnostic naming it", func() bool {
		for _, b := range diag.received() {
			a := decode[*diagmsg.DiagnosticArray](t, b, diagmsg.DiagnosticArrayTypeSupport)
			if len(a.Status) == 1 && a.Status[0].HardwareId == "/ta_types" && a.Status[0].Level == diagmsg.DiagnosticStatus_WARN &&
				strings.Contains(a.Status[0].Message, "input /ta_test/types: a publisher of "+other+", not "+took) {
				return true
			}
		}
		return false
	})
	in, out := byType[took], byType[other]
	waitDiscovered(t, in)
	base := stamp.Time(time.Now().UnixNano())
	for i := range 20 {
		st := base.Add(time.Duration(i) * 10 * time.Millisecond)
		require.NoError(t, in.pub.PublishSerialized(pad4(cdrtest.Message(st, frame(i), 307))))
		require.NoError(t, out.pub.PublishSerialized(pad4(cdrtest.Message(st, "other", 32))))
		time.Sleep(5 * time.Millisecond)
	}
	waitFor(t, 5*time.Second, "the messages of the type taken through", func() bool { return lastFrame(in.received()) == 19 })
	for _, m := range in.received() {
		require.GreaterOrEqual(t, frameIndex(m), 0, "only messages of the type taken reach the node")
	}
	out.close() // the other publisher leaves
	waitFor(t, 10*time.Second, "the node saying it is gone", func() bool {
		return strings.Contains(node.output.String(), "/ta_test/types: no publisher of another type than "+took+" any more")
	})
	require.Equal(t, 1, strings.Count(node.output.String(), warning), "the warning once")
	node.stop(t)
}

// TestEmptyMessages: over DDS, a serialized message of 0 bytes and one of
// only the CDR encapsulation (4 bytes), on a best-effort input (the
// default): the 4-byte one is counted as malformed in ~/status and logged;
// the empty one Cyclone DDS sends as a packet its readers reject (a
// reliable reader then waits for it forever, stalling that writer: the
// middleware's doing, hence best effort here), so it never reaches the
// node; a good message after them goes through.
func TestEmptyMessages(t *testing.T) {
	node := start(t, "timestamp_estimator", "--ros-args", "-r", "__node:=ta_empty",
		"-r", "in:=/ta_test/empty_raw", "-r", "out:=/ta_test/empty", "-p", "message_type:=sensor_msgs/msg/Imu")
	p := newPeer(t, "/ta_test/empty_raw", "/ta_test/empty", "sensor_msgs/msg/Imu")
	status := newPeer(t, "/ta_test/unused_empty_status", "/ta_empty/status", "timealign/msg/TimestampEstimatorStatus")
	waitDiscovered(t, p)
	for _, m := range [][]byte{{}, {0, 1, 0, 0}} {
		require.NoError(t, p.pub.PublishSerialized(m))
		time.Sleep(10 * time.Millisecond)
	}
	require.NoError(t, p.pub.PublishSerialized(pad4(cdrtest.Message(stamp.Time(time.Now().UnixNano()), frame(0), 307))))
	waitFor(t, 5*time.Second, "the good message", func() bool { return lastFrame(p.received()) == 0 })
	var st *tamsg.TimestampEstimatorStatus
	waitFor(t, 5*time.Second, "a status with the good message", func() bool {
		var ok bool
		if st, ok = latest[*tamsg.TimestampEstimatorStatus](t, status, tamsg.TimestampEstimatorStatusTypeSupport); !ok {
			return false
		}
		return st.MessagesOut == 1
	})
	t.Logf("%d of the 2 empty messages reached the node, counted malformed", st.DroppedMalformed)
	require.GreaterOrEqual(t, st.DroppedMalformed, uint64(1), "the encapsulation-only message counted")
	require.Equal(t, st.MessagesIn, st.MessagesOut+st.DroppedMalformed)
	require.Contains(t, node.output.String(), "dropped a malformed message on /ta_test/empty_raw")
	node.stop(t)
}

// TestBurst: 10 000 Imu published at once (reliable, keeping all on both
// ends) through timestamp_estimator: every one comes out or is counted
// as dropped in ~/status, nothing else, and the node exits cleanly.
func TestBurst(t *testing.T) {
	const n = 10_000
	node := start(t, "timestamp_estimator", append([]string{"--ros-args", "-r", "__node:=ta_burst",
		"-r", "in:=/ta_test/burst_raw", "-r", "out:=/ta_test/burst", "-p", "message_type:=sensor_msgs/msg/Imu"}, keepAll...)...)
	p := newPeerQoS(t, "/ta_test/burst_raw", "/ta_test/burst", "sensor_msgs/msg/Imu", 10, true)
	status := newPeer(t, "/ta_test/unused_burst_status", "/ta_burst/status", "timealign/msg/TimestampEstimatorStatus")
	waitDiscovered(t, p)
	base := stamp.Time(time.Now().UnixNano())
	began := time.Now()
	for i := range n {
		require.NoError(t, p.pub.PublishSerialized(pad4(cdrtest.Message(base.Add(time.Duration(i)*time.Millisecond), frame(i), 307))))
	}
	sent := time.Since(began)
	var st *tamsg.TimestampEstimatorStatus
	waitFor(t, 30*time.Second, "every message out or counted", func() bool {
		var ok bool
		if st, ok = latest[*tamsg.TimestampEstimatorStatus](t, status, tamsg.TimestampEstimatorStatusTypeSupport); !ok {
			return false
		}
		return st.MessagesIn+st.DroppedQueue == n && len(p.received()) == int(st.MessagesOut)
	})
	t.Logf("load: a burst of %d Imu (published in %v): %d out, %d dropped by the inbox (load average %s)",
		n, sent.Round(time.Millisecond), len(p.received()), st.DroppedQueue, loadAvg())
	require.Equal(t, st.MessagesIn, st.MessagesOut+st.DroppedMalformed)
	require.Zero(t, st.DroppedMalformed)
	node.stop(t)
}

// TestEmptyMessagesInAFlood: 10 000 Imu published at once (reliable,
// keeping all), one in 50 of them an encapsulation-only message (4 bytes,
// no Header), and among them, from a second publisher (best effort), one
// in 101 a message of 0 bytes. The node counts every empty one that
// reaches it as malformed (a 0-byte message may never reach it: the
// middleware's doing), logs it at most once a second, and every good
// message comes out or is counted as dropped by the inbox. (The 0-byte
// messages come from a best-effort writer: from a reliable keep-all one,
// Cyclone DDS's writer blocked in rcl_publish for good after them.)
func TestEmptyMessagesInAFlood(t *testing.T) {
	const n = 10_000
	node := start(t, "timestamp_estimator", append([]string{"--ros-args", "-r", "__node:=ta_empty_flood",
		"-r", "in:=/ta_test/empty_flood_raw", "-r", "out:=/ta_test/empty_flood", "-p", "message_type:=sensor_msgs/msg/Imu"}, keepAll...)...)
	p := newPeerQoS(t, "/ta_test/empty_flood_raw", "/ta_test/empty_flood", "sensor_msgs/msg/Imu", 10, true)
	status := newPeer(t, "/ta_test/unused_empty_flood_status", "/ta_empty_flood/status", "timealign/msg/TimestampEstimatorStatus")
	zeros := newPeer(t, "/ta_test/empty_flood_raw", "/ta_test/unused_empty_flood", "sensor_msgs/msg/Imu")
	waitDiscovered(t, p)
	waitFor(t, 10*time.Second, "the second publisher matched", func() bool { k, err := zeros.pub.GetSubscriptionCount(); return err == nil && k > 0 })
	base := stamp.Time(time.Now().UnixNano())
	var good, encOnly, zero int
	began := time.Now()
	for i := range n {
		var m []byte
		switch {
		case i == n-1: // the last is good: the end is seen
			m = pad4(cdrtest.Message(base.Add(time.Duration(i)*time.Millisecond), frame(i), 307))
			good++
		case i%101 == 100:
			publishPatiently(t, zeros.pub, []byte{})
			zero++
			continue
		case i%50 == 49:
			m = []byte{0, 1, 0, 0}
			encOnly++
		default:
			m = pad4(cdrtest.Message(base.Add(time.Duration(i)*time.Millisecond), frame(i), 307))
			good++
		}
		publishPatiently(t, p.pub, m)
	}
	sent := time.Since(began)
	var st *tamsg.TimestampEstimatorStatus
	waitFor(t, 30*time.Second, "every message in or counted, every one taken in out", func() bool {
		var ok bool
		if st, ok = latest[*tamsg.TimestampEstimatorStatus](t, status, tamsg.TimestampEstimatorStatusTypeSupport); !ok {
			return false
		}
		return st.MessagesIn+st.DroppedQueue >= uint64(n-zero) && st.MessagesIn == st.MessagesOut+st.DroppedMalformed &&
			len(p.received()) == int(st.MessagesOut)
	})
	took := time.Since(began)
	t.Logf("load: %d Imu, %d encapsulation-only and %d 0-byte messages at once (published in %v): %d out, %d malformed, %d dropped by the inbox (load average %s)",
		good, encOnly, zero, sent.Round(time.Millisecond), st.MessagesOut, st.DroppedMalformed, st.DroppedQueue, loadAvg())
	require.LessOrEqual(t, st.MessagesIn+st.DroppedQueue, uint64(n), "nothing counted twice")
	require.LessOrEqual(t, st.DroppedMalformed, uint64(encOnly+zero))
	require.LessOrEqual(t, st.MessagesOut, uint64(good))
	if st.DroppedQueue == 0 {
		require.GreaterOrEqual(t, st.DroppedMalformed, uint64(encOnly), "every encapsulation-only message counted")
		require.GreaterOrEqual(t, st.MessagesOut, uint64(good), "every good message out")
	}
	for _, m := range p.received() {
		require.GreaterOrEqual(t, frameIndex(m), 0, "only good messages out")
	}
	node.stop(t)
	logs := strings.Count(node.output.String(), "dropped a malformed message on /ta_test/empty_flood_raw")
	require.GreaterOrEqual(t, logs, 1)
	require.LessOrEqual(t, logs, int(took.Seconds())+2, "logged at most once a second")
}

// publishPatiently publishes m on pub, again while the writer says it
// cannot (Fast DDS's reliable keep-all writer gives up after its
// max_blocking_time of 100 ms when the reader has not acknowledged its
// history yet, where Cyclone DDS's blocks), for up to 10 s.
func publishPatiently(t *testing.T, pub *rclgo.Publisher, m []byte) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := pub.PublishSerialized(m)
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("publish: the writer refused for 10 s: %s", strings.SplitN(err.Error(), "\n", 2)[0])
		}
		time.Sleep(time.Millisecond)
	}
}

// TestHundredMegabytesOverDDS: a 100 MB message with a leading Header
// goes through timestamp_estimator (reliable, keeping all) with the
// default limits, every byte but the stamp as sent.
func TestHundredMegabytesOverDDS(t *testing.T) {
	node := start(t, "timestamp_estimator", append([]string{"--ros-args", "-r", "__node:=ta_huge",
		"-r", "in:=/ta_test/huge_raw", "-r", "out:=/ta_test/huge", "-p", "message_type:=sensor_msgs/msg/Image"}, keepAll...)...)
	p := bigPeer(t, "/ta_test/huge_raw", "/ta_test/huge", "sensor_msgs/msg/Image")
	waitDiscovered(t, p)
	// A 100 MB "image": 5773 x 5773 rgb8.
	m := image(stamp.Time(time.Now().UnixNano()), frame(0), 5773, 5773)
	began := time.Now()
	require.NoError(t, p.pub.PublishSerialized(m))
	waitFor(t, 60*time.Second, "the 100 MB message back", func() bool { return len(p.received()) == 1 })
	took := time.Since(began)
	got := p.received()[0]
	require.Len(t, got, len(m))
	require.True(t, bytes.Equal(m[stamp.HeaderStampSize:], got[stamp.HeaderStampSize:]), "every byte but the stamp as sent")
	t.Logf("load: a %.0f MB message through timestamp_estimator and back in %v (load average %s)",
		float64(len(m))/1e6, took.Round(time.Millisecond), loadAvg())
	node.stop(t)
}

// TestBadEnvironment: a node started with a middleware environment that
// cannot work exits at once with status 1 and a message naming the
// variable, instead of hanging or running deaf (nodes/internal/ddsenv;
// each distribution's own case).
func TestBadEnvironment(t *testing.T) {
	type envCase struct {
		name string
		env  []string
		want string
	}
	cases := []envCase{
		// rcl checks RMW_IMPLEMENTATION when it is loaded, before main,
		// and exits with "RMW implementation not installed (expected
		// identifier of 'rmw_nosuchdds_cpp')"; ddsenv would say the same
		// with the installed RMWs, should a later rcl stop doing so.
		{"an RMW that is not installed", []string{"RMW_IMPLEMENTATION=rmw_nosuchdds_cpp"}, "not installed (expected identifier of 'rmw_nosuchdds_cpp')"},
		{"a Fast DDS profile that does not exist", []string{"RMW_IMPLEMENTATION=", "FASTRTPS_DEFAULT_PROFILES_FILE=/nonexistent/fastdds.xml"},
			"FASTRTPS_DEFAULT_PROFILES_FILE=/nonexistent/fastdds.xml: no such file"},
		{"a Cyclone DDS file that does not exist", []string{"RMW_IMPLEMENTATION=", "CYCLONEDDS_URI=file:///nonexistent/cyclonedds.xml"},
			"CYCLONEDDS_URI names file:///nonexistent/cyclonedds.xml: no such file"},
	}
	if discoveryRangeDistro() {
		cases = append(cases, envCase{"ROS_LOCALHOST_ONLY=1 against another discovery range (Jazzy)",
			[]string{"ROS_LOCALHOST_ONLY=1", "ROS_AUTOMATIC_DISCOVERY_RANGE=SUBNET"}, "ROS_LOCALHOST_ONLY=1 overrides ROS_AUTOMATIC_DISCOVERY_RANGE=SUBNET"})
	} else {
		cases = append(cases, envCase{"a discovery range Humble does not read",
			[]string{"ROS_LOCALHOST_ONLY=", "ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST"}, "ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST: this ROS 2 (Humble's rcl) does not read it"})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cmd := exec.Command(filepath.Join(binDir, "timestamp_estimator"), "--ros-args", "-r", "__node:=ta_bad_env")
			cmd.Env = append(os.Environ(), c.env...)
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			require.NoError(t, cmd.Start())
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case err := <-done:
				var ee *exec.ExitError
				require.ErrorAs(t, err, &ee, "output:\n%s", out.String())
				require.Equal(t, 1, ee.ExitCode(), "output:\n%s", out.String())
			case <-time.After(10 * time.Second):
				_ = cmd.Process.Kill()
				<-done
				t.Fatalf("still running after 10 s; output:\n%s", out.String())
			}
			require.Contains(t, out.String(), c.want)
		})
	}
}
