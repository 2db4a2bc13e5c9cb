package nodekit

import (
	"time"

	"github.com/timealign/timealign/pkg/params"
	"github.com/timealign/timealign/pkg/qos"
	"github.com/timealign/timealign/pkg/stamp"
)

// Core is a node's logic as the runtime drives it. The runtime calls every
// method from the node's owner goroutine, never two at once.
type Core interface {
	// Handle takes message msg of input i (the index of its Port in
	// Spec.Ports' inputs) received at receive (node time). msg belongs to
	// the core from then on: it may rewrite it in place, publish it, keep
	// it. An error says why the message was dropped as malformed: the core
	// counts it, the runtime logs it at most once a second per input.
	Handle(i int, msg []byte, receive stamp.Time) error
	// Tick is called every Spec.TickEvery (if set) with the node time.
	Tick(now stamp.Time)
	// Report is called once a second, in every phase of the node (also
	// while it waits for its inputs' types): it returns the node's report
	// at now, which the runtime publishes on ~/status and, with its own
	// additions (inbox drops, discovery), on /diagnostics.
	Report(now stamp.Time, rt RuntimeStatus) Report
	// Reconfigure applies parameters of the node (from Spec.Bind) that
	// were set at run time: they passed Spec.Validate and are written into
	// the bound variables already. An error is logged.
	Reconfigure(changed []params.Parameter) error
}

// Report is what a node reports at one time: its core's status, against
// the one of its previous report, and what the runtime knows. Each node's
// package has its own Report type, whose methods are the node's status
// message and health: pure functions of the report, tested on reports
// made up for them.
type Report interface {
	// AppendStatusMsg appends the node's ~/status message (of type
	// Spec.StatusType, stamped with the report's time) to b.
	AppendStatusMsg(b []byte) []byte
	// Diagnose returns the node's health since the previous report:
	// the level and message of its diagnostic_msgs/DiagnosticStatus and
	// the values, which end with the settings the core runs with. The
	// runtime names it ("<node>: <Spec.What>") and adds its own.
	Diagnose() Diagnostic
}

// RuntimeStatus is what the runtime knows that a core's status reports.
type RuntimeStatus struct {
	// Node is the node's fully qualified name (diagnostics are named
	// "<Node>: <Spec.What>").
	Node string
	// Inputs are the resolved topics of the inputs, in input order.
	Inputs []string
	// DroppedQueue counts the messages dropped by the node's queues: the
	// inbox (all inputs) and the outputs' queues.
	DroppedQueue uint64
	// TimeJumps counts the times time jumped back by more than
	// time_jump_threshold_sec or the host clock stepped (each reset the
	// core): ~/status's time_jumps.
	TimeJumps uint64
	// Elapsed is the monotonic time since the node started (for rates).
	Elapsed time.Duration
}

// Publish publishes msg on output i (the index of its Port in Spec.Ports'
// outputs) and takes it: the core must not change or reuse msg afterwards
// (the output's own goroutine publishes it later). It never blocks; a
// message that does not fit in the output's queue is dropped, counted and
// reported, as is a failure to publish. Outputs exist once every input's
// type is known, which is before any message is handled.
type Publish func(i int, msg []byte)

// Port is a topic a node subscribes to or publishes.
type Port struct {
	// Topic is the name relative to the node ("in", "out0", "~/matched"),
	// remapped by --ros-args.
	Topic string
	// Type is the message type, "pkg/msg/Type". Empty: the type of the
	// port named by SameAs or, for an input without SameAs, the type of
	// the first publisher of the topic in the graph (the node waits for
	// one).
	Type string
	// SameAs names (by Topic) the input whose type this port takes when
	// Type is empty.
	SameAs string
	// QoS of the subscription or publisher.
	QoS qos.Profile
	// TypeParam names the parameter that sets Type, for messages that
	// suggest setting it ("message_type").
	TypeParam string
	// DeviceStamps says the input's header.stamp is not ROS time but a
	// device's clock (clock_sync's input), which may wrap or restart: the
	// runtime does not watch it for jumps back. Other inputs' stamps are
	// watched (see TimeJumper).
	DeviceStamps bool
}

