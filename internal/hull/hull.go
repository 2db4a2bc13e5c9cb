// Package hull keeps the lower convex hull of points pushed in increasing x,
// and fits the line under all of them that is closest to them on average
// (Zhang, Liu & Xia, "Clock synchronization algorithms for network
// measurements", INFOCOM 2002): the hull edge above the points' mean x.
//
// Delivery delays are never negative, so the true timing line of a sensor
// lies under its (index or tick, receive time) points; this fit finds it
// without being pulled by late samples. pkg/tsest fits its sample and
// reference lines with it, pkg/pll its Envelope mode (and Offset with
// TrackSkew).
//
// A push costs O(1) amortized (Andrew's monotone chain); a fit or a
// supporting line walks from where the previous one ended, O(1) amortized
// while the mean and the slope move slowly, O(vertices) at worst. Hulls
// never delete: to follow a drifting line, callers switch between two
// hulls (see [Switching]). Memory grows with the vertices and is kept by
// Clear; [Lower.Grow] reserves it up front.
package hull

import (
	"math"
	"slices"
)

type point struct{ x, y float64 }

// Line is y = Y0 + M·(x − X0).
type Line struct{ M, X0, Y0 float64 }

// At returns the line's value at x.
func (l Line) At(x float64) float64 { return l.Y0 + l.M*(x-l.X0) }

// Lower is the lower convex hull of the points pushed since the last Clear.
// The zero value is an empty hull.
type Lower struct {
	p      []point
	count  int // points pushed
	sumX   float64
	sumY   float64
	x0, y0 float64 // the first point
	last   float64 // x of the last point
	// Where the last Fit and Support ended: successive searches start
	// there and walk, O(1) amortized as the mean and slope move slowly.
	hintFit, hintSup int
}

// Clear empties the hull, keeping its memory.
func (h *Lower) Clear() {
	h.p = h.p[:0]
	h.count, h.sumX, h.sumY = 0, 0, 0
	h.hintFit, h.hintSup = 0, 0
}

// Grow makes room for n more vertices, so that pushes do not allocate
// until the hull holds more.
func (h *Lower) Grow(n int) { h.p = slices.Grow(h.p, n) }

// Count returns the number of points pushed since the last Clear.
func (h *Lower) Count() int { return h.count }

// Vertices returns the number of hull vertices.
func (h *Lower) Vertices() int { return len(h.p) }

// First returns the first point pushed since the last Clear.
func (h *Lower) First() (x, y float64) { return h.x0, h.y0 }

// Mean returns the mean of the points pushed since the last Clear (0, 0
// for an empty hull).
func (h *Lower) Mean() (x, y float64) {
	if h.count == 0 {
		return 0, 0
	}
	return h.sumX / float64(h.count), h.sumY / float64(h.count)
}

// Last returns the x of the last point pushed.
func (h *Lower) Last() float64 { return h.last }

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
	h.sumY += y
	h.last = x
	p := h.p
	n := len(p)
	if n > 0 && p[n-1].x == x {
		if y >= p[n-1].y {
			return
		}
		n--
	}
	for n >= 2 {
		a, b := p[n-2], p[n-1]
		if (b.x-a.x)*(y-a.y)-(b.y-a.y)*(x-a.x) > 0 {
			break // a left turn: b stays on the lower hull
		}
		n--
	}
	h.p = append(p[:n], point{x, y})
}

// Shift moves every point by (−dx, −dy), so coordinates stay small and
// float64 exact when the caller re-bases its origin.
func (h *Lower) Shift(dx, dy float64) {
	for i := range h.p {
		h.p[i].x -= dx
		h.p[i].y -= dy
	}
	h.sumX -= float64(h.count) * dx
	h.sumY -= float64(h.count) * dy
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
	p := h.p
	n := len(p)
	switch n {
	case 0:
		return Line{}, false
	case 1:
		return Line{M: math.Min(math.Max(0, lo), hi), X0: p[0].x, Y0: p[0].y}, true
	}
	mean := h.sumX / float64(h.count)
	// The first vertex right of the mean (or the last), walking from the
	// previous answer.
	i := min(max(h.hintFit, 1), n-1)
	for i < n-1 && p[i].x <= mean {
		i++
	}
	for i > 1 && p[i-1].x > mean {
		i--
	}
	h.hintFit = i
	m := (p[i].y - p[i-1].y) / (p[i].x - p[i-1].x)
	if m >= lo && m <= hi {
		return Line{M: m, X0: p[i-1].x, Y0: p[i-1].y}, true
	}
	return h.Support(math.Min(math.Max(m, lo), hi)), true
}

// Support returns the line of slope m under all points that touches the
// hull. The hull must not be empty.
func (h *Lower) Support(m float64) Line {
	// Edge slopes increase along a lower hull: the touching vertex is the
	// left end of the first edge steeper than m.
	p := h.p
	n := len(p)
	// i is the first edge (ending at vertex i) steeper than m, n if none;
	// walk from the previous answer.
	steeper := func(k int) bool { return p[k].y-p[k-1].y > m*(p[k].x-p[k-1].x) }
	i := min(max(h.hintSup, 1), n)
	for i < n && !steeper(i) {
		i++
	}
	for i > 1 && steeper(i-1) {
		i--
	}
	h.hintSup = i
	return Line{M: m, X0: p[i-1].x, Y0: p[i-1].y}
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

// Grow makes room for n vertices in each hull (see [Lower.Grow]).
func (s *Switching) Grow(n int) {
	s.old.Grow(n)
	s.new.Grow(n)
}

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
