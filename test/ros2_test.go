//go:build ros2 && timealign_interfaces

// Package test holds the ROS 2 integration tests: they build the nodes,
// start them, and talk to them over DDS on this machine only (loopback,
// multicast off, a random domain). They decode the nodes' status messages
// with the generated bindings (msgs/timealign), so they link against this
// package's interfaces: run them with ROS 2 Humble and a colcon install of
// this package sourced, the cgo flags of both, and TIMEALIGN_INSTALL set to
// that install, which is also what they test (.ci/ros2 does all of this):
//
//	TIMEALIGN_INSTALL=<ws>/install go test -tags ros2,timealign_interfaces ./test/...
package test

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tiiuae/rclgo/pkg/rclgo"
	"github.com/tiiuae/rclgo/pkg/rclgo/types"

	"github.com/timealign/timealign/internal/testutil/cdrtest"
	diagmsg "github.com/timealign/timealign/msgs/diagnostic_msgs/msg"
	tamsg "github.com/timealign/timealign/msgs/timealign/msg"
	"github.com/timealign/timealign/pkg/sim"
	"github.com/timealign/timealign/pkg/stamp"
	tsync "github.com/timealign/timealign/pkg/sync"
	"github.com/timealign/timealign/pkg/tsest"
)

// binDir holds the node executables the tests start; workDir is the
// tests' temporary directory (the relay of the rate tests is built there).
var binDir, workDir string

