//go:build ros2

// Package rosnode is the thin rclgo layer of the timealign nodes: an rcl
// context and node made from the process arguments, type-agnostic
// serialized subscriptions feeding a bounded nodekit.Inbox, serialized
// publishers, ROS logging, and a clean exit on SIGINT/SIGTERM. Everything
// with logic lives in ROS-free packages.
package rosnode

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/tiiuae/rclgo/pkg/rclgo"
	"github.com/tiiuae/rclgo/pkg/rclgo/types"

	rcl "github.com/timealign/timealign/msgs/rcl_interfaces/msg"
	"github.com/timealign/timealign/nodes/internal/nodekit"
	"github.com/timealign/timealign/pkg/params"
	"github.com/timealign/timealign/pkg/stamp"
)

// Node is a running ROS 2 node.
type Node struct {
	Args   *params.Args
	Name   params.NodeName
	Params *params.Server
	Inbox  *nodekit.Inbox
	// Clock is the node's ROS clock: the system clock, or /clock with the
	// parameter use_sim_time.
	Clock *nodekit.Clock

	ctx   *rclgo.Context
	node  *rclgo.Node
	ws    *rclgo.WaitSet
	group nodekit.Group

	lastHealth string
	dropLog    nodekit.Throttle // malformed-message warnings, per input
	tickEvery  time.Duration
	diag       *rclgo.Publisher
	diagFailed bool
	diagBuf    []byte

	status       *rclgo.Publisher
	statusFailed bool

	calls   chan func()   // work for the owner goroutine (parameter requests)
	closing chan struct{} // closed when the owner loop stops
	events  *rcl.ParameterEventPublisher
}

// Options size a node's inbox.
type Options struct {
	InboxSize  int // messages
	MaxMessage int // bytes
	// TickEvery is how often Run calls its tick function; it defaults to
	// a second (the status and diagnostics rate).
	TickEvery time.Duration
}

// New creates the node from the process arguments (everything after the
// program name), with defaultName unless --ros-args remaps it. Parameter
// file problems are logged, not fatal: the node runs with its defaults.
func New(defaultName string, argv []string, o Options) (*Node, error) {
	args, err := params.ParseArgs(argv)
	if err != nil {
		return nil, err
	}
	name, err := params.NewNodeName(defaultName, "", args.Remaps)
	if err != nil {
		return nil, err
	}
	overrides, ovErr := params.LoadOverrides(args, name.FQN(), os.ReadFile)
	rclArgs, _, err := rclgo.ParseArgs(argv)
	if err != nil {
		return nil, fmt.Errorf("rcl arguments: %w", cleanErr(err))
	}
	ctx, err := rclgo.NewContext(rclgo.ClockTypeROSTime, rclArgs)
	if err != nil {
		return nil, fmt.Errorf("rcl context: %w", cleanErr(err))
	}
	node, err := ctx.NewNode(defaultName, "")
	if err != nil {
		ctx.Close()
		return nil, fmt.Errorf("rcl node: %w", cleanErr(err))
	}
	ws, err := ctx.NewWaitSet()
	if err != nil {
		ctx.Close()
		return nil, fmt.Errorf("rcl wait set: %w", cleanErr(err))
	}
	n := &Node{Args: args, Name: name, ctx: ctx, node: node, ws: ws,
		Params:    params.NewServer(params.Options{Node: name.FQN(), Overrides: overrides}),
		Inbox:     nodekit.NewInbox(max(o.InboxSize, 16), max(o.MaxMessage, 1<<20)),
		tickEvery: cmp.Or(o.TickEvery, time.Second),
		dropLog:   nodekit.Throttle{Every: time.Second},
		Clock:     nodekit.NewClock(false),
		calls:     make(chan func()), closing: make(chan struct{})}
	if ovErr != nil {
		n.Warn("parameter overrides: ", ovErr)
	}
	return n, nil
}

// cleanErr trims the NUL padding rcl leaves in its error strings.
func cleanErr(err error) error {
	if err == nil {
		return nil
	}
	s := strings.TrimRight(strings.ReplaceAll(err.Error(), "\x00", ""), " ")
	return errors.New(s)
}

// WarnDropped logs a malformed message dropped on input, at most once a
// second per input (saying how many were not logged since); the node's
// status and diagnostics count every one.
func (n *Node) WarnDropped(input string, err error) {
	ok, more := n.dropLog.Allow(input, stamp.Time(time.Now().UnixNano())) // wall time: also under use_sim_time
	switch {
	case !ok:
	case more > 0:
		n.Warn("dropped a malformed message on ", input, ": ", err, fmt.Sprintf(" (and %d more since the last line)", more))
	default:
		n.Warn("dropped a malformed message on ", input, ": ", err)
	}
}

