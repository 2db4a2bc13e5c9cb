package nodekit_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timealign/timealign/nodes/internal/nodekit"
	"github.com/timealign/timealign/nodes/internal/nodekit/memros"
	"github.com/timealign/timealign/nodes/internal/runtimeparams"
	"github.com/timealign/timealign/pkg/params"
	"github.com/timealign/timealign/pkg/qos"
	"github.com/timealign/timealign/pkg/stamp"
)

// echo is a test core: it republishes every message of input i on output
// i, unchanged, and reports what it saw.
type echo struct {
	publish nodekit.Publish
	slow    time.Duration           // if set, Handle takes this long
	gate    chan struct{}           // if set, Handle waits on it for every message
	bad     func(msg []byte) error  // if set, messages it refuses are malformed
	mu      sync.Mutex              // the test reads what the owner goroutine writes
	handled []nodekit.Msg           // every message handled
	reconf  [][]params.Parameter    // every Reconfigure
	rt      []nodekit.RuntimeStatus // every Report's
	ticks   int
}

func (e *echo) Handle(i int, msg []byte, receive stamp.Time) error {
	if e.gate != nil {
		<-e.gate
	}
	time.Sleep(e.slow)
	if e.bad != nil {
		if err := e.bad(msg); err != nil {
			return err
		}
	}
	e.mu.Lock()
	e.handled = append(e.handled, nodekit.Msg{Input: i, Data: msg, Receive: receive})
	e.mu.Unlock()
	e.publish(i, msg)
	return nil
}

func (e *echo) Tick(stamp.Time) { e.mu.Lock(); e.ticks++; e.mu.Unlock() }

func (e *echo) Report(now stamp.Time, rt nodekit.RuntimeStatus) nodekit.Report {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.rt = append(e.rt, rt)
	return echoReport{now: now, handled: len(e.handled), rt: rt}
}

// echoReport is echo's report.
type echoReport struct {
	now     stamp.Time
	handled int
	rt      nodekit.RuntimeStatus
}

func (r echoReport) AppendStatusMsg(b []byte) []byte {
	c := nodekit.NewCDR(b)
	c.Header(r.now, "")
	c.Uint64(uint64(r.handled))
	c.Uint64(r.rt.DroppedQueue)
	return c.B
}

func (r echoReport) Diagnose() nodekit.Diagnostic {
	var d nodekit.Diagnostic
	d.Raise(nodekit.OK, "echoing")
	return d
}

func (e *echo) Reconfigure(changed []params.Parameter) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.reconf = append(e.reconf, changed)
	return nil
}

func (e *echo) messages() []nodekit.Msg {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.handled)
}

// echoParams are the test node's own parameters.
type echoParams struct {
	types []string // message_types: one per input, "" to discover
	gain  float64
}

// echoSpec is a node with an input and an output per entry of types
// (in<i>, out<i> of the same type).
func echoSpec(c *echo, p *echoParams) nodekit.Spec {
	return nodekit.Spec{Name: "echo", What: "echo", StatusType: "test_msgs/msg/EchoStatus",
		Bind: func(b *params.Binder) {
			b.Strings("message_types", &p.types, params.Descriptor{ReadOnly: true})
			b.Float64("gain", &p.gain, params.Descriptor{})
		},
		Validate: func() error {
			if p.gain < 0 {
				return fmt.Errorf("gain (%g) must not be negative", p.gain)
			}
			return nil
		},
		Ports: func() (ins, outs []nodekit.Port, err error) {
			for i, typ := range p.types {
				ins = append(ins, nodekit.Port{Topic: fmt.Sprint("in", i), Type: typ, TypeParam: "message_types"})
				outs = append(outs, nodekit.Port{Topic: fmt.Sprint("out", i), SameAs: fmt.Sprint("in", i)})
			}
			return ins, outs, nil
		},
		New: func(pub nodekit.Publish) (nodekit.Core, error) { c.publish = pub; return c, nil },
	}
}

// started is a node run by RunMain in a goroutine.
type started struct {
	cancel context.CancelFunc
	done   chan struct{}
	code   int
	stderr bytes.Buffer
}

// start runs the node; it is stopped when the test ends.
func start(t *testing.T, g *memros.Graph, s nodekit.Spec, argv ...string) *started {
	ctx, cancel := context.WithCancel(context.Background())
	st := &started{cancel: cancel, done: make(chan struct{})}
	go func() {
		st.code = nodekit.RunMain(ctx, s, argv, g.Connect, &st.stderr)
		close(st.done)
	}()
	t.Cleanup(func() { st.stop() })
	return st
}

// stop stops the node as SIGTERM does and returns its exit status.
func (s *started) stop() int {
	s.cancel()
	return s.exit()
}

// exit waits for the node to end by itself and returns its exit status.
func (s *started) exit() int {
	<-s.done
	return s.code
}

// diag is a decoded diagnostic_msgs/DiagnosticArray with one status.
type diag struct {
	level         nodekit.Level
	name, message string
	values        map[string]string
}

// decodeDiag decodes what nodekit.AppendDiagnosticArray encodes.
func decodeDiag(t *testing.T, b []byte) diag {
	t.Helper()
	r := cdrReader{b: b, off: 4}
	r.uint32() // stamp
	r.uint32()
	r.string() // frame_id
	require.Equal(t, uint32(1), r.uint32(), "one status")
	d := diag{level: nodekit.Level(r.b[r.off]), values: map[string]string{}}
	r.off++
	d.name, d.message = r.string(), r.string()
	r.string() // hardware_id
	for range r.uint32() {
		k := r.string()
		d.values[k] = r.string()
	}
	return d
}

type cdrReader struct {
	b   []byte
	off int
}

func (r *cdrReader) uint32() uint32 {
	for (r.off-4)%4 != 0 {
		r.off++
	}
	v := binary.LittleEndian.Uint32(r.b[r.off:])
	r.off += 4
	return v
}

func (r *cdrReader) string() string {
	n := int(r.uint32())
	s := string(r.b[r.off : r.off+n-1])
	r.off += n
	return s
}

func diags(t *testing.T, r *memros.Recorder) []diag {
	var out []diag
	for _, b := range r.Messages() {
		out = append(out, decodeDiag(t, b))
	}
	return out
}

func lastDiag(t *testing.T, r *memros.Recorder) diag {
	t.Helper()
	d := diags(t, r)
	require.NotEmpty(t, d, "no diagnostics")
	return d[len(d)-1]
}

func logged(tr *memros.Transport, level nodekit.LogLevel, substr string) int {
	n := 0
	for _, l := range tr.Logs() {
		if l.Level == level && strings.Contains(l.Text, substr) {
			n++
		}
	}
	return n
}

// msg is a Header-first test message of n bytes in all, stamped st.
func msg(st stamp.Time, n int) []byte {
	c := nodekit.NewCDR(nil)
	c.Header(st, "f")
	b := make([]byte, max(n, len(c.B)))
	for i := copy(b, c.B); i < len(b); i += 4096 {
		b[i] = byte(i >> 12) // pixels that differ
	}
	return b
}

