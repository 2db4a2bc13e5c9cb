//go:build ros2 && timealign_interfaces

package test

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timealign/timealign/internal/testutil/cdrtest"
	diagmsg "github.com/timealign/timealign/msgs/diagnostic_msgs/msg"
	rclmsg "github.com/timealign/timealign/msgs/rcl_interfaces/msg"
	srv "github.com/timealign/timealign/msgs/rcl_interfaces/srv"
	tamsg "github.com/timealign/timealign/msgs/timealign/msg"
	"github.com/timealign/timealign/pkg/stamp"
)

// firstList sends list_parameters every 20 ms (a request sent before the
// client has matched the service is lost) until one is answered, and
// returns when it was answered and the names.
func (c *paramClient) firstList(t *testing.T, within time.Duration) (time.Time, []string) {
	t.Helper()
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		res, _, err := c.list.Send(ctx, &srv.ListParameters_Request{})
		cancel()
		if err == nil {
			return time.Now(), res.Result.Names
		}
	}
	t.Fatalf("list_parameters not answered within %v", within)
	return time.Time{}, nil
}

// TestParametersWhileDiscovering: a node given no message type and no
// publisher of its input answers list_parameters within a second of its
// start, takes a parameter set (the ros2 CLI's too), reports WARN "waiting
// for a publisher", and once a publisher appears, works with the value
// set.
func TestParametersWhileDiscovering(t *testing.T) {
	diag := newPeer(t, "/ta_test/unused_ddiag", "/diagnostics", "diagnostic_msgs/msg/DiagnosticArray")
	c := newParamClient(t, "/ta_disc")
	began := time.Now()
	node := start(t, "timestamp_estimator", "--ros-args", "-r", "__node:=ta_disc",
		"-r", "in:=/ta_test/disc_raw", "-r", "out:=/ta_test/disc", "-p", "qos.in.reliability:=reliable")
	at, names := c.firstList(t, 5*time.Second)
	t.Logf("list_parameters answered %v after the node's start, while it waits for a publisher", at.Sub(began).Round(time.Millisecond))
	require.Less(t, at.Sub(began), time.Second)
	require.Contains(t, names, "window_sec")
	require.Contains(t, names, "inbox.max_bytes")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	res, _, err := c.set.Send(ctx, &srv.SetParameters_Request{Parameters: []rclmsg.Parameter{
		{Name: "window_sec", Value: rclmsg.ParameterValue{Type: 3, DoubleValue: 0.5}}}})
	require.NoError(t, err)
	require.True(t, res.Results[0].Successful, res.Results[0].Reason)
	waitFor(t, 5*time.Second, "a WARN diagnostic naming the input", func() bool {
		for _, b := range diag.received() {
			a := decode[*diagmsg.DiagnosticArray](t, b, diagmsg.DiagnosticArrayTypeSupport)
			if len(a.Status) == 1 && a.Status[0].HardwareId == "/ta_disc" && a.Status[0].Level == diagmsg.DiagnosticStatus_WARN &&
				a.Status[0].Message == "waiting for a publisher of /ta_test/disc_raw to learn its type" {
				return true
			}
		}
		return false
	})
	if _, err := exec.LookPath("ros2"); err == nil {
		t.Cleanup(func() { _, _ = ros2(t, "daemon", "stop") })
		out, err := ros2Param(t, "set", "/ta_disc", "loss_threshold", "3")
		require.NoError(t, err, out)
		require.Contains(t, out, "Set parameter successful")
		out, err = ros2Param(t, "get", "/ta_disc", "window_sec")
		require.NoError(t, err, out)
		require.Contains(t, out, "0.5")
	}
	p := newPeer(t, "/ta_test/disc_raw", "/ta_test/disc", "sensor_msgs/msg/Imu")
	waitDiscovered(t, p)
	base := stamp.Time(time.Now().UnixNano())
	for i := range 20 {
		require.NoError(t, p.pub.PublishSerialized(pad4(cdrtest.Message(base.Add(time.Duration(i)*10*time.Millisecond), frame(i), 307))))
		time.Sleep(2 * time.Millisecond)
	}
	waitFor(t, 5*time.Second, "the messages through", func() bool { return lastFrame(p.received()) == 19 })
	require.Contains(t, node.output.String(), "/ta_test/disc_raw carries sensor_msgs/msg/Imu")
	node.stop(t)
}

