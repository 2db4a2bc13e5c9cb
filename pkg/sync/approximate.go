package sync

import (
	"math"
	"time"

	"github.com/timealign/timealign/pkg/stamp"
)

const noPivot = -1

// ApproximateTime is message_filters' ApproximateTime policy. Create it
// with New (Policy Approximate).
//
// Every topic has a queue of messages not yet considered (deque) and a
// stack of messages tentatively passed over since the current candidate
// was made (past). While every queue is non-empty, the algorithm looks at
// the queue fronts: the newest front is the end of a possible set, the
// oldest its start. Without a candidate, the fronts become the candidate
// (unless their spread exceeds MaxInterval) and the newest front's topic
// its pivot; with one, a set of smaller spread (age-penalized) replaces it.
// The oldest front then moves to the past. The candidate is published once
// no later set can be better: when the pivot's own queue is reached, or
// when even the best possible later set (using the lower bounds of topics
// whose queues are empty) would be worse.
type ApproximateTime[T any] struct {
	stats[T]
	n           int
	queueSize   int
	ager        scaler // ×(1 + AgePenalty), as rclcpp's Duration×double
	maxInterval int64  // ns
	lowerBounds []int64

	deques   []ring[Message[T]]
	past     [][]Message[T]
	nonEmpty int

	candidate                     []Message[T]
	candStart, candEnd, pivotTime int64
	pivot                         int
	hasDropped                    []bool

	virtualMoves []int
	vtimes       []int64
	now          stamp.Time
}

func newApproximate[T any](cfg Config, onSet SetFunc[T], onDrop DropFunc[T]) *ApproximateTime[T] {
	a := &ApproximateTime[T]{
		stats:        newStats(cfg, onSet, onDrop),
		n:            cfg.Topics,
		queueSize:    cfg.QueueSize,
		ager:         newScaler(1 + cfg.AgePenalty),
		maxInterval:  math.MaxInt32*1e9 + 999_999_999, // message_filters' "no limit"
		lowerBounds:  make([]int64, cfg.Topics),
		deques:       make([]ring[Message[T]], cfg.Topics),
		past:         make([][]Message[T], cfg.Topics),
		candidate:    make([]Message[T], cfg.Topics),
		pivot:        noPivot,
		hasDropped:   make([]bool, cfg.Topics),
		virtualMoves: make([]int, cfg.Topics),
		vtimes:       make([]int64, cfg.Topics),
	}
	if cfg.MaxInterval > 0 {
		a.maxInterval = int64(cfg.MaxInterval)
	}
	for i, b := range cfg.LowerBounds {
		a.lowerBounds[i] = int64(b)
	}
	for i := range a.deques {
		a.deques[i] = newRing[Message[T]](min(cfg.QueueSize+1, 64))
		a.past[i] = make([]Message[T], 0, min(cfg.QueueSize+1, 64))
	}
	return a
}

// Add offers a message.
func (a *ApproximateTime[T]) Add(m Message[T]) {
	if !a.receive(m) {
		return
	}
	a.now = m.Arrival
	i := m.Topic
	d := &a.deques[i]
	d.pushBack(m)
	if d.len() == 1 {
		a.nonEmpty++
		if a.nonEmpty == a.n {
			a.process()
		}
	}
	if d.len()+len(a.past[i]) > a.queueSize {
		a.nonEmpty = 0
		for j := range a.deques {
			a.recover(j, len(a.past[j]))
		}
		a.drop(d.popFront(), QueueFull)
		a.hasDropped[i] = true
		if a.pivot != noPivot {
			a.clearCandidate()
			a.process()
		}
	}
}

// Status returns a snapshot.
func (a *ApproximateTime[T]) Status() Status {
	for i := range a.deques {
		a.st.QueueFill[i] = a.deques[i].len() + len(a.past[i])
	}
	return a.snapshot()
}

// Reset forgets every queued message.
func (a *ApproximateTime[T]) Reset() {
	for i := range a.deques {
		a.deques[i].clear()
		clear(a.past[i])
		a.past[i] = a.past[i][:0]
		a.hasDropped[i] = false
	}
	a.nonEmpty = 0
	a.clearCandidate()
}

func (a *ApproximateTime[T]) clearCandidate() {
	clear(a.candidate)
	a.pivot = noPivot
}

func (a *ApproximateTime[T]) deleteFront(i int, why DropReason) {
	d := &a.deques[i]
	a.drop(d.popFront(), why)
	if d.len() == 0 {
		a.nonEmpty--
	}
}

func (a *ApproximateTime[T]) moveFrontToPast(i int) {
	d := &a.deques[i]
	a.past[i] = append(a.past[i], d.popFront())
	if d.len() == 0 {
		a.nonEmpty--
	}
}

// makeCandidate takes the queue fronts as the candidate; messages passed
// over for the previous candidate can now be in no set.
func (a *ApproximateTime[T]) makeCandidate() {
	for i := range a.deques {
		a.candidate[i] = *a.deques[i].front()
		for _, m := range a.past[i] {
			a.drop(m, NotMatched)
		}
		clear(a.past[i])
		a.past[i] = a.past[i][:0]
	}
}

// recover moves the last k passed-over messages of topic i back to its queue.
func (a *ApproximateTime[T]) recover(i, k int) {
	p := a.past[i]
	for ; k > 0; k-- {
		a.deques[i].pushFront(p[len(p)-1])
		var zero Message[T]
		p[len(p)-1] = zero
		p = p[:len(p)-1]
	}
	a.past[i] = p
	if a.deques[i].len() > 0 {
		a.nonEmpty++
	}
}