// TestDiscoveryPhase: without a type, the node waits for a publisher of
// its input, and meanwhile answers its parameters (a set is applied),
// publishes ~/status and /diagnostics (WARN naming the input) once a
// second; then it takes the publisher's type and messages flow.
func TestDiscoveryPhase(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := memros.New()
		diagnostics, status := g.Record("/diagnostics"), g.Record("/echo/status")
		core := &echo{}
		node := start(t, g, echoSpec(core, &echoParams{types: []string{""}}))
		synctest.Wait()
		ps := g.Parameters("/echo", time.Second)
		names, err := ps.List()
		require.NoError(t, err, "parameters answered while waiting for a publisher")
		require.Equal(t, []string{"gain", "inbox.max_bytes", "inbox.max_message_bytes", "inbox.max_messages", "message_types", "time_jump_threshold_sec", "use_sim_time"}, names)
		res, err := ps.Set(params.Parameter{Name: "gain", Value: params.DoubleValue(2)})
		require.NoError(t, err)
		require.Equal(t, []params.SetResult{{Successful: true}}, res)
		res, err = ps.Set(params.Parameter{Name: "gain", Value: params.DoubleValue(-1)})
		require.NoError(t, err)
		require.Equal(t, []params.SetResult{{Reason: "gain (-1) must not be negative"}}, res)
		core.mu.Lock()
		require.Len(t, core.reconf, 1, "the valid set reached the core")
		require.Equal(t, "gain", core.reconf[0][0].Name)
		core.mu.Unlock()
		events := g.ParameterEvents()
		require.Len(t, events, 8, "the seven declarations, then the set")
		require.Equal(t, "gain", events[7].ChangedParameters[0].Name)

		time.Sleep(1500 * time.Millisecond)
		synctest.Wait()
		d := lastDiag(t, diagnostics)
		require.Equal(t, nodekit.Warn, d.level)
		require.Equal(t, "waiting for a publisher of /in0 to learn its type", d.message)
		require.Equal(t, "/echo: echo", d.name)
		require.Len(t, status.Messages(), 1, "~/status while waiting")
		tr := g.Node("/echo")
		require.Equal(t, 1, logged(tr, nodekit.LogInfo, "no message type given: waiting for a publisher of /in0"))

		pub := g.Advertise("/in0", "sensor_msgs/msg/Imu")
		out := g.Record("/out0")
		time.Sleep(300 * time.Millisecond)
		synctest.Wait()
		require.Equal(t, 1, logged(tr, nodekit.LogInfo, "/in0 carries sensor_msgs/msg/Imu"))
		require.Equal(t, 1, logged(tr, nodekit.LogInfo, "/in0 (sensor_msgs/msg/Imu) -> /out0"))
		m := msg(5, 100)
		require.NoError(t, pub.Publish(m))
		synctest.Wait()
		require.Equal(t, [][]byte{m}, out.Messages())
		time.Sleep(time.Second)
		synctest.Wait()
		d = lastDiag(t, diagnostics)
		require.Equal(t, nodekit.OK, d.level, d.message)
		require.Equal(t, 0, node.stop())
		require.Equal(t, []string{"connect /echo", "spin /echo", "spin stopped /echo", "close /echo"}, g.History())
	})
}

// TestTwoTypes: a topic whose publishers have two types: the node says so
// and takes one.
func TestTwoTypes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := memros.New()
		g.Advertise("/in0", "b_msgs/msg/B")
		g.Advertise("/in0", "a_msgs/msg/A")
		node := start(t, g, echoSpec(&echo{}, &echoParams{types: []string{""}}))
		synctest.Wait()
		require.Equal(t, 1, logged(g.Node("/echo"), nodekit.LogWarn, "/in0 has publishers of 2 types (a_msgs/msg/A, b_msgs/msg/B): taking a_msgs/msg/A"))
		require.Equal(t, 0, node.stop())
	})
}

// TestStopDuringDiscovery: a node stopped while it waits for a publisher
// exits 0 at once and shuts its transport down after its spinning stopped.
func TestStopDuringDiscovery(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := memros.New()
		node := start(t, g, echoSpec(&echo{}, &echoParams{types: []string{"", ""}}), "--ros-args", "-r", "__node:=waiter")
		time.Sleep(3 * time.Second)
		synctest.Wait()
		began := time.Now()
		require.Equal(t, 0, node.stop())
		require.Zero(t, time.Since(began), "no wait on the way out")
		require.Equal(t, []string{"connect /waiter", "spin /waiter", "spin stopped /waiter", "close /waiter"}, g.History())
		require.Empty(t, node.stderr.String())
	})
}

// TestErrorsCloseTheTransport: every way New can fail after the
// transport was made shuts it down, and the exit status is 1 with the
// error on stderr.
func TestErrorsCloseTheTransport(t *testing.T) {
	for _, tc := range []struct {
		name  string
		spec  func(nodekit.Spec) nodekit.Spec
		argv  []string
		error string
	}{
		{"core", func(s nodekit.Spec) nodekit.Spec {
			s.New = func(nodekit.Publish) (nodekit.Core, error) { return nil, errors.New("no core today") }
			return s
		}, nil, "echo: no core today"},
		{"ports", func(s nodekit.Spec) nodekit.Spec {
			s.Ports = func() ([]nodekit.Port, []nodekit.Port, error) {
				return nil, nil, errors.New("message_types has 3 entries")
			}
			return s
		}, nil, "echo: message_types has 3 entries"},
		{"output without a type", func(s nodekit.Spec) nodekit.Spec {
			s.Ports = func() ([]nodekit.Port, []nodekit.Port, error) {
				return []nodekit.Port{{Topic: "in"}}, []nodekit.Port{{Topic: "out", SameAs: "nothing"}}, nil
			}
			return s
		}, nil, `output out takes the type of "nothing", which is not an input`},
		{"defaults", func(s nodekit.Spec) nodekit.Spec {
			s.Validate = func() error { return errors.New("bad defaults") }
			return s
		}, nil, "the defaults are invalid: bad defaults"},
		{"use_sim_time without /clock", func(s nodekit.Spec) nodekit.Spec { return s },
			[]string{"--ros-args", "-p", "use_sim_time:=true"}, "subscribe /clock"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := memros.New()
			g.NotInstalled("rosgraph_msgs/msg/Clock")
			node := start(t, g, tc.spec(echoSpec(&echo{}, &echoParams{types: []string{"x_msgs/msg/X"}})), tc.argv...)
			require.Equal(t, 1, node.exit())
			require.Contains(t, node.stderr.String(), tc.error)
			require.Equal(t, []string{"connect /echo", "close /echo"}, g.History())
		})
	}
	t.Run("bad arguments", func(t *testing.T) {
		g := memros.New()
		node := start(t, g, echoSpec(&echo{}, &echoParams{}), "--ros-args", "-r", "__node:=a b")
		require.Equal(t, 1, node.exit())
		require.Empty(t, g.History(), "no transport was made")
	})
}

