package nodekit

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/timealign/timealign/nodes/internal/runtimeparams"
	"github.com/timealign/timealign/pkg/params"
	"github.com/timealign/timealign/pkg/qos"
	"github.com/timealign/timealign/pkg/rosargs"
	"github.com/timealign/timealign/pkg/rosname"
	"github.com/timealign/timealign/pkg/stamp"
)

// Node is a running node: a [Transport], the parameter server, a [Core],
// and the owner goroutine (Run) that ties them together. From the moment
// Run starts, in every phase of the node, it answers the parameter
// services, follows /clock (use_sim_time) and publishes ~/status and
// /diagnostics once a second:
//
//   - discovering: an input without a message type waits for the first
//     publisher of its topic in the graph (polled five times a second);
//     the diagnostics say WARN "waiting for a publisher of <topic>".
//   - running: every input's type is known; the outputs are created, the
//     inputs subscribed, and each message goes from the transport's
//     callback through the [Inbox] to Core.Handle.
//   - failed: an input's type cannot be used (not installed, no leading
//     std_msgs/Header): the node logs why, reports ERROR and keeps serving
//     its parameters until it is stopped.
//
// Run returns when its context is done (SIGINT or SIGTERM in Main) or the
// transport fails; Close then stops the transport's goroutine and shuts
// the transport down. Every path out of a node that New created goes
// through Close.
type Node struct {
	// Name is the node's name and namespace after remapping.
	Name rosname.NodeName
	// Params holds the node's parameters. It belongs to the owner
	// goroutine.
	Params *params.Server
	// Clock is the node's ROS clock: the system clock, or /clock with the
	// parameter use_sim_time.
	Clock *Clock

	spec  Spec
	tr    Transport
	core  Core
	inbox *Inbox
	rt    runtimeparams.Params

	in    []input
	out   []output
	names []string // resolved input topics
	phase phase
	fail  string // failed: the problem and the hint

	status, diag Publisher
	statusBuf    []byte
	diagBuf      []byte
	lastHealth   string
	logLimit     Throttle // repeated lines (malformed messages, publish errors), per key
	lastDrops    []Drops
	drops        []Drops
	jumps        jumps
	quota        quotaState

	// own is held by whoever does the owner's work: the owner goroutine
	// (Run), or the transport's goroutine handling a message inline (see
	// deliverer). The core and everything of the node that is not
	// documented as safe for any goroutine belong to its holder.
	own        sync.Mutex
	fastStreak atomic.Int64 // messages handled in a row within inlineSlow each

	calls     chan func()   // work for the owner goroutine (parameter requests)
	closing   chan struct{} // closed by Close: requests are no longer answered
	running   bool          // Run has started
	spinStop  context.CancelFunc
	spinErr   chan error
	group     Group
	closeOnce sync.Once
	closeErr  error
}

type phase int

const (
	discovering phase = iota
	running
	failed
)

type input struct {
	Port
	name       string // resolved topic
	typ        string // known type; "" while discovering
	discovered bool   // typ was learned from the graph
	foreign    string // publishers of other types on the topic, as last reported

	sub          Subscription
	publishers   int   // matched publishers at the last report
	lost         int64 // messages lost before the node at the last report
	fullTakes    int64 // takes that found the middleware's queue at its limit
	hadPublisher bool  // some publisher was matched once
	jump         stamp.JumpDetector
}

type output struct {
	Port
	name   string
	box    *outbox // nil until the output exists
	drops  Drops   // at the last report
	failed uint64  // publish errors at the last report
}

