package nodekit

import (
	"math"
	"sync/atomic"
	"time"

	"github.com/timealign/timealign/pkg/stamp"
)

// Waits measures how long a subscription's messages waited in the
// middleware before the node took them, from the time each DDS writer
// stamped its sample with (rmw_message_info_t's source_timestamp) and the
// time the node took it: a node that falls behind (short of CPU, a flood)
// leaves its messages in the middleware's queue, and the socket's, where
// the node cannot count them; their growing age says so on every RMW,
// where the sequence numbers of [SeqGaps] are not given.
//
// The writer's clock need not be the node's: per publisher, the least
// transit (taken − sent) over the last waitsWindow stands for the
// transport and the clocks' offset, and a message's wait is its transit
// above that. So a node that is behind from its first message on, or for
// longer than the window, is not seen. A step of the node's own clock
// (its wall clock against its monotonic one, by more than a second)
// starts every publisher's window again: a writer on the same host stepped
// with it. A writer's clock stepped alone is forgotten after the window.
//
// It also counts the takes that found the middleware's queue at its
// limit ([Waits.Batch]): where send times are not given, or a keep-last
// queue sheds a backlog before it ages, a node that finds it full at most
// of its takes is behind, and the middleware drops what it cannot hold.
//
// Take and Batch are called by one goroutine (the transport's); Worst
// and Takes by any.
type Waits struct {
	full, batches atomic.Int64 // since Takes last ran

	pubs  map[uint64]*transits // publisher (its GID's hash) → its least transits
	order []uint64             // the publishers in pubs, in the order first seen
	worst atomic.Int64         // the longest wait since Worst last ran (ns), −1 none
	clock int64                // the node's wall clock minus its monotonic one (ns), at the last Take
	given atomic.Bool          // the middleware stamps samples when they are sent
}

// waitsWindow is how long a publisher's least transit is remembered, in
// waitsBuckets buckets of a second.
const (
	waitsBuckets = 60
	waitsWindow  = waitsBuckets * time.Second
)

// transits is one publisher's least transit in each second of the window.
type transits struct {
	least  [waitsBuckets]int64 // ns; math.MaxInt64 where none came
	second int64               // the second of the newest bucket
	floor  int64               // the least of least
}

// Take counts a message of publisher pub (a hash of its GID) sent at sent
// (0: the middleware does not say) and taken at taken, when the node's
// monotonic clock read mono.
func (w *Waits) Take(pub uint64, sent, taken stamp.Time, mono time.Duration) {
	if sent == 0 {
		return
	}
	if !w.given.Load() {
		w.given.Store(true)
		w.worst.Store(-1)
	}
	clock := int64(taken) - int64(mono)
	if w.pubs == nil || abs64(clock-w.clock) > int64(time.Second) {
		w.pubs, w.order = map[uint64]*transits{}, w.order[:0]
	}
	w.clock = clock
	p := w.pubs[pub]
	if p == nil {
		if len(w.order) >= maxPublishers {
			delete(w.pubs, w.order[0])
			w.order = append(w.order[:0], w.order[1:]...)
		}
		w.order = append(w.order, pub)
		p = &transits{second: int64(taken) / int64(time.Second), floor: math.MaxInt64}
		for i := range p.least {
			p.least[i] = math.MaxInt64
		}
		w.pubs[pub] = p
	}
	transit := int64(taken) - int64(sent)
	if s := int64(taken) / int64(time.Second); s != p.second {
		p.advance(s)
	}
	i := int(((p.second % waitsBuckets) + waitsBuckets) % waitsBuckets)
	p.least[i] = min(p.least[i], transit)
	p.floor = min(p.floor, transit)
	wait := transit - p.floor
	for {
		old := w.worst.Load()
		if wait <= old || w.worst.CompareAndSwap(old, wait) {
			return
		}
	}
}

// advance moves the window to second s (buckets between are empty; a
// clock that went back starts the window again) and recomputes the floor.
func (p *transits) advance(s int64) {
	if s < p.second || s-p.second >= waitsBuckets {
		for i := range p.least {
			p.least[i] = math.MaxInt64
		}
	} else {
		for t := p.second + 1; t <= s; t++ {
			p.least[((t%waitsBuckets)+waitsBuckets)%waitsBuckets] = math.MaxInt64
		}
	}
	p.second = s
	p.floor = math.MaxInt64
	for _, v := range p.least {
		p.floor = min(p.floor, v)
	}
}

// Worst returns the longest a message waited in the middleware since the
// last call (0 if none was taken) and starts over; ok is false when the
// middleware gives no time a message was sent.
func (w *Waits) Worst() (wait time.Duration, ok bool) {
	if !w.given.Load() {
		return 0, false
	}
	return time.Duration(max(w.worst.Swap(-1), 0)), true
}

func abs64(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

// Batch counts one take of n messages by a transport that takes at most
// limit at once (or limit is the queue's depth): n ≥ limit means the
// queue held at least that many.
func (w *Waits) Batch(n, limit int) {
	w.batches.Add(1)
	if n >= limit {
		w.full.Add(1)
	}
}

// Takes returns how many takes found the queue at its limit and how many
// there were, since the last call, and starts over.
func (w *Waits) Takes() (full, all int64) {
	return w.full.Swap(0), w.batches.Swap(0)
}
