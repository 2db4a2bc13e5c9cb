package sensorsim

import (
	"fmt"
	"strings"
	"time"

	"github.com/timealign/timealign/nodes/internal/nodekit"
	"github.com/timealign/timealign/pkg/params"
	"github.com/timealign/timealign/pkg/sim/payload"
	"github.com/timealign/timealign/pkg/stamp"
)

// Types of the node's status and ground truth.
const (
	StatusType = "timealign/msg/SensorSimStatus"
	TruthType  = "timealign/msg/GroundTruth"
)

// Ports returns the node's topics: no input; outputs imu, scan, image,
// reference and truth.
func (p *Params) Ports() (inputs, outputs []nodekit.Port, err error) {
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
	p       *Params
	core    *Core
	publish nodekit.Publish
	env     nodekit.Env
	rates   [numSensors + 1]nodekit.Rate
	prev    Status
}

// NewNode returns the node's nodekit.Core on p, the bound parameters.
func (p *Params) NewNode(publish nodekit.Publish) (nodekit.Core, error) {
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

func (n *Node) topic(out int) string {
	if out < len(n.env.Outputs) {
		return n.env.Outputs[out]
	}
	return ""
}

// emit publishes a sample and its ground truth.
func (n *Node) emit(s Sample) {
	n.publish(s.Output, s.Msg)
	n.publish(OutTruth, AppendGroundTruth(nil, s.At, n.topic(s.Output), s))
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
func (n *Node) Report(b []byte, now stamp.Time, rt nodekit.RuntimeStatus) ([]byte, nodekit.Diagnostic) {
	st := n.core.Status()
	var rates [numSensors + 1]float64
	for i := range rates {
		rates[i] = n.rates[i].Update(st.Sensors[i].Published, rt.Elapsed)
	}
	b = n.AppendStatusMsg(b, now, st, rates, rt.DroppedQueue)
	d := n.Diagnose(rt.Node, st, n.prev, rates)
	n.prev = st
	return b, d
}

// Reconfigure implements nodekit.Core: changed sensors start over
// (Core.Reconfigure).
func (n *Node) Reconfigure([]params.Parameter) error { return n.core.Reconfigure(n.p.Config) }

// enabled returns the indexes (into Status.Sensors) and names of the
// enabled sensors and of the pulses if on, with their outputs.
func enabled(c Config) (idx []int, names []string, outs []int) {
	for i, s := range c.Sensors() {
		if s.Enabled {
			idx, names, outs = append(idx, i), append(names, SensorNames[i]), append(outs, i)
		}
	}
	if c.IMU.Enabled && c.Reference.Every > 0 {
		idx, names, outs = append(idx, numSensors), append(names, "reference"), append(outs, OutReference)
	}
	return idx, names, outs
}

// Diagnose returns the node's health: WARN while the clock does not run
// (use_sim_time before /clock) or with no sensor enabled, and when the
// sensors started over since prev; OK otherwise. The values count each
// sensor's samples and end with the writable parameters.
func (n *Node) Diagnose(name string, s, prev Status, rates [numSensors + 1]float64) nodekit.Diagnostic {
	d := nodekit.Diagnostic{Name: name + ": " + What}
	idx, names, _ := enabled(s.Config)
	switch {
	case !s.Running:
		d.Raise(nodekit.Warn, "waiting for the node's clock to run (use_sim_time: no /clock yet)")
	case len(idx) == 0:
		d.Raise(nodekit.Warn, "no sensor enabled")
	default:
		var parts []string
		for k, i := range idx {
			parts = append(parts, fmt.Sprintf("%s %.4g Hz", names[k], rates[i]))
		}
		d.Raise(nodekit.OK, "publishing "+strings.Join(parts, ", "))
	}
	if s.Restarts > prev.Restarts {
		d.Raise(nodekit.Warn, "the sensors started over (the clock went back or jumped ahead, or a parameter changed)")
	}
	for k, i := range idx {
		d.Add(names[k]+".published", s.Sensors[i].Published)
		d.Add(names[k]+".lost", s.Sensors[i].Lost)
	}
	d.Add("truths", s.Truths)
	d.Add("restarts", s.Restarts)
	for _, p := range Settings(s.Config) {
		d.Add(p.Name, p.Value.String())
	}
	return d
}

// AppendStatusMsg serializes s as a timealign/msg/SensorSimStatus stamped
// now; rates are the samples per second of each sensor and the pulses,
// droppedQueue the outputs' overflow count.
func (n *Node) AppendStatusMsg(b []byte, now stamp.Time, s Status, rates [numSensors + 1]float64, droppedQueue uint64) []byte {
	idx, names, outs := enabled(s.Config)
	c := nodekit.NewCDR(b)
	c.Header(now, "")
	c.Bool(s.Running)
	c.Uint64(s.Restarts)
	c.Uint32(uint32(len(names)))
	for _, name := range names {
		c.String(name)
	}
	c.Uint32(uint32(len(outs)))
	for _, o := range outs {
		c.String(n.topic(o))
	}
	c.Uint32(uint32(len(idx)))
	for _, i := range idx {
		c.Uint64(s.Sensors[i].Published)
	}
	c.Uint32(uint32(len(idx)))
	for _, i := range idx {
		c.Uint64(s.Sensors[i].Lost)
	}
	c.Uint32(uint32(len(idx)))
	for _, i := range idx {
		c.Float64(rates[i])
	}
	c.Uint64(s.Truths)
	c.Uint64(droppedQueue)
	return c.B
}

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