// New creates the node of s from the process arguments argv (everything
// after the program name) on the transport connect makes: it declares the
// parameters (logging rejected overrides; the node runs with the defaults
// for those), serves them, and makes the core. Run starts it. An error
// after the transport was made closes it.
func New(s Spec, argv []string, connect Connect) (n *Node, err error) {
	args, err := rosargs.ParseArgs(argv)
	if err != nil {
		return nil, err
	}
	name, err := rosname.NewNodeName(s.Name, "", args.Remaps)
	if err != nil {
		return nil, err
	}
	overrides, ovErr := params.LoadOverrides(name.FQN(), args.ParamFiles, args.Params, os.ReadFile)
	tr, err := connect(s.Name, argv)
	if err != nil {
		return nil, err
	}
	s.StatusEvery = cmp.Or(s.StatusEvery, time.Second)
	n = &Node{Name: name, spec: s, tr: tr,
		Params:   params.NewServer(params.Options{Node: name.FQN(), Overrides: overrides}),
		rt:       runtimeparams.DefaultParams(),
		logLimit: Throttle{Every: time.Second},
		calls:    make(chan func()), closing: make(chan struct{}), spinErr: make(chan error, 1)}
	defer func() {
		if err != nil {
			err = errors.Join(err, n.Close())
			n = nil
		}
	}()
	if ovErr != nil {
		n.log(LogWarn, "parameter overrides: ", ovErr)
	}
	if err := n.declare(); err != nil {
		return n, err
	}
	n.inbox = NewInbox(n.rt.Inbox)
	n.Clock = NewClock(n.rt.UseSimTime)
	n.Clock.SetJumpThreshold(n.rt.TimeJumpThreshold)
	if n.rt.UseSimTime {
		if _, err := tr.Subscribe("/clock", "rosgraph_msgs/msg/Clock", clockQoS(), n.followClock); err != nil {
			return n, fmt.Errorf("subscribe /clock: %w", err)
		}
		n.log(LogInfo, "use_sim_time: the node's time follows /clock")
	}
	if err := tr.ServeParameters(paramService{n}); err != nil {
		n.log(LogWarn, err) // the node still runs, without ros2 param
	}
	n.status = n.publisher("~/status", s.StatusType)
	n.diag = n.publisher("/diagnostics", "diagnostic_msgs/msg/DiagnosticArray")
	if err := n.ports(); err != nil {
		return n, err
	}
	if s.New == nil {
		return n, errors.New("nodekit: Spec.New is nil")
	}
	if n.core, err = s.New(n.publish); err != nil {
		return n, err
	}
	if a, ok := n.core.(Attacher); ok {
		outs := make([]string, len(n.out))
		for i, o := range n.out {
			outs[i] = o.name
		}
		a.Attach(Env{Inputs: slices.Clone(n.names), Outputs: outs, Log: func(l LogLevel, msg string) { n.tr.Log(l, msg) },
			Heard: n.heard})
	}
	n.Params.AddApplier(n.apply)
	return n, nil
}

// declare declares the runtime's parameters and the node's.
func (n *Node) declare() error {
	rb := params.NewBinder(n.Params, nil)
	n.rt.Bind(rb)
	if err := rb.Declare(); err != nil {
		return err
	}
	if n.spec.Bind != nil {
		b := params.NewBinder(n.Params, n.spec.Validate)
		n.spec.Bind(b)
		if err := b.Declare(); err != nil {
			return err
		}
	}
	for _, is := range n.Params.Issues() {
		n.log(LogWarn, is)
	}
	return nil
}

// apply is the parameter server's applier: the inbox limits, and the
// core's parameters.
func (n *Node) apply(changed []params.Parameter) {
	var own []params.Parameter
	for _, p := range changed {
		if slices.Contains(runtimeparams.Names, p.Name) {
			n.Clock.SetJumpThreshold(n.rt.TimeJumpThreshold)
			for i := range n.in {
				n.in[i].jump.Threshold = n.rt.TimeJumpThreshold
			}
			n.inbox.SetLimits(n.rt.Inbox)
			for _, o := range n.out {
				if o.box != nil {
					o.box.q.SetLimits(n.outboxLimits())
				}
			}
		} else {
			own = append(own, p)
		}
	}
	if len(own) > 0 {
		if err := n.core.Reconfigure(own); err != nil {
			n.log(LogError, "parameters: ", err)
		}
	}
}

func clockQoS() qos.Profile {
	q := qos.SensorData() // best effort matches every /clock publisher
	q.Depth = 1
	return q
}

func (n *Node) followClock(msg []byte, _ stamp.Time) {
	if err := n.Clock.SetFromClockMsg(msg); err != nil {
		n.log(LogWarn, err) // the transport's goroutine: Log is safe there
	}
}

// publisher creates a runtime publisher (status, diagnostics); a failure
// is logged and the node runs without it.
func (n *Node) publisher(topic, msgType string) Publisher {
	if msgType == "" {
		return nil
	}
	name, err := n.Name.Topic(topic)
	var p Publisher
	if err == nil {
		p, err = n.tr.Publisher(name, msgType, qos.Default())
	}
	if err != nil {
		n.log(LogWarn, "no ", topic, ": ", err)
		return nil
	}
	return p
}