// TestMain keeps DDS on this machine and builds the nodes once.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "timealign-ros2-test")
	if err != nil {
		panic(err)
	}
	workDir = dir
	// DDS on loopback, in a domain of the tests' own, on the RMW the
	// environment selects (loopback_test.go).
	env, err := loopbackEnv(dir)
	if err != nil {
		panic(err)
	}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		os.Setenv(k, v)
	}
	fmt.Fprintf(os.Stderr, "ROS 2 %s on %s\n", cmp.Or(rosDistro(), "(ROS_DISTRO unset)"), rmwName())
	inst := os.Getenv("TIMEALIGN_INSTALL")
	if inst != "" {
		// Test the colcon install (.ci/ros2 sets this): its binaries and its
		// interfaces (timealign/msg/MatchedSet).
		binDir = filepath.Join(inst, "timealign", "lib", "timealign")
		prefix := filepath.Join(inst, "timealign")
		os.Setenv("AMENT_PREFIX_PATH", prefix+":"+os.Getenv("AMENT_PREFIX_PATH"))
		os.Setenv("LD_LIBRARY_PATH", filepath.Join(prefix, "lib")+":"+os.Getenv("LD_LIBRARY_PATH"))
	}
	if inst == "" || raceNodes {
		// Build the nodes from this source (with the race detector when
		// the tests have it); the install, if any, still provides the
		// interfaces.
		binDir = filepath.Join(dir, "bin")
		flags := []string{"build", "-tags", "ros2"}
		if raceNodes {
			flags = append(flags, "-race")
			// The race detector waits a second at exit by default: the
			// nodes must exit within one of SIGTERM.
			os.Setenv("GORACE", "atexit_sleep_ms=0")
		}
		for _, node := range []string{"timestamp_estimator", "clock_sync", "synchronizer", "stream_aligner", "sensor_sim", "stamp_monitor"} {
			cmd := exec.Command("go", append(flags, "-o", filepath.Join(binDir, node), "../nodes/"+node)...)
			if out, err := cmd.CombinedOutput(); err != nil {
				fmt.Fprintf(os.Stderr, "building %s: %v\n%s", node, err, out)
				os.Exit(1)
			}
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// proc is a node started by a test.
type proc struct {
	cmd    *exec.Cmd
	output output
	done   chan error
}

// output is a node's console output, written by exec's goroutine while a
// test reads it.
type output struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (o *output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.b.Write(p)
}

func (o *output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.b.String()
}

func start(t *testing.T, node string, args ...string) *proc {
	return startExe(t, filepath.Join(binDir, node), args...)
}

// startExe starts the program exe (a node, the relay) with args.
func startExe(t *testing.T, exe string, args ...string) *proc {
	return startEnv(t, nil, exe, args...)
}

// startEnv starts the program exe with args and the test's environment
// changed by env (KEY=VALUE, later ones win).
func startEnv(t *testing.T, env []string, exe string, args ...string) *proc {
	node := filepath.Base(exe)
	p := &proc{cmd: exec.Command(exe, args...), done: make(chan error, 1)}
	if env != nil {
		p.cmd.Env = append(os.Environ(), env...)
	}
	p.cmd.Stdout, p.cmd.Stderr = &p.output, &p.output
	require.NoError(t, p.cmd.Start())
	go func() { p.done <- p.cmd.Wait() }()
	t.Cleanup(func() { // runs last, once the process has ended
		if t.Failed() {
			t.Logf("%s %v output:\n%s", node, args, p.output.String())
		}
	})
	t.Cleanup(func() {
		if p.cmd.ProcessState == nil {
			_ = p.cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

// stop sends SIGTERM and requires a clean exit within a second, with no
// error logged.
func (p *proc) stop(t *testing.T) {
	p.terminate(t)
	require.NotContains(t, p.output.String(), "[ERROR]")
}

// terminate sends SIGTERM and requires a clean exit within a second.
func (p *proc) terminate(t *testing.T) {
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
	select {
	case err := <-p.done:
		require.NoError(t, err, "exit status; output:\n%s", p.output.String())
	case <-time.After(time.Second):
		t.Fatalf("no exit within 1 s of SIGTERM; output:\n%s", p.output.String())
	}
}

// peer is the test's own ROS node: a serialized publisher and subscriber.
type peer struct {
	in     string // the topic it publishes on
	ctx    *rclgo.Context
	pub    *rclgo.Publisher
	sub    *rclgo.Subscription
	mu     sync.Mutex
	got    [][]byte
	cancel context.CancelFunc
	wg     sync.WaitGroup

	closeOnce sync.Once
}

var peers atomic.Int64

func newPeer(t *testing.T, in, out, msgType string) *peer {
	return newPeerQoS(t, in, out, msgType, 1000, false)
}

// newPeerQoS is newPeer with queues of depth messages, keeping all
// (a reliable writer then waits for its readers instead of dropping) if
// keepAll.
func newPeerQoS(t *testing.T, in, out, msgType string, depth int, keepAll bool) *peer {
	ctx, err := rclgo.NewContext(rclgo.ClockTypeROSTime, nil)
	require.NoError(t, err)
	node, err := ctx.NewNode(fmt.Sprintf("timealign_test_peer_%d", peers.Add(1)), "") // one /rosout publisher each
	require.NoError(t, err)
	pkgName, msgName, _ := strings.Cut(strings.Replace(msgType, "/msg/", "/", 1), "/")
	ts, err := rclgo.LoadDynamicMessageTypeSupport(pkgName, msgName)
	require.NoError(t, err)
	p := &peer{ctx: ctx, in: in}
	// Reliable queues, deep by default: the tests check every message.
	opts := rclgo.NewDefaultPublisherOptions()
	opts.Qos.Depth = depth
	if keepAll {
		opts.Qos.History = rclgo.HistoryKeepAll
	}
	p.pub, err = node.NewPublisher(in, ts, opts)
	require.NoError(t, err)
	subOpts := rclgo.NewDefaultSubscriptionOptions()
	subOpts.Qos.Depth = depth
	if keepAll {
		subOpts.Qos.History = rclgo.HistoryKeepAll
	}
	sub, err := node.NewSubscription(out, ts, subOpts, func(s *rclgo.Subscription) {
		b, _, err := s.TakeSerializedMessage()
		if err == nil {
			p.mu.Lock()
			p.got = append(p.got, b)
			p.mu.Unlock()
		}
	})
	require.NoError(t, err)
	p.sub = sub
	ws, err := ctx.NewWaitSet()
	require.NoError(t, err)
	ws.AddSubscriptions(sub)
	c, cancel := context.WithCancel(context.Background())
	p.cancel = cancel
	p.wg.Add(1)
	go func() { defer p.wg.Done(); _ = ws.Run(c) }()
	t.Cleanup(p.close)
	return p
}

// close takes the peer out of the graph (once).
func (p *peer) close() {
	p.closeOnce.Do(func() { p.cancel(); p.wg.Wait(); p.ctx.Close() })
}

// waitDiscovered waits until each peer's publisher has matched a
// subscriber and its subscription a publisher, and then until the node
// says its subscription of each peer's topic has matched a publisher (its
// /diagnostics, <topic>.publishers): a round trip, so a test sends only
// once both ends are there. Cyclone DDS matches both sides at once; Fast
// DDS's discovery is asymmetric, and its reader may match seconds after
// the writer has seen it (a volatile reader then misses what was sent
// before).
func waitDiscovered(t *testing.T, peers ...*peer) {
	t.Helper()
	waitFor(t, 10*time.Second, "discovery both ways", func() bool {
		for _, p := range peers {
			n, err := p.pub.GetSubscriptionCount()
			m, err2 := p.sub.GetPublisherCount()
			if err != nil || err2 != nil || n == 0 || m == 0 {
				return false
			}
		}
		return true
	})
	topics := make([]string, len(peers))
	for i, p := range peers {
		topics[i] = p.in
	}
	waitNodeSide(t, topics...)
}

// waitNodeSide waits until some node's /diagnostics says that each of
// topics has a matched publisher (<topic>.publishers above 0).
func waitNodeSide(t *testing.T, topics ...string) {
	t.Helper()
	diag := newPeer(t, fmt.Sprintf("/ta_test/unused_diag_%d", peers.Load()), "/diagnostics", "diagnostic_msgs/msg/DiagnosticArray")
	defer diag.close()
	waitFor(t, 15*time.Second, "the node's side of the match of "+strings.Join(topics, ", "), func() bool {
		matched := map[string]bool{}
		for _, b := range diag.received() {
			arr := decode[*diagmsg.DiagnosticArray](t, b, diagmsg.DiagnosticArrayTypeSupport)
			for _, st := range arr.Status {
				for _, kv := range st.Values {
					if topic, ok := strings.CutSuffix(kv.Key, ".publishers"); ok && kv.Value != "0" {
						matched[topic] = true
					}
				}
			}
		}
		for _, topic := range topics {
			if !matched[topic] {
				return false
			}
		}
		return true
	})
}

// waitFor polls cond every 20 ms for at most d.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// reset forgets what the peer has received.
func (p *peer) reset() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.got = nil
}

func (p *peer) received() [][]byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([][]byte(nil), p.got...)
}

// TestTimestampEstimator: stamped Imu messages in, estimated stamps out,
// the rest of every message byte-identical, and the stamps equal to what
// the ROS-free core computes for the same input.
func TestTimestampEstimator(t *testing.T) {
	node := start(t, "timestamp_estimator", "--ros-args", "-r", "in:=/ta_test/imu_raw", "-r", "out:=/ta_test/imu",
		"-p", "message_type:=sensor_msgs/msg/Imu", "-p", "window_sec:=1.0",
		// Reliable input and deep queues end to end: this test checks every message.
		"-p", "qos.in.reliability:=reliable", "-p", "qos.in.depth:=1000", "-p", "qos.out.depth:=1000")
	p := newPeer(t, "/ta_test/imu_raw", "/ta_test/imu", "sensor_msgs/msg/Imu")
	diag := newPeer(t, "/ta_test/unused_diag", "/diagnostics", "diagnostic_msgs/msg/DiagnosticArray")
	status := newPeer(t, "/ta_test/unused_status", "/timestamp_estimator/status", "timealign/msg/TimestampEstimatorStatus")
	waitDiscovered(t, p)
	c := sim.DefaultConfig()
	c.Count = 300
	s, err := sim.Generate(c)
	require.NoError(t, err)
	samples := sim.Delivered(s)
	var sent [][]byte
	for i, x := range samples {
		msg := cdrtest.Message(x.Receive, frame(i), 307) // 332 bytes: DDS pads to a multiple of 4
		sent = append(sent, msg)
		require.NoError(t, p.pub.PublishSerialized(msg))
		_ = i
		time.Sleep(2 * time.Millisecond) // pace like a 500 Hz sensor: the input is best effort
	}
	waitFor(t, 10*time.Second, "the last message back", func() bool { return lastFrame(p.received()) == len(sent)-1 })
	cfg := tsest.DefaultConfig()
	cfg.Window = time.Second
	est, err := tsest.New(cfg)
	require.NoError(t, err)
	want := make([][]byte, len(sent))
	for i := range sent {
		want[i] = append([]byte(nil), sent[i]...)
		e, err := est.Update(samples[i].Receive)
		require.NoError(t, err)
		require.NoError(t, stamp.SetHeaderStamp(want[i], e))
		require.LessOrEqual(t, int64(e), int64(samples[i].Receive))
	}
	got := p.received()
	first := firstFrame(t, got)
	require.Len(t, got, len(sent)-first, "every message after the first one back")
	for j, g := range got {
		require.Equal(t, want[first+j], g, "message %d: the estimate in header.stamp, every other byte as sent", first+j)
	}
	// /diagnostics (1 Hz) reports the node healthy, with its counters.
	waitFor(t, 5*time.Second, "an OK diagnostic", func() bool {
		for _, b := range diag.received() {
			if bytes.Contains(b, []byte("timestamp_estimator: timestamp estimator")) &&
				bytes.Contains(b, []byte("estimating")) && bytes.Contains(b, []byte("messages_out")) {
				return true
			}
		}
		return false
	})
	// The same, decoded with the generated bindings: the CDR the node
	// encodes in Go is the interface's.
	waitFor(t, 5*time.Second, "a typed OK diagnostic", func() bool {
		for _, b := range diag.received() {
			a := decode[*diagmsg.DiagnosticArray](t, b, diagmsg.DiagnosticArrayTypeSupport)
			if len(a.Status) == 1 && a.Status[0].HardwareId == "/timestamp_estimator" && a.Status[0].Level == 0 &&
				keyValue(a.Status[0].Values, "messages_out") == fmt.Sprint(len(sent)) {
				return true
			}
		}
		return false
	})
	// ~/status (TimestampEstimatorStatus, 1 Hz) counts every message.
	waitFor(t, 5*time.Second, "a status with every message", func() bool {
		for _, b := range status.received() {
			st := decode[*tamsg.TimestampEstimatorStatus](t, b, tamsg.TimestampEstimatorStatusTypeSupport)
			if st.MessagesIn == uint64(len(sent)) {
				require.Equal(t, st.MessagesIn, st.MessagesOut)
				require.Equal(t, st.MessagesIn, st.Samples)
				require.True(t, st.HaveEstimate)
				require.Zero(t, st.DroppedMalformed+st.DroppedQueue)
				require.InDelta(t, float64(c.Period), float64(st.Period.Sec)*1e9+float64(st.Period.Nanosec), float64(c.Period)/100)
				return true
			}
		}
		return false
	})
	node.stop(t)
}

// frame is the frame_id of test message i: its index, in 8 bytes.
func frame(i int) string { return fmt.Sprintf("m%07d", i) }

// frameIndex returns the index in a message's frame_id, -1 if none.
func frameIndex(msg []byte) int {
	_, f, err := stamp.Header(msg)
	var i int
	if err != nil || len(f) != 8 || f[0] != 'm' {
		return -1
	}
	if _, err := fmt.Sscanf(string(f[1:]), "%d", &i); err != nil {
		return -1
	}
	return i
}

func lastFrame(msgs [][]byte) int {
	if len(msgs) == 0 {
		return -1
	}
	return frameIndex(msgs[len(msgs)-1])
}

// maxLateStart bounds the outputs a test forgives at the start: the peer
// sees the node's publisher before that publisher has matched the peer's
// subscription (discovery is not symmetric), and a volatile publisher
// drops what it publishes before it has matched.
const maxLateStart = 10

// firstFrame returns the index of the first message received, which must
// be one of the first maxLateStart.
func firstFrame(t *testing.T, got [][]byte) int {
	t.Helper()
	require.NotEmpty(t, got)
	first := frameIndex(got[0])
	require.GreaterOrEqual(t, first, 0)
	require.LessOrEqual(t, first, maxLateStart, "outputs lost after discovery")
	if first > 0 {
		t.Logf("the first %d outputs were published before the node's publisher matched the test's subscription", first)
	}
	return first
}

// decode deserializes a message with its generated type support.
func decode[T types.Message](t *testing.T, b []byte, ts types.MessageTypeSupport) T {
	t.Helper()
	m, err := rclgo.Deserialize(b, ts)
	require.NoError(t, err)
	v, ok := m.(T)
	require.True(t, ok, "decoded a %T", m)
	return v
}

// latest decodes the newest message p received (false: none yet).
func latest[T types.Message](t *testing.T, p *peer, ts types.MessageTypeSupport) (T, bool) {
	t.Helper()
	msgs := p.received()
	if len(msgs) == 0 {
		var zero T
		return zero, false
	}
	return decode[T](t, msgs[len(msgs)-1], ts), true
}

func keyValue(kvs []diagmsg.KeyValue, key string) string {
	for _, kv := range kvs {
		if kv.Key == key {
			return kv.Value
		}
	}
	return ""
}

// TestClockSync: a lidar whose header.stamp holds a drifting device clock
// comes out in host time.
func TestClockSync(t *testing.T) {
	node := start(t, "clock_sync", "--ros-args", "-r", "in:=/ta_test/scan_raw", "-r", "out:=/ta_test/scan",
		"-p", "message_type:=sensor_msgs/msg/LaserScan", "-p", "mode:=envelope", "-p", "when_invalid:=drop",
		// Reliable input: once the test's writer has matched the node's
		// reader every scan arrives (a best-effort reader may still drop
		// the first ones until it has matched the writer in turn), and the
		// status below counts all 100.
		"-p", "qos.in.reliability:=reliable", "-p", "qos.in.depth:=100")
	p := newPeer(t, "/ta_test/scan_raw", "/ta_test/scan", "sensor_msgs/msg/LaserScan")
	status := newPeer(t, "/ta_test/unused_status", "/clock_sync/status", "timealign/msg/ClockSyncStatus")
	waitDiscovered(t, p)
	// The device clock starts at 1234 s and runs 20 ppm fast; messages are
	// sent in real time, so the node's DDS receive times are real.
	start := time.Now()
	for i := 0; i < 100; i++ {
		at := time.Duration(i) * 20 * time.Millisecond
		for time.Since(start) < at {
			time.Sleep(time.Millisecond)
		}
		dev := stamp.Time(1234*time.Second) + stamp.Time(float64(at)*(1+20e-6))
		require.NoError(t, p.pub.PublishSerialized(cdrtest.Message(dev, "laser", 102)))
	}
	waitFor(t, 5*time.Second, "corrected scans", func() bool { return len(p.received()) >= 80 })
	for _, got := range p.received() {
		st, _ := stamp.HeaderStamp(got)
		off := time.Duration(time.Now().UnixNano() - int64(st))
		require.Greater(t, off, time.Duration(0), "host time, not device time")
		require.Less(t, off, 5*time.Second)
	}
	// ~/status (ClockSyncStatus): every scan counted, a valid envelope fit
	// whose offset is host minus device time.
	waitFor(t, 5*time.Second, "a status with every scan", func() bool {
		for _, b := range status.received() {
			st := decode[*tamsg.ClockSyncStatus](t, b, tamsg.ClockSyncStatusTypeSupport)
			if st.MessagesIn == 100 {
				require.Equal(t, "envelope", st.Mode)
				require.True(t, st.Valid)
				require.Equal(t, st.MessagesIn, st.MessagesOut+st.DroppedInvalid)
				off := time.Duration(st.Offset.Sec)*time.Second + time.Duration(st.Offset.Nanosec)
				host := time.Duration(start.UnixNano()) - 1234*time.Second
				require.InDelta(t, float64(host), float64(off), float64(5*time.Second))
				return true
			}
		}
		return false
	})
	node.stop(t)
}

// TestSynchronizer: three inputs of two message types; the sets the node
// publishes on ~/matched are those pkg/sync (what `timealign sync` runs)
// computes offline for the same stamps, and the members come out unchanged.
func TestSynchronizer(t *testing.T) {
	if _, err := rclgo.LoadDynamicMessageTypeSupport("timealign", "MatchedSet"); err != nil {
		t.Skip("timealign/msg/MatchedSet is not installed (run through .ci/ros2, which builds the package with colcon)")
	}
	node := start(t, "synchronizer", "--ros-args", "-r", "__node:=ta_sync",
		"-p", "inputs:=3", "-p", "message_types:=[sensor_msgs/msg/Imu, sensor_msgs/msg/LaserScan, sensor_msgs/msg/Imu]",
		"-p", "qos.in.reliability:=reliable", "-p", "qos.in.depth:=1000", "-p", "qos.out.depth:=1000",
		"-r", "in0:=/ta_test/s0", "-r", "in1:=/ta_test/s1", "-r", "in2:=/ta_test/s2")
	types := []string{"sensor_msgs/msg/Imu", "sensor_msgs/msg/LaserScan", "sensor_msgs/msg/Imu"}
	peers := make([]*peer, 3)
	for i := range peers {
		peers[i] = newPeer(t, fmt.Sprintf("/ta_test/s%d", i), fmt.Sprintf("/out%d", i), types[i])
	}
	matched := newPeer(t, "/ta_test/unused", "/ta_sync/matched", "timealign/msg/MatchedSet")
	status := newPeer(t, "/ta_test/unused_status", "/ta_sync/status", "timealign/msg/SyncStatus")
	for i, p := range append(peers, matched) {
		waitFor(t, 10*time.Second, fmt.Sprintf("discovery of peer %d", i), func() bool {
			n, err := p.pub.GetSubscriptionCount()
			m, err2 := p.sub.GetPublisherCount()
			return err == nil && err2 == nil && (n > 0 || p == matched) && m > 0
		})
	}
	waitNodeSide(t, "/ta_test/s0", "/ta_test/s1", "/ta_test/s2")
	// Three streams with jitter and loss, in stamp order of arrival.
	r := rand.New(rand.NewPCG(5, 5))
	periods := []time.Duration{10 * time.Millisecond, 33 * time.Millisecond, 20 * time.Millisecond}
	next := make([]stamp.Time, 3)
	type msg struct {
		topic int
		st    stamp.Time
	}
	var sent []msg
	for len(sent) < 300 {
		i := 0
		for j := range next {
			if next[j] < next[i] {
				i = j
			}
		}
		st := stamp.Time(1_700_000_000*time.Second) + next[i] + stamp.Time(r.IntN(3_000_000))
		next[i] += stamp.Time(periods[i])
		if r.Float64() < 0.03 {
			continue
		}
		sent = append(sent, msg{i, st})
		require.NoError(t, peers[i].pub.PublishSerialized(cdrtest.Message(st, fmt.Sprint("f", i), 51+i*4)))
		time.Sleep(2 * time.Millisecond)
	}
	// Offline: the same policy on the same stream.
	var want [][]stamp.Time
	s, err := tsync.New(func() tsync.Config { c := tsync.DefaultConfig(); c.Topics = 3; return c }(),
		func(set []tsync.Message[struct{}]) {
			row := make([]stamp.Time, len(set))
			for i, m := range set {
				row[i] = m.Stamp
			}
			want = append(want, row)
		}, nil)
	require.NoError(t, err)
	for _, m := range sent {
		s.Add(tsync.Message[struct{}]{Topic: m.topic, Stamp: m.st})
	}
	require.Greater(t, len(want), 30)
	seq := func(b []byte) int { return int(binary.LittleEndian.Uint64(b[20:])) } // after the header (17 bytes + pad)
	waitFor(t, 10*time.Second, "the matched sets", func() bool {
		got := matched.received()
		return len(got) > 0 && seq(got[len(got)-1]) >= len(want)-1
	})
	sets := matched.received()
	require.LessOrEqual(t, seq(sets[0]), maxLateStart, "sets lost after discovery")
	for j, b := range sets {
		k := seq(b)
		require.Equal(t, seq(sets[0])+j, k, "sets in sequence")
		if k >= len(want) {
			break
		}
		n := int(binary.LittleEndian.Uint32(b[28:]))
		require.Equal(t, 3, n)
		for i := 0; i < n; i++ {
			st, err := stamp.FromROS(int32(binary.LittleEndian.Uint32(b[32+8*i:])), binary.LittleEndian.Uint32(b[36+8*i:]))
			require.NoError(t, err)
			require.Equal(t, want[k][i], st, "set %d topic %d", k, i)
		}
		m := decode[*tamsg.MatchedSet](t, b, tamsg.MatchedSetTypeSupport)
		require.Equal(t, uint64(k), m.Sequence)
		require.Len(t, m.Stamps, 3)
	}
	for i, p := range peers {
		// The members republished on out<i>: the offline sets' members
		// from the first one received on.
		got := p.received()
		require.NotEmpty(t, got)
		st0, _ := stamp.HeaderStamp(got[0])
		k0 := 0
		for k0 < len(want) && want[k0][i] != st0 {
			k0++
		}
		require.LessOrEqual(t, k0, maxLateStart, "out%d: members lost after discovery", i)
		require.GreaterOrEqual(t, len(got), len(want)-k0)
		for k := k0; k < len(want); k++ {
			st, frame, err := stamp.Header(got[k-k0])
			require.NoError(t, err)
			require.Equal(t, want[k][i], st, "out%d member of set %d", i, k)
			require.Equal(t, fmt.Sprint("f", i), string(frame))
		}
	}
	// ~/status (SyncStatus, 1 Hz) names the policy and the inputs.
	waitFor(t, 5*time.Second, "a status", func() bool {
		for _, b := range status.received() {
			if bytes.Contains(b, []byte("approximate")) && bytes.Contains(b, []byte("/ta_test/s2")) &&
				bytes.Contains(b, []byte("queue_full")) {
				return true
			}
		}
		return false
	})
	node.stop(t)
}

// warmUp publishes with send every 10 ms until every output peer has
// received something (the node has discovered its types and both ends of
// every path have matched), then forgets what they received: a rate test
// measures a running pipeline, not discovery. Warm-up messages still in
// flight are told apart by their frame_id or stamp.
func warmUp(t *testing.T, send func(), outs ...*peer) {
	t.Helper()
	waitFor(t, 15*time.Second, "the first outputs", func() bool {
		send()
		for _, p := range outs {
			if len(p.received()) == 0 {
				return false
			}
		}
		return true
	})
	for _, p := range outs {
		p.reset()
	}
}

// missing lists the indexes in [0, n) that no received message carries.
func missing(got [][]byte, n int) []int {
	seen := make([]bool, n)
	for _, b := range got {
		if i := frameIndex(b); i >= 0 && i < n {
			seen[i] = true
		}
	}
	var out []int
	for i, ok := range seen {
		if !ok {
			out = append(out, i)
		}
	}
	return out
}

// TestRates: 1 kHz of sensor_msgs/Imu through timestamp_estimator on
// loopback (best-effort input with a queue of 100: size qos.in.depth for
// the rate), after a warm-up: every message comes out.
func TestRates(t *testing.T) {
	node := start(t, "timestamp_estimator", "--ros-args", "-r", "__node:=ta_rate",
		"-r", "in:=/ta_test/rate_raw", "-r", "out:=/ta_test/rate", "-p", "message_type:=sensor_msgs/msg/Imu",
		"-p", "qos.in.depth:=100")
	p := newPeer(t, "/ta_test/rate_raw", "/ta_test/rate", "sensor_msgs/msg/Imu")
	base := stamp.Time(time.Now().UnixNano())
	warm := 0
	warmUp(t, func() {
		warm++
		require.NoError(t, p.pub.PublishSerialized(cdrtest.Message(base.Add(time.Duration(warm-100000)*time.Millisecond), "warmup", 307)))
	}, p)
	const n = 3000
	begin := time.Now()
	base = stamp.Time(begin.UnixNano())
	for i := 0; i < n; i++ {
		at := time.Duration(i) * time.Millisecond
		for time.Since(begin) < at {
			time.Sleep(100 * time.Microsecond)
		}
		require.NoError(t, p.pub.PublishSerialized(cdrtest.Message(base.Add(at), frame(i), 307)))
	}
	took := time.Since(begin)
	waitFor(t, 5*time.Second, "the last message", func() bool { return lastFrame(p.received()) == n-1 })
	lost := missing(p.received(), n)
	t.Logf("%d Imu messages at %.0f Hz in, %d out, lost %v", n, float64(n)/took.Seconds(), n-len(lost), lost)
	require.Empty(t, lost, "messages lost at 1 kHz")
	node.stop(t)
}

// ros2 runs the ros2 CLI with a time limit.
func ros2(t *testing.T, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "ros2", args...).CombinedOutput()
	return string(out), err
}

// ros2Param runs `ros2 param args...` as ros2 does, again while it says
// "Node not found" (for up to 20 s): the CLI's daemon may not have
// discovered a node that answers its services already, or may miss it for
// a moment later on (on Fast DDS 2.14 both were seen, seconds after the
// node's start).
func ros2Param(t *testing.T, args ...string) (string, error) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		out, err := ros2(t, append([]string{"param"}, args...)...)
		if !strings.Contains(out, "Node not found") || time.Now().After(deadline) {
			return out, err
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// TestParameters: `ros2 param` lists, gets, sets (live) and describes the
// node's parameters, and a bad value is rejected with the reason.
func TestParameters(t *testing.T) {
	if _, err := exec.LookPath("ros2"); err != nil {
		t.Skip("ros2 CLI not on PATH")
	}
	t.Cleanup(func() { _, _ = ros2(t, "daemon", "stop") })
	node := start(t, "timestamp_estimator", "--ros-args", "-r", "__node:=ta_params", "-p", "message_type:=sensor_msgs/msg/Imu")
	var out string
	waitFor(t, 20*time.Second, "ros2 param list", func() bool {
		o, err := ros2Param(t, "list", "/ta_params")
		out = o
		return err == nil && strings.Contains(o, "window_sec")
	})
	for _, name := range []string{"loss_threshold", "message_type", "qos.in.reliability", "stamp_source", "window_sec"} {
		require.Contains(t, out, name)
	}
	out, err := ros2Param(t, "get", "/ta_params", "window_sec")
	require.NoError(t, err, out)
	require.Contains(t, out, "2.0")
	out, err = ros2Param(t, "set", "/ta_params", "window_sec", "0.5")
	require.NoError(t, err, out)
	require.Contains(t, out, "Set parameter successful")
	out, err = ros2Param(t, "get", "/ta_params", "window_sec")
	require.NoError(t, err, out)
	require.Contains(t, out, "0.5")
	out, _ = ros2Param(t, "set", "/ta_params", "period_sec", "3.0")
	require.Contains(t, out, "Setting parameter failed")
	require.Contains(t, out, "period_sec (3.0) must be shorter than window_sec (0.5)", "the parameters, in seconds")
	out, _ = ros2Param(t, "set", "/ta_params", "window_sec", "7200.0")
	require.Contains(t, out, "7200.0 is not in [0.001, 3600.0]", "the allowed range")
	out, _ = ros2Param(t, "set", "/ta_params", "message_type", "std_msgs/msg/Header")
	require.Contains(t, out, "Setting parameter failed", "read-only")
	require.Contains(t, out, "read-only (the subscription and publisher are created with it)", "and why")
	out, err = ros2Param(t, "describe", "/ta_params", "loss_threshold")
	require.NoError(t, err, out)
	require.Contains(t, out, "Max value: 1000")
	node.stop(t)
}

// TestSimTime: with use_sim_time the node's time is /clock: the receive
// stamps the estimator works on and the stamps of /diagnostics follow the
// simulated clock, not the system clock.
func TestSimTime(t *testing.T) {
	node := start(t, "timestamp_estimator", "--ros-args", "-r", "__node:=ta_sim",
		"-r", "in:=/ta_test/sim_raw", "-r", "out:=/ta_test/sim", "-p", "message_type:=sensor_msgs/msg/Imu",
		"-p", "use_sim_time:=true", "-p", "stamp_source:=receive_time",
		"-p", "qos.in.reliability:=reliable", "-p", "qos.in.depth:=1000", "-p", "qos.out.depth:=1000")
	p := newPeer(t, "/ta_test/sim_raw", "/ta_test/sim", "sensor_msgs/msg/Imu")
	clock := newPeer(t, "/clock", "/ta_test/unused_clock", "rosgraph_msgs/msg/Clock")
	diag := newPeer(t, "/ta_test/unused_diag", "/diagnostics", "diagnostic_msgs/msg/DiagnosticArray")
	waitFor(t, 10*time.Second, "discovery", func() bool {
		n, err := p.pub.GetSubscriptionCount()
		m, err2 := p.sub.GetPublisherCount()
		c, err3 := clock.pub.GetSubscriptionCount()
		return err == nil && err2 == nil && err3 == nil && n > 0 && m > 0 && c > 0
	})
	const simStart = stamp.Time(5000 * time.Second)
	now := simStart
	tick := func(d time.Duration) {
		now = now.Add(d)
		c := cdrtest.Message(now, "", 0)[:stamp.HeaderStampSize] // a rosgraph_msgs/Clock is a Time
		require.NoError(t, clock.pub.PublishSerialized(c))
	}
	// The node's clock has taken /clock once its diagnostics carry it.
	waitFor(t, 10*time.Second, "/diagnostics stamped with /clock", func() bool {
		tick(time.Millisecond)
		for _, b := range diag.received() {
			st, err := stamp.HeaderStamp(b)
			if err == nil && bytes.Contains(b, []byte("ta_sim")) && st >= simStart && st < simStart.Add(time.Minute) {
				return true
			}
		}
		return false
	})
	const n = 200
	wall := stamp.Time(time.Now().UnixNano())
	for i := 0; i < n; i++ {
		tick(10 * time.Millisecond)
		require.NoError(t, p.pub.PublishSerialized(cdrtest.Message(wall, frame(i), 307)))
		time.Sleep(2 * time.Millisecond) // pace the input (its stamps are not what is tested)
	}
	waitFor(t, 10*time.Second, "the last message back", func() bool { return lastFrame(p.received()) == n-1 })
	require.Len(t, p.received(), n-firstFrame(t, p.received()))
	for i, got := range p.received() {
		st, err := stamp.HeaderStamp(got)
		require.NoError(t, err)
		require.True(t, st >= simStart && st <= now, "message %d stamped %v: want simulated time in [%v, %v]", i, st, simStart, now)
	}
	node.stop(t)
}

// TestSyncRates: three Imu inputs at 500 Hz each through the synchronizer
// on loopback (reliable), their types taken from the graph (no message_types), after a
// warm-up: every set the policy makes offline for the same stamps is
// matched and its members republished. The queues hold 100 messages per
// input (200 ms), not the default 10: the node takes each input's waiting
// messages in turn, so a hiccup of more than 20 ms (seen on Jazzy while a
// C++ build kept both cores busy) hands it one input ten messages ahead
// of the others, which ApproximateTime with 10 drops and the offline
// policy, fed in stamp order, does not.
func TestSyncRates(t *testing.T) {
	const queue = 100
	node := start(t, "synchronizer", "--ros-args", "-r", "__node:=ta_sync_rate", "-p", "inputs:=3", "-p", fmt.Sprintf("queue_size:=%d", queue),
		"-r", "in0:=/ta_test/r0", "-r", "in1:=/ta_test/r1", "-r", "in2:=/ta_test/r2",
		"-r", "out0:=/ta_test/ro0", "-r", "out1:=/ta_test/ro1", "-r", "out2:=/ta_test/ro2",
		// Reliable inputs: a best-effort reader on a loaded machine loses
		// a few messages now and then, and this test counts every set.
		"-p", "qos.in.reliability:=reliable", "-p", "qos.in.depth:=1000", "-p", "qos.out.depth:=1000")
	peers := make([]*peer, 3)
	for i := range peers {
		peers[i] = newPeer(t, fmt.Sprintf("/ta_test/r%d", i), fmt.Sprintf("/ta_test/ro%d", i), "sensor_msgs/msg/Imu")
	}
	matched := newPeer(t, "/ta_test/unused_matched", "/ta_sync_rate/matched", "timealign/msg/MatchedSet")
	// Offline: the same policy on the same stamps.
	var want []stamp.Time
	offline, err := tsync.New(func() tsync.Config { c := tsync.DefaultConfig(); c.Topics = 3; c.QueueSize = queue; return c }(),
		func(set []tsync.Message[struct{}]) { want = append(want, set[0].Stamp) }, nil)
	require.NoError(t, err)
	send := func(st stamp.Time, frameID string) {
		for i, p := range peers {
			require.NoError(t, p.pub.PublishSerialized(cdrtest.Message(st, frameID, 307)))
			offline.Add(tsync.Message[struct{}]{Topic: i, Stamp: st})
		}
	}
	base := stamp.Time(time.Now().UnixNano())
	warm := 0
	warmUp(t, func() {
		warm++
		send(base.Add(time.Duration(warm-100000)*2*time.Millisecond), "warmup")
	}, append(peers, matched)...)
	const n = 1500
	begin := time.Now()
	base = stamp.Time(begin.UnixNano())
	for i := 0; i < n; i++ {
		at := time.Duration(i) * 2 * time.Millisecond
		for time.Since(begin) < at {
			time.Sleep(100 * time.Microsecond)
		}
		send(base.Add(at), frame(i))
	}
	took := time.Since(begin)
	// The measured sets: those of the stamps from base on.
	measured := func(sets []stamp.Time) []stamp.Time {
		var out []stamp.Time
		for _, st := range sets {
			if st >= base {
				out = append(out, st)
			}
		}
		return out
	}
	want = measured(want)
	require.Greater(t, len(want), n*9/10, "offline sets")
	setStamps := func() []stamp.Time {
		var out []stamp.Time
		for _, b := range matched.received() {
			m := decode[*tamsg.MatchedSet](t, b, tamsg.MatchedSetTypeSupport)
			require.Len(t, m.Stamps, 3)
			st, err := stamp.FromROS(m.Stamps[0].Sec, m.Stamps[0].Nanosec)
			require.NoError(t, err)
			out = append(out, st)
		}
		return measured(out)
	}
	waitFor(t, 5*time.Second, "the last set", func() bool {
		got := setStamps()
		return len(got) > 0 && got[len(got)-1] == want[len(want)-1]
	})
	got := setStamps()
	t.Logf("3 x %d Imu messages at %.0f Hz each: %d sets out, %d made offline by the same policy",
		n, float64(n)/took.Seconds(), len(got), len(want))
	require.Equal(t, want, got, "the sets, none lost")
	for i, p := range peers {
		members := 0
		for _, b := range p.received() {
			if frameIndex(b) >= 0 {
				members++
			}
		}
		require.Equal(t, len(want), members, "members republished on out%d", i)
	}
	node.stop(t)
}

// TestBadInputTypes: an input type without a leading std_msgs/Header
// (given, or discovered from the graph) or one that is not installed: the
// node logs why, reports ERROR on /diagnostics, keeps running (its
// parameters still answer) and exits cleanly.
func TestBadInputTypes(t *testing.T) {
	diag := newPeer(t, "/ta_test/unused_diag2", "/diagnostics", "diagnostic_msgs/msg/DiagnosticArray")
	str := newPeer(t, "/ta_test/strings", "/ta_test/unused_strings", "std_msgs/msg/String")
	nodes := []struct {
		node string
		args []string
		want string
	}{
		{"timestamp_estimator", []string{"-r", "__node:=ta_bad_given", "-p", "message_type:=std_msgs/msg/String"},
			`std_msgs/msg/String does not start with a std_msgs/Header: its first field is "string data"`},
		{"synchronizer", []string{"-r", "__node:=ta_bad_found", "-p", "inputs:=2", "-r", "in0:=/ta_test/strings",
			"-p", "message_types:=['', sensor_msgs/msg/Imu]"},
			`/ta_test/strings: message type std_msgs/msg/String does not start with a std_msgs/Header`},
		{"clock_sync", []string{"-r", "__node:=ta_bad_unknown", "-p", "message_type:=no_such_msgs/msg/Thing"},
			`no_such_msgs/msg/Thing`},
	}
	procs := make([]*proc, len(nodes))
	for i, n := range nodes {
		procs[i] = start(t, n.node, append([]string{"--ros-args"}, n.args...)...)
	}
	for i, n := range nodes {
		fqn := "/" + strings.TrimPrefix(n.args[1], "__node:=")
		waitFor(t, 15*time.Second, "an ERROR diagnostic of "+fqn, func() bool {
			if i == 1 {
				// The synchronizer learns the type of in0 from the graph.
				_ = str.pub.PublishSerialized([]byte{0, 1, 0, 0, 2, 0, 0, 0, 'x', 0, 0, 0})
			}
			for _, b := range diag.received() {
				a := decode[*diagmsg.DiagnosticArray](t, b, diagmsg.DiagnosticArrayTypeSupport)
				for _, st := range a.Status {
					if st.HardwareId == fqn && st.Level == diagmsg.DiagnosticStatus_ERROR && strings.Contains(st.Message, n.want) {
						return true
					}
				}
			}
			return false
		})
		require.Contains(t, procs[i].output.String(), "[ERROR]")
		require.Contains(t, procs[i].output.String(), n.want)
	}
	if _, err := exec.LookPath("ros2"); err == nil {
		t.Cleanup(func() { _, _ = ros2(t, "daemon", "stop") })
		out, err := ros2Param(t, "get", "/ta_bad_given", "window_sec")
		require.NoError(t, err, out)
		require.Contains(t, out, "2.0", "an idle node still serves its parameters")
	}
	for _, p := range procs {
		p.terminate(t)
	}
}

// pad4 pads a serialized message to a multiple of 4 bytes, as DDS
// delivers it.
func pad4(m []byte) []byte {
	for len(m)%4 != 0 {
		m = append(m, 0)
	}
	return m
}

// TestStreamAligner: an IMU at 100 Hz and a lidar at 20 Hz whose scans
// arrive 30 ms after their stamps. Every message comes out unchanged on
// the output of its input; an IMU message leaves only once the scan
// stamped before it has arrived (the lidar's period is its lookahead);
// once the lidar falls silent (silent_after_sec) the IMU messages still
// held are played, and ~/status says so.
func TestStreamAligner(t *testing.T) {
	node := start(t, "stream_aligner", "--ros-args", "-r", "__node:=ta_align", "-p", "inputs:=2",
		"-p", "message_types:=[sensor_msgs/msg/Imu, sensor_msgs/msg/LaserScan]", "-p", "periods_sec:=[0.01, 0.05]",
		// silent_after_sec counts from the node's start: longer than the
		// discovery round trip (waitDiscovered), or the lidar would be
		// silent, not waited for, before its first scan.
		"-p", "silent_after_sec:=4.0", "-r", "in0:=/ta_test/a_imu", "-r", "in1:=/ta_test/a_scan",
		"-r", "out0:=/ta_test/a_imu_out", "-r", "out1:=/ta_test/a_scan_out",
		"-p", "qos.in.reliability:=reliable", "-p", "qos.in.depth:=1000", "-p", "qos.out.depth:=1000")
	imu := newPeer(t, "/ta_test/a_imu", "/ta_test/a_imu_out", "sensor_msgs/msg/Imu")
	scan := newPeer(t, "/ta_test/a_scan", "/ta_test/a_scan_out", "sensor_msgs/msg/LaserScan")
	status := newPeer(t, "/ta_test/unused_astatus", "/ta_align/status", "timealign/msg/AlignerStatus")
	// Received times of the IMU outputs, by stamp.
	var mu sync.Mutex
	imuOutAt := map[stamp.Time]time.Time{}
	seen := 0
	poll := func() {
		mu.Lock()
		defer mu.Unlock()
		got := imu.received()
		for _, b := range got[seen:] {
			st, err := stamp.HeaderStamp(b)
			require.NoError(t, err)
			imuOutAt[st] = time.Now()
		}
		seen = len(got)
	}
	waitDiscovered(t, imu, scan)
	type event struct {
		at    time.Duration // after start
		scan  bool
		stamp stamp.Time
	}
	base := stamp.Time(time.Now().UnixNano())
	var events []event
	for k := 0; k < 200; k++ {
		st := base.Add(time.Duration(k) * 10 * time.Millisecond)
		events = append(events, event{time.Duration(k)*10*time.Millisecond + time.Millisecond, false, st})
		if k%5 == 0 && k < 150 { // then the lidar stops: the last 50 IMU messages wait for its silence
			events = append(events, event{time.Duration(k)*10*time.Millisecond + 30*time.Millisecond, true, st.Add(2 * time.Millisecond)})
		}
	}
	slices.SortStableFunc(events, func(a, b event) int { return int(a.at - b.at) })
	scanPublished := map[stamp.Time]time.Time{}
	var sentImu, sentScan [][]byte
	begin := time.Now()
	for _, e := range events {
		for time.Since(begin) < e.at {
			poll()
			time.Sleep(200 * time.Microsecond)
		}
		if e.scan {
			m := pad4(cdrtest.Message(e.stamp, "laser", 700))
			sentScan = append(sentScan, m)
			scanPublished[e.stamp] = time.Now()
			require.NoError(t, scan.pub.PublishSerialized(m))
		} else {
			m := pad4(cdrtest.Message(e.stamp, "imu", 307))
			sentImu = append(sentImu, m)
			require.NoError(t, imu.pub.PublishSerialized(m))
		}
	}
	waitFor(t, 15*time.Second, "every message out (the last IMU ones once the lidar is silent)", func() bool {
		poll()
		return len(imu.received()) == len(sentImu) && len(scan.received()) == len(sentScan)
	})
	require.Equal(t, sentImu, imu.received(), "IMU messages unchanged, in order")
	require.Equal(t, sentScan, scan.received(), "scans unchanged, in order")
	// Held back: an IMU message left only after the latest scan stamped
	// before it had been published (and so could have reached the node).
	scanStamps := make([]stamp.Time, 0, len(scanPublished))
	for st := range scanPublished {
		scanStamps = append(scanStamps, st)
	}
	slices.Sort(scanStamps)
	held := 0
	for st, out := range imuOutAt {
		i, _ := slices.BinarySearch(scanStamps, st+1)
		if i == 0 {
			continue // before the first scan
		}
		require.False(t, out.Before(scanPublished[scanStamps[i-1]]),
			"IMU %v left before the scan stamped %v arrived", st, scanStamps[i-1])
		held++
	}
	require.Greater(t, held, 150)
	// ~/status: everything played, nothing dropped, the lidar silent now.
	waitFor(t, 5*time.Second, "a status with everything played", func() bool {
		for _, b := range status.received() {
			s := decode[*tamsg.AlignerStatus](t, b, tamsg.AlignerStatusTypeSupport)
			if s.Played == uint64(len(sentImu)+len(sentScan)) {
				require.Equal(t, []string{"/ta_test/a_imu", "/ta_test/a_scan"}, s.Streams)
				require.Equal(t, []uint64{0, 0}, s.DroppedLate)
				require.Equal(t, []uint64{uint64(len(sentImu)), uint64(len(sentScan))}, s.Received)
				require.True(t, s.Silent[1], "the lidar has stopped: it is not waited for")
				return true
			}
		}
		return false
	})
	node.stop(t)
}

// TestMalformedMessages: bytes that are not a Header-first message, on a
// topic of the right type, are dropped and counted one by one, logged at
// most once a second, and the node goes on with the next good message.
func TestMalformedMessages(t *testing.T) {
	node := start(t, "timestamp_estimator", "--ros-args", "-r", "__node:=ta_bad_bytes",
		"-r", "in:=/ta_test/bad_raw", "-r", "out:=/ta_test/bad", "-p", "message_type:=sensor_msgs/msg/Imu",
		"-p", "qos.in.reliability:=reliable", "-p", "qos.in.depth:=1000")
	p := newPeer(t, "/ta_test/bad_raw", "/ta_test/bad", "sensor_msgs/msg/Imu")
	status := newPeer(t, "/ta_test/unused_bstatus", "/ta_bad_bytes/status", "timealign/msg/TimestampEstimatorStatus")
	waitDiscovered(t, p)
	const bad = 300
	for i := 0; i < bad; i++ {
		// A CDR String where the Header should be: frame_id's length runs past the end.
		require.NoError(t, p.pub.PublishSerialized([]byte{0, 1, 0, 0, 6, 0, 0, 0, 'h', 'e', 'l', 'l', 'o', 0, 0, 0}))
		time.Sleep(200 * time.Microsecond) // 5 kHz: within what the node's inbox takes
	}
	good := pad4(cdrtest.Message(stamp.Time(time.Now().UnixNano()), "imu", 307))
	require.NoError(t, p.pub.PublishSerialized(good))
	waitFor(t, 5*time.Second, "the good message", func() bool { return len(p.received()) == 1 })
	waitFor(t, 5*time.Second, "a status counting every bad message", func() bool {
		for _, b := range status.received() {
			if decode[*tamsg.TimestampEstimatorStatus](t, b, tamsg.TimestampEstimatorStatusTypeSupport).DroppedMalformed == bad {
				return true
			}
		}
		return false
	})
	node.stop(t)
	lines := strings.Count(node.output.String(), "dropped a malformed message")
	require.GreaterOrEqual(t, lines, 1)
	require.LessOrEqual(t, lines, 3, "logged at most once a second")
}
