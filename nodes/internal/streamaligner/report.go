package streamaligner

import (
	"fmt"

	"github.com/timealign/timealign/nodes/internal/nodekit"
	"github.com/timealign/timealign/nodes/internal/streamaligner/config"
	"github.com/timealign/timealign/pkg/stamp"
	tsync "github.com/timealign/timealign/pkg/sync"
)

// Report is what the node reports at Now (a nodekit.Report): the core's
// Status against the previous report's (Prev), and the runtime's status
// (whose Inputs name the inputs).
type Report struct {
	Now          stamp.Time
	Status, Prev Status
	Runtime      nodekit.RuntimeStatus
}

// AppendStatusMsg serializes the report as a timealign/msg/AlignerStatus
// (field for field as msg/AlignerStatus.msg).
func (r Report) AppendStatusMsg(b []byte) []byte {
	s, inputs := r.Status, r.Runtime.Inputs
	a := s.Aligner
	c := nodekit.NewCDR(b)
	c.Header(r.Now, "")
	c.Duration(a.Timeout)
	c.Duration(a.Latency)
	c.Time(a.Current)
	c.Uint64(a.Played)
	waiting := ""
	if a.Waiting >= 0 && a.Waiting < len(inputs) {
		waiting = inputs[a.Waiting]
	}
	c.String(waiting)
	c.Uint32(uint32(len(inputs)))
	for _, in := range inputs {
		c.String(in)
	}
	perStream := func(f func(tsync.StreamStatus) uint64) {
		c.Uint32(uint32(len(a.Streams)))
		for _, st := range a.Streams {
			c.Uint64(f(st))
		}
	}
	perStream32 := func(f func(tsync.StreamStatus) int) {
		c.Uint32(uint32(len(a.Streams)))
		for _, st := range a.Streams {
			c.Uint32(uint32(f(st)))
		}
	}
	perStream(func(st tsync.StreamStatus) uint64 { return st.Received })
	perStream32(func(st tsync.StreamStatus) int { return st.BufferFill })
	perStream32(func(st tsync.StreamStatus) int { return st.BufferSize })
	c.Uint32(uint32(len(s.Silent)))
	for _, v := range s.Silent {
		c.Bool(v)
	}
	perStream(func(st tsync.StreamStatus) uint64 { return st.Late })
	perStream(func(st tsync.StreamStatus) uint64 { return st.Backward })
	perStream(func(st tsync.StreamStatus) uint64 { return st.Full })
	c.Uint32(uint32(len(s.DroppedMalformed)))
	for _, v := range s.DroppedMalformed {
		c.Uint64(v)
	}
	c.Uint64(r.Runtime.DroppedQueue)
	c.Uint64(r.Runtime.TimeJumps)
	return c.B
}

// Diagnose returns the node's health against the previous report: WARN
// naming an input that is silent (not waited for), or that had messages
// dropped (late, backward in time, buffer full, malformed) since Prev; OK
// otherwise. A counter lower than in Prev counts as no change. The values
// end with the writable parameters the Core runs with.
func (r Report) Diagnose() nodekit.Diagnostic {
	s, prev, inputs := r.Status, r.Prev, r.Runtime.Inputs
	var d nodekit.Diagnostic
	var received uint64
	for _, st := range s.Aligner.Streams {
		received += st.Received
	}
	if received == 0 {
		d.Raise(nodekit.Warn, "no input yet")
	} else {
		d.Raise(nodekit.OK, "aligning")
	}
	for i, st := range s.Aligner.Streams {
		if i >= len(inputs) {
			break
		}
		if s.Silent[i] && received > 0 {
			d.Raise(nodekit.Warn, fmt.Sprintf("input %s is silent: not waited for", inputs[i]))
		}
		var p tsync.StreamStatus
		if i < len(prev.Aligner.Streams) {
			p = prev.Aligner.Streams[i]
		}
		late, back, full := nodekit.Since(st.Late, p.Late), nodekit.Since(st.Backward, p.Backward), nodekit.Since(st.Full, p.Full)
		if late+back+full > 0 {
			d.Raise(nodekit.Warn, fmt.Sprintf("input %s: %d late, %d backward in time, %d pushed out of a full buffer", inputs[i], late, back, full))
		}
		var pm uint64
		if i < len(prev.DroppedMalformed) {
			pm = prev.DroppedMalformed[i]
		}
		if n := nodekit.Since(s.DroppedMalformed[i], pm); n > 0 {
			d.Raise(nodekit.Warn, fmt.Sprintf("input %s: %d malformed messages dropped (%s)", inputs[i], n, s.LastError))
		}
	}
	if w := s.Aligner.Waiting; w >= 0 && w < len(inputs) {
		d.Add("waiting_for", inputs[w])
	}
	d.Add("played", s.Aligner.Played)
	d.Add("latency", s.Aligner.Latency)
	d.Add("timeout", s.Aligner.Timeout)
	for _, p := range config.Settings(s.Config) {
		d.Add(p.Name, p.Value.String())
	}
	return d
}