// ports resolves the node's topics.
func (n *Node) ports() error {
	if n.spec.Ports == nil {
		return errors.New("nodekit: Spec.Ports is nil")
	}
	ins, outs, err := n.spec.Ports()
	if err != nil {
		return err
	}
	for _, p := range ins {
		name, err := n.Name.Topic(p.Topic)
		if err != nil {
			return err
		}
		n.in = append(n.in, input{Port: p, name: name, typ: p.Type})
		n.names = append(n.names, name)
	}
	for _, p := range outs {
		name, err := n.Name.Topic(p.Topic)
		if err != nil {
			return err
		}
		n.out = append(n.out, output{Port: p, name: name})
	}
	for _, p := range ins {
		if p.Type == "" && p.SameAs != "" {
			if src := n.input(p.SameAs); src == nil || src.SameAs != "" || src.Topic == p.Topic {
				return fmt.Errorf("nodekit: input %s takes the type of %s, which is not another input with a type of its own", p.Topic, p.SameAs)
			}
		}
	}
	for _, p := range outs {
		if p.Type == "" && n.input(p.SameAs) == nil {
			return fmt.Errorf("nodekit: output %s takes the type of %q, which is not an input", p.Topic, p.SameAs)
		}
	}
	return nil
}

func (n *Node) input(topic string) *input {
	for i := range n.in {
		if n.in[i].Topic == topic {
			return &n.in[i]
		}
	}
	return nil
}

// Run runs the owner loop until ctx is done (nil) or the transport fails.
// Call it once; call Close afterwards.
func (n *Node) Run(ctx context.Context) error {
	if n.running {
		return errors.New("nodekit: Run called twice")
	}
	n.running = true
	spin, stop := context.WithCancel(context.Background())
	n.spinStop = stop
	n.group.Go(func() { n.spinErr <- n.tr.Spin(spin) })
	status := time.NewTicker(n.spec.StatusEvery)
	defer status.Stop()
	var tick <-chan time.Time
	var tickTimer *time.Timer
	if n.spec.TickEvery > 0 {
		tickTimer = time.NewTimer(n.spec.TickEvery)
		defer tickTimer.Stop()
		tick = tickTimer.C
	}
	disc := time.NewTicker(200 * time.Millisecond)
	defer disc.Stop()
	n.owned(func() {
		n.publishEvents() // the declarations
		for _, in := range n.in {
			if in.typ == "" && in.SameAs == "" {
				n.log(LogInfo, "no message type given: waiting for a publisher of ", in.name, " to learn its type")
			}
		}
		n.discover()
	})
	for {
		var discC <-chan time.Time
		if n.phase == discovering { // changes only here, in discover
			discC = disc.C
		}
		select { // parameter requests first: a backlog of messages does not hold them up
		case f := <-n.calls:
			n.owned(f)
			continue
		default:
		}
		select {
		case f := <-n.calls:
			n.owned(f)
		case <-n.inbox.Ready():
			n.owned(n.drain)
		case <-tick:
			next := n.spec.TickEvery
			n.owned(func() {
				if n.phase == running {
					n.checkClockIdle()
					now := n.Clock.Now()
					n.core.Tick(now)
					if w, ok := n.core.(Waker); ok {
						next = min(next, max(w.Wake(now), 0))
					}
				}
			})
			tickTimer.Reset(next)
		case <-status.C:
			n.owned(n.report)
		case <-discC:
			n.owned(n.discover)
		case <-ctx.Done():
			return nil
		case err := <-n.spinErr:
			return fmt.Errorf("spin: %w", cmp.Or(err, errors.New("stopped")))
		}
	}
}

// owned runs f holding n.own.
func (n *Node) owned(f func()) {
	n.own.Lock()
	defer n.own.Unlock()
	f()
}

// Close stops the transport's goroutine (parameter requests waiting for
// the owner get no answer) and shuts the transport down. It may be called
// more than once, not while Run runs.
func (n *Node) Close() error {
	n.closeOnce.Do(func() {
		close(n.closing)
		for _, o := range n.out {
			if o.box != nil {
				close(o.box.stop)
			}
		}
		if n.spinStop != nil {
			n.spinStop()
		}
		n.group.Wait() // the transport's goroutine and the outputs
		var spinErr error
		select {
		case err := <-n.spinErr:
			if err != nil && !errors.Is(err, context.Canceled) {
				spinErr = fmt.Errorf("spin: %w", err)
			}
		default:
		}
		n.closeErr = errors.Join(spinErr, n.tr.Close())
	})
	return n.closeErr
}