// TestSpinFailure: a transport that fails ends the node with status 1,
// closed.
func TestSpinFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := memros.New()
		node := start(t, g, echoSpec(&echo{}, &echoParams{types: []string{"x_msgs/msg/X"}}))
		synctest.Wait()
		g.Node("/echo").FailSpin(errors.New("rcl_wait failed"))
		require.Equal(t, 1, node.exit())
		require.Contains(t, node.stderr.String(), "echo: spin: rcl_wait failed")
		require.Equal(t, "close /echo", g.History()[len(g.History())-1])
		require.NotContains(t, g.History(), "close while spinning /echo")
	})
}

// TestShutdownWithARequestWaiting: a parameter request that reaches the
// node while its owner is busy, then the node is stopped: the request is
// answered or left unanswered, never a deadlock, and the transport closes
// after its goroutine stopped.
func TestShutdownWithARequestWaiting(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := memros.New()
		core := &echo{gate: make(chan struct{})}
		node := start(t, g, echoSpec(core, &echoParams{types: []string{"x_msgs/msg/X"}}))
		synctest.Wait()
		g.Advertise("/in0", "x_msgs/msg/X").Publish(msg(1, 40)) // the owner now waits in Handle
		synctest.Wait()
		answered := make(chan error, 1)
		go func() { _, err := g.Parameters("/echo", time.Minute).List(); answered <- err }()
		synctest.Wait()
		node.cancel() // SIGTERM while the transport's goroutine waits for the owner
		close(core.gate)
		require.Equal(t, 0, node.exit())
		err := <-answered
		if err != nil {
			require.ErrorIs(t, err, memros.ErrNoResponse)
		}
		h := g.History()
		require.Equal(t, []string{"spin stopped /echo", "close /echo"}, h[len(h)-2:])
	})
}

// TestFailedPhase: an input type that is not installed, or whose
// definition does not start with a std_msgs/Header: the node logs why,
// reports ERROR, keeps serving its parameters, and exits 0 when stopped.
func TestFailedPhase(t *testing.T) {
	prefix := t.TempDir()
	dir := filepath.Join(prefix, "share", "std_msgs", "msg")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "String.msg"), []byte("string data\n"), 0o644))
	for _, tc := range []struct {
		typ, want string
	}{
		{"no_such_msgs/msg/Thing", `/out0: message type "no_such_msgs/msg/Thing": no such message`},
		{"std_msgs/msg/String", `/in0: message type std_msgs/msg/String does not start with a std_msgs/Header: its first field is "string data"`},
	} {
		t.Run(tc.typ, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				g := memros.New()
				g.NotInstalled("no_such_msgs/msg/Thing")
				diagnostics := g.Record("/diagnostics")
				s := echoSpec(&echo{}, &echoParams{types: []string{tc.typ}})
				s.MsgPrefixes = []string{prefix}
				node := start(t, g, s)
				time.Sleep(1100 * time.Millisecond)
				synctest.Wait()
				d := lastDiag(t, diagnostics)
				require.Equal(t, nodekit.Error, d.level)
				require.Contains(t, d.message, tc.want)
				require.Contains(t, d.message, "set message_types to message types whose first field is a std_msgs/Header")
				require.Equal(t, 1, logged(g.Node("/echo"), nodekit.LogError, tc.want))
				_, err := g.Parameters("/echo", time.Second).List()
				require.NoError(t, err, "a failed node still serves its parameters")
				require.Equal(t, 0, node.stop())
			})
		})
	}
}

// TestOutputTypeNotInstalled: an output of a type of its own (a status
// or summary message of the node's package) that is not installed fails
// the node with a hint to source the install, not to change the inputs'
// types.
func TestOutputTypeNotInstalled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := memros.New()
		g.NotInstalled("timealign/msg/MatchedSet")
		diagnostics := g.Record("/diagnostics")
		s := echoSpec(&echo{}, &echoParams{types: []string{"x_msgs/msg/X"}})
		ports := s.Ports
		s.Ports = func() (ins, outs []nodekit.Port, err error) {
			ins, outs, err = ports()
			return ins, append(outs, nodekit.Port{Topic: "~/matched", Type: "timealign/msg/MatchedSet"}), err
		}
		node := start(t, g, s)
		time.Sleep(1100 * time.Millisecond)
		synctest.Wait()
		d := lastDiag(t, diagnostics)
		require.Equal(t, nodekit.Error, d.level)
		require.Equal(t, `/echo/matched: message type "timealign/msg/MatchedSet": no such message (not installed); `+
			`source the install that provides timealign/msg/MatchedSet (its setup.bash)`, d.message)
		require.Equal(t, 0, node.stop())
	})
}

// TestInboxOverflow: a node that falls behind drops what does not fit in
// its inbox (bounded in messages, set live by a parameter), counts it in
// ~/status, logs it once a second naming the input and the size, and
// reports WARN; once it keeps up again the diagnostics are OK. What it
// drops is the oldest waiting: the core gets the newest.
func TestInboxOverflow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := memros.New()
		diagnostics, status := g.Record("/diagnostics"), g.Record("/echo/status")
		core := &echo{gate: make(chan struct{})}
		node := start(t, g, echoSpec(core, &echoParams{types: []string{"x_msgs/msg/X", "x_msgs/msg/X"}}))
		synctest.Wait()
		res, err := g.Parameters("/echo", time.Second).Set(params.Parameter{Name: "inbox.max_messages", Value: params.IntValue(4)})
		require.NoError(t, err)
		require.True(t, res[0].Successful)
		pub := g.Advertise("/in1", "x_msgs/msg/X")
		require.NoError(t, pub.Publish(msg(0, 1000)))
		synctest.Wait() // the core is busy with it
		for i := range 9 {
			require.NoError(t, pub.Publish(msg(stamp.Time(1+i), 1000)))
		}
		synctest.Wait() // four waiting, five dropped
		close(core.gate)
		time.Sleep(time.Second)
		synctest.Wait()
		require.Equal(t, 5, len(core.messages()))
		for i, m := range core.messages()[1:] {
			st, err := stamp.HeaderStamp(m.Data)
			require.NoError(t, err)
			require.Equal(t, stamp.Time(6+i), st, "the newest four waited")
		}
		tr := g.Node("/echo")
		require.Equal(t, 1, logged(tr, nodekit.LogWarn, "/in1: dropped 5 messages (5000 bytes, the last 1000 bytes): 5 because the node's inbox was full (at most 4 messages"))
		d := lastDiag(t, diagnostics)
		require.Equal(t, nodekit.Warn, d.level)
		require.Equal(t, "input /in1: messages dropped, the inbox was full", d.message)
		require.Equal(t, "5", d.values["/in1.inbox_dropped"])
		require.Equal(t, "5", d.values["inbox.dropped"])
		st := status.Messages()
		require.Equal(t, uint64(5), binary.LittleEndian.Uint64(st[len(st)-1][len(st[len(st)-1])-8:]), "dropped_queue in ~/status")
		time.Sleep(time.Second)
		synctest.Wait()
		require.Equal(t, nodekit.OK, lastDiag(t, diagnostics).level, "no drop in the last second")
		require.Equal(t, 1, logged(tr, nodekit.LogWarn, "/in1: dropped"), "logged once")
		require.Equal(t, 0, node.stop())
	})
}