// Spec describes a node to the runtime: its name, its parameters, its
// topics and how to make its Core. Each node's package exports its Spec
// (nodes/internal/registry lists them).
type Spec struct {
	// Name is the node's default name, and its executable's.
	Name string
	// What names the node's function in its diagnostics ("<node name>:
	// <What>").
	What string
	// StatusType is the type of the ~/status messages the core reports.
	StatusType string
	// Bind declares the node's parameters on the binder; every change must
	// pass Validate. Bind and Validate may be nil.
	Bind     func(*params.Binder)
	Validate func() error
	// Ports returns the node's inputs and outputs; it is called once the
	// parameters are declared.
	Ports func() (inputs, outputs []Port, err error)
	// New makes the core once the parameters are declared, before the
	// inputs' types are known; it publishes through publish.
	New func(publish Publish) (Core, error)
	// TickEvery is the period of Core.Tick; 0: never.
	TickEvery time.Duration
	// StatusEvery is the period of Core.Report. It defaults to a second.
	StatusEvery time.Duration
	// MsgPrefixes are the install prefixes where the inputs' .msg files
	// are looked up to refuse types without a leading std_msgs/Header (see
	// CheckHeaderFirst). It defaults to none: every type is taken and its
	// messages are checked one by one. rosnode.Main passes
	// AMENT_PREFIX_PATH.
	MsgPrefixes []string
}

// Env is what the runtime tells a core that asks for it (an [Attacher]).
type Env struct {
	// Inputs and Outputs are the resolved topics of the node's ports
	// (after remapping and the namespace), in the order of Spec.Ports.
	Inputs, Outputs []string
	// Log writes a line through ROS logging (console and /rosout). Call it
	// from the core's methods (the owner goroutine).
	Log func(l LogLevel, msg string)
	// Heard says whether output i (its index in Spec.Ports' outputs) has a
	// subscriber now, or keeps its history for late joiners: what it says
	// false to would be dropped unpublished, so a core may skip building
	// it. Call it from the core's methods.
	Heard func(output int) bool
}

// TimeJump is a jump of time the runtime detected: time went back by more
// than the parameter time_jump_threshold_sec (a bag played with --loop, a
// restarted simulator or driver), or the host clock stepped either way.
type TimeJump struct {
	// Input is the input whose header stamps jumped back (confirmed by two
	// messages in a row), or -1 for the node's clock: /clock under
	// use_sim_time, or the host clock under system time.
	Input int
	// Back is how far time went back; negative for a host clock stepped
	// forward.
	Back time.Duration
	// What says which time jumped, for the log: "/clock", "the host
	// clock", "header stamps of /imu".
	What string
}

// TimeJumper is a Core whose state a jump of time invalidates: fits,
// queues, references, schedules. The runtime calls TimeJumped from the
// owner goroutine when it detects a jump, before the first message after
// it, and logs the jump with what TimeJumped returns ("estimator reset").
// A core that holds no time-dependent state need not implement it.
type TimeJumper interface {
	TimeJumped(j TimeJump) (reset string)
}

// Attacher is a Core that wants its [Env]: a core that names its topics
// in what it publishes, or logs lines of its own (a periodic summary). The
// runtime calls Attach once, after Spec.New and before any other method.
type Attacher interface {
	Attach(Env)
}

// Waker is a Core that wants its next Tick sooner than Spec.TickEvery: a
// simulated sensor publishes each sample when it arrives, not on a grid
// of ticks. After each Tick the runtime calls Wake with the same time and
// ticks again after what it returns (at most TickEvery, at least at once).
type Waker interface {
	Wake(now stamp.Time) time.Duration
}