// discover learns the types of the inputs that have none from their
// publishers; once every input has one, it opens the node.
func (n *Node) discover() {
	if n.phase != discovering {
		return
	}
	for i := range n.in {
		in := &n.in[i]
		if in.typ != "" || in.SameAs != "" {
			continue
		}
		types, err := n.tr.PublisherTypes(in.name)
		if err != nil {
			n.limited(LogWarn, "graph", "graph query: ", err)
			continue
		}
		slices.Sort(types)
		types = slices.Compact(types)
		if len(types) == 0 {
			continue
		}
		in.typ, in.discovered = types[0], true
		if len(types) > 1 {
			n.log(LogWarn, fmt.Sprintf("%s has publishers of %d types (%s): taking %s", in.name, len(types), strings.Join(types, ", "), in.typ))
		} else {
			n.log(LogInfo, in.name, " carries ", in.typ)
		}
	}
	for i := range n.in {
		if in := &n.in[i]; in.typ == "" && in.SameAs != "" {
			in.typ = n.input(in.SameAs).typ
		}
	}
	for _, in := range n.in {
		if in.typ == "" {
			return
		}
	}
	n.open()
}

// open creates the outputs and subscribes the inputs.
func (n *Node) open() {
	for _, in := range n.in {
		if _, err := CheckHeaderFirst(in.typ, n.spec.MsgPrefixes); err != nil {
			n.failWith(fmt.Errorf("%s: %w", in.name, err), typeHint(in.TypeParam))
			return
		}
	}
	for i := range n.out {
		o := &n.out[i]
		typ, hint := o.Type, "source the install that provides "+o.Type+" (its setup.bash)"
		if typ == "" {
			src := n.input(o.SameAs)
			typ, hint = src.typ, typeHint(src.TypeParam)
		}
		pub, err := n.tr.Publisher(o.name, typ, o.QoS)
		if err != nil {
			n.failWith(fmt.Errorf("%s: %w", o.name, err), hint)
			return
		}
		o.box = newOutbox(pub, o.QoS, n.outboxLimits())
		n.group.Go(o.box.run)
	}
	for i := range n.in {
		in := &n.in[i]
		in.jump = stamp.JumpDetector{Threshold: n.rt.TimeJumpThreshold, Confirm: 2}
		sub, err := n.tr.Subscribe(in.name, in.typ, in.QoS, n.deliverer(i))
		if err != nil {
			n.failWith(fmt.Errorf("%s: %w", in.name, err), typeHint(in.TypeParam))
			return
		}
		in.sub = sub
	}
	n.phase = running
	ins := make([]string, len(n.in))
	for i, in := range n.in {
		ins[i] = fmt.Sprintf("%s (%s)", in.name, in.typ)
	}
	outs := make([]string, len(n.out))
	for i, o := range n.out {
		outs[i] = o.name
	}
	n.log(LogInfo, strings.Join(ins, ", "), " -> ", strings.Join(outs, ", "))
}

// typeHint is what to do about an input type that cannot be used (an
// output of an input's type too), set by the parameter param.
func typeHint(param string) string {
	if param == "" {
		return "use message types whose first field is a std_msgs/Header"
	}
	return "set " + param + " to message types whose first field is a std_msgs/Header"
}

// failWith puts the node in the failed phase: it logs the problem and what
// to do (hint), reports it as ERROR and serves its parameters until
// stopped.
func (n *Node) failWith(problem error, hint string) {
	n.phase = failed
	n.fail = problem.Error() + "; " + hint
	n.log(LogError, n.fail, ". Idle until stopped.")
}