// TestBacklog: a node that falls behind (a core that takes 100 ms a
// message, as one starved of CPU does) reports the messages waiting for it
// in /diagnostics, a WARN naming the backlog, before the inbox is full;
// the WARN goes once the backlog is gone, and a burst of a few messages
// is not one.
func TestBacklog(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := memros.New()
		diagnostics := g.Record("/diagnostics")
		core := &echo{slow: 100 * time.Millisecond}
		node := start(t, g, echoSpec(core, &echoParams{types: []string{"x_msgs/msg/X"}}))
		synctest.Wait()
		res, err := g.Parameters("/echo", time.Second).Set(params.Parameter{Name: "inbox.max_messages", Value: params.IntValue(100)})
		require.NoError(t, err)
		require.True(t, res[0].Successful)
		pub := g.Advertise("/in0", "x_msgs/msg/X")
		for i := range 10 {
			require.NoError(t, pub.Publish(msg(stamp.Time(i), 100)))
			synctest.Wait()
		}
		time.Sleep(3 * time.Second)
		synctest.Wait()
		for _, d := range diags(t, diagnostics) {
			require.Equal(t, nodekit.OK, d.level, "10 messages waiting are a burst: %s", d.message)
		}
		for i := range 60 {
			require.NoError(t, pub.Publish(msg(stamp.Time(10+i), 100)))
			synctest.Wait() // taken into the inbox
		}
		seen := len(diags(t, diagnostics))
		var d diag
		for range 20 { // the next report, within a second
			time.Sleep(100 * time.Millisecond)
			synctest.Wait()
			if ds := diags(t, diagnostics); len(ds) > seen {
				d = ds[seen]
				break
			}
		}
		require.Equal(t, nodekit.Warn, d.level, "%s %v", d.message, d.values)
		queued, err := strconv.Atoi(d.values["inbox.queued_messages"])
		require.NoError(t, err)
		require.Greater(t, queued, 40)
		require.Equal(t, fmt.Sprintf("backlog: %d messages (%d bytes) wait for the node (at most 100 messages and 134217728 bytes): "+
			"it falls behind its inputs, too little CPU or too high a rate; the oldest are dropped first", queued, 100*queued), d.message)
		require.Equal(t, "0", d.values["inbox.dropped"], "a backlog, not yet drops")
		time.Sleep(7 * time.Second)
		synctest.Wait()
		require.Len(t, core.messages(), 70)
		d = lastDiag(t, diagnostics)
		require.Equal(t, nodekit.OK, d.level, d.message)
		require.Equal(t, "0", d.values["inbox.queued_messages"])
		require.Equal(t, 0, node.stop())
	})
}

// TestBigMessages: messages of any size go through (a 4K rgb8 image, a
// 1080p one), handed from the transport to the core and on to the
// publisher without a copy; with an inbox bound in bytes smaller than a
// message, a message that finds the inbox empty still passes, and one
// that finds it busy is dropped and reported with its size.
func TestBigMessages(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := memros.New()
		core := &echo{gate: make(chan struct{}, 10)}
		node := start(t, g, echoSpec(core, &echoParams{types: []string{"sensor_msgs/msg/Image"}}),
			"--ros-args", "-p", "inbox.max_bytes:=1000000")
		synctest.Wait()
		pub := g.Advertise("/in0", "sensor_msgs/msg/Image")
		out, tap, diagnostics := g.Record("/out0"), g.Tap("/out0"), g.Record("/diagnostics")
		uhd, hd := msg(1, 3840*2160*3+60), msg(2, 1920*1080*3+60)
		core.gate <- struct{}{}
		require.NoError(t, pub.Publish(uhd))
		synctest.Wait()
		core.gate <- struct{}{}
		require.NoError(t, pub.Publish(hd))
		synctest.Wait()
		require.Equal(t, [][]byte{uhd, hd}, out.Messages())
		got := tap.Messages()
		require.Len(t, got, 2)
		require.Same(t, &uhd[0], &got[0][0], "4K: no copy from the transport to the publisher")
		require.Same(t, &hd[0], &got[1][0], "1080p: no copy")
		// The core is busy with a message and another waits: the next big
		// one does not fit.
		require.NoError(t, pub.Publish(msg(3, 100)))
		synctest.Wait()
		require.NoError(t, pub.Publish(msg(4, 100)))
		require.NoError(t, pub.Publish(msg(5, 2_000_000)))
		synctest.Wait()
		core.gate <- struct{}{}
		core.gate <- struct{}{}
		time.Sleep(time.Second)
		synctest.Wait()
		require.Len(t, out.Messages(), 4)
		require.Equal(t, 1, logged(g.Node("/echo"), nodekit.LogWarn, "/in0: dropped 1 messages (2000000 bytes, the last 2000000 bytes): 1 because the node's inbox was full"))
		// A bound on the size of one message (set live) drops a 4K image
		// even when nothing waits, and lets a 1080p one through.
		res, err := g.Parameters("/echo", time.Second).Set(params.Parameter{Name: "inbox.max_message_bytes", Value: params.IntValue(7_000_000)})
		require.NoError(t, err)
		require.True(t, res[0].Successful)
		core.gate <- struct{}{}
		require.NoError(t, pub.Publish(uhd))
		require.NoError(t, pub.Publish(hd))
		time.Sleep(time.Second)
		synctest.Wait()
		require.Len(t, out.Messages(), 5, "the 1080p image")
		require.Equal(t, 1, logged(g.Node("/echo"), nodekit.LogWarn, fmt.Sprintf("/in0: dropped 1 messages (%d bytes, the last %d bytes): 1 larger than inbox.max_message_bytes (7000000)", len(uhd), len(uhd))))
		d := lastDiag(t, diagnostics)
		require.Equal(t, nodekit.Warn, d.level)
		require.Equal(t, "input /in0: messages dropped, larger than inbox.max_message_bytes", d.message)
		require.Equal(t, 0, node.stop())
	})
}

