//go:build ros2

package rosnode

import (
	"fmt"

	"github.com/tiiuae/rclgo/pkg/rclgo"
	"github.com/tiiuae/rclgo/pkg/rclgo/types"

	"github.com/timealign/timealign/pkg/params"
)

// Ports are the inputs in0 … in{N-1} and outputs out0 … out{N-1} of a node
// that republishes the messages of N topics unchanged (synchronizer,
// stream_aligner): output i has the type of input i.
type Ports struct {
	Inputs []string                   // resolved input topics
	Types  []string                   // their message types
	TS     []types.MessageTypeSupport // and type supports
	Outs   []*rclgo.Publisher         // out<i>, of Types[i]
}

// OpenPorts resolves in<i> and out<i> for k inputs, takes each input's
// type from typeOf(i) or, when that is "", from the first publisher of the
// input in the graph, and creates the output publishers. The inputs are
// subscribed by Subscribe. ok is false when the node should end without
// going on: stopped while waiting for a type (err nil), or, for a type
// that is unknown or not Header-first, after idling until stopped (what
// names the node's function in its diagnostics).
func (n *Node) OpenPorts(k int, typeOf func(i int) string, out params.QoS, what string) (p Ports, ok bool, err error) {
	p = Ports{Inputs: make([]string, k), Types: make([]string, k), TS: make([]types.MessageTypeSupport, k),
		Outs: make([]*rclgo.Publisher, k)}
	for i := range k {
		if p.Inputs[i], err = n.Resolve(fmt.Sprint("in", i)); err != nil {
			return p, false, err
		}
		if p.Types[i] = typeOf(i); p.Types[i] == "" {
			if p.Types[i], ok = n.DiscoverType(p.Inputs[i]); !ok {
				return p, false, nil
			}
		}
		if p.TS[i], err = InputTypeSupport(p.Types[i]); err != nil {
			return p, false, n.Idle(what, fmt.Errorf("%s: %w", p.Inputs[i], err),
				"set message_types to message types whose first field is a std_msgs/Header")
		}
		outName, err := n.Resolve(fmt.Sprint("out", i))
		if err != nil {
			return p, false, err
		}
		if p.Outs[i], err = n.PublisherOf(outName, p.TS[i], out); err != nil {
			return p, false, err
		}
	}
	return p, true, nil
}

// SubscribeInputs subscribes every input of p, as Inbox input i.
func (n *Node) SubscribeInputs(p Ports, in params.QoS) error {
	for i := range p.Inputs {
		if err := n.Subscribe(i, p.Inputs[i], p.TS[i], in); err != nil {
			return err
		}
	}
	return nil
}
