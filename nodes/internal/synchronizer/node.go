package synchronizer

import (
	"fmt"

	"github.com/timealign/timealign/nodes/internal/nodekit"
	"github.com/timealign/timealign/nodes/internal/synchronizer/config"
	"github.com/timealign/timealign/pkg/params"
	"github.com/timealign/timealign/pkg/stamp"
)

// Spec returns the synchronizer node, on its default parameters
// (config.DefaultParams): what its executable runs.
func Spec() nodekit.Spec {
	p := config.DefaultParams()
	return spec(&p)
}

// spec returns the node on p, which the runtime binds to the parameters.
func spec(p *config.Params) nodekit.Spec {
	return nodekit.Spec{Name: "synchronizer", What: "synchronizer", StatusType: "timealign/msg/SyncStatus",
		Bind: p.Bind, Validate: p.Validate,
		Ports: func() (inputs, outputs []nodekit.Port, err error) { return ports(p) },
		New:   func(publish nodekit.Publish) (nodekit.Core, error) { return newNode(p, publish) }}
}

// ports returns the node's topics: inputs in0 … in{N-1} (of
// message_types, or of the type of their first publisher), outputs out0 …
// out{N-1} (each the type of its input) and ~/matched
// (timealign/msg/MatchedSet).
func ports(p *config.Params) (inputs, outputs []nodekit.Port, err error) {
	if err := p.CheckTypes(); err != nil {
		return nil, nil, err
	}
	for i := range p.Config.Sync.Topics {
		in := fmt.Sprint("in", i)
		inputs = append(inputs, nodekit.Port{Topic: in, Type: nodekit.InputType(p.MessageTypes, i), QoS: p.In, TypeParam: "message_types"})
		outputs = append(outputs, nodekit.Port{Topic: fmt.Sprint("out", i), SameAs: in, QoS: p.Out})
	}
	outputs = append(outputs, nodekit.Port{Topic: "~/matched", Type: "timealign/msg/MatchedSet", QoS: p.Out})
	return inputs, outputs, nil
}

// Node runs a Core for the node runtime (a nodekit.Core): input i is
// in<i>, output i out<i>, output N ~/matched.
type Node struct {
	p     *config.Params
	core  *Core
	rates Rates
	prev  Status
	heard func(output int) bool // nil until attached
}

// newNode returns the node's nodekit.Core on p, the bound parameters.
func newNode(p *config.Params, publish nodekit.Publish) (nodekit.Core, error) {
	n := &Node{p: p}
	c, err := New(p.Config, func(members [][]byte, matched func() []byte) {
		for i, m := range members {
			publish(i, m)
		}
		if n.heard == nil || n.heard(len(members)) {
			publish(len(members), matched())
		}
	})
	if err != nil {
		return nil, err
	}
	n.core, n.prev = c, c.Status()
	return n, nil
}

// Attach implements nodekit.Attacher: ~/matched is built only while it has
// a subscriber.
func (n *Node) Attach(e nodekit.Env) { n.heard = e.Heard }

// Handle implements nodekit.Core.
func (n *Node) Handle(i int, msg []byte, receive stamp.Time) error {
	return n.core.Add(i, msg, receive)
}

// Tick implements nodekit.Core: the policies need none.
func (n *Node) Tick(stamp.Time) {}

// Report implements nodekit.Core.
func (n *Node) Report(now stamp.Time, rt nodekit.RuntimeStatus) nodekit.Report {
	r := Report{Now: now, Status: n.core.Status(), Prev: n.prev, Runtime: rt}
	r.Rates, r.SetRate = n.rates.Update(r.Status, rt.Elapsed)
	n.prev = r.Status
	return r
}

// Reconfigure implements nodekit.Core: silent_after_sec and max_drop_share
// change live (the policy's parameters are read-only).
func (n *Node) Reconfigure([]params.Parameter) error { return n.core.Reconfigure(n.p.Config) }

// TimeJumped implements nodekit.TimeJumper.
func (n *Node) TimeJumped(nodekit.TimeJump) string {
	n.core.Reset()
	return "synchronizer queues cleared"
}