// TestSignalDuringDiscovery: SIGTERM or SIGINT while a node waits for the
// type of its input (or is still starting) ends it with status 0 within a
// second.
func TestSignalDuringDiscovery(t *testing.T) {
	for _, tc := range []struct {
		name  string
		sig   syscall.Signal
		after time.Duration // 0: once it answers its parameters
	}{
		{"SIGTERM while waiting", syscall.SIGTERM, 0},
		{"SIGINT while waiting", syscall.SIGINT, 0},
		// While rcl starts: once the Go runtime handles signals (a signal
		// before, while the dynamic linker loads rcl's libraries, takes its
		// default action: the process ends by the signal), 20 ms later.
		{"SIGTERM while starting", syscall.SIGTERM, 20 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			name := fmt.Sprintf("ta_sig_%d", peers.Add(1))
			c := newParamClient(t, "/"+name)
			node := start(t, "synchronizer", "--ros-args", "-r", "__node:="+name, "-p", "inputs:=2",
				"-r", "in0:=/ta_test/"+name+"_0", "-r", "in1:=/ta_test/"+name+"_1")
			if tc.after == 0 {
				c.firstList(t, 5*time.Second)
			} else {
				waitSignalHandled(t, node.cmd.Process.Pid, tc.sig)
				time.Sleep(tc.after)
			}
			sent := time.Now()
			require.NoError(t, node.cmd.Process.Signal(tc.sig))
			select {
			case err := <-node.done:
				require.NoError(t, err, "exit status; output:\n%s", node.output.String())
				t.Logf("exit %v after the signal", time.Since(sent).Round(time.Millisecond))
			case <-time.After(time.Second):
				t.Fatalf("no exit within 1 s of %v; output:\n%s", tc.sig, node.output.String())
			}
			require.NotContains(t, node.output.String(), "[ERROR]")
		})
	}
}

// image is a sensor_msgs/Image, rgb8, w x h, stamped st, its pixels a
// pattern that differs from frame to frame.
func image(st stamp.Time, frameID string, w, h int) []byte {
	le := binary.LittleEndian
	b := cdrtest.Message(st, frameID, 0) // encapsulation, header (stamp, frame_id)
	u32 := func(v uint32) {
		for (len(b)-4)%4 != 0 {
			b = append(b, 0)
		}
		b = le.AppendUint32(b, v)
	}
	u32(uint32(h))
	u32(uint32(w))
	u32(uint32(len("rgb8") + 1))
	b = append(b, "rgb8\x00"...)
	b = append(b, 0) // is_bigendian
	u32(uint32(w * 3))
	u32(uint32(w * h * 3))
	n := len(b)
	b = append(b, make([]byte, w*h*3)...)
	for i := n; i < len(b); i += 997 {
		b[i] = byte(i) ^ frameID[len(frameID)-1]
	}
	return pad4(b)
}

// bigPeer is a peer for images: keep-all reliable queues (a keep-last
// writer faster than DDS drops samples; a keep-all one waits), shallow
// (at most 10 images unacknowledged).
func bigPeer(t *testing.T, in, out, msgType string) *peer {
	return newPeerQoS(t, in, out, msgType, 10, true)
}

// keepAll are the QoS parameters of a node's input and output for images:
// reliable, keep-all, as the bigPeer's.
var keepAll = []string{"-p", "qos.in.reliability:=reliable", "-p", "qos.in.history:=keep_all", "-p", "qos.in.depth:=10",
	"-p", "qos.out.history:=keep_all", "-p", "qos.out.depth:=10"}