// deliverer returns the transport callback of input i: it stamps the
// message with its reception time (the node's clock where the middleware
// gives none, and always under use_sim_time) and hands it to the inbox.
//
// When the message is small (at most inlineBytes), the only one waiting,
// the owner goroutine idle and the core quick (its last inlineAfter
// messages each took at most inlineSlow), the callback handles it itself,
// holding n.own: a node that keeps up with its inputs handles each such
// message on the transport's goroutine, with no wake-up of the owner
// goroutine (what a small message would cost most). Otherwise the owner
// goroutine is signalled and handles it: the transport's goroutine goes
// back to taking messages at once, so under a flood, or behind a core that
// takes long, the inbox (which counts what it drops) is the queue that
// overflows, not the middleware's.
func (n *Node) deliverer(i int) func([]byte, stamp.Time) {
	return func(msg []byte, received stamp.Time) {
		if received <= 0 || n.Clock.Simulated() {
			received = n.Clock.Now()
		}
		epoch, _ := n.Clock.Jumps()
		queued, waiting := n.inbox.put(Msg{Input: i, Data: msg, Receive: received, Epoch: epoch})
		if !queued {
			return
		}
		if waiting == 1 && len(msg) <= inlineBytes && n.fastStreak.Load() >= inlineAfter && n.own.TryLock() {
			n.inbox.Drain(1, n.handle)
			n.own.Unlock()
			if m, _ := n.inbox.Len(); m == 0 {
				return
			}
		}
		n.inbox.Signal()
	}
}

// drain hands waiting messages to the core, at most 64 and for at most
// 10 ms (a big message can take a publisher tens of milliseconds), so
// parameter requests, ticks and reports are served between batches.
func (n *Node) drain() {
	deadline := n.Clock.Elapsed() + 10*time.Millisecond
	for range 64 {
		if n.inbox.Drain(1, n.handle) == 0 || n.Clock.Elapsed() > deadline {
			return
		}
	}
}

func (n *Node) handle(m Msg) {
	if n.phase != running {
		return
	}
	began := time.Now()
	n.checkClock(m.Epoch)
	n.checkStamps(m.Input, m.Data)
	if err := n.core.Handle(m.Input, m.Data, m.Receive); err != nil {
		name := n.names[m.Input]
		n.limited(LogWarn, name, "dropped a malformed message on ", name, ": ", err)
	}
	if time.Since(began) <= inlineSlow {
		n.fastStreak.Add(1)
	} else {
		n.fastStreak.Store(0)
	}
}

// A message is handled on the transport's goroutine only after the core
// handled inlineAfter messages in a row within inlineSlow each (see
// deliverer): a core that takes long must not keep the transport from
// taking messages.
const (
	inlineAfter = 16
	inlineSlow  = time.Millisecond
)

// outboxLimits bound an output's queue: inbox.max_bytes, and a fixed
// number of messages (a core may publish a burst: a matched set, what a
// silent input held back).
func (n *Node) outboxLimits() runtimeparams.Limits {
	return runtimeparams.Limits{Messages: maxOutboxMessages, Bytes: n.rt.Inbox.Bytes}
}

const maxOutboxMessages = 1 << 16

// publish is the cores' Publish: msg goes to the output's queue, which
// its own goroutine publishes.
func (n *Node) publish(i int, msg []byte) {
	if i < 0 || i >= len(n.out) || n.out[i].box == nil {
		n.limited(LogError, "publish", fmt.Sprintf("publish: output %d does not exist", i))
		return
	}
	n.out[i].box.publish(msg)
}

// heard says whether output i has a subscriber, or is transient-local (a
// core need not build what nobody reads: Env.Heard).
func (n *Node) heard(i int) bool {
	if i < 0 || i >= len(n.out) || n.out[i].box == nil {
		return false
	}
	return n.out[i].box.heard()
}

// report publishes ~/status and /diagnostics, and logs inbox drops and
// changes of health.
func (n *Node) report() {
	if n.phase == running {
		n.checkClockIdle()
	}
	now := n.Clock.Now()
	dropped := n.inbox.Dropped()
	for _, o := range n.out {
		if o.box != nil {
			dropped += o.box.q.Dropped()
		}
	}
	rt := RuntimeStatus{Node: n.Name.FQN(), Inputs: n.names, DroppedQueue: dropped, TimeJumps: n.jumps.count, Elapsed: n.Clock.Elapsed()}
	r := n.core.Report(now, rt)
	n.statusBuf = r.AppendStatusMsg(n.statusBuf)
	d := r.Diagnose()
	if n.status != nil {
		if err := n.status.Publish(n.statusBuf); err != nil {
			n.limited(LogWarn, "~/status", "publish ~/status: ", err)
		}
	}
	if d.Name == "" {
		d.Name = n.Name.FQN() + ": " + n.spec.What
	}
	if d.HardwareID == "" {
		d.HardwareID = n.Name.FQN()
	}
	switch n.phase {
	case discovering:
		var waiting []string
		for _, in := range n.in {
			if in.typ == "" && in.SameAs == "" {
				waiting = append(waiting, in.name)
			}
		}
		d.Level, d.Message = Warn, "waiting for a publisher of "+strings.Join(waiting, ", ")+" to learn its type"
	case failed:
		d.Level, d.Message = Error, n.fail
	case running:
		n.watchTypes(&d)
		n.reportPublishers(&d)
	}
	n.reportDrops(&d)
	n.reportJumps(&d)
	n.reportQuota(&d)
	for _, p := range runtimeparams.Settings(n.rt) { // what the runtime works with
		d.Add(p.Name, p.Value.String())
	}
	if n.diag != nil {
		n.diagBuf = AppendDiagnosticArray(n.diagBuf, now, d)
		if err := n.diag.Publish(n.diagBuf); err != nil {
			n.limited(LogWarn, "/diagnostics", "publish /diagnostics: ", err)
		}
	}
	h := d.Level.String() + ": " + d.Message
	if h == n.lastHealth {
		return
	}
	n.lastHealth = h
	switch {
	case n.phase != running: // logged when the phase began
	case d.Level == OK:
		n.log(LogInfo, d.Message)
	default:
		n.log(LogWarn, d.Message)
	}
}

