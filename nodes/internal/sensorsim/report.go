package sensorsim

import (
	"fmt"
	"strings"

	"github.com/timealign/timealign/nodes/internal/nodekit"
	"github.com/timealign/timealign/nodes/internal/sensorsim/config"
	"github.com/timealign/timealign/pkg/stamp"
)

// Report is what the node reports at Now (a nodekit.Report): the core's
// Status against the previous report's (Prev), the rates since then, the
// node's resolved output topics and the runtime's status.
type Report struct {
	Now          stamp.Time
	Status, Prev Status
	// Rates are the samples per second of each sensor and of the pulses,
	// in the order of Status.Sensors.
	Rates [config.NumSensors + 1]float64
	// Outputs are the resolved topics of the outputs (OutIMU …).
	Outputs []string
	Runtime nodekit.RuntimeStatus
}

// enabled returns the indexes (into Status.Sensors) and names of the
// enabled sensors and of the pulses if on, with their outputs.
func enabled(c config.Config) (idx []int, names []string, outs []int) {
	for i, s := range c.Sensors() {
		if s.Enabled {
			idx, names, outs = append(idx, i), append(names, config.SensorNames[i]), append(outs, i)
		}
	}
	if c.IMU.Enabled && c.Reference.Every > 0 {
		idx, names, outs = append(idx, config.NumSensors), append(names, "reference"), append(outs, OutReference)
	}
	return idx, names, outs
}

// Diagnose returns the node's health: WARN while the clock does not run
// (use_sim_time before /clock) or with no sensor enabled, and when the
// sensors started over since Prev; OK otherwise. The values count each
// sensor's samples and end with the writable parameters.
func (r Report) Diagnose() nodekit.Diagnostic {
	s, prev, rates := r.Status, r.Prev, r.Rates
	var d nodekit.Diagnostic
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
	for _, p := range config.Settings(s.Config) {
		d.Add(p.Name, p.Value.String())
	}
	return d
}

// AppendStatusMsg serializes the report as a
// timealign/msg/SensorSimStatus.
func (r Report) AppendStatusMsg(b []byte) []byte {
	s, rates := r.Status, r.Rates
	idx, names, outs := enabled(s.Config)
	c := nodekit.NewCDR(b)
	c.Header(r.Now, "")
	c.Bool(s.Running)
	c.Uint64(s.Restarts)
	c.Uint32(uint32(len(names)))
	for _, name := range names {
		c.String(name)
	}
	c.Uint32(uint32(len(outs)))
	for _, o := range outs {
		c.String(topic(r.Outputs, o))
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
	c.Uint64(r.Runtime.DroppedQueue)
	c.Uint64(r.Runtime.TimeJumps)
	return c.B
}