// TestImages: 1080p and 4K rgb8 sensor_msgs/Image (6.2 MB, 24.9 MB)
// through timestamp_estimator (every byte but header.stamp republished as
// sent) and through the synchronizer (members republished byte for byte),
// at camera rates; the figures are logged.
func TestImages(t *testing.T) {
	for _, tc := range []struct {
		name   string
		w, h   int
		frames int
		period time.Duration
	}{
		{"1080p", 1920, 1080, 30, 33 * time.Millisecond},
		{"4K", 3840, 2160, 10, 100 * time.Millisecond},
	} {
		t.Run(tc.name+"/timestamp_estimator", func(t *testing.T) {
			name := "ta_img_est_" + tc.name
			node := start(t, "timestamp_estimator", append([]string{"--ros-args", "-r", "__node:=" + name,
				"-r", "in:=/ta_test/" + name + "_raw", "-r", "out:=/ta_test/" + name,
				"-p", "message_type:=sensor_msgs/msg/Image"}, keepAll...)...)
			p := bigPeer(t, "/ta_test/"+name+"_raw", "/ta_test/"+name, "sensor_msgs/msg/Image")
			status := newPeer(t, "/ta_test/unused_"+name, "/"+name+"/status", "timealign/msg/TimestampEstimatorStatus")
			c := newParamClient(t, "/"+name)
			waitDiscovered(t, p)
			c.firstList(t, 5*time.Second)
			// While the images flow, the node answers its parameters.
			var answered []time.Duration
			listing := make(chan struct{})
			go func() {
				defer close(listing)
				for lastFrame(p.received()) < tc.frames/2 {
					time.Sleep(50 * time.Millisecond)
				}
				for range 5 {
					t0 := time.Now()
					ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
					_, _, err := c.list.Send(ctx, &srv.ListParameters_Request{})
					cancel()
					if err == nil {
						answered = append(answered, time.Since(t0).Round(time.Millisecond))
					}
				}
			}()
			sent := make([][]byte, tc.frames)
			begin := time.Now()
			for i := range sent {
				for time.Since(begin) < time.Duration(i)*tc.period {
					time.Sleep(time.Millisecond)
				}
				sent[i] = image(stamp.Time(time.Now().UnixNano()), frame(i), tc.w, tc.h)
				require.NoError(t, p.pub.PublishSerialized(sent[i]))
				// At most 64 MB in flight (two 4K frames, ten 1080p ones):
				// the node's inbox and output hold 128 MB at most
				// (inbox.max_bytes) and drop the oldest beyond, counted
				// (TestInboxDrops); DDS on loopback carries 40 to 250 MB/s
				// here, less than 4K at 10 Hz when the machine is busy.
				if ahead := max(2, (64<<20)/len(sent[i])); i >= ahead {
					waitFor(t, 20*time.Second, "the frames before the last ones out", func() bool { return lastFrame(p.received()) >= i-ahead })
				}
			}
			took := time.Since(begin)
			<-listing
			t.Logf("list_parameters answered in %v while the images flowed", answered)
			require.Len(t, answered, 5)
			for _, d := range answered {
				require.Less(t, d, time.Second)
			}
			waitFor(t, 20*time.Second, "the last image back", func() bool { return lastFrame(p.received()) == len(sent)-1 })
			got := p.received()
			first := firstFrame(t, got)
			require.Len(t, got, len(sent)-first, "every image after the first one back")
			for j, g := range got {
				want := sent[first+j]
				require.Len(t, g, len(want))
				require.True(t, bytes.Equal(want[stamp.HeaderStampSize:], g[stamp.HeaderStampSize:]), "image %d: every byte but the stamp as sent", first+j)
			}
			t.Logf("%s rgb8 Image (%d bytes) through timestamp_estimator: %d of %d frames at %.1f Hz in, every one out (%.0f MB/s)",
				tc.name, len(sent[0]), len(got), len(sent), float64(len(sent))/took.Seconds(), float64(len(got)*len(sent[0]))/took.Seconds()/1e6)
			waitFor(t, 5*time.Second, "a status counting every image", func() bool {
				for _, b := range status.received() {
					st := decode[*tamsg.TimestampEstimatorStatus](t, b, tamsg.TimestampEstimatorStatusTypeSupport)
					if st.MessagesIn == uint64(len(sent)) {
						require.Zero(t, st.DroppedQueue+st.DroppedMalformed)
						return true
					}
				}
				return false
			})
			node.stop(t)
		})
		t.Run(tc.name+"/synchronizer", func(t *testing.T) {
			name := "ta_img_sync_" + tc.name
			node := start(t, "synchronizer", append([]string{"--ros-args", "-r", "__node:=" + name, "-p", "inputs:=2",
				"-p", "message_types:=[sensor_msgs/msg/Image, sensor_msgs/msg/Imu]",
				"-r", "in0:=/ta_test/" + name + "_cam", "-r", "in1:=/ta_test/" + name + "_imu",
				"-r", "out0:=/ta_test/" + name + "_cam_out", "-r", "out1:=/ta_test/" + name + "_imu_out",
				// 4K images cross DDS here at about a frame a second: gaps
				// of 2 s (the default) are not silence.
				"-p", "silent_after_sec:=10.0"}, keepAll...)...)
			cam := bigPeer(t, "/ta_test/"+name+"_cam", "/ta_test/"+name+"_cam_out", "sensor_msgs/msg/Image")
			imu := newPeer(t, "/ta_test/"+name+"_imu", "/ta_test/"+name+"_imu_out", "sensor_msgs/msg/Imu")
			status := newPeer(t, "/ta_test/unused_"+name, "/"+name+"/status", "timealign/msg/SyncStatus")
			waitDiscovered(t, cam, imu)
			sent := make([][]byte, tc.frames)
			begin := time.Now()
			base := stamp.Time(begin.UnixNano())
			for i := range sent {
				at := time.Duration(i) * tc.period
				for time.Since(begin) < at {
					time.Sleep(time.Millisecond)
				}
				st := base.Add(at)
				sent[i] = image(st, frame(i), tc.w, tc.h)
				require.NoError(t, cam.pub.PublishSerialized(sent[i]))
				require.NoError(t, imu.pub.PublishSerialized(pad4(cdrtest.Message(st.Add(time.Millisecond), frame(i), 307))))
				// At most two frames in flight: DDS on loopback carries
				// 40 to 100 MB/s here, and a node that falls further behind
				// drops from its inbox (reported, see TestInboxDrops).
				if i >= 2 {
					waitFor(t, 20*time.Second, "the frame before the last out", func() bool { return lastFrame(cam.received()) >= i-2 })
				}
			}
			took := time.Since(begin)
			// ApproximateTime holds the newest set until a later message
			// proves it best: every frame but the last is matched.
			waitFor(t, 20*time.Second, "the images matched", func() bool { return lastFrame(cam.received()) >= len(sent)-2 })
			got := cam.received()
			first := firstFrame(t, got)
			for j, g := range got {
				require.True(t, bytes.Equal(sent[first+j], g), "image %d republished byte for byte", first+j)
			}
			t.Logf("%s rgb8 Image (%d bytes) + Imu through the synchronizer: %d frames at %.1f Hz in, %d matched and republished (%.0f MB/s)",
				tc.name, len(sent[0]), len(sent), float64(len(sent))/took.Seconds(), len(got), float64(len(got)*len(sent[0]))/took.Seconds()/1e6)
			waitFor(t, 5*time.Second, "a status with every image received", func() bool {
				for _, b := range status.received() {
					st := decode[*tamsg.SyncStatus](t, b, tamsg.SyncStatusTypeSupport)
					if len(st.Received) == 2 && st.Received[0] == uint64(len(sent)) {
						require.Zero(t, st.DroppedQueue)
						return true
					}
				}
				return false
			})
			for _, b := range status.received() {
				st := decode[*tamsg.SyncStatus](t, b, tamsg.SyncStatusTypeSupport)
				if st.Received[0] > 0 {
					require.NotEqual(t, "/ta_test/"+name+"_cam", st.BlockingInput, "the camera delivers: not reported silent")
				}
			}
			node.stop(t)
		})
	}
}