// TestMalformedLogged: messages the core refuses are logged at most once
// a second per input, saying how many were left out.
func TestMalformedLogged(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := memros.New()
		core := &echo{bad: func(m []byte) error {
			if len(m) < 8 {
				return errors.New("too short")
			}
			return nil
		}}
		node := start(t, g, echoSpec(core, &echoParams{types: []string{"x_msgs/msg/X"}}))
		synctest.Wait()
		pub := g.Advertise("/in0", "x_msgs/msg/X")
		for range 3 {
			for range 100 {
				require.NoError(t, pub.Publish([]byte{1}))
			}
			synctest.Wait()
			time.Sleep(time.Second)
		}
		tr := g.Node("/echo")
		require.Equal(t, 3, logged(tr, nodekit.LogWarn, "dropped a malformed message on /in0: too short"))
		require.Equal(t, 2, logged(tr, nodekit.LogWarn, "(and 99 more since the last line)"))
		require.Equal(t, 0, node.stop())
	})
}

// TestSimTime: with use_sim_time the receive stamps are /clock's, also
// when the transport gives a reception time.
func TestSimTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := memros.New()
		core := &echo{}
		node := start(t, g, echoSpec(core, &echoParams{types: []string{"x_msgs/msg/X"}}), "--ros-args", "-p", "use_sim_time:=true")
		synctest.Wait()
		clock := g.Advertise("/clock", "rosgraph_msgs/msg/Clock")
		c := nodekit.NewCDR(nil)
		c.Time(7 * stamp.Time(time.Second))
		require.NoError(t, clock.Publish(c.B))
		synctest.Wait()
		require.NoError(t, g.Advertise("/in0", "x_msgs/msg/X").Publish(msg(1, 40)))
		synctest.Wait()
		require.Equal(t, 7*stamp.Time(time.Second), core.messages()[0].Receive)
		require.Equal(t, 0, node.stop())
	})
}

// TestTickAndStatusPeriods: Tick runs at Spec.TickEvery once the node
// runs; Report once a second in every phase, with the runtime's status.
func TestTickAndStatusPeriods(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := memros.New()
		core := &echo{}
		s := echoSpec(core, &echoParams{types: []string{""}})
		s.TickEvery = 100 * time.Millisecond
		node := start(t, g, s, "--ros-args", "-r", "in0:=/cam")
		time.Sleep(2500 * time.Millisecond)
		synctest.Wait()
		core.mu.Lock()
		require.Zero(t, core.ticks, "no tick while waiting for a type")
		require.Len(t, core.rt, 2)
		require.Equal(t, []string{"/cam"}, core.rt[1].Inputs)
		require.Equal(t, 2*time.Second, core.rt[1].Elapsed)
		core.mu.Unlock()
		g.Advertise("/cam", "x_msgs/msg/X")
		time.Sleep(time.Second)
		synctest.Wait()
		core.mu.Lock()
		require.InDelta(t, 8, core.ticks, 2)
		core.mu.Unlock()
		require.Equal(t, 0, node.stop())
	})
}

// TestRequestsBetweenSlowMessages: while a core takes long over each
// message (a big one to publish), parameter requests are answered between
// two messages, not after the whole backlog.
func TestRequestsBetweenSlowMessages(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := memros.New()
		core := &echo{slow: 100 * time.Millisecond}
		node := start(t, g, echoSpec(core, &echoParams{types: []string{"x_msgs/msg/X"}}))
		synctest.Wait()
		pub := g.Advertise("/in0", "x_msgs/msg/X")
		for i := range 20 {
			require.NoError(t, pub.Publish(msg(stamp.Time(i), 100)))
		}
		time.Sleep(50 * time.Millisecond)
		began := time.Now()
		_, err := g.Parameters("/echo", time.Minute).List()
		require.NoError(t, err)
		require.LessOrEqual(t, time.Since(began), 100*time.Millisecond, "answered after the message being handled")
		require.Less(t, len(core.messages()), 5)
		require.Equal(t, 0, node.stop())
	})
}

// TestSlowOutput: an output of big messages (above 64 KiB) whose publisher
// waits for its readers does not hold up the node: parameters are answered
// at once, other outputs and ~/status go on, messages go out in order; what
// does not fit in the output's queue (inbox.max_bytes) is dropped, logged
// and reported; a publisher that fails is reported too.
func TestSlowOutput(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := memros.New()
		g.SlowPublish("/out0", 300*time.Millisecond)
		diagnostics, status := g.Record("/diagnostics"), g.Record("/echo/status")
		out0, out1 := g.Record("/out0"), g.Record("/out1")
		core := &echo{}
		node := start(t, g, echoSpec(core, &echoParams{types: []string{"x_msgs/msg/X", "x_msgs/msg/X"}}),
			"--ros-args", "-p", "inbox.max_bytes:=250000")
		synctest.Wait()
		in0, in1 := g.Advertise("/in0", "x_msgs/msg/X"), g.Advertise("/in1", "x_msgs/msg/X")
		for i := range 10 {
			require.NoError(t, in0.Publish(msg(stamp.Time(i), 100_000)))
			synctest.Wait()
		}
		require.Equal(t, 10, len(core.messages()), "the core is not held up by the slow output")
		began := time.Now()
		_, err := g.Parameters("/echo", time.Minute).List()
		require.NoError(t, err)
		require.Zero(t, time.Since(began), "parameters answered at once")
		require.NoError(t, in1.Publish(msg(99, 100)))
		synctest.Wait()
		require.Len(t, out1.Messages(), 1, "the other output goes on")
		time.Sleep(5 * time.Second)
		synctest.Wait()
		got := out0.Messages()
		require.Len(t, got, 3, "two waited in the output's queue of 250000 bytes behind the one being published")
		for i, m := range got {
			st, err := stamp.HeaderStamp(m)
			require.NoError(t, err)
			require.Equal(t, []stamp.Time{0, 8, 9}[i], st, "in order, the newest kept")
		}
		require.Equal(t, 1, logged(g.Node("/echo"), nodekit.LogWarn, "/out0: dropped 7 messages (700000 bytes, the last 100000 bytes) waiting to be published: the output falls behind"))
		ds := diags(t, diagnostics)
		require.Contains(t, ds[0].message, "output /out0: messages dropped, it falls behind")
		require.Equal(t, "7", ds[len(ds)-1].values["/out0.outbox_dropped"])
		st := status.Messages()
		require.Equal(t, uint64(7), binary.LittleEndian.Uint64(st[len(st)-1][len(st[len(st)-1])-8:]), "dropped_queue in ~/status")

		g.FailPublish("/out1", errors.New("rmw_publish failed"))
		require.NoError(t, in1.Publish(msg(100, 100)))
		time.Sleep(time.Second)
		synctest.Wait()
		require.Equal(t, 1, logged(g.Node("/echo"), nodekit.LogError, "/out1: 1 messages not published: rmw_publish failed"))
		require.Contains(t, lastDiag(t, diagnostics).message, "output /out1: publishing fails (rmw_publish failed)")
		require.Equal(t, 0, node.stop())
	})
}

