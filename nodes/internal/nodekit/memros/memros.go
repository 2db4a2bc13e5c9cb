// Package memros is an in-memory ROS 2 graph for tests of the node
// runtime: nodes connected with Graph.Connect (a nodekit.Connect) publish,
// subscribe, serve their parameters and see each other's publishers
// without DDS, and a test talks to them as a peer would: it advertises and
// publishes (Graph.Advertise), records topics (Graph.Record), calls the
// parameter services (Graph.Parameters) and reads a node's log lines.
//
// Semantics kept from ROS 2: a subscription gets the messages of its topic
// whose type is its own; messages and service requests reach a node only
// while it spins, on its spinning goroutine; a publisher does not keep the
// slice it publishes (each subscriber gets a copy, as from DDS), except
// that a test's publisher hands its slice itself to the first subscriber,
// and Graph.Tap shows the slices a node publishes, so a test can check
// that a node copies nothing on its way. Left out: QoS (every queue is
// unbounded and reliable), remapping beyond the node name, timing.
package memros

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/timealign/timealign/nodes/internal/nodekit"
	"github.com/timealign/timealign/pkg/params"
	"github.com/timealign/timealign/pkg/qos"
	"github.com/timealign/timealign/pkg/rosargs"
	"github.com/timealign/timealign/pkg/rosname"
	"github.com/timealign/timealign/pkg/stamp"
)

// Graph is an in-memory ROS graph. The zero value is not ready: use New.
type Graph struct {
	mu           sync.Mutex
	nodes        map[string]*Transport // by fully qualified name
	subs         map[string][]*subscription
	pubs         map[string][]*Publisher
	taps         map[string][]*Recorder
	delays       map[string]time.Duration
	failures     map[string]error
	notInstalled map[string]bool
	events       []params.EventMsg
	history      []string
	lost         map[string]int64         // by topic: LoseMessages
	waits        map[string]time.Duration // by topic: Wait, until a subscription's Waited reads it
	takes        map[string][2]int64      // by topic: FullTakes, until a subscription's Takes reads it
	throttling   nodekit.Throttling       // Throttle
	quota        bool
	unnumbered   bool
}

// New returns an empty graph.
func New() *Graph {
	return &Graph{nodes: map[string]*Transport{}, subs: map[string][]*subscription{},
		pubs: map[string][]*Publisher{}, taps: map[string][]*Recorder{},
		delays: map[string]time.Duration{}, failures: map[string]error{}, notInstalled: map[string]bool{}}
}

// NotInstalled makes msgType unknown to the graph: publishers and
// subscriptions of it fail, as with a type whose package is not installed.
func (g *Graph) NotInstalled(msgType string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.notInstalled[msgType] = true
}

func (g *Graph) record(format string, a ...any) {
	g.history = append(g.history, fmt.Sprintf(format, a...))
}

// History returns what the nodes did to the graph, in order: "connect
// /n", "spin /n", "spin stopped /n", "close /n", and "close while
// spinning /n" for a transport closed before its Spin returned.
func (g *Graph) History() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.history)
}

// ParameterEvents returns the events published on /parameter_events.
func (g *Graph) ParameterEvents() []params.EventMsg {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.events)
}

// Connect is a nodekit.Connect: a node named name (or what --ros-args
// remaps it to) on the graph.
func (g *Graph) Connect(name string, argv []string) (nodekit.Transport, error) {
	args, err := rosargs.ParseArgs(argv)
	if err != nil {
		return nil, err
	}
	nn, err := rosname.NewNodeName(name, "", args.Remaps)
	if err != nil {
		return nil, err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	fqn := nn.FQN()
	if old := g.nodes[fqn]; old != nil && !old.closed {
		return nil, fmt.Errorf("memros: node %s exists", fqn)
	}
	t := &Transport{g: g, name: fqn, wake: make(chan struct{}, 1)}
	g.nodes[fqn] = t
	g.record("connect %s", fqn)
	return t, nil
}

// Node returns the transport of the node named fqn, or nil.
func (g *Graph) Node(fqn string) *Transport {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.nodes[fqn]
}

func (g *Graph) checkType(msgType string) error {
	if _, _, ok := nodekit.SplitType(msgType); !ok {
		return fmt.Errorf("message type %q: want pkg/msg/Type", msgType)
	}
	if g.notInstalled[msgType] {
		return fmt.Errorf("message type %q: no such message (not installed)", msgType)
	}
	return nil
}

// SlowPublish makes every publish on topic take d, as a writer waiting for
// slow readers does.
func (g *Graph) SlowPublish(topic string, d time.Duration) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.delays[topic] = d
}