// TestInboxDrops: with inbox.max_message_bytes at 1 MB, 1080p images are
// dropped and small ones pass: the drops are counted in ~/status
// (dropped_queue), logged with the input and the size, and reported as WARN
// on /diagnostics; never silence.
func TestInboxDrops(t *testing.T) {
	name := "ta_drops"
	node := start(t, "timestamp_estimator", append([]string{"--ros-args", "-r", "__node:=" + name,
		"-r", "in:=/ta_test/drops_raw", "-r", "out:=/ta_test/drops", "-p", "message_type:=sensor_msgs/msg/Image",
		"-p", "inbox.max_message_bytes:=1000000"}, keepAll...)...)
	p := bigPeer(t, "/ta_test/drops_raw", "/ta_test/drops", "sensor_msgs/msg/Image")
	status := newPeer(t, "/ta_test/unused_drops", "/"+name+"/status", "timealign/msg/TimestampEstimatorStatus")
	diag := newPeer(t, "/ta_test/unused_drops_diag", "/diagnostics", "diagnostic_msgs/msg/DiagnosticArray")
	waitDiscovered(t, p)
	const small, big = 6, 3
	base := stamp.Time(time.Now().UnixNano())
	hd := 0
	for i := range small + big {
		w, h := 64, 48
		if i%3 == 1 {
			w, h = 1920, 1080
		}
		m := image(base.Add(time.Duration(i)*33*time.Millisecond), frame(i), w, h)
		if w == 1920 {
			hd = len(m)
		}
		require.NoError(t, p.pub.PublishSerialized(m))
	}
	waitFor(t, 10*time.Second, "every small image out, every big one counted", func() bool {
		for _, b := range status.received() {
			st := decode[*tamsg.TimestampEstimatorStatus](t, b, tamsg.TimestampEstimatorStatusTypeSupport)
			if st.MessagesIn == small && st.DroppedQueue == big {
				return len(p.received()) == small
			}
		}
		return false
	})
	for _, m := range p.received() {
		require.Less(t, len(m), 10_000, "only small images out")
	}
	waitFor(t, 5*time.Second, "a WARN diagnostic naming the drops", func() bool {
		for _, b := range diag.received() {
			a := decode[*diagmsg.DiagnosticArray](t, b, diagmsg.DiagnosticArrayTypeSupport)
			if len(a.Status) == 1 && a.Status[0].HardwareId == "/"+name && a.Status[0].Level == diagmsg.DiagnosticStatus_WARN &&
				strings.Contains(a.Status[0].Message, "input /ta_test/drops_raw: messages dropped, larger than inbox.max_message_bytes") &&
				keyValue(a.Status[0].Values, "inbox.dropped") == fmt.Sprint(big) {
				return true
			}
		}
		return false
	})
	node.stop(t)
	// Logged at most once a second, naming the input and the sizes.
	lines := 0
	for _, l := range strings.Split(node.output.String(), "\n") {
		if strings.Contains(l, "/ta_test/drops_raw: dropped ") {
			lines++
			var k int
			_, err := fmt.Sscanf(l[strings.Index(l, "dropped "):], "dropped %d messages", &k)
			require.NoError(t, err, l)
			require.Contains(t, l, fmt.Sprintf("(%d bytes, the last %d bytes): %d larger than inbox.max_message_bytes (1000000)", k*hd, hd, k))
		}
	}
	require.GreaterOrEqual(t, lines, 1)
	require.LessOrEqual(t, lines, big)
}

// waitSignalHandled waits until process pid catches sig (its SigCgt mask
// in /proc): the Go runtime has started and installed its handlers.
func waitSignalHandled(t *testing.T, pid int, sig syscall.Signal) {
	t.Helper()
	waitFor(t, 10*time.Second, "the node's signal handlers", func() bool {
		status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
		if err != nil {
			return false
		}
		for _, line := range strings.Split(string(status), "\n") {
			if mask, ok := strings.CutPrefix(line, "SigCgt:"); ok {
				m, err := strconv.ParseUint(strings.TrimSpace(mask), 16, 64)
				return err == nil && m&(1<<(uint(sig)-1)) != 0
			}
		}
		return false
	})
}
