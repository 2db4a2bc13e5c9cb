// Package hull keeps the lower convex hull of points pushed in increasing x,
// and fits the line under all of them that is closest to them on average
// (Zhang, Liu & Xia, "Clock synchronization algorithms for network
// measurements", INFOCOM 2002): the hull edge above the points' mean x.
//
// Delivery delays are never negative, so the true timing line of a sensor
// lies under its (index or tick, receive time) points; this fit finds it
// without being pulled by late samples. A push costs O(1) amortized
// (Andrew's monotone chain) and a fit O(log vertices). Hulls never delete:
// to follow a drifting line, callers switch between two hulls (see
// [Switching]).
package hull

import "math"

// Line is y = Y0 + M·(x − X0).
type Line struct{ M, X0, Y0 float64 }

// At returns the line's value at x.
func (l Line) At(x float64) float64 { return l.Y0 + l.M*(x-l.X0) }

// Lower is the lower convex hull of the points pushed since the last Clear.
// The zero value is an empty hull.
type Lower struct {
	x, y   []float64
	count  int // points pushed
	sumX   float64
	x0, y0 float64 // the first point
	last   float64 // x of the last point
}

// Clear empties the hull, keeping its memory.
func (h *Lower) Clear() {
	h.x, h.y = h.x[:0], h.y[:0]
	h.count, h.sumX = 0, 0
}

// Count returns the number of points pushed since the last Clear.
func (h *Lower) Count() int { return h.count }

// Vertices returns the number of hull vertices.
func (h *Lower) Vertices() int { return len(h.x) }

// First returns the first point pushed since the last Clear.
func (h *Lower) First() (x, y float64) { return h.x0, h.y0 }

// Span returns the x distance from the first point to the last.
func (h *Lower) Span() float64 {
	if h.count == 0 {
		return 0
	}
	return h.last - h.x0
}

// Push adds a point. Its x must not be less than any earlier point's; a
// point with the same x as the last vertex keeps only the lower y.
func (h *Lower) Push(x, y float64) {
	if h.count == 0 {
		h.x0, h.y0 = x, y
	}
	h.count++
	h.sumX += x
	h.last = x
	n := len(h.x)
	if n > 0 && h.x[n-1] == x {
		if y >= h.y[n-1] {
			return
		}
		h.x, h.y = h.x[:n-1], h.y[:n-1]
		n--
	}
	for n >= 2 {
		ax, ay := h.x[n-2], h.y[n-2]
		bx, by := h.x[n-1], h.y[n-1]
		if (bx-ax)*(y-ay)-(by-ay)*(x-ax) > 0 {
			break // a left turn: b stays on the lower hull
		}
		n--
	}
	h.x, h.y = append(h.x[:n], x), append(h.y[:n], y)
}

// Shift moves every point by (−dx, −dy), so coordinates stay small and
// float64 exact when the caller re-bases its origin.
func (h *Lower) Shift(dx, dy float64) {
	for i := range h.x {
		h.x[i] -= dx
		h.y[i] -= dy
	}
	h.sumX -= float64(h.count) * dx
	h.x0 -= dx
	h.y0 -= dy
	h.last -= dx
}

// Fit returns the supporting line under all points whose slope is that of
// the hull edge above the mean x of the points, held within [lo, hi]; when
// the edge's slope is outside, the supporting line of the nearest bound
// slope. With one vertex the line passes through it with slope clamped
// from 0 into [lo, hi]. ok is false for an empty hull.
func (h *Lower) Fit(lo, hi float64) (l Line, ok bool) {
	n := len(h.x)
	switch n {
	case 0:
		return Line{}, false
	case 1:
		return Line{M: math.Min(math.Max(0, lo), hi), X0: h.x[0], Y0: h.y[0]}, true
	}
	mean := h.sumX / float64(h.count)
	// The first vertex right of the mean (or the last).
	i, j := 1, n-1
	for i < j {
		k := int(uint(i+j) >> 1)
		if h.x[k] > mean {
			j = k
		} else {
			i = k + 1
		}
	}
	m := (h.y[i] - h.y[i-1]) / (h.x[i] - h.x[i-1])
	if m >= lo && m <= hi {
		return Line{M: m, X0: h.x[i-1], Y0: h.y[i-1]}, true
	}
	return h.Support(math.Min(math.Max(m, lo), hi)), true
}

// Support returns the line of slope m under all points that touches the
// hull. The hull must not be empty.
func (h *Lower) Support(m float64) Line {
	// Edge slopes increase along a lower hull: the touching vertex is the
	// left end of the first edge steeper than m.
	i, j := 1, len(h.x)
	for i < j {
		k := int(uint(i+j) >> 1)
		if (h.y[k]-h.y[k-1])/(h.x[k]-h.x[k-1]) > m {
			j = k
		} else {
			i = k + 1
		}
	}
	return Line{M: m, X0: h.x[i-1], Y0: h.y[i-1]}
}

// Switching follows a drifting line with two hulls that both receive every
// point: the older one answers, and when the caller decides the younger
// covers a window (Switch) it replaces the older and a new younger one
// starts. Switching once per window, the answer looks back between one and
// two windows, with O(1) amortized cost and no deletions.
type Switching struct {
	old, new Lower
}

// Push adds a point to both hulls.
func (s *Switching) Push(x, y float64) {
	s.old.Push(x, y)
	s.new.Push(x, y)
}

// Switch makes the younger hull the answering one and starts a new one.
func (s *Switching) Switch() {
	s.old, s.new = s.new, s.old
	s.new.Clear()
}

// Young returns the younger hull.
func (s *Switching) Young() *Lower { return &s.new }

// Clear empties both hulls.
func (s *Switching) Clear() {
	s.old.Clear()
	s.new.Clear()
}

// Answering returns the hull that answers fits (the older one).
func (s *Switching) Answering() *Lower { return &s.old }

// Shift moves every point of both hulls by (−dx, −dy).
func (s *Switching) Shift(dx, dy float64) {
	s.old.Shift(dx, dy)
	s.new.Shift(dx, dy)
}
