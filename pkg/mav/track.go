package mav

import (
	"cmp"
	"math"
	"slices"
	"time"

	"github.com/timealign/timealign/pkg/pll"
	"github.com/timealign/timealign/pkg/stamp"
)

// A track estimates one clock against another from pairs (x, y): x a
// device clock in µs (the autopilot's boot clock, or GPS time), y the
// clock that received or stamped it, in ns, never earlier than x mapped
// (y = x + offset + delay, delay ≥ 0). It feeds pkg/pll in its offset mode
// with skew tracking: over a sliding window of Window samples, the line
// under all the points (the lower convex hull's edge), so a drifting clock
// is followed and late samples cannot pull the line. Every lock of the PLL
// (the first, and each after a clock step the PLL re-locks on) starts a
// piece; a piece keeps knots, points of the fitted line a sparse sample
// apart, evaluated in the middle of the window that fitted them, so the
// whole log's mapping is a piecewise-linear curve held in O(n/K) memory.
type track struct {
	p      *pll.PLL
	window int
	every  int // a knot every this many accepted samples
	epoch  int // Relocks + Resets + Reverts of the PLL when the current piece began
	pieces []piece
	cur    *piece
	// ring holds the x of the last window/2 accepted samples; its oldest is
	// where a new knot is evaluated.
	ring    []int64
	ringN   int
	ringPos int
	// tail is the current line as two knots (the oldest and the newest x
	// of the ring), kept after every accepted sample: the end of a piece
	// uses it, since the PLL may no longer be valid when the piece closes.
	tail    [2]knot
	hasTail bool
	// block collects accepted samples for the uncertainty (see gaps).
	block []sample
	// Counters.
	samples, accepted, rejected int
	lastX                       int64
	haveLast                    bool
	stale                       int
}

type sample struct {
	x int64      // µs
	y stamp.Time // ns
}

// knot is a point of a fitted line: device time x (µs) → y (ns).
type knot struct {
	x int64
	y stamp.Time
}

// piece is one lock of the PLL: the knots of its fitted lines.
type piece struct {
	knots        []knot
	first, last  int64 // x range of the samples
	n            int   // samples accepted
	gapSum       float64
	gapN         int
	firstY, minY stamp.Time
}

// trackConfig returns the PLL configuration of a track.
func trackConfig(window int, maxLatency time.Duration, maxSkewPPM float64) pll.Config {
	c := pll.DefaultConfig()
	c.Mode = pll.Offset
	c.TrackSkew = true
	c.TickBits = 64
	c.TickPeriod = time.Microsecond
	c.Window = window
	c.MaxDeviation = maxLatency
	c.MaxInvalid = 50
	c.MaxSkewPPM = maxSkewPPM
	return c
}

func newTrack(cfg pll.Config) *track {
	p, err := pll.New(cfg)
	if err != nil {
		panic("mav: track config: " + err.Error()) // validated by Config.Validate
	}
	half := max(cfg.Window/2, 2)
	return &track{p: p, window: cfg.Window, every: max(cfg.Window/8, 1), ring: make([]int64, half),
		block: make([]sample, 0, cfg.Window)}
}

// add feeds one pair. Samples whose x does not advance are dropped: their
// y − x is never a new minimum of a clock that only moves forward.
func (t *track) add(x int64, y stamp.Time) {
	if x < 0 || y < 0 {
		t.stale++
		return
	}
	if t.haveLast && x <= t.lastX {
		t.stale++
		return
	}
	t.haveLast, t.lastX = true, x
	t.samples++
	o := t.p.Update(y, uint64(x))
	st := t.p.Status()
	if e := st.Relocks + st.Resets + st.Reverts; e != t.epoch {
		// A clock step or a restart: the fit so far ends here.
		t.closePiece()
		t.epoch = e
	}
	// Rejected while valid happens only on a re-lock: the sample is part
	// of the new fit.
	if o != pll.Accepted && !(o == pll.Rejected && t.p.Valid()) {
		t.rejected++
		return
	}
	t.accepted++
	if t.cur == nil {
		t.pieces = append(t.pieces, piece{first: x, firstY: y, minY: y})
		t.cur = &t.pieces[len(t.pieces)-1]
		t.ringN, t.ringPos, t.hasTail = 0, 0, false
		t.block = t.block[:0]
	}
	c := t.cur
	c.n++
	c.last = x
	if y < c.minY {
		c.minY = y
	}
	t.ring[t.ringPos] = x
	t.ringPos = (t.ringPos + 1) % len(t.ring)
	t.ringN = min(t.ringN+1, len(t.ring))
	oldest := t.ring[(t.ringPos-t.ringN+len(t.ring))%len(t.ring)]
	if ya, ok := t.p.Corrected(uint64(oldest)); ok {
		if yb, ok := t.p.Corrected(uint64(x)); ok {
			t.tail = [2]knot{{oldest, ya}, {x, yb}}
			t.hasTail = true
			if c.n%t.every == 0 && t.ringN == len(t.ring) {
				if len(c.knots) == 0 || oldest > c.knots[len(c.knots)-1].x {
					c.knots = append(c.knots, knot{oldest, ya})
				}
			}
		}
	}
	if c.n == t.window {
		// The first full window: its line replaces the early knots, which
		// came from lines fitted to fewer samples.
		if y0, ok := t.p.Corrected(uint64(c.first)); ok {
			if ya, ok := t.p.Corrected(uint64(oldest)); ok {
				c.knots = append(c.knots[:0], knot{c.first, y0}, knot{oldest, ya})
			}
		}
	}
	t.block = append(t.block, sample{x, y})
	if len(t.block) == cap(t.block) {
		t.noteGap()
	}
}