// TestSlowSmallOutput: small messages (at most 64 KiB) on a keep-last
// output are published by the goroutine that handles them; one whose
// publish takes long (a writer that waits after all) sends the output's
// next messages to its own goroutine for a second, so the core goes on.
func TestSlowSmallOutput(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := memros.New()
		tap := g.Tap("/out0")
		core := &echo{}
		node := start(t, g, echoSpec(core, &echoParams{types: []string{"x_msgs/msg/X"}}))
		synctest.Wait()
		in0 := g.Advertise("/in0", "x_msgs/msg/X")
		require.NoError(t, in0.Publish(msg(0, 100)))
		synctest.Wait()
		require.Len(t, tap.Messages(), 1, "published at once")
		g.SlowPublish("/out0", 300*time.Millisecond)
		require.NoError(t, in0.Publish(msg(1, 100)))
		time.Sleep(301 * time.Millisecond)
		synctest.Wait()
		require.Len(t, tap.Messages(), 2, "published by the handling goroutine: the core waited")
		for i := range 3 {
			require.NoError(t, in0.Publish(msg(stamp.Time(2+i), 100)))
			synctest.Wait()
		}
		require.Len(t, core.messages(), 5, "the core goes on: the output's goroutine waits")
		time.Sleep(time.Second)
		synctest.Wait()
		require.Len(t, tap.Messages(), 5, "all published, in order")
		for i, m := range tap.Messages() {
			st, err := stamp.HeaderStamp(m)
			require.NoError(t, err)
			require.Equal(t, stamp.Time(i), st)
		}
		g.SlowPublish("/out0", 0)
		time.Sleep(2 * time.Second)
		require.NoError(t, in0.Publish(msg(9, 100)))
		synctest.Wait()
		require.Len(t, tap.Messages(), 6, "a second later: at once again")
		require.Equal(t, 0, node.stop())
	})
}

// TestOutputWithoutSubscribers: a volatile output that nobody subscribes
// to is not published (its messages would reach nobody; counted in the
// diagnostics), and is again once a subscriber comes; a transient-local
// output is published all the same (late joiners get its history).
func TestOutputWithoutSubscribers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := memros.New()
		g.FailPublish("/out0", errors.New("published"))
		g.FailPublish("/out1", errors.New("published"))
		diagnostics := g.Record("/diagnostics")
		core := &echo{}
		s := echoSpec(core, &echoParams{types: []string{"x_msgs/msg/X", "x_msgs/msg/X"}})
		ports := s.Ports
		s.Ports = func() (ins, outs []nodekit.Port, err error) {
			ins, outs, err = ports()
			outs[1].QoS = qos.Profile{Reliability: qos.Reliable, Durability: qos.TransientLocal, History: qos.KeepLast, Depth: 1}
			return ins, outs, err
		}
		node := start(t, g, s)
		synctest.Wait()
		in0, in1 := g.Advertise("/in0", "x_msgs/msg/X"), g.Advertise("/in1", "x_msgs/msg/X")
		for i := range 3 {
			require.NoError(t, in0.Publish(msg(stamp.Time(i), 100)))
			require.NoError(t, in1.Publish(msg(stamp.Time(i), 100)))
			synctest.Wait()
		}
		time.Sleep(time.Second)
		synctest.Wait()
		d := lastDiag(t, diagnostics)
		require.Equal(t, "3", d.values["/out0.not_published_no_subscriber"])
		require.NotContains(t, d.message, "output /out0")
		require.Contains(t, d.message, "output /out1: publishing fails (published)", "transient local: published without subscribers")
		require.NotContains(t, d.values, "/out1.not_published_no_subscriber")

		g.FailPublish("/out0", nil)
		out0 := g.Record("/out0")
		require.NoError(t, in0.Publish(msg(7, 100)))
		synctest.Wait()
		require.Len(t, out0.Messages(), 1, "published once subscribed")
		require.Equal(t, 0, node.stop())
	})
}

// TestRuntimeParameters: the runtime's own parameters as a user meets
// them: use_sim_time read-only with its reason (in the description and in
// a refused set), the inbox limits live (each set is seen in the
// diagnostics) and bounded by ranges, and values of the wrong type given
// at start-up refused (ROS 2's rule) with a warning that names the
// parameter, the type given and the type wanted.
func TestRuntimeParameters(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := memros.New()
		diagnostics := g.Record("/diagnostics")
		node := start(t, g, echoSpec(&echo{}, &echoParams{types: []string{"x_msgs/msg/X"}}),
			"--ros-args", "-p", "gain:=1", "-p", "inbox.max_messages:=64.0")
		synctest.Wait()
		tr := g.Node("/echo")
		require.Equal(t, 1, logged(tr, nodekit.LogWarn, `parameter "gain" (-p gain:=1): value 1 rejected, keeping 0.0: `+
			`Wrong parameter type, parameter {gain} is of type {double}, setting it to {integer} is not allowed. (Write 1.0 for a double.)`))
		require.Equal(t, 1, logged(tr, nodekit.LogWarn, `parameter "inbox.max_messages" (-p inbox.max_messages:=64.0): value 64.0 rejected, keeping 1024: `+
			`Wrong parameter type, parameter {inbox.max_messages} is of type {integer}, setting it to {double} is not allowed.`))

		ps := g.Parameters("/echo", time.Second)
		ds, err := ps.Describe(runtimeparams.Names...)
		require.NoError(t, err)
		require.Len(t, ds, len(runtimeparams.Names))
		for _, d := range ds {
			if d.ReadOnly {
				require.Contains(t, d.Description, params.ReadOnlyReason, "%s says why it is read-only", d.Name)
			} else {
				require.Equal(t, 1, len(d.IntegerRange)+len(d.FloatingPointRange), "%s has a range", d.Name)
			}
		}
		res, err := ps.Set(params.Parameter{Name: "use_sim_time", Value: params.BoolValue(true)},
			params.Parameter{Name: "inbox.max_bytes", Value: params.IntValue(0)})
		require.NoError(t, err)
		require.Equal(t, []params.SetResult{
			{Reason: "parameter 'use_sim_time' cannot be set because it is read-only (the node chooses its clock, and subscribes /clock, at start-up)"},
			{Reason: "Parameter {inbox.max_bytes} doesn't comply with integer range: 0 is not in [1, 1099511627776]."},
		}, res)

		sets := []params.Parameter{
			{Name: "inbox.max_messages", Value: params.IntValue(64)},
			{Name: "inbox.max_bytes", Value: params.IntValue(1 << 20)},
			{Name: "inbox.max_message_bytes", Value: params.IntValue(4096)},
			{Name: "time_jump_threshold_sec", Value: params.DoubleValue(2.5)},
		}
		var writable []string
		for _, p := range runtimeparams.Settings(runtimeparams.DefaultParams()) {
			writable = append(writable, p.Name)
		}
		require.ElementsMatch(t, []string{"inbox.max_messages", "inbox.max_bytes", "inbox.max_message_bytes", "time_jump_threshold_sec"}, writable)
		for _, p := range sets {
			time.Sleep(time.Second)
			synctest.Wait()
			require.NotEqual(t, p.Value.String(), lastDiag(t, diagnostics).values[p.Name], "%s: a change", p.Name)
			res, err := ps.Set(p)
			require.NoError(t, err)
			require.True(t, res[0].Successful, res[0].Reason)
			time.Sleep(time.Second)
			synctest.Wait()
			require.Equal(t, p.Value.String(), lastDiag(t, diagnostics).values[p.Name], "%s: in effect", p.Name)
		}
		require.Equal(t, 0, node.stop())
	})
}

