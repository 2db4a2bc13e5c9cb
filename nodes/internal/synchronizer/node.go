package synchronizer

import (
	"fmt"

	"github.com/timealign/timealign/nodes/internal/nodekit"
	"github.com/timealign/timealign/pkg/params"
	"github.com/timealign/timealign/pkg/stamp"
)

// StatusType is the type of the node's ~/status.
const StatusType = "timealign/msg/SyncStatus"

// Ports returns the node's topics: inputs in0 … in{N-1} (of
// message_types, or of the type of their first publisher), outputs out0 …
// out{N-1} (each the type of its input) and ~/matched
// (timealign/msg/MatchedSet).
func (p *Params) Ports() (inputs, outputs []nodekit.Port, err error) {
	if err := p.CheckTypes(); err != nil {
		return nil, nil, err
	}
	for i := range p.Config.Sync.Topics {
		in := fmt.Sprint("in", i)
		inputs = append(inputs, nodekit.Port{Topic: in, Type: p.MessageType(i), QoS: p.In, TypeParam: "message_types"})
		outputs = append(outputs, nodekit.Port{Topic: fmt.Sprint("out", i), SameAs: in, QoS: p.Out})
	}
	outputs = append(outputs, nodekit.Port{Topic: "~/matched", Type: "timealign/msg/MatchedSet", QoS: p.Out})
	return inputs, outputs, nil
}

// Node runs a Core for the node runtime (a nodekit.Core): input i is
// in<i>, output i out<i>, output N ~/matched.
type Node struct {
	p     *Params
	core  *Core
	rates Rates
	prev  Status
}

// NewNode returns the node's nodekit.Core on p, the bound parameters.
func (p *Params) NewNode(publish nodekit.Publish) (nodekit.Core, error) {
	c, err := New(p.Config, func(members [][]byte, matched []byte) {
		for i, m := range members {
			publish(i, m)
		}
		publish(len(members), matched)
	})
	if err != nil {
		return nil, err
	}
	return &Node{p: p, core: c, prev: c.Status()}, nil
}

// Handle implements nodekit.Core.
func (n *Node) Handle(i int, msg []byte, receive stamp.Time) error {
	return n.core.Add(i, msg, receive)
}

// Tick implements nodekit.Core: the policies need none.
func (n *Node) Tick(stamp.Time) {}

// Report implements nodekit.Core.
func (n *Node) Report(b []byte, now stamp.Time, rt nodekit.RuntimeStatus) ([]byte, nodekit.Diagnostic) {
	st := n.core.Status()
	r, setRate := n.rates.Update(st, rt.Elapsed)
	b = n.core.AppendStatusMsg(b, now, st, rt.Inputs, r, setRate, n.core.Blocking(rt.Inputs, st, now), rt.DroppedQueue)
	d := n.core.Diagnose(rt.Node, rt.Inputs, st, n.prev, now)
	n.prev = st
	return b, d
}

// Reconfigure implements nodekit.Core: silent_after_sec and max_drop_share
// change live (the policy's parameters are read-only).
func (n *Node) Reconfigure([]params.Parameter) error { return n.core.Reconfigure(n.p.Config) }
