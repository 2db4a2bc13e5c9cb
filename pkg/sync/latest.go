package sync

import (
	"math"
	"time"

	"github.com/timealign/timealign/pkg/stamp"
)

// LatestTime is message_filters' LatestTime policy: it keeps the newest
// message of every topic and publishes them all whenever a message of the
// fastest topic arrives (slower topics are repeated: a zero-order hold).
// Rates are estimated from arrival times (passed as values; nothing reads
// a clock) with moving averages, and a topic whose rate has dropped by more
// than MarginFactor errors is passed over as the pivot. Create it with New
// (Policy Latest).
//
// Unlike the C++ original, which indexes the rate estimates in the order
// topics first arrive (so a topic can be judged by another's rate), each
// topic here has its own estimate.
type LatestTime[T any] struct {
	stats[T]
	n       int
	cfg     Config
	latest  []Message[T]
	have    []bool
	used    []bool // the latest message was in a published set
	rates   []latestRate
	order   []int
	set     []Message[T]
	started int
}

type latestRate struct {
	prev                  stamp.Time
	hz, err               float64
	hzInit, errInit, init bool
}

func newLatest[T any](cfg Config, onSet SetFunc[T], onDrop DropFunc[T]) *LatestTime[T] {
	l := &LatestTime[T]{stats: newStats(cfg, onSet, onDrop), n: cfg.Topics, cfg: cfg,
		latest: make([]Message[T], cfg.Topics), have: make([]bool, cfg.Topics), used: make([]bool, cfg.Topics),
		rates: make([]latestRate, cfg.Topics), order: make([]int, cfg.Topics), set: make([]Message[T], cfg.Topics)}
	return l
}

// Add offers a message; its Arrival drives the rate estimates.
func (l *LatestTime[T]) Add(m Message[T]) {
	if !l.receive(m) {
		return
	}
	i := m.Topic
	if l.have[i] && !l.used[i] {
		l.drop(l.latest[i], Replaced)
	}
	l.latest[i], l.used[i] = m, false
	if !l.have[i] {
		l.have[i] = true
		l.started++
		l.rates[i] = latestRate{prev: m.Arrival, hzInit: true, errInit: true, init: true}
		return
	}
	if l.computeHz(i, m.Arrival) && l.pivot(m.Arrival) == i && l.started == l.n {
		copy(l.set, l.latest)
		for t := range l.used {
			l.used[t] = true
		}
		l.publish(l.set, m.Arrival)
	}
}

// computeHz updates topic i's rate estimate with a message arriving at
// now; it reports false (and changes nothing) unless time went forward.
// message_filters loops here: after a step it runs the update again,
// which then takes the initialization branch and ends; that second pass
// is written out below, so there is no loop at all.
func (l *LatestTime[T]) computeHz(i int, now stamp.Time) bool {
	r := &l.rates[i]
	period := seconds(now.Sub(r.prev))
	if period <= 0 {
		return false
	}
	switch {
	case r.hzInit:
		r.hz = 1 / period
		r.hzInit = false
	case r.errInit:
		r.err = math.Abs(r.hz - 1/period)
		r.errInit = false
		r.hz = l.cfg.RateAlpha/period + (1-l.cfg.RateAlpha)*r.hz
	case math.Abs(r.hz-1/period) > l.cfg.MarginFactor*r.err:
		// A step: start over from this period (the original's second
		// pass); the error is estimated anew from the next period.
		r.hz = 1 / period
		r.hzInit, r.errInit = false, true
	default:
		r.err = l.cfg.ErrorAlpha*math.Abs(r.hz-1/period) + (1-l.cfg.ErrorAlpha)*r.err
		r.hz = l.cfg.RateAlpha/period + (1-l.cfg.RateAlpha)*r.hz
	}
	r.prev = now
	return true
}

// pivot returns the fastest topic whose rate has not dropped, or -1.
func (l *LatestTime[T]) pivot(now stamp.Time) int {
	// Stable insertion sort by rate, fastest first.
	for i := range l.order {
		l.order[i] = i
	}
	for i := 1; i < len(l.order); i++ {
		for j := i; j > 0 && l.rates[l.order[j]].hz > l.rates[l.order[j-1]].hz; j-- {
			l.order[j], l.order[j-1] = l.order[j-1], l.order[j]
		}
	}
	for _, p := range l.order {
		r := &l.rates[p]
		if !l.have[p] {
			continue
		}
		period := seconds(now.Sub(r.prev))
		if period == 0 {
			if r.hz > 0 {
				return p
			}
			continue
		}
		if !r.errInit && r.hz-1/period > l.cfg.MarginFactor*r.err {
			continue
		}
		if r.hz > 0 {
			return p
		}
	}
	return -1
}

// Status returns a snapshot.
func (l *LatestTime[T]) Status() Status {
	for i, h := range l.have {
		l.st.QueueFill[i] = 0
		if h {
			l.st.QueueFill[i] = 1
		}
	}
	return l.snapshot()
}

// Reset forgets the latest messages and the rates.
func (l *LatestTime[T]) Reset() {
	clear(l.latest)
	clear(l.have)
	clear(l.used)
	clear(l.rates)
	l.started = 0
}

// seconds converts as rclcpp's Duration::seconds does (std::chrono: the
// nanosecond count as a double, divided by 1e9), which can differ in the
// last bit from time.Duration.Seconds.
func seconds(d time.Duration) float64 { return float64(d) / 1e9 }