// attaching is an echo that wants its Env.
type attaching struct {
	*echo
	env   nodekit.Env
	calls int // Attach calls
	first bool
}

func (a *attaching) Attach(e nodekit.Env) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.env, a.calls = e, a.calls+1
	a.first = len(a.rt) == 0 && a.ticks == 0 && len(a.handled) == 0
}

// TestAttach: a core that is an Attacher gets its resolved topics (remapped,
// in the namespace) and the node's log once, before anything else; its
// lines go to ROS logging.
func TestAttach(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := memros.New()
		core := &attaching{echo: &echo{}}
		s := echoSpec(core.echo, &echoParams{types: []string{"x_msgs/msg/X", "x_msgs/msg/X"}})
		s.New = func(pub nodekit.Publish) (nodekit.Core, error) { core.publish = pub; return core, nil }
		node := start(t, g, s, "--ros-args", "-r", "__ns:=/robot", "-r", "in0:=/cam", "-r", "out1:=/x/y")
		time.Sleep(1500 * time.Millisecond)
		synctest.Wait()
		core.mu.Lock()
		require.Equal(t, 1, core.calls)
		require.True(t, core.first, "Attach comes first")
		require.Equal(t, []string{"/cam", "/robot/in1"}, core.env.Inputs)
		require.Equal(t, []string{"/robot/out0", "/x/y"}, core.env.Outputs)
		log := core.env.Log
		core.mu.Unlock()
		log(nodekit.LogInfo, "a line of the core's own")
		require.Contains(t, fmt.Sprint(g.Node("/robot/echo").Logs()), "[INFO] a line of the core's own")
		require.Equal(t, 0, node.stop())
	})
}

// TestTypeChange: the publisher of an input restarts with another type
// (and a second publisher of another type joins a given type): the node
// keeps running with the type it took, says once, naming both types and
// what to do, that the other publisher's messages do not reach it, reports
// WARN while that publisher is there, and OK (logged) once it is gone.
func TestTypeChange(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := memros.New()
		diagnostics := g.Record("/diagnostics")
		core := &echo{}
		node := start(t, g, echoSpec(core, &echoParams{types: []string{"", "x_msgs/msg/X"}}))
		a := g.Advertise("/in0", "a_msgs/msg/A")
		time.Sleep(300 * time.Millisecond)
		synctest.Wait()
		require.NoError(t, a.Publish(msg(1, 40)))
		synctest.Wait()
		require.Len(t, core.messages(), 1)
		a.Close()
		b := g.Advertise("/in0", "b_msgs/msg/B") // the driver restarts with another type
		other := g.Advertise("/in1", "y_msgs/msg/Y")
		for i := range 50 {
			require.NoError(t, b.Publish(msg(stamp.Time(2+i), 40)))
			require.NoError(t, other.Publish(msg(stamp.Time(2+i), 40)))
			time.Sleep(100 * time.Millisecond)
		}
		synctest.Wait()
		require.Len(t, core.messages(), 1, "messages of another type never reach the core")
		tr := g.Node("/echo")
		require.Equal(t, 1, logged(tr, nodekit.LogWarn, "/in0: a publisher of b_msgs/msg/B, not a_msgs/msg/A: none of its messages reach this node, "+
			"which took the input's type from its publishers when it started; restart the node to take another type"), "logged once in 5 s")
		require.Equal(t, 1, logged(tr, nodekit.LogWarn, "/in1: a publisher of y_msgs/msg/Y, not x_msgs/msg/X: none of its messages reach this node; "+
			"restart it with message_types set to the type to take"))
		d := lastDiag(t, diagnostics)
		require.Equal(t, nodekit.Warn, d.level)
		require.Contains(t, d.message, "input /in0: a publisher of b_msgs/msg/B, not a_msgs/msg/A: its messages do not reach the node")
		require.Contains(t, d.message, "input /in1: a publisher of y_msgs/msg/Y, not x_msgs/msg/X")

		b.Close()
		other.Close()
		a = g.Advertise("/in0", "a_msgs/msg/A") // back to the type the node took
		time.Sleep(1100 * time.Millisecond)
		synctest.Wait()
		require.Equal(t, 1, logged(tr, nodekit.LogInfo, "/in0: no publisher of another type than a_msgs/msg/A any more"))
		require.Equal(t, nodekit.OK, lastDiag(t, diagnostics).level)
		require.NoError(t, a.Publish(msg(100, 40)))
		synctest.Wait()
		require.Len(t, core.messages(), 2, "the node takes the input's messages again")
		require.Equal(t, 0, node.stop())
	})
}

// TestLostBeforeNode: messages the middleware numbered but never handed
// over (gaps in a publisher's sequence numbers) are counted per input in
// /diagnostics, logged once per report with the input's queue and make it
// WARN; a second without losses is OK again. Where the middleware does not
// number messages, nothing is said of them.
func TestLostBeforeNode(t *testing.T) {
	for _, numbered := range []bool{true, false} {
		t.Run(fmt.Sprintf("numbered=%v", numbered), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				g := memros.New()
				if !numbered {
					g.Unnumbered()
				}
				diagnostics := g.Record("/diagnostics")
				core := &echo{}
				node := start(t, g, echoSpec(core, &echoParams{types: []string{"x_msgs/msg/X"}}))
				synctest.Wait()
				pub := g.Advertise("/in0", "x_msgs/msg/X")
				require.NoError(t, pub.Publish(msg(1, 100)))
				g.LoseMessages("/in0", 7)
				require.NoError(t, pub.Publish(msg(2, 100)))
				time.Sleep(1100 * time.Millisecond)
				synctest.Wait()
				d := lastDiag(t, diagnostics)
				tr := g.Node("/echo")
				if !numbered {
					require.NotContains(t, d.values, "/in0.lost_before_node")
					require.Equal(t, nodekit.OK, d.level, d.message)
					require.Equal(t, 0, logged(tr, nodekit.LogWarn, "lost before the node"))
					require.Equal(t, 0, node.stop())
					return
				}
				require.Equal(t, "7", d.values["/in0.lost_before_node"])
				require.Equal(t, nodekit.Warn, d.level)
				require.Equal(t, "input /in0: messages lost before the node", d.message)
				require.Equal(t, 1, logged(tr, nodekit.LogWarn, "/in0: 7 messages lost before the node (their publisher numbered them, they never came): "+
					"the node fell behind and the middleware's queue (keep-last, qos.in.depth"))
				time.Sleep(time.Second)
				synctest.Wait()
				d = lastDiag(t, diagnostics)
				require.Equal(t, nodekit.OK, d.level, "no loss in the last second: %s", d.message)
				require.Equal(t, "7", d.values["/in0.lost_before_node"], "the count stays")
				g.LoseMessages("/in0", 2)
				time.Sleep(time.Second)
				synctest.Wait()
				require.Equal(t, 1, logged(tr, nodekit.LogWarn, "/in0: 2 messages lost before the node"))
				require.Equal(t, "9", lastDiag(t, diagnostics).values["/in0.lost_before_node"])
				require.Len(t, core.messages(), 2, "no message taken away")
				require.Equal(t, 0, node.stop())
			})
		})
	}
}