// noteGap records, for the block of samples just collected, the third
// smallest residual above the current line. The line rests on two of the
// block's points, so the smallest two residuals are about 0; the third
// lies above the line by about the spacing of the fastest delays, which
// for delays with an exponential tail is the scale of the smallest delay
// itself: how far the fitted floor typically lies above the true one, the
// estimate's uncertainty.
func (t *track) noteGap() {
	defer func() { t.block = t.block[:0] }()
	if !t.hasTail || len(t.block) < 3 {
		return
	}
	m := [3]float64{math.Inf(1), math.Inf(1), math.Inf(1)}
	for _, s := range t.block {
		r := float64(s.y - lineAt(t.tail[0], t.tail[1], s.x))
		switch {
		case r < m[0]:
			m = [3]float64{r, m[0], m[1]}
		case r < m[1]:
			m[1], m[2] = r, m[1]
		case r < m[2]:
			m[2] = r
		}
	}
	t.cur.gapSum += math.Max(m[2]-m[0], 0)
	t.cur.gapN++
}

// closePiece ends the current piece with the last fitted line.
func (t *track) closePiece() {
	c := t.cur
	if c == nil {
		return
	}
	if len(t.block) >= 3 && c.gapN == 0 {
		t.noteGap()
	}
	if t.hasTail {
		for _, k := range t.tail {
			if len(c.knots) == 0 || k.x > c.knots[len(c.knots)-1].x {
				c.knots = append(c.knots, k)
			}
		}
	}
	if len(c.knots) == 0 {
		// Too few samples for a valid fit: the lowest sample, at the
		// nominal rate.
		c.knots = []knot{{c.first, c.minY}}
	}
	t.cur = nil
}

// finish closes the track and returns its pieces.
func (t *track) finish() []piece {
	t.closePiece()
	return t.pieces
}

// lineAt evaluates the line through a and b at x (b.x > a.x; a single
// point is taken at the nominal rate, 1 µs per µs), in int64 ns from a.y
// so that nothing is lost at Unix stamps near 2^61 ns.
func lineAt(a, b knot, x int64) stamp.Time {
	return lineFrom(a, slopeOf(a, b), x)
}

// slopeOf is the slope (ns per µs) of the line through a and b.
func slopeOf(a, b knot) float64 {
	if b.x != a.x {
		return float64(b.y-a.y) / float64(b.x-a.x)
	}
	return 1e3
}

// lineFrom evaluates the line through a of slope m at x.
func lineFrom(a knot, m float64, x int64) stamp.Time {
	return a.y.Add(time.Duration(math.Round(m * float64(x-a.x))))
}

// Map maps a device clock (µs) to another clock (ns): the pieces of a
// track, each a piecewise-linear curve through its knots.
type Map struct {
	pieces []piece
	// slope is the rate (ns per µs) of the longest piece, used to
	// extrapolate beyond the ends of a piece.
	slope float64
}

// newMap returns the map of a finished track's pieces (in order of x).
// A short piece (under minN samples) whose line lies above a longer
// neighbour's is dropped: its samples were late (a backlog flushed when a
// link came up, a burst of delay the fit locked onto), not a clock state.
func newMap(p []piece, minN int) *Map {
	var out []piece
	for _, q := range p {
		if q.n > 0 && len(q.knots) > 0 {
			out = append(out, q)
		}
	}
	for changed := true; changed && len(out) > 1; {
		changed = false
		for i := range out {
			q := &out[i]
			if q.n >= minN {
				continue
			}
			mid := (q.first + q.last) / 2
			own := pieceAt(q, mid, 1e3)
			for _, j := range []int{i - 1, i + 1} {
				if j < 0 || j >= len(out) || out[j].n <= q.n {
					continue
				}
				if own >= pieceAt(&out[j], mid, pieceSlope(&out[j])) {
					out = append(out[:i], out[i+1:]...)
					changed = true
					break
				}
			}
			if changed {
				break
			}
		}
	}
	if len(out) == 0 {
		return nil
	}
	m := &Map{pieces: out, slope: 1e3}
	best := &out[0]
	for i := range out {
		if out[i].last-out[i].first > best.last-best.first {
			best = &out[i]
		}
	}
	m.slope = pieceSlope(best)
	return m
}

