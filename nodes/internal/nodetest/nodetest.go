// Package nodetest holds what the tests of the nodes share: a node's
// parameters declared as the node runtime declares them, and the check
// that every writable parameter set at run time is what the running node
// then works with.
package nodetest

import (
	"encoding/binary"
	"runtime"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timealign/timealign/nodes/internal/nodekit"
	"github.com/timealign/timealign/nodes/internal/nodekit/memros"
	"github.com/timealign/timealign/pkg/params"
	"github.com/timealign/timealign/pkg/stamp"
)

// Params are a node's parameter declarations, as each node's
// *config.Params has them.
type Params interface {
	Bind(b *params.Binder)
	Validate() error
}

// Declare declares p's parameters on a new server, taking the overrides
// ov (rejected ones are the server's Issues), as the node runtime does.
func Declare(t testing.TB, p Params, ov map[string]params.Override) *params.Server {
	t.Helper()
	return declare(t, p.Bind, p.Validate, ov)
}

func declare(t testing.TB, bind func(*params.Binder), validate func() error, ov map[string]params.Override) *params.Server {
	t.Helper()
	srv := params.NewServer(params.Options{Node: "/test", Overrides: ov})
	b := params.NewBinder(srv, validate)
	bind(b)
	require.NoError(t, b.Declare())
	return srv
}

// Live declares the parameters of node s, makes its core (s.New) and
// checks that changes name every writable parameter (and that every
// read-only one says why in its description); then it sets each change in
// turn, as `ros2 param set` does, and checks that the node's diagnostics
// (Core.Report: Report.Diagnose), which list the settings its core runs with, show the new
// value. Changes are set in order: each must be valid on its own. Live
// returns the core, for checks of its own.
func Live(t testing.TB, s nodekit.Spec, changes ...params.Parameter) nodekit.Core {
	t.Helper()
	srv := declare(t, s.Bind, s.Validate, nil)
	node, err := s.New(func(int, []byte) {})
	require.NoError(t, err)
	srv.AddApplier(func(changed []params.Parameter) { require.NoError(t, node.Reconfigure(changed)) })
	var writable, changed []string
	for _, name := range srv.Names() {
		d, _ := srv.Describe(name)
		if d.ReadOnly {
			require.Contains(t, d.Description, params.ReadOnlyReason, "%s says why it is read-only", name)
			continue
		}
		writable = append(writable, name)
	}
	for _, c := range changes {
		changed = append(changed, c.Name)
	}
	require.ElementsMatch(t, writable, changed, "a change for every writable parameter")
	setting := func(name string) string {
		d := node.Report(0, nodekit.RuntimeStatus{Node: "/test"}).Diagnose()
		for _, kv := range d.Values {
			if kv.Key == name {
				return kv.Value
			}
		}
		t.Fatalf("%s is not in the diagnostics", name)
		return ""
	}
	for _, c := range changes {
		require.NotEqual(t, c.Value.String(), setting(c.Name), "%s: the test changes it", c.Name)
		require.NoError(t, srv.Set(c)[0], c.Name)
		require.Equal(t, c.Value.String(), setting(c.Name), "%s: the node runs with it", c.Name)
	}
	return node
}

// Input is one input of a node under Throughput: its topic and message
// type, and the message it gets (rewritten with each message's stamp).
type Input struct {
	Topic, Type string
	Message     []byte
}

// Throughput benchmarks node s (started with argv) on a memros graph, end
// to end: each op publishes one message on every input, all with the same
// header stamp (1 ms apart from op to op), and counts the messages the node
// publishes on out (which must get one per op). At most 32 ops are in flight
// at once, so no queue of the node overflows; with pace > 0 an op starts
// pace after the one before (as a sensor's messages come, each one waking
// the node), else at once. Allocations and CPU time (cpu-ns/op) are those
// of the whole process: the graph, the node's goroutines and its core, and
// the publishing loop.
func Throughput(b *testing.B, s nodekit.Spec, argv []string, inputs []Input, out string, pace time.Duration) {
	b.Helper()
	g := memros.New()
	const ring = 4096 // messages of each input reused round robin: long since published
	bufs := make([][][]byte, len(inputs))
	pubs := make([]*memros.Publisher, len(inputs))
	for i, in := range inputs {
		pubs[i] = g.Advertise(in.Topic, in.Type)
		for range ring {
			bufs[i] = append(bufs[i], slices.Clone(in.Message))
		}
	}
	got := g.Counter(out)
	stop := g.Start(s, argv...)
	defer func() {
		if code, stderr := stop(); code != 0 {
			b.Fatalf("node exited %d: %s", code, stderr)
		}
	}()
	// Discovery: publish until the node answers, then start counting.
	base := stamp.Time(1_700_000_000 * time.Second)
	deadline := time.Now().Add(10 * time.Second)
	k := 0
	send := func() {
		st := base + stamp.Time(k)*stamp.Time(time.Millisecond)
		sec, ns, err := st.ROS()
		if err != nil {
			b.Fatal(err)
		}
		for i, p := range pubs {
			m := bufs[i][k%ring]
			binary.LittleEndian.PutUint32(m[4:], uint32(sec))
			binary.LittleEndian.PutUint32(m[8:], ns)
			if err := p.Publish(m); err != nil {
				b.Fatal(err)
			}
		}
		k++
	}
	for got.Count() < 10 {
		if time.Now().After(deadline) {
			b.Fatalf("the node published %d messages on %s after %d ops", got.Count(), out, k)
		}
		send()
		time.Sleep(time.Millisecond)
	}
	k0, c0 := k, got.Count()
	b.ReportAllocs()
	cpu0 := cpuTime()
	b.ResetTimer()
	next := time.Now()
	for range b.N {
		for k-k0-(got.Count()-c0) > 32 {
			runtime.Gosched()
		}
		if pace > 0 {
			next = next.Add(pace)
			time.Sleep(time.Until(next))
		}
		send()
	}
	deadline = time.Now().Add(10 * time.Second)
	for got.Count()-c0 < b.N-8 && time.Now().Before(deadline) {
		runtime.Gosched()
	}
	b.StopTimer()
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
	if n := got.Count() - c0; n < b.N-8 {
		b.Fatalf("%s: %d messages for %d ops", out, n, b.N)
	}
}

// cpuTime is the process's CPU time (user and system, all threads).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
