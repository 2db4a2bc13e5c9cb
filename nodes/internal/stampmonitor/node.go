package stampmonitor

import (
	"fmt"
	"strings"
	"time"

	"github.com/timealign/timealign/nodes/internal/nodekit"
	"github.com/timealign/timealign/nodes/internal/stampmonitor/config"
	"github.com/timealign/timealign/pkg/params"
	"github.com/timealign/timealign/pkg/stamp"
)

// TickEvery is how often the node ends the wait of unmatched samples and
// checks whether the table is due.
const TickEvery = 100 * time.Millisecond

// TruthType is the type of `truth`.
const TruthType = "timealign/msg/GroundTruth"

// Spec returns the stamp_monitor node, on its default parameters
// (config.DefaultParams): what its executable runs.
func Spec() nodekit.Spec {
	p := config.DefaultParams()
	return spec(&p)
}

// spec returns the node on p, which the runtime binds to the parameters.
func spec(p *config.Params) nodekit.Spec {
	return nodekit.Spec{Name: "stamp_monitor", What: "stamp monitor", StatusType: "timealign/msg/StampMonitorStatus", TickEvery: TickEvery,
		Bind: p.Bind, Validate: p.Validate,
		Ports: func() (inputs, outputs []nodekit.Port, err error) { return ports(p) },
		New:   func(publish nodekit.Publish) (nodekit.Core, error) { return newNode(p, publish) }}
}

// ports returns the node's topics: input `truth` (GroundTruth), then in0 …
// in{N-1}; no output.
func ports(p *config.Params) (inputs, outputs []nodekit.Port, err error) {
	if err := p.CheckInputs(); err != nil {
		return nil, nil, err
	}
	inputs = []nodekit.Port{{Topic: "truth", Type: TruthType, QoS: p.Truth}}
	for i := range p.Inputs {
		inputs = append(inputs, nodekit.Port{Topic: fmt.Sprint("in", i), Type: nodekit.InputType(p.MessageTypes, i),
			QoS: p.In, TypeParam: "message_types"})
	}
	return inputs, nil, nil
}

// Node runs a Core for the node runtime (a nodekit.Core and
// nodekit.Attacher): input 0 is `truth`, input i+1 is in<i>.
type Node struct {
	p       *config.Params
	core    *Core
	env     nodekit.Env
	prev    Status
	lastLog stamp.Time
	buf     strings.Builder
}

// newNode returns the node's nodekit.Core on p, the bound parameters.
func newNode(p *config.Params, _ nodekit.Publish) (nodekit.Core, error) {
	names := make([]string, p.Inputs)
	for i := range names {
		names[i] = fmt.Sprint("in", i)
	}
	c, err := New(p.Config, names, names)
	if err != nil {
		return nil, err
	}
	return &Node{p: p, core: c, prev: c.Status()}, nil
}

// Attach implements nodekit.Attacher: the rows are named by the labels,
// or the inputs' resolved topics.
func (n *Node) Attach(e nodekit.Env) {
	n.env = e
	for i, r := range n.core.rows {
		if i+1 < len(e.Inputs) {
			r.topic = e.Inputs[i+1]
			r.name = r.topic
		}
		if i < len(n.p.Labels) && n.p.Labels[i] != "" {
			r.name = n.p.Labels[i]
		}
	}
}

// Handle implements nodekit.Core.
func (n *Node) Handle(i int, msg []byte, receive stamp.Time) error {
	if i == 0 {
		return n.core.Truth(msg, receive)
	}
	return n.core.Input(i-1, msg, receive)
}

// Tick implements nodekit.Core: pending samples expire; every
// log_period_sec the table of errors is logged (when there is one).
func (n *Node) Tick(now stamp.Time) {
	n.core.expire(now)
	if n.lastLog == 0 || now < n.lastLog {
		n.lastLog = now
		return
	}
	if now.Sub(n.lastLog) < n.core.cfg.LogEvery {
		return
	}
	n.lastLog = now
	if t := Table(n.core.Summary(now), n.core.cfg.Window); t != "" && n.env.Log != nil {
		n.env.Log(nodekit.LogInfo, t)
	}
}

// Report implements nodekit.Core.
func (n *Node) Report(now stamp.Time, rt nodekit.RuntimeStatus) nodekit.Report {
	r := Report{Now: now, Status: n.core.Status(), Prev: n.prev, Rows: n.core.Summary(now), Inputs: len(n.core.rows), Runtime: rt}
	n.prev = r.Status
	return r
}

// TimeJumped implements nodekit.TimeJumper.
func (n *Node) TimeJumped(nodekit.TimeJump) string {
	n.core.Reset()
	return "pending samples and error windows cleared"
}

// Reconfigure implements nodekit.Core.
func (n *Node) Reconfigure([]params.Parameter) error { return n.core.Reconfigure(n.p.Config) }