func (a *ApproximateTime[T]) publishCandidate() {
	a.publish(a.candidate, a.now)
	a.clearCandidate()
	a.nonEmpty = 0
	for i := range a.deques {
		a.recover(i, len(a.past[i]))
		// The front is the published message; recover counted the queue
		// as non-empty.
		a.deques[i].popFront()
		if a.deques[i].len() == 0 {
			a.nonEmpty--
		}
	}
}

// boundary returns the topic and stamp of the newest (end) or oldest queue
// front; ties go to the last topic for the end and the first for the start.
func (a *ApproximateTime[T]) boundary(end bool) (int, int64) {
	idx, t := 0, int64(a.deques[0].front().Stamp)
	for i := 1; i < a.n; i++ {
		s := int64(a.deques[i].front().Stamp)
		if (s < t) != end {
			idx, t = i, s
		}
	}
	return idx, t
}

// virtualTime is a topic's front stamp, or for an empty queue the earliest
// stamp its next message can have (and at least the pivot's).
func (a *ApproximateTime[T]) virtualTime(i int) int64 {
	if a.deques[i].len() == 0 {
		p := a.past[i]
		if len(p) == 0 { // cannot happen while there is a candidate
			return a.pivotTime
		}
		// Saturating: a bound past stamp.Max leaves stamp.Max, a stamp no
		// later set can beat anyway.
		lb := p[len(p)-1].Stamp.Add(time.Duration(a.lowerBounds[i]))
		return max(int64(lb), a.pivotTime)
	}
	return int64(a.deques[i].front().Stamp)
}

func (a *ApproximateTime[T]) virtualBoundaries() (startIdx int, start int64, endIdx int, end int64) {
	for i := 0; i < a.n; i++ {
		a.vtimes[i] = a.virtualTime(i)
	}
	start, end = a.vtimes[0], a.vtimes[0]
	for i := 1; i < a.n; i++ {
		if a.vtimes[i] < start {
			startIdx, start = i, a.vtimes[i]
		}
		if !(a.vtimes[i] < end) {
			endIdx, end = i, a.vtimes[i]
		}
	}
	return startIdx, start, endIdx, end
}

func (a *ApproximateTime[T]) aged(d int64) int64 { return a.ager.apply(d) }

// sub returns x−y saturated to the int64 range: rclcpp's Time − Time
// where that does not throw std::overflow_error. A wrapped difference
// would turn a spread past MaxInt64 into a small or negative one and make
// a far set look best; a saturated one keeps every comparison monotone in
// x, and exact unless both of its sides saturate.
func sub(x, y int64) int64 { return int64(stamp.Time(x).Sub(stamp.Time(y))) }

// process looks for sets while every topic has a queued message. Every
// pass of the loop takes one message off the queues: it drops it, moves
// it to the past (makeCandidate drops the past it replaces), or publishes
// a set (a message of every topic leaves for good, the past returns to the
// queues). virtualSearch either publishes or restores the queues as it
// found them, with one empty, which ends the loop. So the passes between
// two publications are at most the queued messages, and the publications
// at most the held messages over the topics.
func (a *ApproximateTime[T]) process() {
	for a.nonEmpty == a.n {
		endIdx, endTime := a.boundary(true)
		startIdx, startTime := a.boundary(false)
		for i := range a.hasDropped {
			if i != endIdx {
				a.hasDropped[i] = false
			}
		}
		if a.pivot == noPivot {
			// endTime ≥ startTime, so the difference is exact in uint64
			// (in int64 it wraps negative past MaxInt64).
			if uint64(endTime)-uint64(startTime) > uint64(a.maxInterval) {
				a.deleteFront(startIdx, MaxInterval)
				continue
			}
			if a.hasDropped[endIdx] {
				a.deleteFront(startIdx, AfterDrop)
				continue
			}
			a.makeCandidate()
			a.candStart, a.candEnd = startTime, endTime
			a.pivot, a.pivotTime = endIdx, endTime
			a.moveFrontToPast(startIdx)
		} else {
			if a.aged(sub(endTime, a.candEnd)) >= sub(startTime, a.candStart) {
				a.moveFrontToPast(startIdx)
			} else {
				a.makeCandidate()
				a.candStart, a.candEnd = startTime, endTime
				a.moveFrontToPast(startIdx)
			}
		}
		if startIdx == a.pivot {
			a.publishCandidate()
		} else if a.aged(sub(endTime, a.candEnd)) >= sub(a.pivotTime, a.candStart) {
			a.publishCandidate()
		} else if a.nonEmpty < a.n {
			a.virtualSearch()
		}
	}
}

// virtualSearch decides, with a topic's queue empty, whether any later
// message could still make a better set; if none could, it publishes.
//
// Every pass moves a queued message to the past, so the loop ends within
// as many passes as messages are queued, provided it never moves from an
// empty queue (or from the pivot's). It does not: the pivot's queue still
// holds the pivot message (its front is moved only by publishing), so
// startTime ≤ pivotTime, while an empty queue's virtual time is ≥
// pivotTime. An empty queue or the pivot's can thus be the start only with
// startTime == pivotTime, and then the two tests compare the same two
// values and one of them returns.
func (a *ApproximateTime[T]) virtualSearch() {
	clear(a.virtualMoves)
	for {
		startIdx, startTime, _, endTime := a.virtualBoundaries()
		if a.aged(sub(endTime, a.candEnd)) >= sub(a.pivotTime, a.candStart) {
			a.publishCandidate()
			return
		}
		if a.aged(sub(endTime, a.candEnd)) < sub(startTime, a.candStart) {
			a.nonEmpty = 0
			for i := range a.deques {
				a.recover(i, a.virtualMoves[i])
			}
			return
		}
		a.moveFrontToPast(startIdx)
		a.virtualMoves[startIdx]++
	}
}
