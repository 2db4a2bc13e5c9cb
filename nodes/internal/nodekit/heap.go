package nodekit

import (
	"runtime/metrics"
	"time"
)

// HeapReturn decides when a node gives the Go heap's free memory back to
// the system (debug.FreeOSMemory: a collection, then every free page
// returned).
//
// Go returns free heap memory by itself only down to about its heap goal,
// and recomputes the goal only at a collection. A node that allocates
// little between messages (its buffers pooled) collects rarely: after a
// flood, whose backlog grew the live heap and so the goal, it keeps the
// flood's memory until its next collection, which may be minutes later.
// Its RSS then wanders with the floods it saw. HeapReturn compares the
// memory the heap holds with the lowest goal of the last Span (the goal at
// rest): holding more than twice that plus Slack, the heap holds a burst's
// leftovers, and Check says to return them. A lasting rise of the live heap
// raises the goal at rest within Span, after which Check is quiet again.
type HeapReturn struct {
	// Span is how far back the goal at rest looks.
	Span time.Duration
	// Slack is what the heap may hold beyond twice the goal at rest.
	Slack uint64

	goals []heapGoal // the goals seen in the last Span, oldest first
}

type heapGoal struct {
	at   time.Time
	goal uint64
}

// DefaultHeapReturn returns a HeapReturn looking 5 minutes back, with 4 MiB
// of slack (Go's smallest heap goal).
func DefaultHeapReturn() HeapReturn { return HeapReturn{Span: 5 * time.Minute, Slack: 4 << 20} }

// Check records goal, the heap's goal at now, and says whether held, the
// memory the heap holds (in objects, free or unused, not returned to the
// system), is a burst's leftovers to return. Calls come in time order, a
// few seconds apart.
func (h *HeapReturn) Check(now time.Time, goal, held uint64) bool {
	if goal == 0 {
		return false // no reading
	}
	drop := 0
	for drop < len(h.goals) && now.Sub(h.goals[drop].at) > h.Span {
		drop++
	}
	h.goals = append(h.goals[:0], h.goals[drop:]...)
	h.goals = append(h.goals, heapGoal{now, goal})
	rest := goal
	for _, g := range h.goals {
		rest = min(rest, g.goal)
	}
	return held > 2*rest+h.Slack
}

// heapMetrics are the runtime/metrics HeapReading reads: the goal, then
// what the heap holds.
var heapMetrics = []string{
	"/gc/heap/goal:bytes",
	"/memory/classes/heap/objects:bytes",
	"/memory/classes/heap/unused:bytes",
	"/memory/classes/heap/free:bytes",
}

// HeapReading reads the Go heap's goal and the memory it holds (objects,
// unused and free, not yet returned to the system), for HeapReturn.Check.
// samples is reused between calls (nil at first).
func HeapReading(samples []metrics.Sample) (goal, held uint64, _ []metrics.Sample) {
	if samples == nil {
		samples = make([]metrics.Sample, len(heapMetrics))
		for i, name := range heapMetrics {
			samples[i].Name = name
		}
	}
	metrics.Read(samples)
	for i, s := range samples {
		if s.Value.Kind() != metrics.KindUint64 {
			continue // not in this Go: reads as 0
		}
		if i == 0 {
			goal = s.Value.Uint64()
		} else {
			held += s.Value.Uint64()
		}
	}
	return goal, held, samples
}
