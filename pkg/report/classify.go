package report

import (
	"fmt"
	"time"

	"github.com/timealign/timealign/pkg/stamp"
)

// Class is what a stream's own timing says it is: only a periodic stream
// has a period, a jitter, gaps and an estimate.
type Class string

const (
	// Periodic: a sensor with a period (jitter, losses, a change of
	// period are allowed).
	Periodic Class = "periodic"
	// Bursty: event-driven or batched messages; no period to speak of.
	Bursty Class = "bursty"
	// OneOff: a handful of messages, or a few bursts of them (ArduPilot's
	// FMT, UNIT, PARM, MSG; a latched map).
	OneOff Class = "one-off"
)

// The classifier's thresholds (see Classify).
const (
	// MinPeriodic is the fewest messages a periodic stream has: with
	// fewer, a period and a jitter mean nothing.
	MinPeriodic = 16
	// RegularRatio: two consecutive intervals are regular when the
	// longer is at most RegularRatio times the shorter, or within
	// ±RegularTolerance of 2 or 3 times it (one or two samples lost).
	RegularRatio     = 1.5
	RegularTolerance = 0.1
	// MinRegular is the least share of regular pairs of consecutive
	// intervals in a periodic stream. Independent (Poisson) arrivals give
	// 0.36; a periodic stream with a jitter std of a fifth of its period
	// and 20 % loss about 0.9.
	MinRegular = 0.6
	// MinSpan is the shortest span of a periodic stream: a run of records
	// written within less is a dump (ArduPilot writes its UNIT and MULT
	// tables a few microseconds apart).
	MinSpan = 100 * time.Millisecond
	// MinCoverage is the least share of the span a periodic stream covers
	// at one message per median interval (so at most three periods in four
	// missing). A few bursts of closely spaced messages cover almost none
	// of it.
	MinCoverage = 0.25
	// MaxRepeated is the largest share of intervals of zero (a repeated
	// time) in a periodic stream: more is messages in batches sharing a
	// stamp.
	MaxRepeated = 0.5
	// PauseRatio: an interval more than PauseRatio times the one before
	// it is a pause, which ends a burst.
	PauseRatio = 10
	// MaxOneOffBursts is the most bursts of a one-off stream that is not
	// periodic.
	MaxOneOffBursts = 3
)

// Timing is what the classifier knows of a stream: counts of its
// intervals between consecutive times (header stamps, or log times where
// there are none), gathered in one pass by a TimingCounter.
type Timing struct {
	// Count is the number of messages, Span the last time minus the
	// first.
	Count uint64
	Span  time.Duration
	// Repeated counts intervals of zero, Backward negative ones.
	Repeated, Backward uint64
	// Median is the median positive interval.
	Median time.Duration
	// Pairs counts pairs of consecutive positive intervals, Regular those
	// that are regular (RegularRatio).
	Pairs, Regular uint64
	// Bursts is 1 plus the number of pauses (PauseRatio).
	Bursts uint64
}

// Classify says what a stream is, and why in a phrase:
//
//   - one-off: fewer than MinPeriodic messages; or all at one time; or,
//     not periodic, in at most MaxOneOffBursts bursts that cover less than
//     MinCoverage of the span;
//   - periodic: at least MinPeriodic messages over at least MinSpan, at
//     most MaxRepeated of the
//     intervals zero, at least MinRegular of the pairs of consecutive
//     intervals regular, and at least MinCoverage of the span covered at
//     one message per median interval;
//   - bursty: the rest.
//
// It is a pure function of t.
func Classify(t Timing) (Class, string) {
	if t.Count < MinPeriodic {
		if t.Count == 1 {
			return OneOff, "one message"
		}
		return OneOff, fmt.Sprintf("%d messages (a period needs %d)", t.Count, MinPeriodic)
	}
	intervals := t.Count - 1
	repeated := float64(t.Repeated) / float64(intervals)
	var regular, coverage float64
	if t.Pairs > 0 {
		regular = float64(t.Regular) / float64(t.Pairs)
	}
	if t.Span > 0 {
		coverage = float64(intervals-t.Repeated-t.Backward) * float64(t.Median) / float64(t.Span)
	}
	var why string
	switch {
	case repeated > MaxRepeated:
		why = fmt.Sprintf("%.0f %% of the messages repeat the time before them (batches)", 100*repeated)
	case t.Span < MinSpan:
		why = fmt.Sprintf("all within %s", Dur(t.Span))
	case regular < MinRegular:
		why = fmt.Sprintf("irregular intervals (%.0f %% of consecutive ones alike)", 100*regular)
	case coverage < MinCoverage:
		why = fmt.Sprintf("in bursts (%s apart within them, silent %.0f %% of the time)", Dur(t.Median), 100*(1-coverage))
	default:
		return Periodic, fmt.Sprintf("regular intervals (%.0f %% of consecutive ones alike)", 100*regular)
	}
	if t.Span == 0 {
		return OneOff, fmt.Sprintf("all %d messages carry the same time (a stamp never set?)", t.Count)
	}
	if t.Bursts <= MaxOneOffBursts && (coverage < MinCoverage || t.Span < MinSpan) {
		n := "burst"
		if t.Bursts > 1 {
			n = "bursts"
		}
		return OneOff, fmt.Sprintf("%d messages in %d %s", t.Count, t.Bursts, n)
	}
	return Bursty, why
}

// TimingCounter gathers a stream's Timing in one pass and bounded memory.
// The zero value is ready to use.
type TimingCounter struct {
	t           Timing
	first, last stamp.Time // the first time and the latest
	prev        stamp.Time
	prevIv      time.Duration // the last positive interval, 0 before one
	intervals   Hist          // positive intervals
}

// Add adds the next time of the stream (in the order the messages came).
func (c *TimingCounter) Add(x stamp.Time) {
	c.t.Count++
	if c.t.Count == 1 {
		c.first, c.last, c.prev, c.t.Bursts = x, x, x, 1
		return
	}
	c.last = max(c.last, x)
	d := x.Sub(c.prev)
	c.prev = x
	switch {
	case d == 0:
		c.t.Repeated++
		return
	case d < 0:
		c.t.Backward++
		return
	}
	c.intervals.Add(d)
	if p := c.prevIv; p > 0 {
		c.t.Pairs++
		if regularPair(p, d) {
			c.t.Regular++
		}
		if d > PauseRatio*p {
			c.t.Bursts++
		}
	}
	c.prevIv = d
}

// regularPair reports whether consecutive intervals a and b (> 0) are
// alike (RegularRatio).
func regularPair(a, b time.Duration) bool {
	lo, hi := float64(min(a, b)), float64(max(a, b))
	r := hi / lo
	if r <= RegularRatio {
		return true
	}
	for _, k := range []float64{2, 3} {
		if r >= k*(1-RegularTolerance) && r <= k*(1+RegularTolerance) {
			return true
		}
	}
	return false
}

// Timing returns the stream's Timing so far.
func (c *TimingCounter) Timing() Timing {
	t := c.t
	if t.Count > 0 {
		t.Span = c.last.Sub(c.first)
	}
	if c.intervals.Count() > 0 {
		t.Median = c.intervals.Quantiles(0.5)[0]
	}
	return t
}
