package streamaligner

import (
	"fmt"
	"time"

	"github.com/timealign/timealign/nodes/internal/nodekit"
	"github.com/timealign/timealign/nodes/internal/streamaligner/config"
	"github.com/timealign/timealign/pkg/params"
	"github.com/timealign/timealign/pkg/stamp"
)

// TickEvery is how often the node looks for silent inputs.
const TickEvery = 100 * time.Millisecond

// Spec returns the stream_aligner node, on its default parameters
// (config.DefaultParams): what its executable runs.
func Spec() nodekit.Spec {
	p := config.DefaultParams()
	return spec(&p)
}

// spec returns the node on p, which the runtime binds to the parameters.
func spec(p *config.Params) nodekit.Spec {
	return nodekit.Spec{Name: "stream_aligner", What: "stream aligner", StatusType: "timealign/msg/AlignerStatus", TickEvery: TickEvery,
		Bind: p.Bind, Validate: p.Validate,
		Ports: func() (inputs, outputs []nodekit.Port, err error) { return ports(p) },
		New:   func(publish nodekit.Publish) (nodekit.Core, error) { return newNode(p, publish) }}
}

// ports returns the node's topics: inputs in0 … in{N-1} (of
// message_types, or of the type of their first publisher), outputs out0 …
// out{N-1}, each the type of its input.
func ports(p *config.Params) (inputs, outputs []nodekit.Port, err error) {
	for i := range p.Config.Aligner.Streams {
		in := fmt.Sprint("in", i)
		inputs = append(inputs, nodekit.Port{Topic: in, Type: nodekit.InputType(p.MessageTypes, i), QoS: p.In, TypeParam: "message_types"})
		outputs = append(outputs, nodekit.Port{Topic: fmt.Sprint("out", i), SameAs: in, QoS: p.Out})
	}
	return inputs, outputs, nil
}

// Node runs a Core for the node runtime (a nodekit.Core): input i is
// in<i>, output i out<i>.
type Node struct {
	p    *config.Params
	core *Core
	prev Status
}

// newNode returns the node's nodekit.Core on p, the bound parameters
// (Reconfigure reads them).
func newNode(p *config.Params, publish nodekit.Publish) (nodekit.Core, error) {
	c, err := New(p.Config, Output(publish))
	if err != nil {
		return nil, err
	}
	return &Node{p: p, core: c, prev: c.Status()}, nil
}

// Handle implements nodekit.Core.
func (n *Node) Handle(i int, msg []byte, receive stamp.Time) error {
	return n.core.Add(i, msg, receive)
}

// Tick implements nodekit.Core: silent inputs stop being waited for.
func (n *Node) Tick(now stamp.Time) { n.core.Tick(now) }

// Report implements nodekit.Core.
func (n *Node) Report(now stamp.Time, rt nodekit.RuntimeStatus) nodekit.Report {
	r := Report{Now: now, Status: n.core.Status(), Prev: n.prev, Runtime: rt}
	n.prev = r.Status
	return r
}

// TimeJumped implements nodekit.TimeJumper.
func (n *Node) TimeJumped(nodekit.TimeJump) string {
	n.core.Reset()
	return "aligner buffers cleared"
}

// Reconfigure implements nodekit.Core: timeout_sec and silent_after_sec
// change live (the others are read-only).
func (n *Node) Reconfigure([]params.Parameter) error { return n.core.Reconfigure(n.p.Config) }