// FailPublish makes every publish on topic fail with err (nil: succeed
// again).
func (g *Graph) FailPublish(topic string, err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.failures[topic] = err
}

// Advertise creates a publisher of msgType on topic outside any node (a
// test's peer): nodes see its type in the graph.
func (g *Graph) Advertise(topic, msgType string) *Publisher {
	g.mu.Lock()
	defer g.mu.Unlock()
	p := &Publisher{g: g, topic: topic, typ: msgType}
	g.pubs[topic] = append(g.pubs[topic], p)
	return p
}

// Close takes a test's publisher out of the graph, as a peer that exits:
// nodes no longer see its type, and it publishes no more.
func (p *Publisher) Close() {
	g := p.g
	g.mu.Lock()
	defer g.mu.Unlock()
	g.pubs[p.topic] = slices.DeleteFunc(g.pubs[p.topic], func(q *Publisher) bool { return q == p })
	p.closed = true
}

// Publisher publishes on one topic of a Graph.
type Publisher struct {
	g      *Graph
	owner  *Transport // nil for a test's publisher
	topic  string
	typ    string
	closed bool
}

// Subscribers implements nodekit.Publisher: the subscriptions of the topic
// that take the publisher's type, Recorders and Taps included.
func (p *Publisher) Subscribers() int {
	g := p.g
	g.mu.Lock()
	defer g.mu.Unlock()
	n := len(g.taps[p.topic])
	for _, s := range g.subs[p.topic] {
		if s.typ == "" || s.typ == p.typ {
			n++
		}
	}
	return n
}

// Publish delivers msg to the subscriptions of the topic that have its
// type: the first gets msg itself, the others copies. It is a
// nodekit.Publisher.
func (p *Publisher) Publish(msg []byte) error {
	g := p.g
	g.mu.Lock()
	if p.closed {
		g.mu.Unlock()
		return errors.New("memros: publisher closed")
	}
	delay, fail := g.delays[p.topic], g.failures[p.topic]
	var buf [4]*subscription
	to := buf[:0]
	taps := g.taps[p.topic]
	for _, s := range g.subs[p.topic] {
		if s.typ == "" || s.typ == p.typ {
			to = append(to, s)
		}
	}
	g.mu.Unlock()
	if delay > 0 {
		time.Sleep(delay)
	}
	if fail != nil {
		return fail
	}
	for _, r := range taps {
		r.add(msg)
	}
	received := stamp.Time(time.Now().UnixNano())
	for i, s := range to {
		m := msg
		if i > 0 || p.owner != nil {
			m = slices.Clone(msg)
		}
		s.offer(m, received)
	}
	return nil
}

type subscription struct {
	t       *Transport // nil for a Recorder
	topic   string
	typ     string // "" for a Recorder: every type
	deliver func([]byte, stamp.Time)
}

func (s *subscription) offer(msg []byte, received stamp.Time) {
	if s.t == nil {
		s.deliver(msg, received)
		return
	}
	s.t.postWork(work{s: s, msg: msg, received: received})
}

// Recorder keeps every message published on a topic, of any type (a
// Counter only counts them).
type Recorder struct {
	mu    sync.Mutex
	msgs  [][]byte
	count atomic.Int64
	keep  bool
}

// Record starts recording topic.
func (g *Graph) Record(topic string) *Recorder {
	r := &Recorder{keep: true}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.subs[topic] = append(g.subs[topic], &subscription{deliver: func(msg []byte, _ stamp.Time) { r.add(msg) }})
	return r
}

// Tap records the slices nodes pass to their publishers of topic, as they
// are (not copies: a node may reuse them for its next message), to check
// what a node copies.
func (g *Graph) Tap(topic string) *Recorder { return g.tap(topic, true) }

// Counter counts the messages nodes publish on topic, keeping none (for
// benchmarks: counting allocates nothing). Its Messages is empty.
func (g *Graph) Counter(topic string) *Recorder { return g.tap(topic, false) }

