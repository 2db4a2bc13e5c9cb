package sensorsim

import (
	"time"

	"github.com/timealign/timealign/nodes/internal/nodekit"
	"github.com/timealign/timealign/nodes/internal/sensorsim/config"
	"github.com/timealign/timealign/pkg/params"
	"github.com/timealign/timealign/pkg/sim/payload"
	"github.com/timealign/timealign/pkg/stamp"
)

// TruthType is the type of the ground truth (`truth`).
const TruthType = "timealign/msg/GroundTruth"

// Spec returns the sensor_sim node, on its default parameters
// (config.DefaultParams): what its executable runs.
func Spec() nodekit.Spec {
	p := config.DefaultParams()
	return spec(&p)
}

// spec returns the node on p, which the runtime binds to the parameters.
func spec(p *config.Params) nodekit.Spec {
	return nodekit.Spec{Name: "sensor_sim", What: "simulated sensors", StatusType: "timealign/msg/SensorSimStatus", TickEvery: TickEvery,
		Bind: p.Bind, Validate: p.Validate,
		Ports: func() (inputs, outputs []nodekit.Port, err error) { return ports(p) },
		New:   func(publish nodekit.Publish) (nodekit.Core, error) { return newNode(p, publish) }}
}

// ports returns the node's topics: no input; outputs imu, scan, image,
// reference and truth.
func ports(p *config.Params) (inputs, outputs []nodekit.Port, err error) {
	return nil, []nodekit.Port{
		{Topic: "imu", Type: payload.ImuType, QoS: p.Out},
		{Topic: "scan", Type: payload.LaserScanType, QoS: p.Out},
		{Topic: "image", Type: payload.ImageType, QoS: p.Out},
		{Topic: "reference", Type: payload.TimeReferenceType, QoS: p.Out},
		{Topic: "truth", Type: TruthType, QoS: p.Truth},
	}, nil
}

// TickEvery is the longest the node waits between two looks at its
// sensors; it wakes for each sample's arrival (Node.Wake), so a sample is
// published when it arrives, late only by the scheduler's wake-up.
const TickEvery = 10 * time.Millisecond

// Node runs a Core for the node runtime (a nodekit.Core and
// nodekit.Attacher).
type Node struct {
	p       *config.Params
	core    *Core
	publish nodekit.Publish
	env     nodekit.Env
	rates   [config.NumSensors + 1]nodekit.Rate
	prev    Status
}

// newNode returns the node's nodekit.Core on p, the bound parameters.
func newNode(p *config.Params, publish nodekit.Publish) (nodekit.Core, error) {
	n := &Node{p: p, publish: publish}
	c, err := New(p.Config, n.emit)
	if err != nil {
		return nil, err
	}
	n.core, n.prev = c, c.Status()
	return n, nil
}

// Attach implements nodekit.Attacher: the ground truth names the resolved
// topics.
func (n *Node) Attach(e nodekit.Env) { n.env = e }

// topic returns the resolved topic of output out, "" if outputs (the
// node's Env) do not name it.
func topic(outputs []string, out int) string {
	if out < len(outputs) {
		return outputs[out]
	}
	return ""
}

// emit publishes a sample and its ground truth.
func (n *Node) emit(s Sample) {
	n.publish(s.Output, s.Msg)
	n.publish(OutTruth, AppendGroundTruth(nil, s.At, topic(n.env.Outputs, s.Output), s))
}

// Handle implements nodekit.Core: the node has no input.
func (n *Node) Handle(int, []byte, stamp.Time) error { return nil }

// Tick implements nodekit.Core: it publishes what the sensors delivered by
// now, and logs restarts.
func (n *Node) Tick(now stamp.Time) {
	n.core.Tick(now)
	for _, note := range n.core.Notes() {
		if n.env.Log != nil {
			n.env.Log(nodekit.LogWarn, note)
		}
	}
}

// Wake implements nodekit.Waker: the next tick is at the next sample's
// arrival.
func (n *Node) Wake(now stamp.Time) time.Duration {
	next, ok := n.core.Next()
	if !ok {
		return TickEvery
	}
	return next.Sub(now)
}

// Report implements nodekit.Core.
func (n *Node) Report(now stamp.Time, rt nodekit.RuntimeStatus) nodekit.Report {
	r := Report{Now: now, Status: n.core.Status(), Prev: n.prev, Outputs: n.env.Outputs, Runtime: rt}
	for i := range r.Rates {
		r.Rates[i] = n.rates[i].Update(r.Status.Sensors[i].Published, rt.Elapsed)
	}
	n.prev = r.Status
	return r
}

// Reconfigure implements nodekit.Core: changed sensors start over
// (Core.Reconfigure).
func (n *Node) Reconfigure([]params.Parameter) error { return n.core.Reconfigure(n.p.Config) }

// AppendGroundTruth serializes the ground truth of s, published on topic,
// as a timealign/msg/GroundTruth stamped at.
func AppendGroundTruth(b []byte, at stamp.Time, topic string, s Sample) []byte {
	c := nodekit.NewCDR(b)
	c.Header(at, s.FrameID)
	c.String(topic)
	c.Uint64(s.Number)
	c.Time(s.True)
	c.Time(s.Stamp)
	c.Uint64(s.Fingerprint)
	return c.B
}

// TimeJumped implements nodekit.TimeJumper: the sensors start over at the
// next tick, which sees the clock's jump (Core.Tick).
func (n *Node) TimeJumped(nodekit.TimeJump) string {
	return "the sensors start over at the new time"
}