// Info, Warn and Error log through ROS logging (console and /rosout).
func (n *Node) Info(a ...any)  { _ = n.node.Logger().Info(a...) }
func (n *Node) Warn(a ...any)  { _ = n.node.Logger().Warn(a...) }
func (n *Node) Error(a ...any) { _ = n.node.Logger().Error(a...) }

// TypeSupport loads the type support of "pkg/msg/Type" (or "pkg/Type").
func TypeSupport(msgType string) (types.MessageTypeSupport, error) {
	pkg, name, ok := nodekit.SplitType(msgType)
	if !ok {
		return nil, fmt.Errorf("message type %q: want pkg/msg/Type", msgType)
	}
	ts, err := rclgo.LoadDynamicMessageTypeSupport(pkg, name)
	if err != nil {
		return nil, fmt.Errorf("message type %q: %w", msgType, cleanErr(err))
	}
	if ts == nil || ts.TypeSupport() == nil { // an unknown message name is not an error in rclgo
		return nil, fmt.Errorf("message type %q: no such message in package %s", msgType, pkg)
	}
	return ts, nil
}

// InputTypeSupport is TypeSupport for an input: the inputs of every node
// are Header-first, so a type whose installed definition says otherwise
// is refused, naming its first field.
func InputTypeSupport(msgType string) (types.MessageTypeSupport, error) {
	if _, err := nodekit.CheckHeaderFirst(msgType, filepath.SplitList(os.Getenv("AMENT_PREFIX_PATH"))); err != nil {
		return nil, err
	}
	return TypeSupport(msgType)
}

// Idle is where a node goes when it cannot work with what it was given
// (an unknown input type, one without a leading Header): it logs the
// problem as an error, reports it on /diagnostics (ERROR, once a second)
// and keeps serving its parameters until SIGINT or SIGTERM. what names the
// node's function, as in its other diagnostics.
func (n *Node) Idle(what string, problem error, hint string) error {
	n.Error(problem, "; ", hint, ". Idle until stopped.")
	d := nodekit.Diagnostic{Name: n.Name.FQN() + ": " + what}
	d.Raise(nodekit.Error, problem.Error()+"; "+hint)
	n.lastHealth = d.Level.String() + ": " + d.Message // logged above
	return n.Run(func(nodekit.Msg) {}, func() { n.Report(d) })
}

func qosProfile(q params.QoS) rclgo.QosProfile {
	p := rclgo.NewDefaultQosProfile()
	p.Reliability = rclgo.ReliabilityPolicy(q.Reliability)
	p.Durability = rclgo.DurabilityPolicy(q.Durability)
	p.History = rclgo.HistoryPolicy(q.History)
	p.Depth = q.Depth
	return p
}

// Resolve expands a topic name relative to the node ("in", "~/status")
// and applies the remap rules, as rcl does.
func (n *Node) Resolve(topic string) (string, error) { return n.Name.Topic(topic) }

// Subscribe subscribes to topic with serialized messages of type ts (from
// InputTypeSupport); each message goes to the Inbox tagged with input and
// its DDS receive time (the node's clock where the middleware gives none).
func (n *Node) Subscribe(input int, topic string, ts types.MessageTypeSupport, q params.QoS) error {
	opts := &rclgo.SubscriptionOptions{Qos: qosProfile(q)}
	sub, err := n.node.NewSubscription(topic, ts, opts, func(s *rclgo.Subscription) {
		// One wake-up may stand for several messages: take all that are
		// there (bounded), so a shallow keep-last queue does not overflow.
		for range 64 {
			b, info, err := s.TakeSerializedMessage()
			if err != nil {
				return
			}
			// Humble's Cyclone RMW leaves the reception time at 0 (1970):
			// then the node's clock stands in (always with use_sim_time).
			var recv stamp.Time
			if info != nil && info.ReceivedTimestamp.UnixNano() > 0 && !n.Clock.Simulated() {
				recv = stamp.Time(info.ReceivedTimestamp.UnixNano())
			} else {
				recv = n.Clock.Now()
			}
			n.Inbox.Offer(input, b, recv)
		}
	})
	if err != nil {
		return fmt.Errorf("subscribe %s: %w", topic, cleanErr(err))
	}
	n.ws.AddSubscriptions(sub)
	return nil
}

// Publisher creates a publisher of serialized msgType messages on topic.
func (n *Node) Publisher(topic, msgType string, q params.QoS) (*rclgo.Publisher, error) {
	ts, err := TypeSupport(msgType)
	if err != nil {
		return nil, err
	}
	return n.PublisherOf(topic, ts, q)
}