func (g *Graph) tap(topic string, keep bool) *Recorder {
	r := &Recorder{keep: keep}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.taps[topic] = append(g.taps[topic], r)
	return r
}

func (r *Recorder) add(msg []byte) {
	r.count.Add(1)
	if !r.keep {
		return
	}
	r.mu.Lock()
	r.msgs = append(r.msgs, msg)
	r.mu.Unlock()
}

// Count returns how many messages were recorded or counted so far.
func (r *Recorder) Count() int { return int(r.count.Load()) }

// Messages returns what was recorded so far.
func (r *Recorder) Messages() [][]byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.msgs)
}

// Line is a log line of a node.
type Line struct {
	Level nodekit.LogLevel
	Text  string
}

func (l Line) String() string { return fmt.Sprintf("[%v] %s", l.Level, l.Text) }

// Transport is a node's end of a Graph: a nodekit.Transport.
type Transport struct {
	g    *Graph
	name string

	mu       sync.Mutex
	work     []work // posted, not yet run
	spare    []work // the slice Spin ran last, reused
	wake     chan struct{}
	handler  nodekit.ParameterHandler
	logs     []Line
	spinning bool
	closed   bool
	failSpin error
	subs     []*subscription
	pubs     []*Publisher
}

// work is what a node's spinning goroutine runs: a message delivery
// (without a closure: a delivery allocates nothing) or a function.
type work struct {
	s        *subscription
	msg      []byte
	received stamp.Time
	f        func()
}

func (w work) run() {
	if w.f != nil {
		w.f()
		return
	}
	w.s.deliver(w.msg, w.received)
}

func (t *Transport) post(f func()) { t.postWork(work{f: f}) }

func (t *Transport) postWork(w work) {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return
	}
	t.work = append(t.work, w)
	t.mu.Unlock()
	select {
	case t.wake <- struct{}{}:
	default:
	}
}

// Subscribe implements nodekit.Transport.
func (t *Transport) Subscribe(topic, msgType string, _ qos.Profile, deliver func([]byte, stamp.Time)) (nodekit.Subscription, error) {
	g := t.g
	g.mu.Lock()
	defer g.mu.Unlock()
	if err := g.checkType(msgType); err != nil {
		return nil, err
	}
	s := &subscription{t: t, topic: topic, typ: msgType, deliver: deliver}
	g.subs[topic] = append(g.subs[topic], s)
	t.subs = append(t.subs, s)
	return s, nil
}

// Publishers implements nodekit.Subscription: the publishers of the
// topic with the subscription's type.
func (s *subscription) Publishers() int {
	g := s.t.g
	g.mu.Lock()
	defer g.mu.Unlock()
	n := 0
	for _, p := range g.pubs[s.topic] {
		if p.typ == s.typ {
			n++
		}
	}
	return n
}

// Lost implements nodekit.Subscription: what LoseMessages said, or -1
// after Unnumbered.
func (s *subscription) Lost() int64 {
	g := s.t.g
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.unnumbered {
		return -1
	}
	return g.lost[s.topic]
}

// Waited implements nodekit.Subscription: what Wait said of the topic
// since the last call (0 when it said nothing since), or nothing before
// Wait, as a middleware that gives no send times.
func (s *subscription) Waited() (time.Duration, bool) {
	g := s.t.g
	g.mu.Lock()
	defer g.mu.Unlock()
	d, ok := g.waits[s.topic]
	if ok {
		g.waits[s.topic] = 0
	}
	return d, ok
}

// Takes implements nodekit.Subscription: what FullTakes said of the
// topic since the last call, or -1 (memros delivers each message at
// once: it has no queue).
func (s *subscription) Takes() (full, all int64) {
	g := s.t.g
	g.mu.Lock()
	defer g.mu.Unlock()
	t, ok := g.takes[s.topic]
	if !ok {
		return 0, -1
	}
	delete(g.takes, s.topic)
	return t[0], t[1]
}

// FullTakes makes the middleware say that full of all its takes on topic
// found the queue at its limit (for the next report).
func (g *Graph) FullTakes(topic string, full, all int64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.takes == nil {
		g.takes = map[string][2]int64{}
	}
	g.takes[topic] = [2]int64{full, all}
}

// CPUThrottled implements nodekit.CPUQuota: what Throttle said, or
// nothing before it.
func (t *Transport) CPUThrottled() (nodekit.Throttling, bool) {
	g := t.g
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.throttling, g.quota
}

