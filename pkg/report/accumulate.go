package report

import (
	"math"
)

// Buckets summarizes y over n equal intervals of x in [Lo, Hi): count,
// min, mean and max of each. Values outside are counted in the first or
// last bucket. Memory O(n), O(1) per value. The zero value is not usable;
// use NewBuckets.
type Buckets struct {
	Lo, Hi float64
	count  []int64
	min    []float64
	max    []float64
	sum    []float64
}

// NewBuckets returns n buckets over [lo, hi) (n ≥ 1; an empty range is
// widened to 1).
func NewBuckets(lo, hi float64, n int) *Buckets {
	n = max(n, 1)
	if !(hi > lo) {
		hi = lo + 1
	}
	b := &Buckets{Lo: lo, Hi: hi, count: make([]int64, n), min: make([]float64, n), max: make([]float64, n), sum: make([]float64, n)}
	for i := range b.min {
		b.min[i], b.max[i] = math.Inf(1), math.Inf(-1)
	}
	return b
}

// Add counts y at x (NaN values are ignored).
func (b *Buckets) Add(x, y float64) {
	if math.IsNaN(x) || math.IsNaN(y) {
		return
	}
	n := len(b.count)
	i := int(float64(n) * (x - b.Lo) / (b.Hi - b.Lo))
	i = min(max(i, 0), n-1)
	b.count[i]++
	b.sum[i] += y
	b.min[i] = math.Min(b.min[i], y)
	b.max[i] = math.Max(b.max[i], y)
}

// Count returns the number of values added.
func (b *Buckets) Count() int64 {
	var n int64
	for _, c := range b.count {
		n += c
	}
	return n
}

// Stat selects what a Buckets series shows as its line.
type Stat int

const (
	Mean Stat = iota
	Min
	Max
)

// Series returns a line of the non-empty buckets (at their centres) with
// the min–max band; the line is the mean, min or max of each.
func (b *Buckets) Series(name string, line Stat) Series {
	s := Series{Name: name}
	w := (b.Hi - b.Lo) / float64(len(b.count))
	for i, c := range b.count {
		if c == 0 {
			continue
		}
		s.X = append(s.X, b.Lo+(float64(i)+0.5)*w)
		switch line {
		case Min:
			s.Y = append(s.Y, b.min[i])
		case Max:
			s.Y = append(s.Y, b.max[i])
		default:
			s.Y = append(s.Y, b.sum[i]/float64(c))
		}
		s.Lo = append(s.Lo, b.min[i])
		s.Hi = append(s.Hi, b.max[i])
	}
	return s
}

// Histogram counts values in bins; values below the first edge or at or
// above the last are counted in Under and Over.
type Histogram struct {
	Edges  []float64
	Counts []int64
	Under  int64
	Over   int64
	log    bool
}

// NewHistogram returns n equal bins over [lo, hi).
func NewHistogram(lo, hi float64, n int) *Histogram {
	n = max(n, 1)
	if !(hi > lo) {
		hi = lo + 1
	}
	h := &Histogram{Counts: make([]int64, n)}
	for i := 0; i <= n; i++ {
		h.Edges = append(h.Edges, lo+(hi-lo)*float64(i)/float64(n))
	}
	return h
}

// NewLogHistogram returns n bins over [lo, hi) equal on a log scale
// (0 < lo < hi): for latencies from µs to seconds.
func NewLogHistogram(lo, hi float64, n int) *Histogram {
	n = max(n, 1)
	if !(lo > 0) {
		lo = 1
	}
	if !(hi > lo) {
		hi = lo * 10
	}
	h := &Histogram{Counts: make([]int64, n), log: true}
	a, b := math.Log(lo), math.Log(hi)
	for i := 0; i <= n; i++ {
		h.Edges = append(h.Edges, math.Exp(a+(b-a)*float64(i)/float64(n)))
	}
	return h
}

// Add counts v.
func (h *Histogram) Add(v float64) {
	n := len(h.Counts)
	switch {
	case math.IsNaN(v):
		return
	case v < h.Edges[0]:
		h.Under++
		return
	case v >= h.Edges[n]:
		h.Over++
		return
	}
	var i int
	if h.log {
		i = int(float64(n) * math.Log(v/h.Edges[0]) / math.Log(h.Edges[n]/h.Edges[0]))
	} else {
		i = int(float64(n) * (v - h.Edges[0]) / (h.Edges[n] - h.Edges[0]))
	}
	i = min(max(i, 0), n-1)
	// Rounding at an edge: move to the bin that holds v.
	for i > 0 && v < h.Edges[i] {
		i--
	}
	for i < n-1 && v >= h.Edges[i+1] {
		i++
	}
	h.Counts[i]++
}

// Total returns the number of values added.
func (h *Histogram) Total() int64 {
	n := h.Under + h.Over
	for _, c := range h.Counts {
		n += c
	}
	return n
}

// Quantile returns the q-quantile (0..1) from the bins, interpolated
// within its bin (geometrically for log bins); NaN when empty. Values
// outside the bins count as the first or last edge.
func (h *Histogram) Quantile(q float64) float64 {
	total := h.Total()
	if total == 0 {
		return math.NaN()
	}
	target := q * float64(total)
	acc := float64(h.Under)
	if target <= acc {
		return h.Edges[0]
	}
	for i, c := range h.Counts {
		if c > 0 && acc+float64(c) >= target {
			f := (target - acc) / float64(c)
			a, b := h.Edges[i], h.Edges[i+1]
			if h.log {
				return a * math.Pow(b/a, f)
			}
			return a + (b-a)*f
		}
		acc += float64(c)
	}
	return h.Edges[len(h.Edges)-1]
}

// Series returns the histogram as bars (counts per bin).
func (h *Histogram) Series(name string) Series {
	s := Series{Name: name, Bars: true, X: append([]float64(nil), h.Edges...)}
	for _, c := range h.Counts {
		s.Y = append(s.Y, float64(c))
	}
	return s
}

// Share returns the histogram as bars of the share of values per bin (so
// histograms of different sizes compare).
func (h *Histogram) Share(name string) Series {
	s := h.Series(name)
	t := float64(h.Total())
	if t > 0 {
		for i := range s.Y {
			s.Y[i] /= t
		}
	}
	return s
}
