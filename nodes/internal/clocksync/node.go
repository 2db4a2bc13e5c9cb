package clocksync

import (
	"github.com/timealign/timealign/nodes/internal/clocksync/config"
	"github.com/timealign/timealign/nodes/internal/nodekit"
	"github.com/timealign/timealign/pkg/params"
	"github.com/timealign/timealign/pkg/stamp"
)

// Spec returns the clock_sync node, on its default parameters
// (config.DefaultParams): what its executable runs.
func Spec() nodekit.Spec {
	p := config.DefaultParams()
	return spec(&p)
}

// spec returns the node on p, which the runtime binds to the parameters.
func spec(p *config.Params) nodekit.Spec {
	return nodekit.Spec{Name: "clock_sync", What: "clock sync", StatusType: "timealign/msg/ClockSyncStatus",
		Bind: p.Bind, Validate: p.Validate,
		Ports: func() (inputs, outputs []nodekit.Port, err error) { return ports(p) },
		New:   func(publish nodekit.Publish) (nodekit.Core, error) { return newNode(p, publish) }}
}

// ports returns the node's topics: input `in` (of message_type, or of the
// type of its first publisher), output `out` (the type of `in`).
func ports(p *config.Params) (inputs, outputs []nodekit.Port, err error) {
	return []nodekit.Port{{Topic: "in", Type: p.MessageType, QoS: p.In, TypeParam: "message_type", DeviceStamps: true}},
		[]nodekit.Port{{Topic: "out", SameAs: "in", QoS: p.Out}}, nil
}

// Node runs a Core for the node runtime (a nodekit.Core): input 0 is
// `in`, output 0 `out`.
type Node struct {
	p       *config.Params
	core    *Core
	publish nodekit.Publish
	prev    Status
}

// newNode returns the node's nodekit.Core on p, the bound parameters
// (Reconfigure reads them).
func newNode(p *config.Params, publish nodekit.Publish) (nodekit.Core, error) {
	c, err := New(p.Config)
	if err != nil {
		return nil, err
	}
	return &Node{p: p, core: c, publish: publish, prev: c.Status()}, nil
}

// Handle implements nodekit.Core: the message is stamped in host time in
// place and published (or dropped, as when_invalid says).
func (n *Node) Handle(_ int, msg []byte, receive stamp.Time) error {
	res, err := n.core.Process(msg, receive)
	if res == Published {
		n.publish(0, msg)
	}
	return err
}

// Tick implements nodekit.Core: the clock fit needs none.
func (n *Node) Tick(stamp.Time) {}

// Report implements nodekit.Core.
func (n *Node) Report(now stamp.Time, rt nodekit.RuntimeStatus) nodekit.Report {
	r := Report{Now: now, Status: n.core.Status(), Prev: n.prev, Runtime: rt}
	n.prev = r.Status
	return r
}

// Reconfigure implements nodekit.Core: a new fit configuration restarts
// the fit (Core.Reconfigure); the counters go on.
func (n *Node) Reconfigure([]params.Parameter) error { return n.core.Reconfigure(n.p.Config) }

// TimeJumped implements nodekit.TimeJumper: a jump of the node's clock
// (the receive times) restarts the fit. The input's stamps are the
// device's clock, which the PLL follows through wraps and restarts itself
// (its Port says DeviceStamps: the runtime does not watch them).
func (n *Node) TimeJumped(nodekit.TimeJump) string {
	n.core.Reset()
	return "clock fit restarted"
}
