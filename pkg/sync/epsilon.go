package sync

import (
	"time"

	"github.com/timealign/timealign/pkg/stamp"
)

// ApproximateEpsilonTime is message_filters' ApproximateEpsilonTime policy:
// while every topic has a message queued, the oldest queue front and every
// front within Epsilon of it form a set if they cover all topics; otherwise
// the fronts within Epsilon of the oldest are dropped. A topic queues at
// most QueueSize messages while another is empty. Create it with New
// (Policy Epsilon).
type ApproximateEpsilonTime[T any] struct {
	stats[T]
	n        int
	queue    int
	eps      time.Duration
	q        []ring[Message[T]]
	nonEmpty int
	set      []Message[T]
}

func newEpsilon[T any](cfg Config, onSet SetFunc[T], onDrop DropFunc[T]) *ApproximateEpsilonTime[T] {
	e := &ApproximateEpsilonTime[T]{stats: newStats(cfg, onSet, onDrop), n: cfg.Topics, queue: cfg.QueueSize,
		eps: cfg.Epsilon, q: make([]ring[Message[T]], cfg.Topics), set: make([]Message[T], cfg.Topics)}
	for i := range e.q {
		e.q[i] = newRing[Message[T]](min(cfg.QueueSize+1, 64))
	}
	return e
}

// Add offers a message.
func (e *ApproximateEpsilonTime[T]) Add(m Message[T]) {
	if !e.receive(m) {
		return
	}
	q := &e.q[m.Topic]
	if q.len() == 0 {
		e.nonEmpty++
	}
	q.pushBack(m)
	if e.nonEmpty == e.n {
		e.process(m.Arrival)
	} else if q.len() > e.queue {
		e.popFront(m.Topic, QueueFull)
	}
}

func (e *ApproximateEpsilonTime[T]) popFront(i int, why DropReason) {
	q := &e.q[i]
	m := q.popFront()
	if q.len() == 0 {
		e.nonEmpty--
	}
	if why >= 0 {
		e.drop(m, why)
	}
}

func (e *ApproximateEpsilonTime[T]) process(now stamp.Time) {
	// Every pass publishes a set (one message of every topic leaves) or
	// drops at least the oldest front: its stamp is within Epsilon of
	// itself because limit saturates at stamp.Max instead of wrapping
	// below older (Epsilon ≥ 0). So the loop ends after at most as many
	// passes as messages are queued.
	for e.nonEmpty == e.n {
		older, idx := e.q[0].front().Stamp, 0
		for i := 1; i < e.n; i++ {
			if s := e.q[i].front().Stamp; s < older {
				older, idx = s, i
			}
		}
		// limit is the newest stamp within Epsilon of older. Where
		// older+Epsilon passes the int64 range (rclcpp throws there),
		// every stamp is within.
		limit := older.Add(e.eps)
		all := true
		for i := 0; i < e.n; i++ {
			if i != idx && limit < e.q[i].front().Stamp {
				all = false
			}
		}
		if all {
			for i := range e.q {
				e.set[i] = *e.q[i].front()
			}
			e.publish(e.set, now)
			for i := range e.q {
				e.popFront(i, -1)
			}
			continue
		}
		for i := 0; i < e.n; i++ {
			if e.q[i].len() > 0 && e.q[i].front().Stamp <= limit {
				e.popFront(i, NotMatched)
			}
		}
	}
}

// Status returns a snapshot.
func (e *ApproximateEpsilonTime[T]) Status() Status {
	for i := range e.q {
		e.st.QueueFill[i] = e.q[i].len()
	}
	return e.snapshot()
}

// Reset forgets every queued message.
func (e *ApproximateEpsilonTime[T]) Reset() {
	for i := range e.q {
		e.q[i].clear()
	}
	e.nonEmpty = 0
}
