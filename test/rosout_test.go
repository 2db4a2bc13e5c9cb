//go:build ros2 && timealign_interfaces

package test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tiiuae/rclgo/pkg/rclgo"

	rclmsg "github.com/timealign/timealign/msgs/rcl_interfaces/msg"
)

// rosoutReader keeps every rcl_interfaces/msg/Log that reaches /rosout,
// with rcl's rosout QoS (transient local: the lines a node wrote before
// the reader matched come too, as for rqt_console).
type rosoutReader struct {
	mu    sync.Mutex
	lines []*rclmsg.Log
}

func newRosoutReader(t *testing.T) *rosoutReader {
	t.Helper()
	ctx, err := rclgo.NewContext(rclgo.ClockTypeROSTime, nil)
	require.NoError(t, err)
	node, err := ctx.NewNode("timealign_test_rosout", "")
	require.NoError(t, err)
	opts := rclgo.NewDefaultSubscriptionOptions()
	opts.Qos.Depth = 1000
	opts.Qos.Durability = rclgo.DurabilityTransientLocal
	r := &rosoutReader{}
	sub, err := node.NewSubscription("/rosout", rclmsg.LogTypeSupport, opts, func(s *rclgo.Subscription) {
		b, _, err := s.TakeSerializedMessage()
		if err != nil {
			return
		}
		m, err := rclgo.Deserialize(b, rclmsg.LogTypeSupport)
		if err != nil {
			return
		}
		r.mu.Lock()
		r.lines = append(r.lines, m.(*rclmsg.Log))
		r.mu.Unlock()
	})
	require.NoError(t, err)
	ws, err := ctx.NewWaitSet()
	require.NoError(t, err)
	ws.AddSubscriptions(sub)
	c, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = ws.Run(c) }()
	t.Cleanup(func() { cancel(); <-done; ctx.Close() })
	return r
}

// of returns the lines of the logger name.
func (r *rosoutReader) of(name string) []*rclmsg.Log {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*rclmsg.Log
	for _, l := range r.lines {
		if l.Name == name {
			out = append(out, l)
		}
	}
	return out
}

func (r *rosoutReader) find(name string, level uint8, substr string) *rclmsg.Log {
	for _, l := range r.of(name) {
		if l.Level == level && strings.Contains(l.Msg, substr) {
			return l
		}
	}
	return nil
}

// TestRosout: a node's log lines reach /rosout with its logger's name
// (namespace and remapped name) and their level, on every distribution
// (Jazzy's rcl no longer makes the publisher: the nodes do, see
// nodes/internal/rosnode/rosout.go), once each; --log-level decides what
// reaches the console and /rosout, and --disable-rosout-logs keeps them
// off /rosout.
func TestRosout(t *testing.T) {
	r := newRosoutReader(t)
	t.Cleanup(func() {
		if t.Failed() {
			r.mu.Lock()
			defer r.mu.Unlock()
			for _, l := range r.lines {
				t.Logf("/rosout: [%d] [%s] %s", l.Level, l.Name, l.Msg)
			}
		}
	})
	t0 := time.Now()
	// A node logs its inputs and outputs at INFO when it starts, then at
	// WARN, on its first report (1 s), that no input came yet.
	const typ = "message_type:=sensor_msgs/msg/Imu"
	const started = "/ta_rosout/in (sensor_msgs/msg/Imu), " // then the reference input and the output
	node := start(t, "timestamp_estimator", "--ros-args", "-r", "__ns:=/ta_rosout", "-r", "__node:=est",
		"-r", "in:=/ta_rosout/in", "-r", "out:=/ta_rosout/out", "-p", typ)
	quiet := start(t, "timestamp_estimator", "--ros-args", "-r", "__node:=est_quiet", "--log-level", "warn",
		"-r", "in:=/ta_rosout/in_quiet", "-r", "out:=/ta_rosout/out_quiet", "-p", typ)
	off := start(t, "timestamp_estimator", "--ros-args", "-r", "__node:=est_off", "--disable-rosout-logs",
		"-r", "in:=/ta_rosout/in_off", "-r", "out:=/ta_rosout/out_off", "-p", typ)
	const info, warn = 20, 30
	waitFor(t, 15*time.Second, "est's INFO and WARN lines and est_quiet's WARN on /rosout", func() bool {
		return r.find("ta_rosout.est", info, started) != nil &&
			r.find("ta_rosout.est", warn, "no input yet") != nil && r.find("est_quiet", warn, "no input yet") != nil
	})
	l := r.find("ta_rosout.est", info, started)
	stamp := time.Unix(int64(l.Stamp.Sec), int64(l.Stamp.Nanosec))
	require.WithinDuration(t, t0, stamp, time.Minute, "the line's stamp")
	// Each line once: rcl's own rosout output is off.
	n := 0
	for _, x := range r.of("ta_rosout.est") {
		if strings.Contains(x.Msg, started) {
			n++
		}
	}
	require.Equal(t, 1, n, "the INFO line on /rosout once")
	// --log-level warn: no INFO line anywhere.
	for _, x := range r.of("est_quiet") {
		require.GreaterOrEqual(t, x.Level, uint8(warn), "est_quiet logged %q at %d", x.Msg, x.Level)
	}
	time.Sleep(1500 * time.Millisecond) // est_off has said "no input yet" by now
	require.Empty(t, r.of("est_off"), "--disable-rosout-logs")
	node.stop(t)
	quiet.stop(t)
	off.stop(t)
	require.Contains(t, node.output.String(), "[INFO]")
	require.NotContains(t, quiet.output.String(), "[INFO]", "--log-level warn on the console")
	require.Contains(t, quiet.output.String(), "[WARN]")
	require.Contains(t, off.output.String(), "no input yet", "the console keeps the lines")
}