// reporting is an echo node on /in0 that has taken a message and made its
// first report, for the tests of what its reports say; next waits for the
// next report and returns its diagnostic.
type reporting struct {
	t           *testing.T
	g           *memros.Graph
	node        *started
	core        *echo
	diagnostics *memros.Recorder
}

func startReporting(t *testing.T, g *memros.Graph) *reporting {
	r := &reporting{t: t, g: g, core: &echo{}, diagnostics: g.Record("/diagnostics")}
	r.node = start(t, g, echoSpec(r.core, &echoParams{types: []string{"x_msgs/msg/X"}}))
	synctest.Wait()
	require.NoError(t, g.Advertise("/in0", "x_msgs/msg/X").Publish(msg(1, 100)))
	time.Sleep(100 * time.Millisecond)
	r.next()
	return r
}

func (r *reporting) next() diag {
	time.Sleep(time.Second)
	synctest.Wait()
	return lastDiag(r.t, r.diagnostics)
}

// TestMiddlewareWait: where the middleware says when messages were sent,
// how long they waited before the node took them is in /diagnostics per
// input; a wait past half a second (a node behind, its queue in the
// middleware) is logged once per report and makes it WARN, naming the
// backlog; once the node keeps up it is OK again. Where it does not say,
// nothing is.
func TestMiddlewareWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := memros.New()
		r := startReporting(t, g)
		tr := g.Node("/echo")
		d := lastDiag(t, r.diagnostics)
		require.NotContains(t, d.values, "/in0.middleware_wait_sec", "no send times: nothing said")

		g.Wait("/in0", 20*time.Millisecond) // a reliable repair: no backlog
		d = r.next()
		require.Equal(t, "0.020", d.values["/in0.middleware_wait_sec"])
		require.Equal(t, nodekit.OK, d.level, d.message)

		g.Wait("/in0", 930*time.Millisecond)
		d = r.next()
		require.Equal(t, "0.930", d.values["/in0.middleware_wait_sec"])
		require.Equal(t, nodekit.Warn, d.level)
		require.Equal(t, "backlog: input /in0: messages wait 0.93 s in the middleware", d.message)
		require.Equal(t, 1, logged(tr, nodekit.LogWarn, "/in0: messages waited up to 0.93 s in the middleware before the node took them: "+
			"the node falls behind (short of CPU, or a flood); what its keep-last queue (qos.in.depth"))

		d = r.next()
		require.Equal(t, "0.000", d.values["/in0.middleware_wait_sec"])
		require.Equal(t, nodekit.OK, d.level, "caught up: %s", d.message)
		require.Equal(t, 1, logged(tr, nodekit.LogWarn, "in the middleware before the node took them"), "logged once")

		// Takes that find the queue full: a few in a burst say nothing,
		// most of a second's do.
		require.NotContains(t, d.values, "/in0.middleware_queue_full", "not told: nothing said")
		g.FullTakes("/in0", 12, 900)
		d = r.next()
		require.Equal(t, "12", d.values["/in0.middleware_queue_full"])
		require.Equal(t, nodekit.OK, d.level, "a burst: %s", d.message)
		g.FullTakes("/in0", 300, 310)
		d = r.next()
		require.Equal(t, "312", d.values["/in0.middleware_queue_full"], "counted since the start")
		require.Equal(t, nodekit.Warn, d.level)
		require.Equal(t, "backlog: input /in0: the middleware's queue is full", d.message)
		require.Equal(t, 1, logged(tr, nodekit.LogWarn, "/in0: 300 of 310 takes found the middleware's queue full: the node falls behind (short of CPU, or a flood); "+
			"the keep-last queue there (qos.in.depth"))
		require.Equal(t, 0, r.node.stop())
	})
}

// TestCPUQuota: a node whose cgroup has a CPU quota says so in
// /diagnostics with how long it held the node back; held back for more
// than a tenth of a report's time, it logs that once per report and WARNs
// (starved); where the transport cannot tell, nothing is said.
func TestCPUQuota(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := memros.New()
		r := startReporting(t, g)
		tr := g.Node("/echo")
		require.NotContains(t, lastDiag(t, r.diagnostics).values, "cpu.throttled_sec", "cannot tell: nothing said")

		th := nodekit.Throttling{Periods: 500, Throttled: 30, Time: 3 * time.Second, Cores: 0.1}
		g.Throttle(th) // held back before: not this node's doing
		r.next()
		th.Periods, th.Throttled, th.Time = th.Periods+10, th.Throttled+1, th.Time+50*time.Millisecond
		g.Throttle(th)
		d := r.next()
		require.Equal(t, "0.100", d.values["cpu.quota_cores"])
		require.Equal(t, "1", d.values["cpu.throttled_periods"])
		require.Equal(t, "0.050", d.values["cpu.throttled_sec"])
		require.Equal(t, nodekit.OK, d.level, "1 period in 10: %s", d.message)

		th.Periods, th.Throttled, th.Time = th.Periods+10, th.Throttled+8, th.Time+1600*time.Millisecond
		g.Throttle(th)
		d = r.next()
		require.Equal(t, "9", d.values["cpu.throttled_periods"])
		require.Equal(t, "1.650", d.values["cpu.throttled_sec"], "summed over the CPUs: more than the time passed")
		require.Equal(t, nodekit.Warn, d.level)
		require.Equal(t, "starved: the CPU quota of its cgroup (0.10 of a core) held the node back in 80% of its periods", d.message)
		require.Equal(t, 1, logged(tr, nodekit.LogWarn, "the CPU quota of its cgroup (0.10 of a core) held the node back in 8 of its last 10 periods: "+
			"it falls behind its inputs"))
		require.Equal(t, nodekit.OK, r.next().level, "no longer held back")
		require.Equal(t, 1, logged(tr, nodekit.LogWarn, "of its last"), "logged once")
		require.Equal(t, 0, r.node.stop())
	})
}