// pieceSlope is the end-to-end rate of a piece (1e3 ns/µs if unknown).
func pieceSlope(q *piece) float64 {
	k := q.knots
	if len(k) < 2 || k[len(k)-1].x == k[0].x {
		return 1e3
	}
	return float64(k[len(k)-1].y-k[0].y) / float64(k[len(k)-1].x-k[0].x)
}

// pieceAt evaluates a piece at x: its knots interpolated, extrapolated at
// the given slope beyond them.
func pieceAt(q *piece, x int64, slope float64) stamp.Time {
	k := q.knots
	switch {
	case x <= k[0].x:
		return k[0].y.Add(time.Duration(math.Round(slope * float64(x-k[0].x))))
	case x >= k[len(k)-1].x:
		l := k[len(k)-1]
		return l.y.Add(time.Duration(math.Round(slope * float64(x-l.x))))
	}
	i, _ := slices.BinarySearchFunc(k, x, knotAt)
	return lineAt(k[i-1], k[i], x)
}

// at maps device time x (µs). Within a piece the knots are interpolated;
// between pieces the nearer piece applies; before the first and after the
// last knot of a piece it is extrapolated at the rate of the longest piece
// (a short piece's own end slope is noisy).
func (m *Map) at(x int64) stamp.Time {
	return pieceAt(m.piece(x), x, m.slope)
}

func (m *Map) piece(x int64) *piece {
	p := m.pieces
	i := slices.IndexFunc(p, func(q piece) bool { return x <= q.last })
	switch {
	case i < 0:
		return &p[len(p)-1]
	case i == 0 || x >= p[i].first:
		return &p[i]
	}
	// Between pieces i−1 and i: the nearer one.
	if x-p[i-1].last < p[i].first-x {
		return &p[i-1]
	}
	return &p[i]
}

// mapCursor evaluates a Map as at does, remembering the piece and the
// knot segment of the last x: the next x in the same or the following
// segment needs no search, and one in the same segment no division.
type mapCursor struct {
	m *Map
	q *piece
	i int // k[i−1].x < x ≤ k[i].x for the last x inside q's knots; 0: none
	// slope is that of segment si of piece sq (si 0: none).
	slope float64
	sq    *piece
	si    int
}

func (c *mapCursor) at(x int64) stamp.Time {
	q := c.m.piece(x)
	k := q.knots
	if x <= k[0].x || x >= k[len(k)-1].x {
		return pieceAt(q, x, c.m.slope)
	}
	if q != c.q {
		c.q, c.i = q, 0
	}
	// The segment pieceAt's search finds: the first knot at or after x.
	i := c.i
	switch {
	case i > 0 && k[i-1].x < x && x <= k[i].x:
	case i > 0 && i+1 < len(k) && k[i].x < x && x <= k[i+1].x:
		i++
	default:
		i, _ = slices.BinarySearchFunc(k, x, knotAt)
	}
	c.i = i
	if i != c.si || q != c.sq {
		c.slope, c.si, c.sq = slopeOf(k[i-1], k[i]), i, q
	}
	return lineFrom(k[i-1], c.slope, x)
}

// offsetAt returns y − x (ns) at device time x.
func (m *Map) offsetAt(x int64) time.Duration { return time.Duration(m.at(x) - stamp.Time(x*1e3)) }

// inverse maps y (ns) back to device time (µs), within the piece whose y
// range holds it (the nearest otherwise).
func (m *Map) inverse(y stamp.Time) int64 {
	best, bestD := &m.pieces[0], time.Duration(math.MaxInt64)
	for i := range m.pieces {
		q := &m.pieces[i]
		lo, hi := m.at(q.first), m.at(q.last)
		d := time.Duration(0)
		if y < lo {
			d = time.Duration(lo - y)
		} else if y > hi {
			d = time.Duration(y - hi)
		}
		if d < bestD {
			best, bestD = q, d
		}
	}
	// Newton on the piecewise-linear curve: slopes are 1e3 ns/µs within
	// MaxSkewPPM, so a few steps land on it.
	x := best.first
	for range 5 {
		f := time.Duration(m.at(x) - y)
		x -= int64(math.Round(float64(f) / 1e3))
	}
	return x
}

// span returns the x range the map's samples cover.
func (m *Map) span() (int64, int64) {
	return m.pieces[0].first, m.pieces[len(m.pieces)-1].last
}

// uncertainty is the mean gap (ns) of the map's pieces, weighted by blocks.
func (m *Map) uncertainty() float64 {
	var s float64
	var n int
	for _, q := range m.pieces {
		s += q.gapSum
		n += q.gapN
	}
	if n == 0 {
		return math.NaN()
	}
	return s / float64(n)
}

// skewPPM is the map's rate error (Δy/Δx − 1e3)/1e3 · 1e6 over its
// longest piece.
func (m *Map) skewPPM() float64 { return (m.slope/1e3 - 1) * 1e6 }

// knotAt orders knot a against abscissa x, for slices.BinarySearchFunc.
func knotAt(a knot, x int64) int { return cmp.Compare(a.x, x) }
