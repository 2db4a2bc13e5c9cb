package stampmonitor

import (
	"math"
	"slices"
	"time"

	"github.com/timealign/timealign/pkg/stamp"
)

// Errors summarizes stamp errors (a stamp minus the true acquisition
// time), in nanoseconds, as msg/StampErrors.msg has them (in µs).
type Errors struct {
	Count               int
	Mean, Std, Min, Max float64
	// P50, P90 and P99 are percentiles of |error| (nearest rank); Worst
	// is the largest |error|.
	P50, P90, P99, Worst float64
}

// Summarize returns the Errors of errs (ns), sorting scratch, which it
// reuses and returns. The standard deviation is the population one.
func Summarize(errs []float64, scratch []float64) (Errors, []float64) {
	n := len(errs)
	if n == 0 {
		return Errors{}, scratch
	}
	e := Errors{Count: n, Min: math.Inf(1), Max: math.Inf(-1)}
	var sum float64
	for _, x := range errs {
		sum += x
		e.Min, e.Max = min(e.Min, x), max(e.Max, x)
	}
	e.Mean = sum / float64(n)
	var sq float64
	scratch = scratch[:0]
	for _, x := range errs {
		sq += (x - e.Mean) * (x - e.Mean)
		scratch = append(scratch, math.Abs(x))
	}
	e.Std = math.Sqrt(sq / float64(n))
	slices.Sort(scratch)
	rank := func(p float64) float64 { return scratch[max(0, int(math.Ceil(p*float64(n)))-1)] }
	e.P50, e.P90, e.P99, e.Worst = rank(0.50), rank(0.90), rank(0.99), scratch[n-1]
	return e, scratch
}

// entry is one sample of a window: when it was seen, and its errors before
// and after correction (ns).
type entry struct {
	at         stamp.Time
	raw, fixed float64
}

// window holds the samples of the last Span, at most Cap of them (the
// oldest go first): a ring that grows up to Cap and never beyond.
type window struct {
	span time.Duration
	cap  int
	buf  []entry
	head int // index of the oldest
	n    int
}

func (w *window) push(e entry) {
	w.evict(e.at)
	if w.n == w.cap {
		w.head = (w.head + 1) % len(w.buf)
		w.n--
	}
	if w.n == len(w.buf) { // grow, keeping the order
		nb := make([]entry, min(max(2*len(w.buf), 64), w.cap))
		for i := range w.n {
			nb[i] = w.buf[(w.head+i)%len(w.buf)]
		}
		w.buf, w.head = nb, 0
	}
	w.buf[(w.head+w.n)%len(w.buf)] = e
	w.n++
}

// evict forgets the samples seen before now − span.
func (w *window) evict(now stamp.Time) {
	for w.n > 0 && now.Sub(w.buf[w.head].at) > w.span {
		w.head = (w.head + 1) % len(w.buf)
		w.n--
	}
	if w.n == 0 && len(w.buf) > 64 {
		w.buf, w.head = nil, 0 // a topic that stopped gives its memory back
	}
}

// setLimits changes the span and the capacity, keeping the newest samples.
// reset empties the window.
func (w *window) reset() { w.head, w.n = 0, 0 }

func (w *window) setLimits(span time.Duration, capacity int) {
	w.span = span
	if capacity == w.cap {
		return
	}
	keep := make([]entry, 0, min(w.n, capacity))
	for i := max(0, w.n-capacity); i < w.n; i++ {
		keep = append(keep, w.buf[(w.head+i)%len(w.buf)])
	}
	w.buf, w.head, w.n, w.cap = keep[:cap(keep)], 0, len(keep), capacity
}

// summarize returns the errors before and after correction of the samples
// seen since now − span.
func (w *window) summarize(now stamp.Time, s *scratch) (raw, fixed Errors) {
	w.evict(now)
	s.raw, s.fixed = s.raw[:0], s.fixed[:0]
	for i := range w.n {
		e := w.buf[(w.head+i)%len(w.buf)]
		s.raw, s.fixed = append(s.raw, e.raw), append(s.fixed, e.fixed)
	}
	raw, s.sort = Summarize(s.raw, s.sort)
	fixed, s.sort = Summarize(s.fixed, s.sort)
	return raw, fixed
}

// scratch holds the buffers summaries reuse.
type scratch struct{ raw, fixed, sort []float64 }
