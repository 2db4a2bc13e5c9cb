package soak

import (
	"math"
	"slices"
	"time"

	"gonum.org/v1/gonum/stat"

	"github.com/timealign/timealign/pkg/stamp"
)

// Matcher pairs the messages a node publishes with their ground truth
// (sensor_sim's `truth`, matched by stamp.Fingerprint, as stamp_monitor
// does; either may come first) and collects, per stream, the stamp errors
// (stamp − true acquisition time) until they are taken. What waits longer
// than its keep time unmatched is forgotten (the flood's messages have no
// truth). The zero value is not ready: use NewMatcher. One goroutine at a
// time.
type Matcher struct {
	keep   time.Duration
	truths map[uint64]pendingTruth
	outs   map[uint64]pendingOut
	errs   map[string][]float64 // |error| in µs
}

type pendingTruth struct {
	true stamp.Time
	at   time.Duration
}

type pendingOut struct {
	stream string
	stamp  stamp.Time
	at     time.Duration
}

// NewMatcher returns a Matcher that keeps an unmatched message for keep.
func NewMatcher(keep time.Duration) *Matcher {
	return &Matcher{keep: keep, truths: map[uint64]pendingTruth{}, outs: map[uint64]pendingOut{}, errs: map[string][]float64{}}
}

// Truth takes a ground truth: the sample with fingerprint fp was acquired
// at trueStamp; at is when it came.
func (m *Matcher) Truth(fp uint64, trueStamp stamp.Time, at time.Duration) {
	if o, ok := m.outs[fp]; ok {
		delete(m.outs, fp)
		m.add(o.stream, o.stamp, trueStamp)
		return
	}
	m.truths[fp] = pendingTruth{trueStamp, at}
}

// Output takes a message of stream with fingerprint fp and stamp st; at
// is when it came.
func (m *Matcher) Output(stream string, fp uint64, st stamp.Time, at time.Duration) {
	if t, ok := m.truths[fp]; ok {
		delete(m.truths, fp)
		m.add(stream, st, t.true)
		return
	}
	m.outs[fp] = pendingOut{stream, st, at}
}

func (m *Matcher) add(stream string, st, trueStamp stamp.Time) {
	m.errs[stream] = append(m.errs[stream], math.Abs(float64(st.Sub(trueStamp)))/1e3)
}

// Prune forgets what has waited for its other half longer than the keep
// time at now.
func (m *Matcher) Prune(now time.Duration) {
	for fp, t := range m.truths {
		if now-t.at > m.keep {
			delete(m.truths, fp)
		}
	}
	for fp, o := range m.outs {
		if now-o.at > m.keep {
			delete(m.outs, fp)
		}
	}
}

// Pending is the number of messages and truths waiting for their other
// half.
func (m *Matcher) Pending() int { return len(m.truths) + len(m.outs) }

// Take returns the 90th percentile of the absolute errors of stream since
// the last Take, in µs, and their number; NaN when there were none.
func (m *Matcher) Take(stream string) (p90 float64, n int) {
	e := m.errs[stream]
	m.errs[stream] = e[:0]
	if len(e) == 0 {
		return math.NaN(), 0
	}
	slices.Sort(e)
	return stat.Quantile(0.9, stat.Empirical, e, nil), len(e)
}
