package timestampestimator

import (
	"errors"

	"github.com/timealign/timealign/nodes/internal/nodekit"
	"github.com/timealign/timealign/nodes/internal/timestampestimator/config"
	"github.com/timealign/timealign/pkg/params"
	"github.com/timealign/timealign/pkg/stamp"
	"github.com/timealign/timealign/pkg/tsest"
)

// Spec returns the timestamp_estimator node, on its default parameters
// (config.DefaultParams): what its executable runs.
func Spec() nodekit.Spec {
	p := config.DefaultParams()
	return spec(&p)
}

// spec returns the node on p, which the runtime binds to the parameters.
func spec(p *config.Params) nodekit.Spec {
	return nodekit.Spec{Name: "timestamp_estimator", What: "timestamp estimator", StatusType: "timealign/msg/TimestampEstimatorStatus",
		Bind: p.Bind, Validate: p.Validate,
		Ports: func() (inputs, outputs []nodekit.Port, err error) { return ports(p) },
		New:   func(publish nodekit.Publish) (nodekit.Core, error) { return newNode(p, publish) }}
}

// ports returns the node's topics: inputs `in` (of message_type, or of
// the type of its first publisher) and `reference` (hardware reference
// stamps, of reference_type), output `out` (the type of `in`).
func ports(p *config.Params) (inputs, outputs []nodekit.Port, err error) {
	return []nodekit.Port{
			{Topic: "in", Type: p.MessageType, QoS: p.In, TypeParam: "message_type"},
			{Topic: "reference", Type: p.ReferenceType, QoS: p.In, TypeParam: "reference_type"},
		},
		[]nodekit.Port{{Topic: "out", SameAs: "in", QoS: p.Out}}, nil
}

// Node runs a Core for the node runtime (a nodekit.Core): input 0 is
// `in`, input 1 `reference`, output 0 `out`.
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

// Handle implements nodekit.Core: a message of `in` is stamped in place
// and published; one of `reference` feeds the estimator.
func (n *Node) Handle(i int, msg []byte, receive stamp.Time) error {
	if i == 1 {
		// Malformed and rejected references are counted in the status; a
		// malformed one is logged too.
		if err := n.core.Reference(msg); err != nil && !errors.Is(err, tsest.ErrReference) {
			return err
		}
		return nil
	}
	ok, err := n.core.Process(msg, receive)
	if ok {
		n.publish(0, msg)
	}
	return err
}

// Tick implements nodekit.Core: the estimator needs none.
func (n *Node) Tick(stamp.Time) {}

// Report implements nodekit.Core.
func (n *Node) Report(now stamp.Time, rt nodekit.RuntimeStatus) nodekit.Report {
	r := Report{Now: now, Status: n.core.Status(), Prev: n.prev, Runtime: rt}
	n.prev = r.Status
	return r
}

// Reconfigure implements nodekit.Core: the estimator restarts with the
// new parameters (Core.Reconfigure); the counters go on.
func (n *Node) Reconfigure([]params.Parameter) error { return n.core.Reconfigure(n.p.Config) }

// TimeJumped implements nodekit.TimeJumper: the fit, the losses and the
// references are of the old timeline.
func (n *Node) TimeJumped(nodekit.TimeJump) string {
	n.core.Reset()
	return "estimator reset (fit, references); its stamps are uncorrected until it has warmed up again"
}