// PublisherOf creates a publisher of serialized messages of type ts on topic.
func (n *Node) PublisherOf(topic string, ts types.MessageTypeSupport, q params.QoS) (*rclgo.Publisher, error) {
	pub, err := n.node.NewPublisher(topic, ts, &rclgo.PublisherOptions{Qos: qosProfile(q)})
	if err != nil {
		return nil, fmt.Errorf("publisher %s: %w", topic, cleanErr(err))
	}
	return pub, nil
}

// Run spins the wait set in a tracked goroutine and calls handle for every
// message from the Inbox and tick every Options.TickEvery (once a second by
// default), on the calling (owner)
// goroutine, until SIGINT or SIGTERM. It then stops, waits for every
// goroutine and closes the node.
func (n *Node) Run(handle func(nodekit.Msg), tick func()) error {
	// The signal handler stays until the context is closed: under ros2
	// launch a second SIGINT must not kill the node mid-cleanup.
	sig, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	spin, cancelSpin := context.WithCancel(context.Background())
	defer cancelSpin()
	spinErr := make(chan error, 1)
	n.group.Go(func() { spinErr <- n.ws.Run(spin) })
	ticker := time.NewTicker(n.tickEvery)
	defer ticker.Stop()
	n.publishEvents() // the declarations
	var err error
loop:
	for {
		select {
		case f := <-n.calls:
			f()
		case m := <-n.Inbox.C():
			handle(m)
			n.Inbox.Release(m)
		case <-ticker.C:
			if tick != nil {
				tick()
			}
		case <-sig.Done():
			break loop
		case e := <-spinErr:
			if e != nil && !errors.Is(e, context.Canceled) {
				err = fmt.Errorf("spin: %w", cleanErr(e))
			}
			break loop
		}
	}
	close(n.closing)
	cancelSpin()
	n.group.Wait()
	return errors.Join(err, n.ctx.Close())
}

// DiscoverType waits until topic has a publisher in the ROS graph and
// returns its type; false if the node was stopped first.
func (n *Node) DiscoverType(topic string) (string, bool) {
	n.Info("no message type given: waiting for a publisher of ", topic, " to learn its type")
	var found string
	n.waitSignal(func() bool {
		types, err := n.node.GetTopicNamesAndTypes(true)
		if err != nil {
			return false
		}
		if ts := types[topic]; len(ts) > 0 {
			found = ts[0]
			return true
		}
		return false
	})
	if found != "" {
		n.Info(topic, " carries ", found)
	}
	return found, found != ""
}

// waitSignal polls done every 200 ms (never, if nil) until it reports true
// or SIGINT/SIGTERM arrives.
func (n *Node) waitSignal(done func() bool) {
	sig, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-sig.Done():
			return
		case <-tick.C:
			if done != nil && done() {
				return
			}
		}
	}
}

// Rewrite is a node that republishes one topic with rewritten messages.
type Rewrite struct {
	What        string     // the node's function, as its diagnostics name it
	MessageType string     // of in and out
	In, Out     params.QoS // QoS of in and out
	// Process rewrites a message of `in` in place and says whether to
	// publish it on `out`; an error describes a malformed message.
	Process func(msg []byte, receive stamp.Time) (publish bool, err error)
	// Extra are further topics of the same type, subscribed as inputs 1, 2, …
	// with QoS In once the type is known.
	Extra []string
	// Other handles messages of the Extra subscriptions (input ≥ 1).
	Other func(m nodekit.Msg)
	// Health is called once a second; changes of its level or message are
	// logged.
	Health func() nodekit.Diagnostic
}

// RunRewrite subscribes `in`, publishes `out` and runs until SIGINT or
// SIGTERM. Without a message type it takes the type of the first publisher
// of `in` from the ROS graph; with a type that cannot be loaded it logs
// the error and idles until stopped.
func (n *Node) RunRewrite(r Rewrite) error {
	in, err := n.Resolve("in")
	if err != nil {
		return err
	}
	if r.MessageType == "" {
		t, ok := n.DiscoverType(in)
		if !ok {
			return nil // stopped while waiting
		}
		r.MessageType = t
	}
	ts, err := InputTypeSupport(r.MessageType)
	if err != nil {
		return n.Idle(r.What, err, "set message_type to a message type whose first field is a std_msgs/Header")
	}
	outName, err := n.Resolve("out")
	if err != nil {
		return err
	}
	out, err := n.PublisherOf(outName, ts, r.Out)
	if err != nil {
		return err
	}
	if err := n.Subscribe(0, in, ts, r.In); err != nil {
		return err
	}
	for i, topic := range r.Extra {
		name, err := n.Resolve(topic)
		if err != nil {
			return err
		}
		if err := n.Subscribe(1+i, name, ts, r.In); err != nil {
			return err
		}
	}
	n.Info(fmt.Sprintf("%s (%s) -> %s", in, r.MessageType, outName))
	return n.Run(func(m nodekit.Msg) {
		if m.Input != 0 {
			if r.Other != nil {
				r.Other(m)
			}
			return
		}
		ok, err := r.Process(m.Data, m.Receive)
		if err != nil {
			n.WarnDropped(in, err)
			return
		}
		if ok {
			if err := out.PublishSerialized(m.Data); err != nil {
				n.Error("publish: ", cleanErr(err))
			}
		}
	}, func() {
		if r.Health != nil {
			n.Report(r.Health())
		}
	})
}