// watchTypes looks, once per report, for publishers on the inputs whose
// type is not the one the node subscribed with: a publisher restarted
// with another type, or a second one of another type. The middleware does
// not connect them, so none of their messages reach the node: it logs
// each change of the set of such types (WARN naming them and what to do,
// INFO once they are gone) and makes the diagnostic a WARN while they are
// there.
func (n *Node) watchTypes(d *Diagnostic) {
	for i := range n.in {
		in := &n.in[i]
		types, err := n.tr.PublisherTypes(in.name)
		if err != nil {
			n.limited(LogWarn, "graph", "graph query: ", err)
			continue
		}
		var other []string
		for _, typ := range types {
			if typ != in.typ && !slices.Contains(other, typ) {
				other = append(other, typ)
			}
		}
		slices.Sort(other)
		foreign := strings.Join(other, ", ")
		if foreign != in.foreign {
			switch {
			case foreign == "":
				n.log(LogInfo, in.name, ": no publisher of another type than ", in.typ, " any more")
			case in.discovered:
				n.log(LogWarn, fmt.Sprintf("%s: a publisher of %s, not %s: none of its messages reach this node, which took "+
					"the input's type from its publishers when it started; restart the node to take another type", in.name, foreign, in.typ))
			default:
				n.log(LogWarn, fmt.Sprintf("%s: a publisher of %s, not %s: none of its messages reach this node; "+
					"restart it with %s set to the type to take", in.name, foreign, in.typ, cmp.Or(in.TypeParam, "the input's type")))
			}
			in.foreign = foreign
		}
		if foreign != "" {
			d.Raise(Warn, fmt.Sprintf("input %s: a publisher of %s, not %s: its messages do not reach the node", in.name, foreign, in.typ))
		}
	}
}

// backlog says whether msgs messages of bytes in all waiting in the inbox
// at a report are a backlog worth a WARN: a quarter of either bound, in
// more than a burst of 16 messages (or, in bytes, more than one). A node
// that keeps up empties its inbox between reports; one short of CPU (a
// CPU quota, a busy computer) holds a queue that grows to the bound and
// then drops its oldest messages.
func backlog(msgs int, bytes int64, lim runtimeparams.Limits) bool {
	return msgs > 16 && msgs >= lim.Messages/4 || msgs > 1 && bytes >= lim.Bytes/4
}