// Throttle makes every node's cgroup one whose CPU quota did th to it so
// far.
func (g *Graph) Throttle(th nodekit.Throttling) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.throttling, g.quota = th, true
}

// Wait makes the middleware say that a message on topic waited d in its
// queue before the node took it (for the next report).
func (g *Graph) Wait(topic string, d time.Duration) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.waits == nil {
		g.waits = map[string]time.Duration{}
	}
	g.waits[topic] = d
}

// LoseMessages makes the middleware say that n more messages on topic
// were lost before their subscriptions (every subscription's Lost counts
// them); none is delivered or taken away.
func (g *Graph) LoseMessages(topic string, n int64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.lost == nil {
		g.lost = map[string]int64{}
	}
	g.lost[topic] += n
}

// Unnumbered makes the middleware one that does not number messages:
// every subscription's Lost is -1 (as on Cyclone DDS).
func (g *Graph) Unnumbered() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.unnumbered = true
}

// Publisher implements nodekit.Transport.
func (t *Transport) Publisher(topic, msgType string, _ qos.Profile) (nodekit.Publisher, error) {
	g := t.g
	g.mu.Lock()
	defer g.mu.Unlock()
	if err := g.checkType(msgType); err != nil {
		return nil, err
	}
	p := &Publisher{g: g, owner: t, topic: topic, typ: msgType}
	g.pubs[topic] = append(g.pubs[topic], p)
	t.pubs = append(t.pubs, p)
	return p, nil
}

// ServeParameters implements nodekit.Transport.
func (t *Transport) ServeParameters(h nodekit.ParameterHandler) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.handler = h
	return nil
}

// PublishParameterEvent implements nodekit.Transport.
func (t *Transport) PublishParameterEvent(e params.EventMsg, _ stamp.Time) error {
	t.g.mu.Lock()
	defer t.g.mu.Unlock()
	t.g.events = append(t.g.events, e)
	return nil
}

// PublisherTypes implements nodekit.Transport.
func (t *Transport) PublisherTypes(topic string) ([]string, error) {
	t.g.mu.Lock()
	defer t.g.mu.Unlock()
	var types []string
	for _, p := range t.g.pubs[topic] {
		types = append(types, p.typ)
	}
	return types, nil
}

// Log implements nodekit.Transport.
func (t *Transport) Log(l nodekit.LogLevel, msg string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.logs = append(t.logs, Line{l, msg})
}

// Logs returns the node's log lines so far.
func (t *Transport) Logs() []Line {
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Clone(t.logs)
}

// FailSpin makes Spin return err.
func (t *Transport) FailSpin(err error) {
	t.mu.Lock()
	t.failSpin = err
	t.mu.Unlock()
	t.post(func() {})
}

// Spin implements nodekit.Transport: it runs the deliveries and requests
// posted to the node until ctx is done.
func (t *Transport) Spin(ctx context.Context) error {
	t.mu.Lock()
	if t.spinning || t.closed {
		t.mu.Unlock()
		return errors.New("memros: Spin on a spinning or closed transport")
	}
	t.spinning = true
	t.mu.Unlock()
	t.g.mu.Lock()
	t.g.record("spin %s", t.name)
	t.g.mu.Unlock()
	defer func() {
		t.mu.Lock()
		t.spinning = false
		t.mu.Unlock()
		t.g.mu.Lock()
		t.g.record("spin stopped %s", t.name)
		t.g.mu.Unlock()
	}()
	for {
		t.mu.Lock()
		todo, fail := t.work, t.failSpin
		t.work, t.spare = t.spare[:0], nil
		t.mu.Unlock()
		if fail != nil {
			return fail
		}
		for i, w := range todo {
			w.run()
			todo[i] = work{} // keep no reference
			if ctx.Err() != nil {
				return nil
			}
		}
		t.mu.Lock()
		t.spare = todo[:0]
		t.mu.Unlock()
		select {
		case <-ctx.Done():
			return nil
		case <-t.wake:
		}
	}
}

