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
	// p[:n] are the vertices, p[n:] room for more: a push stores a
	// point, not a slice. low is the lowest vertex index written since
	// the last Fit (see edge).
	p      []point
	n, low int
	count  int // points pushed
	sumX   float64
	sumY   float64
	x0, y0 float64 // the first point
	// Where the last Fit and Support ended: successive searches start
	// there and walk, O(1) amortized as the mean and slope move slowly.
	hintFit, hintSup int
	// The line of the edge Fit found last (ending at vertex edgeAt, 0 for
	// none), the same while no push has written a vertex at or left of it.
	edge   Line
	edgeAt int
}

// Clear empties the hull, keeping its memory.
func (h *Lower) Clear() {
	h.n = 0
	h.count, h.sumX, h.sumY = 0, 0, 0
	h.hintFit, h.hintSup, h.edgeAt = 0, 0, 0
}

// Grow makes room for n more vertices, so that pushes do not allocate
// until the hull holds more.
func (h *Lower) Grow(n int) {
	if len(h.p)-h.n < n {
		h.p = slices.Grow(h.p[:h.n], n)
		h.p = h.p[:cap(h.p)]
	}
}

// Count returns the number of points pushed since the last Clear.
func (h *Lower) Count() int { return h.count }

// Vertices returns the number of hull vertices.
func (h *Lower) Vertices() int { return h.n }

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

// Last returns the x of the last point pushed (the last vertex's), 0 for
// an empty hull.
func (h *Lower) Last() float64 {
	if h.n == 0 {
		return 0
	}
	return h.p[h.n-1].x
}

// Span returns the x distance from the first point to the last.
func (h *Lower) Span() float64 {
	if h.count == 0 {
		return 0
	}
	return h.Last() - h.x0
}

// Push adds a point. Its x must not be less than any earlier point's; a
// point with the same x as the last vertex keeps only the lower y.
func (h *Lower) Push(x, y float64) {
	if h.n == len(h.p) {
		h.grow()
	}
	h.push(x, y)
}

// grow makes room for one more vertex.
func (h *Lower) grow() {
	h.p = append(h.p, point{})
	h.p = h.p[:cap(h.p)]
}

// push is Push with room for one more vertex (a leaf: no call, no frame).
func (h *Lower) push(x, y float64) {
	if h.count == 0 {
		h.x0, h.y0 = x, y
	}
	h.count++
	h.sumX += x
	h.sumY += y
	p, n := h.p, h.n
	if n > 0 {
		b := p[n-1]
		if b.x == x {
			if y >= b.y {
				return
			}
			n--
			if n > 0 {
				b = p[n-1]
			}
		}
		// Pop the last vertex b while it does not make a left turn from
		// the one before it (a) to the new point.
		for n >= 2 {
			a := p[n-2]
			if (b.x-a.x)*(y-a.y)-(b.y-a.y)*(x-a.x) > 0 {
				break // b stays on the lower hull
			}
			n--
			b = a
		}
	}
	if n < h.low {
		h.low = n
	}
	p[n] = point{x, y}
	h.n = n + 1
}

// Shift moves every point by (−dx, −dy), so coordinates stay small and
// float64 exact when the caller re-bases its origin.
func (h *Lower) Shift(dx, dy float64) {
	for i := range h.n {
		h.p[i].x -= dx
		h.p[i].y -= dy
	}
	h.sumX -= float64(h.count) * dx
	h.sumY -= float64(h.count) * dy
	h.x0 -= dx
	h.y0 -= dy
	h.edgeAt = 0
}

// Fit returns the supporting line under all points whose slope is that of
// the hull edge above the mean x of the points, held within [lo, hi]; when
// the edge's slope is outside, the supporting line of the nearest bound
// slope. With one vertex the line passes through it with slope clamped
// from 0 into [lo, hi]. ok is false for an empty hull.
//
// The edge is the first whose right end has x·count > sum of the x's (the
// mean without a division: the same comparison for the integer indexes
// and ticks of the callers). While pushes leave that edge's vertices in
// place, its line is reused.
func (h *Lower) Fit(lo, hi float64) (l Line, ok bool) {
	p := h.p[:h.n]
	n := len(p)
	if n < 2 {
		if n == 0 {
			return Line{}, false
		}
		return Line{M: math.Min(math.Max(0, lo), hi), X0: p[0].x, Y0: p[0].y}, true
	}
	// The first vertex right of the mean (x·count > sum; no division),
	// or the last, walking from the previous answer.
	sum, count := h.sumX, float64(h.count)
	i := min(max(h.hintFit, 1), n-1)
	for i < n-1 && p[i].x*count <= sum {
		i++
	}
	for i > 1 && p[i-1].x*count > sum {
		i--
	}
	h.hintFit = i
	if i != h.edgeAt || i >= h.low {
		h.edge = Line{M: (p[i].y - p[i-1].y) / (p[i].x - p[i-1].x), X0: p[i-1].x, Y0: p[i-1].y}
		h.edgeAt, h.low = i, n
	}
	if m := h.edge.M; !(m >= lo && m <= hi) {
		return h.Support(math.Min(math.Max(m, lo), hi)), true
	}
	return h.edge, true
}

// Support returns the line of slope m under all points that touches the
// hull. The hull must not be empty.
func (h *Lower) Support(m float64) Line {
	// Edge slopes increase along a lower hull: the touching vertex is the
	// left end of the first edge steeper than m.
	p := h.p[:h.n]
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
	if s.old.n == len(s.old.p) {
		s.old.grow()
	}
	if s.new.n == len(s.new.p) {
		s.new.grow()
	}
	s.old.push(x, y)
	s.new.push(x, y)
}

// CopyFrom makes s a copy of o; it allocates only if s has less room
// than o holds (see [Switching.Grow]).
func (s *Switching) CopyFrom(o *Switching) {
	s.old.copyFrom(&o.old)
	s.new.copyFrom(&o.new)
}

// copyFrom makes h a copy of o, in h's memory when it has room.
func (h *Lower) copyFrom(o *Lower) {
	p := h.p
	if len(p) < o.n {
		p = make([]point, len(o.p))
	}
	copy(p, o.p[:o.n])
	*h = *o
	h.p = p
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