// reportDrops logs, once per report, the inputs whose messages the inbox
// dropped since the last one, naming the size; it makes the diagnostic a
// WARN and adds the counts.
func (n *Node) reportDrops(d *Diagnostic) {
	n.drops = n.inbox.Drops(n.drops)
	lim := n.inbox.Limits()
	for i, dr := range n.drops {
		var last Drops
		if i < len(n.lastDrops) {
			last = n.lastDrops[i]
		}
		name := n.names[i]
		if k := dr.Count - last.Count; dr.Count > last.Count {
			big := dr.TooBig - last.TooBig
			var why []string
			if big > 0 {
				why = append(why, fmt.Sprintf("%d larger than inbox.max_message_bytes (%d)", big, lim.MessageBytes))
			}
			if k > big {
				why = append(why, fmt.Sprintf("%d because the node's inbox was full (at most %d messages and %d bytes wait: "+
					"the node is falling behind its inputs; raise inbox.max_messages or inbox.max_bytes, or lower the input rate)", k-big, lim.Messages, lim.Bytes))
			}
			n.log(LogWarn, fmt.Sprintf("%s: dropped %d messages (%d bytes, the last %d bytes): %s",
				name, k, dr.Bytes-last.Bytes, dr.LastSize, strings.Join(why, "; ")))
			if big > 0 {
				d.Raise(Warn, fmt.Sprintf("input %s: messages dropped, larger than inbox.max_message_bytes", name))
			}
			if k > big {
				d.Raise(Warn, fmt.Sprintf("input %s: messages dropped, the inbox was full", name))
			}
		}
		d.Add(name+".inbox_dropped", dr.Count)
	}
	n.lastDrops = append(n.lastDrops[:0], n.drops...)
	msgs, bytes := n.inbox.Len()
	if backlog(msgs, bytes, lim) {
		d.Raise(Warn, fmt.Sprintf("backlog: %d messages (%d bytes) wait for the node (at most %d messages and %d bytes): "+
			"it falls behind its inputs, too little CPU or too high a rate; the oldest are dropped first", msgs, bytes, lim.Messages, lim.Bytes))
	}
	d.Add("inbox.dropped", n.inbox.Dropped())
	d.Add("inbox.queued_messages", msgs)
	d.Add("inbox.queued_bytes", bytes)
	for i := range n.out {
		o := &n.out[i]
		if o.box == nil {
			continue
		}
		var dr Drops
		if ds := o.box.q.Drops(nil); len(ds) > 0 {
			dr = ds[0]
		}
		if k := dr.Count - o.drops.Count; k > 0 {
			n.log(LogWarn, fmt.Sprintf("%s: dropped %d messages (%d bytes, the last %d bytes) waiting to be published: "+
				"the output falls behind (its readers or DDS are slower than the node; at most %d bytes wait: inbox.max_bytes)",
				o.name, k, dr.Bytes-o.drops.Bytes, dr.LastSize, lim.Bytes))
			d.Raise(Warn, fmt.Sprintf("output %s: messages dropped, it falls behind", o.name))
		}
		o.drops = dr
		if failed, err := o.box.errors(); failed > o.failed {
			n.log(LogError, fmt.Sprintf("%s: %d messages not published: %v", o.name, failed-o.failed, err))
			d.Raise(Warn, fmt.Sprintf("output %s: publishing fails (%v)", o.name, err))
			o.failed = failed
		}
		if dr.Count > 0 {
			d.Add(o.name+".outbox_dropped", dr.Count)
		}
		if k := o.box.unheard.Load(); k > 0 {
			d.Add(o.name+".not_published_no_subscriber", k)
		}
	}
}

// publishEvents publishes the parameter events the server queued.
func (n *Node) publishEvents() {
	for _, e := range n.Params.TakeEvents() {
		if err := n.tr.PublishParameterEvent(e.Msg(), n.Clock.Now()); err != nil {
			n.limited(LogWarn, "/parameter_events", "publish /parameter_events: ", err)
		}
	}
}

func (n *Node) log(l LogLevel, a ...any) { n.tr.Log(l, fmt.Sprint(a...)) }

// limited logs a line at most once a second per key, saying how many
// were left out since the last one.
func (n *Node) limited(l LogLevel, key string, a ...any) {
	ok, more := n.logLimit.Allow(key, stamp.Time(n.Clock.Elapsed())) // not the ROS time: also under use_sim_time
	switch {
	case !ok:
	case more > 0:
		n.log(l, fmt.Sprint(a...), fmt.Sprintf(" (and %d more since the last line)", more))
	default:
		n.log(l, a...)
	}
}

// Main runs the node of s until SIGINT or SIGTERM and returns the
// process's exit status: 0 once stopped by a signal, 1 after an error
// (written to stderr as "<name>: <error>"). The signals are caught from
// the start: a node stopped while it starts or waits for its inputs' types
// exits 0 too, and a second signal during shutdown does not kill it.
func Main(s Spec, argv []string, connect Connect, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return RunMain(ctx, s, argv, connect, stderr)
}

// RunMain is Main until ctx is done instead of a signal.
func RunMain(ctx context.Context, s Spec, argv []string, connect Connect, stderr io.Writer) int {
	n, err := New(s, argv, connect)
	if err == nil {
		err = n.Run(ctx)
		err = errors.Join(err, n.Close())
	}
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", s.Name, err)
		return 1
	}
	return 0
}