// followClock makes the node's clock follow /clock (use_sim_time).
func (n *Node) followClock() error {
	n.Clock = nodekit.NewClock(true)
	ts, err := TypeSupport("rosgraph_msgs/msg/Clock")
	if err != nil {
		return err
	}
	q := params.SensorDataQoS() // best effort matches every /clock publisher
	q.Depth = 1
	clock := n.Clock
	sub, err := n.node.NewSubscription("/clock", ts, &rclgo.SubscriptionOptions{Qos: qosProfile(q)}, func(s *rclgo.Subscription) {
		for range 64 {
			b, _, err := s.TakeSerializedMessage()
			if err != nil {
				return
			}
			if err := clock.SetFromClockMsg(b); err != nil {
				n.Warn(err)
			}
		}
	})
	if err != nil {
		return fmt.Errorf("subscribe /clock: %w", cleanErr(err))
	}
	n.ws.AddSubscriptions(sub)
	n.Info("use_sim_time: the node's time follows /clock")
	return nil
}

// PublishStatus publishes a serialized status message of msgType on
// ~/status (the publisher is made on first use).
func (n *Node) PublishStatus(msgType string, msg []byte) {
	if n.status == nil && !n.statusFailed {
		name, err := n.Resolve("~/status")
		if err == nil {
			n.status, err = n.Publisher(name, msgType, params.ReliableQoS())
		}
		if err != nil {
			n.statusFailed = true
			n.Warn("no ~/status: ", err)
			return
		}
	}
	if n.status != nil {
		if err := n.status.PublishSerialized(msg); err != nil {
			n.Warn("publish ~/status: ", cleanErr(err))
		}
	}
}

// Report publishes the node's health on /diagnostics
// (diagnostic_msgs/DiagnosticArray, for rqt_robot_monitor) and logs it when
// its level or message changed since the last call (OK as info, anything
// else as a warning). Nodes call it once a second.
func (n *Node) Report(d nodekit.Diagnostic) {
	if d.HardwareID == "" {
		d.HardwareID = n.Name.FQN()
	}
	if n.diag == nil && !n.diagFailed {
		pub, err := n.Publisher("/diagnostics", "diagnostic_msgs/msg/DiagnosticArray", params.ReliableQoS())
		if err != nil {
			n.diagFailed = true
			n.Warn("no /diagnostics: ", err)
		}
		n.diag = pub
	}
	if n.diag != nil {
		n.diagBuf = nodekit.AppendDiagnosticArray(n.diagBuf, n.Clock.Now(), d)
		if err := n.diag.PublishSerialized(n.diagBuf); err != nil {
			n.Warn("publish /diagnostics: ", cleanErr(err))
		}
	}
	h := d.Level.String() + ": " + d.Message
	if h == n.lastHealth {
		return
	}
	n.lastHealth = h
	if d.Level == nodekit.OK {
		n.Info(d.Message)
	} else {
		n.Warn(d.Message)
	}
}

// Setup creates the node from the process arguments and declares its
// parameters: bind registers them on a binder whose every change must pass
// validate (the bound Config's check). Rejected or unknown overrides are
// logged; the node runs with the defaults for those.
func Setup(name string, o Options, validate func() error, bind func(*params.Binder)) (*Node, error) {
	n, err := New(name, os.Args[1:], o)
	if err != nil {
		return nil, err
	}
	b := params.NewBinder(n.Params, validate)
	bind(b)
	var useSimTime bool
	b.Bool("use_sim_time", &useSimTime, params.Descriptor{ReadOnly: true,
		Description: "take the node's time (receive stamps, status and diagnostics stamps) from /clock (rosgraph_msgs/msg/Clock); read at start"})
	if err := b.Declare(); err != nil {
		return nil, err
	}
	if useSimTime {
		if err := n.followClock(); err != nil {
			return nil, err
		}
	}
	for _, is := range n.Params.Issues() {
		n.Warn(is)
	}
	if err := n.serveParameters(); err != nil {
		n.Warn(err) // the node still runs, without ros2 param
	}
	return n, nil
}

// Main runs a node's run function and exits with status 1 and the error
// on stderr if it fails.
func Main(name string, run func() error) {
	if err := run(); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		os.Exit(1)
	}
}
