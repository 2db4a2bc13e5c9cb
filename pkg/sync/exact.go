package sync

import (
	"cmp"
	"slices"

	"github.com/timealign/timealign/pkg/stamp"
)

// ExactTime is message_filters' ExactTime policy: a set is published when
// every topic has a message with the same stamp. Pending sets are kept by
// stamp; publishing one drops every older pending set, and beyond
// QueueSize pending sets the oldest are dropped. Create it with New
// (Policy Exact).
type ExactTime[T any] struct {
	stats[T]
	n          int
	queueSize  int
	tuples     []*exactTuple[T] // sorted by stamp
	free       []*exactTuple[T]
	lastSignal stamp.Time
	set        []Message[T]
}

type exactTuple[T any] struct {
	stamp stamp.Time
	msgs  []Message[T]
	have  []bool
	count int
}

func newExact[T any](cfg Config, onSet SetFunc[T], onDrop DropFunc[T]) *ExactTime[T] {
	return &ExactTime[T]{stats: newStats(cfg, onSet, onDrop), n: cfg.Topics, queueSize: cfg.QueueSize,
		set: make([]Message[T], cfg.Topics)}
}

func (e *ExactTime[T]) tuple(t stamp.Time) *exactTuple[T] {
	i, found := slices.BinarySearchFunc(e.tuples, t, func(x *exactTuple[T], t stamp.Time) int {
		return cmp.Compare(x.stamp, t)
	})
	if found {
		return e.tuples[i]
	}
	var x *exactTuple[T]
	if k := len(e.free); k > 0 {
		x, e.free = e.free[k-1], e.free[:k-1]
	} else {
		x = &exactTuple[T]{msgs: make([]Message[T], e.n), have: make([]bool, e.n)}
	}
	x.stamp = t
	e.tuples = slices.Insert(e.tuples, i, x)
	return x
}

// Add offers a message.
func (e *ExactTime[T]) Add(m Message[T]) {
	if !e.receive(m) {
		return
	}
	x := e.tuple(m.Stamp)
	if x.have[m.Topic] {
		e.drop(x.msgs[m.Topic], Replaced)
	} else {
		x.have[m.Topic] = true
		x.count++
	}
	x.msgs[m.Topic] = m
	if x.count == e.n {
		copy(e.set, x.msgs)
		e.lastSignal = x.stamp
		e.release(slices.Index(e.tuples, x), false)
		e.publish(e.set, m.Arrival)
		// Every pending set not newer than the published one is stale: k
		// is the first newer one (found without lastSignal+1, which wraps
		// at stamp.Max).
		k, _ := slices.BinarySearchFunc(e.tuples, e.lastSignal, func(x *exactTuple[T], t stamp.Time) int {
			if x.stamp <= t {
				return -1
			}
			return 1
		})
		e.dropFirst(k, NotMatched)
	}
	if len(e.tuples) > e.queueSize {
		e.dropFirst(len(e.tuples)-e.queueSize, QueueFull)
	}
}

// dropFirst drops the k oldest pending sets.
func (e *ExactTime[T]) dropFirst(k int, why DropReason) {
	for ; k > 0; k-- {
		e.release(0, true, why)
	}
}

// release removes pending set i, reporting its messages as dropped if drop.
func (e *ExactTime[T]) release(i int, drop bool, why ...DropReason) {
	x := e.tuples[i]
	e.tuples = slices.Delete(e.tuples, i, i+1)
	for t := range x.msgs {
		if drop && x.have[t] {
			e.drop(x.msgs[t], why[0])
		}
		var zero Message[T]
		x.msgs[t], x.have[t] = zero, false
	}
	x.count = 0
	e.free = append(e.free, x)
}

// Status returns a snapshot.
func (e *ExactTime[T]) Status() Status {
	clear(e.st.QueueFill)
	for _, x := range e.tuples {
		for t, h := range x.have {
			if h {
				e.st.QueueFill[t]++
			}
		}
	}
	return e.snapshot()
}

// Reset forgets every pending set.
func (e *ExactTime[T]) Reset() {
	for len(e.tuples) > 0 {
		e.release(0, false)
	}
}
