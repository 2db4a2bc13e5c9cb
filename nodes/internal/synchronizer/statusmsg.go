package synchronizer

import (
	"time"

	"github.com/timealign/timealign/nodes/internal/nodekit"
	"github.com/timealign/timealign/pkg/stamp"
	tsync "github.com/timealign/timealign/pkg/sync"
)

// AppendStatusMsg serializes s as a timealign/msg/SyncStatus (field for
// field as msg/SyncStatus.msg) stamped now. inputs are the resolved input
// topics, rates the messages per second of each input and setRate the sets
// per second (see Rates), blocking the silent input that blocks every set
// or "", droppedQueue the node's inbox drops.
func (c *Core) AppendStatusMsg(b []byte, now stamp.Time, s Status, inputs []string, rates []float64, setRate float64, blocking string, droppedQueue uint64) []byte {
	w := nodekit.NewCDR(b)
	w.Header(now, "")
	w.String(c.cfg.Sync.Policy.String())
	w.Uint64(s.Sync.Sets)
	w.Float64(setRate)
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
	w.String(blocking)
	w.Uint64(droppedQueue)
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
