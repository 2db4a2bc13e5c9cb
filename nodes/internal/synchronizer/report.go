package synchronizer

import (
	"fmt"
	"time"

	"github.com/timealign/timealign/nodes/internal/nodekit"
	"github.com/timealign/timealign/nodes/internal/synchronizer/config"
	"github.com/timealign/timealign/pkg/stamp"
	tsync "github.com/timealign/timealign/pkg/sync"
)

// Report is what the node reports at Now (a nodekit.Report): the core's
// Status against the previous report's (Prev), the rates since then and
// the runtime's status (whose Inputs name the inputs).
type Report struct {
	Now          stamp.Time
	Status, Prev Status
	// Rates are the messages per second of each input, SetRate the sets
	// per second (see the type Rates, which reuses Rates).
	Rates   []float64
	SetRate float64
	Runtime nodekit.RuntimeStatus
}

// AppendStatusMsg serializes the report as a timealign/msg/SyncStatus
// (field for field as msg/SyncStatus.msg).
func (r Report) AppendStatusMsg(b []byte) []byte {
	s, inputs, rates := r.Status, r.Runtime.Inputs, r.Rates
	w := nodekit.NewCDR(b)
	w.Header(r.Now, "")
	w.String(s.Config.Sync.Policy.String())
	w.Uint64(s.Sync.Sets)
	w.Float64(r.SetRate)
	w.Duration(s.Sync.MeanSpread)
	w.Duration(s.Sync.MaxSpread)
	w.Duration(s.Sync.MeanLatency)
	w.Duration(s.Sync.MaxLatency)
	w.Uint32(uint32(len(inputs)))
	for _, in := range inputs {
		w.String(in)
	}
	w.Uint32(uint32(len(s.Sync.Received)))
	for _, v := range s.Sync.Received {
		w.Uint64(v)
	}
	w.Uint32(uint32(len(rates)))
	for _, v := range rates {
		w.Float64(v)
	}
	w.Uint32(uint32(len(s.Sync.QueueFill)))
	for _, v := range s.Sync.QueueFill {
		w.Uint32(uint32(v))
	}
	w.Uint32(uint32(len(s.Sync.LastStamp)))
	for _, v := range s.Sync.LastStamp {
		w.Time(v)
	}
	dropped := s.Sync.DroppedPerTopic()
	w.Uint32(uint32(len(dropped)))
	for _, v := range dropped {
		w.Uint64(v)
	}
	reasons := tsync.Reasons()
	w.Uint32(uint32(len(reasons)))
	for _, r := range reasons {
		w.String(r.String())
	}
	by := s.Sync.DropsByReason()
	w.Uint32(uint32(len(reasons)))
	for _, r := range reasons {
		w.Uint64(by[r])
	}
	w.Uint32(uint32(len(s.DroppedMalformed)))
	for _, v := range s.DroppedMalformed {
		w.Uint64(v)
	}
	w.String(s.Blocking(inputs, r.Now))
	w.Uint64(r.Runtime.DroppedQueue)
	w.Uint64(r.Runtime.TimeJumps)
	return w.B
}

// Rates turns counters into per-second rates between status snapshots.
type Rates struct {
	inputs []nodekit.Rate
	sets   nodekit.Rate
	out    []float64
}

// Update returns the per-input rates and the set rate at now (any
// monotonic clock) from s.
func (r *Rates) Update(s Status, now time.Duration) ([]float64, float64) {
	if len(r.inputs) != len(s.Sync.Received) {
		r.inputs = make([]nodekit.Rate, len(s.Sync.Received))
		r.out = make([]float64, len(s.Sync.Received))
	}
	for i, n := range s.Sync.Received {
		r.out[i] = r.inputs[i].Update(n, now)
	}
	return r.out, r.sets.Update(s.Sync.Sets, now)
}

// Diagnose returns the node's health at Now against the previous report:
// WARN naming an input that has gone silent while others deliver (it
// blocks every set), or that dropped more than MaxDropShare of its
// messages since Prev, or malformed messages; OK otherwise. A counter
// lower than in Prev counts as no change. The values end with the
// writable parameters the Core runs with.
func (r Report) Diagnose() nodekit.Diagnostic {
	s, prev, inputs := r.Status, r.Prev, r.Runtime.Inputs
	var d nodekit.Diagnostic
	var received uint64
	for _, r := range s.Sync.Received {
		received += r
	}
	if received == 0 {
		d.Raise(nodekit.Warn, "no input yet")
	} else {
		d.Raise(nodekit.OK, "matching")
	}
	dropped := s.Sync.DroppedPerTopic()
	var prevDropped []uint64
	if len(prev.Sync.Drops) == len(dropped) {
		prevDropped = prev.Sync.DroppedPerTopic()
	}
	for i := range s.LastArrival {
		topic := fmt.Sprint("in", i)
		if i < len(inputs) {
			topic = inputs[i]
		}
		if s.silent(i, r.Now) {
			d.Raise(nodekit.Warn, fmt.Sprintf("input %s is silent: it blocks every set", topic))
		}
		if prevDropped != nil && len(prev.Sync.Received) > i {
			got := nodekit.Since(s.Sync.Received[i], prev.Sync.Received[i])
			lost := nodekit.Since(dropped[i], prevDropped[i])
			// A period's drops may exceed what came in it (a policy drops
			// in this period what came in the last): 1 never warns.
			if got > 0 && s.Config.MaxDropShare < 1 && nodekit.Share(lost, got) > s.Config.MaxDropShare {
				// The message stays the same while the drops go on (the
				// node logs changes of health); the counts are values.
				// Not a share of what came: a policy may drop in this
				// period what came in the last.
				d.Raise(nodekit.Warn, fmt.Sprintf("input %s: the policy drops more than max_drop_share of its messages", topic))
				d.Add(topic+".dropped_since_last_report", lost)
				d.Add(topic+".received_since_last_report", got)
			}
		}
		if len(prev.DroppedMalformed) > i && s.DroppedMalformed[i] > prev.DroppedMalformed[i] {
			d.Raise(nodekit.Warn, fmt.Sprintf("input %s: malformed messages dropped (%s)", topic, s.LastError))
		}
		d.Add(topic+".received", s.Sync.Received[i])
		d.Add(topic+".dropped", dropped[i])
		d.Add(topic+".queued", s.Sync.QueueFill[i])
	}
	d.Add("policy", s.Config.Sync.Policy.String())
	d.Add("sets", s.Sync.Sets)
	d.Add("mean_spread", s.Sync.MeanSpread)
	d.Add("max_spread", s.Sync.MaxSpread)
	for _, p := range config.Settings(s.Config) {
		d.Add(p.Name, p.Value.String())
	}
	return d
}

// silent reports whether input i has been silent at now for SilentAfter
// while another input delivered: it blocks every set.
func (s Status) silent(i int, now stamp.Time) bool {
	anyRecent := false
	for _, a := range s.LastArrival {
		if a != 0 && now.Sub(a) < s.Config.SilentAfter {
			anyRecent = true
		}
	}
	a := s.LastArrival[i]
	return anyRecent && (a == 0 || now.Sub(a) >= s.Config.SilentAfter)
}

// Blocking returns the first input (of inputs, their topics) that blocks
// every set at now, or "".
func (s Status) Blocking(inputs []string, now stamp.Time) string {
	for i := range s.LastArrival {
		if s.silent(i, now) && i < len(inputs) {
			return inputs[i]
		}
	}
	return ""
}