// Close implements nodekit.Transport: the node's subscriptions,
// publishers and services leave the graph.
func (t *Transport) Close() error {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return errors.New("memros: closed twice")
	}
	t.closed, t.work, t.handler = true, nil, nil
	spinning := t.spinning
	t.mu.Unlock()
	g := t.g
	g.mu.Lock()
	defer g.mu.Unlock()
	for topic, subs := range g.subs {
		g.subs[topic] = slices.DeleteFunc(subs, func(s *subscription) bool { return s.t == t })
	}
	for topic, pubs := range g.pubs {
		g.pubs[topic] = slices.DeleteFunc(pubs, func(p *Publisher) bool {
			if p.owner == t {
				p.closed = true
			}
			return p.owner == t
		})
	}
	if spinning {
		g.record("close while spinning %s", t.name)
	}
	g.record("close %s", t.name)
	return nil
}

// Closed reports whether the transport was closed.
func (t *Transport) Closed() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.closed
}

// ErrNoResponse: the node answered no request (it was closing or closed,
// or it did not answer within the client's timeout).
var ErrNoResponse = errors.New("memros: no response")

// ParamClient calls the parameter services of one node.
type ParamClient struct {
	t       *Transport
	timeout time.Duration
}

// Parameters returns a client of the parameter services of the node named
// fqn; a call waits at most timeout for the answer.
func (g *Graph) Parameters(fqn string, timeout time.Duration) *ParamClient {
	return &ParamClient{t: g.Node(fqn), timeout: timeout}
}

// call posts a request to the node's spinning goroutine, as a service
// request arrives, and waits for the answer.
func call[T any](c *ParamClient, f func(nodekit.ParameterHandler) (T, bool)) (T, error) {
	var zero T
	if c.t == nil {
		return zero, fmt.Errorf("%w: no such node", ErrNoResponse)
	}
	type answer struct {
		v  T
		ok bool
	}
	ch := make(chan answer, 1)
	c.t.post(func() {
		c.t.mu.Lock()
		h := c.t.handler
		c.t.mu.Unlock()
		if h == nil {
			ch <- answer{}
			return
		}
		v, ok := f(h)
		ch <- answer{v, ok}
	})
	select {
	case a := <-ch:
		if !a.ok {
			return zero, ErrNoResponse
		}
		return a.v, nil
	case <-time.After(c.timeout):
		return zero, fmt.Errorf("%w within %v", ErrNoResponse, c.timeout)
	}
}

// List returns the names of the node's parameters.
func (c *ParamClient) List() ([]string, error) {
	r, err := call(c, func(h nodekit.ParameterHandler) (params.ListParametersResponse, bool) {
		return h.ListParameters(params.ListParametersRequest{})
	})
	return r.Result.Names, err
}

// Get returns the values of the named parameters.
func (c *ParamClient) Get(names ...string) ([]params.Value, error) {
	r, err := call(c, func(h nodekit.ParameterHandler) (params.GetParametersResponse, bool) {
		return h.GetParameters(params.GetParametersRequest{Names: names})
	})
	if err != nil {
		return nil, err
	}
	out := make([]params.Value, len(r.Values))
	for i, m := range r.Values {
		if out[i], err = params.FromMsg(m); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Describe returns the descriptors of the named parameters.
func (c *ParamClient) Describe(names ...string) ([]params.DescriptorMsg, error) {
	r, err := call(c, func(h nodekit.ParameterHandler) (params.DescribeParametersResponse, bool) {
		return h.DescribeParameters(params.DescribeParametersRequest{Names: names})
	})
	return r.Descriptors, err
}

// Set sets parameters one by one and returns each result.
func (c *ParamClient) Set(ps ...params.Parameter) ([]params.SetResult, error) {
	req := params.SetParametersRequest{}
	for _, p := range ps {
		req.Parameters = append(req.Parameters, p.Msg())
	}
	r, err := call(c, func(h nodekit.ParameterHandler) (params.SetParametersResponse, bool) {
		return h.SetParameters(req)
	})
	return r.Results, err
}

// Start runs the node of s on the graph (nodekit.RunMain with argv) in a
// goroutine; stop ends it as SIGTERM would and returns its exit status and
// what it wrote to stderr.
func (g *Graph) Start(s nodekit.Spec, argv ...string) (stop func() (code int, stderr string)) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	var code int
	var errOut strings.Builder
	go func() {
		code = nodekit.RunMain(ctx, s, argv, g.Connect, &errOut)
		close(done)
	}()
	return func() (int, string) {
		cancel()
		<-done
		return code, errOut.String()
	}
}
