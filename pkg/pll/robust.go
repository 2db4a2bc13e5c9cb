package pll

import (
	"math"
	"time"

	"github.com/timealign/timealign/internal/hull"
	"github.com/timealign/timealign/pkg/stamp"
)

// robust is the common frame of the Regression, Envelope and Offset modes:
// warm-up and locking on FIFOSize consistent samples, gating, re-locking on
// a consistent run of rejected samples, validity. Coordinates are offsets
// from a base sample: x in ticks, y in nanoseconds, held as int64 in the
// FIFO and as float64 (exact below 2^53; the base moves before offsets
// pass 2^50) in the estimators.
type robust struct {
	mode       Mode
	trackSkew  bool
	locked     bool
	everLocked bool
	base       sample
	lastT      uint64 // last accepted tick
	lastSeen   uint64 // last tick seen (duplicates)
	hasSeen    bool
	invalid    int
	spreadOK   bool
	// The spread bound (see refit): the reference line, the FIFO's spread
	// around it, and whether an exact pass is due.
	ref       hull.Line
	refSpread float64
	refStale  bool
	fifo      ptRing // accepted samples: the FIFO, as offsets from base
	sx, sy    int64  // sums of the FIFO's x and y (wrapping, exact)
	invN      float64
	cand      ring // warm-up / re-lock candidates
	line      hull.Line
	reg       ewls
	lambda    float64        // Regression: the slope memory's forgetting factor
	env       hull.Switching // Envelope (and Offset with TrackSkew)
	window    int
	omin      minDeque
	guard     excursionGuard // earlier fits, against a passing excursion (excursion.go)
	since     int            // samples accepted since the lock (or the restored fit's)
	late      float64        // recent share of accepted samples more than MaxEarly above the line
	tails     tailShares     // recent shares of accepted samples above the line by each of tailAt

	// Regression's outlier filter: a sample whose residual lies more than
	// oThr from oMed does not enter the fit. Both come from the residuals
	// (median, MAD) of the last outlierRecord(FIFOSize) gated samples.
	outlierZ   float64
	outlierMin float64
	oMed, oThr float64
	oReady     bool
	res        []float64 // residuals of gated samples, filled in order
	resN       int       // next write
	resSince   int       // residuals noted since the last refresh
	scratch    []float64
}

// outlierRecord is how many residuals the outlier bounds are computed
// from: 4·FIFOSize, at least 32 (a MAD of 7 values is too noisy a scale).
func outlierRecord(fifo int) int { return max(4*fifo, 32) }

// pt is a FIFO sample as offsets from the base sample.
type pt struct{ x, y int64 }

// ptRing is a fixed-capacity FIFO of points; pushing onto a full ring
// drops (and returns) the oldest.
type ptRing struct {
	buf   []pt
	head  int
	count int
}

func (q *ptRing) push(v pt) (old pt, dropped bool) {
	if q.count == len(q.buf) {
		old, dropped = q.buf[q.head], true
	} else {
		q.count++
	}
	q.buf[q.head] = v
	q.head++
	if q.head == len(q.buf) {
		q.head = 0
	}
	return old, dropped
}

func (q *ptRing) newest() pt {
	if q.head == 0 {
		return q.buf[len(q.buf)-1]
	}
	return q.buf[q.head-1]
}

func (q *ptRing) oldest() pt {
	if q.count < len(q.buf) {
		return q.buf[0]
	}
	return q.buf[q.head]
}

func (b *robust) init(cfg Config) {
	b.mode, b.trackSkew, b.window = cfg.Mode, cfg.TrackSkew, cfg.Window
	b.fifo = ptRing{buf: make([]pt, cfg.FIFOSize)}
	b.cand = newRing(cfg.FIFOSize)
	b.lambda = 1 - 1/float64(cfg.Window)
	b.invN = 1 / float64(cfg.FIFOSize)
	b.guard.init(cfg)
	switch {
	case cfg.Mode == Envelope || (cfg.Mode == Offset && cfg.TrackSkew):
		b.env.Grow(2*cfg.Window + 1) // the points between two switches: no allocation after New
	case cfg.Mode == Offset:
		b.omin = newMinDeque(cfg.Window)
	case cfg.Mode == Regression && cfg.OutlierZ > 0:
		b.outlierZ = cfg.OutlierZ * 1.4826 // MAD → σ of a normal
		b.outlierMin = float64(cfg.OutlierMin)
		n := outlierRecord(cfg.FIFOSize)
		b.res, b.scratch = make([]float64, n), make([]float64, n)
	}
}

func (b *robust) clearFIFO() {
	b.fifo.head, b.fifo.count, b.sx, b.sy = 0, 0, 0, 0
	b.refStale = true
}

func (b *robust) reset() {
	b.locked, b.everLocked, b.hasSeen, b.invalid, b.spreadOK, b.refStale = false, false, false, 0, false, true
	b.clearFIFO()
	b.cand.clear()
	b.guard.clear()
}

func (b *robust) valid() bool { return b.locked && b.invalid == 0 && b.spreadOK }

func (b *robust) usesHull() bool { return b.mode == Envelope || (b.mode == Offset && b.trackSkew) }

// off returns s as offsets from the base: ticks as the wrapping
// difference of unwrapped ticks, receive times saturated to ±MaxInt64 ns
// (a wrapped difference would put a receive time 2^64 ns away, MinInt64
// after MaxInt64, right back on the line).
func (b *robust) off(s *sample) pt {
	return pt{int64(s.t - b.base.t), int64(s.r.Sub(b.base.r))}
}

func (p *PLL) clampSlope(m float64) float64 {
	switch {
	case m >= p.minSlope && m <= p.maxSlo:
		return m
	case m > p.maxSlo:
		return p.maxSlo
	case m < p.minSlope:
		return p.minSlope
	}
	return p.nominal // NaN
}

// updateRobust gates one sample against the current fit.
func (p *PLL) updateRobust(r stamp.Time, t uint64) Outcome {
	b := &p.rb
	if b.hasSeen && t == b.lastSeen {
		return Duplicate
	}
	b.hasSeen, b.lastSeen = true, t
	s := sample{r: r, t: t, s: p.scan.last}
	b.guard.tick(b.window)
	if !b.locked {
		p.addCandidate(s)
		if b.cand.full() && p.candidateFits() {
			p.lock()
			return Accepted
		}
		return Warming
	}
	ok := int64(t-b.lastT) > 0
	outlier := false
	var res float64
	if !ok {
		p.st.Stale++
	} else {
		o := b.off(&s)
		res = float64(o.y) - b.line.At(float64(o.x))
		if b.mode == Regression {
			ok = math.Abs(res) < p.maxDev
			if ok && b.outlierZ > 0 {
				outlier = b.oReady && math.Abs(res-b.oMed) > b.oThr
				b.noteResidual(res)
			}
		} else {
			ok = res >= -p.maxEarly && res < p.maxDev
		}
	}
	if ok && !outlier {
		b.invalid = 0
		b.cand.clear()
		p.guardAccepting(s, res)
		p.accept(s)
		p.refit()
		p.guardAccepted(s, res)
		return Accepted
	}
	b.guard.resetRun()
	if outlier {
		// Within MaxDeviation: consistent, as far as validity goes.
		p.st.Outliers++
		b.invalid = 0
	} else {
		b.invalid++
	}
	p.addCandidate(s)
	if b.cand.full() && p.candidateFits() {
		if int64(b.cand.at(0).t-b.lastT) <= 0 {
			p.st.Reboots++
			b.guard.clear() // the ticks start over: no earlier fit applies
		}
		p.st.Relocks++
		p.lock()
		if outlier {
			return Outlier
		}
		return Rejected
	}
	if outlier {
		return Outlier
	}
	if b.invalid >= p.cfg.MaxInvalid {
		p.st.Resets++
		b.locked = false
		b.clearFIFO()
		// Keep the candidates: they are the newest samples and start the
		// next warm-up.
	}
	return Rejected
}

// addCandidate appends s to the candidate run, restarting the run if the
// ticks do not increase.
func (p *PLL) addCandidate(s sample) {
	c := &p.rb.cand
	if c.count > 0 && int64(s.t-c.last().t) <= 0 {
		c.clear()
	}
	c.push(s)
}

// candidateFits reports whether the candidates lie within MaxDeviation of
// their own least-squares line (slope bounded by MaxSkewPPM).
func (p *PLL) candidateFits() bool {
	c := &p.rb.cand
	b0 := *c.at(0)
	var sx, sy float64
	n := float64(c.count)
	for i := range c.count {
		s := c.at(i)
		sx += float64(int64(s.t - b0.t))
		sy += float64(s.r.Sub(b0.r))
	}
	mx, my := sx/n, sy/n
	var cxx, cxy float64
	for i := range c.count {
		s := c.at(i)
		dx := float64(int64(s.t-b0.t)) - mx
		cxx += dx * dx
		cxy += dx * (float64(s.r.Sub(b0.r)) - my)
	}
	m := p.nominal
	if cxx > 0 {
		m = p.clampSlope(cxy / cxx)
	}
	for i := range c.count {
		s := c.at(i)
		x, y := float64(int64(s.t-b0.t)), float64(s.r.Sub(b0.r))
		if !(math.Abs(y-(my+m*(x-mx))) < p.maxDev) {
			return false
		}
	}
	return true
}

// lock starts a new fit from the candidates, or restores a kept fit
// when they lie on it (see excursionGuard).
func (p *PLL) lock() {
	b := &p.rb
	if p.guardLock() {
		return
	}
	b.base, b.since, b.late, b.tails = *b.cand.at(0), 0, 0, tailShares{}
	b.reg = ewls{}
	b.env.Clear()
	b.omin.clear()
	p.takeCandidates()
	b.resN, b.resSince, b.oReady = 0, 0, false
}

// takeCandidates makes the candidates the FIFO of the current fit (its
// estimator holding them too) and locks it.
func (p *PLL) takeCandidates() {
	b := &p.rb
	b.clearFIFO()
	for i := range b.cand.count {
		p.accept(*b.cand.at(i))
	}
	b.cand.clear()
	b.locked, b.everLocked, b.invalid = true, true, 0
	p.refit()
}

// rebaseAt is how far (ticks or ns) offsets may grow before the base moves.
const rebaseAt = 1 << 50

// accept adds s to the FIFO and the estimator.
func (p *PLL) accept(s sample) {
	b := &p.rb
	b.lastT = s.t
	b.since++
	o := b.off(&s)
	// Move the base when offsets grow large, so float64 keeps full
	// precision.
	if o.x > rebaseAt || o.x < -rebaseAt || o.y > rebaseAt || o.y < -rebaseAt {
		p.rebase(s)
		o = pt{}
	}
	if old, dropped := b.fifo.push(o); dropped {
		b.sx -= old.x
		b.sy -= old.y
	}
	b.sx += o.x
	b.sy += o.y
	x, y := float64(o.x), float64(o.y)
	switch {
	case b.mode == Regression:
		b.reg.add(x, y, b.lambda)
	case b.usesHull():
		b.env.Push(x, y)
		if b.env.Young().Count() >= b.window {
			b.env.Switch()
		}
	default:
		b.omin.push(y - p.nominal*x)
	}
}

// rebase moves the origin to s (rare: offsets beyond 2^50). Everything is
// translated; nothing is forgotten.
func (p *PLL) rebase(s sample) {
	b := &p.rb
	d := b.off(&s)
	b.base = s
	b.sx, b.sy = 0, 0
	for i := range b.fifo.count {
		q := &b.fifo.buf[i]
		q.x -= d.x
		q.y -= d.y
		b.sx += q.x
		b.sy += q.y
	}
	dx, dy := float64(d.x), float64(d.y)
	b.reg.mx -= dx
	b.reg.my -= dy
	b.env.Shift(dx, dy)
	b.omin.shift(dy - p.nominal*dx)
	b.line.X0 -= dx
	b.line.Y0 -= dy
	b.refStale = true
}

// refit recomputes the line and the FIFO's agreement with it.
func (p *PLL) refit() {
	b := &p.rb
	switch {
	case b.mode == Regression:
		// Slope: exponentially forgotten least squares over ~Window
		// samples; intercept: least squares over the FIFO given the slope
		// (the line through the FIFO's mean).
		m := p.nominal
		if b.reg.cxx > 0 {
			m = p.clampSlope(b.reg.cxy / b.reg.cxx)
		}
		if b.fifo.count == len(b.fifo.buf) {
			b.line = hull.Line{M: m, X0: float64(b.sx) * b.invN, Y0: float64(b.sy) * b.invN}
		} else {
			n := float64(b.fifo.count)
			b.line = hull.Line{M: m, X0: float64(b.sx) / n, Y0: float64(b.sy) / n}
		}
	case b.usesHull():
		// The line under all points of the window that minimizes the sum
		// of vertical distances (Zhang, Liu & Xia), its slope held within
		// the skew bounds (hull.Lower.Fit).
		h := b.env.Answering()
		if h.Vertices() < 2 {
			b.line = envelopeStart(h, p.nominal)
			break
		}
		b.line, _ = h.Fit(p.minSlope, p.maxSlo)
	default:
		b.line = hull.Line{M: p.nominal, X0: 0, Y0: b.omin.min()}
	}
	// Validity needs every FIFO sample within MaxDeviation of the line.
	// Rather than a pass over the FIFO per update, bound the spread: it is
	// at most the spread around the line of the last exact pass (ref), grown
	// by the residuals around ref of the samples added since, plus how far
	// the line moved from ref over the FIFO's tick range (a linear function
	// of x, so the larger of its ends). Only when that bound reaches
	// MaxDeviation is the exact pass made (amortized rarely).
	if b.fifo.count > 0 && !b.refStale {
		q := b.fifo.newest()
		if d := math.Abs(float64(q.y) - b.ref.At(float64(q.x))); d > b.refSpread {
			b.refSpread = d
		}
		xa, xb := float64(b.fifo.oldest().x), float64(q.x)
		moved := math.Abs(b.line.At(xa) - b.ref.At(xa))
		if d := math.Abs(b.line.At(xb) - b.ref.At(xb)); d > moved {
			moved = d
		}
		if b.refSpread+moved+1 < p.maxDev {
			b.spreadOK = true
		} else {
			b.refStale = true
		}
	}
	if b.fifo.count == 0 || b.refStale {
		b.spreadOK = b.exactSpread() < p.maxDev // false for NaN
	}
}

// exactSpread computes max |y − line(x)| over the FIFO, and makes the line
// the reference of the spread bound.
func (b *robust) exactSpread() float64 {
	d := b.spreadAround(b.line)
	b.ref, b.refSpread, b.refStale = b.line, d, false
	return d
}

// spreadAround returns max |y − l(x)| over the FIFO.
func (b *robust) spreadAround(l hull.Line) float64 {
	// max(hi − c, c − lo) where c is the line's value at x = 0 and hi, lo
	// bound y − m·x.
	m := l.M
	c := l.Y0 - m*l.X0
	hi, lo := c, c
	for _, q := range b.fifo.buf[:b.fifo.count] {
		v := float64(q.y) - m*float64(q.x)
		if v > hi {
			hi = v
		}
		if v < lo {
			lo = v
		}
	}
	return max(hi-c, c-lo)
}

// noteResidual records the residual of a sample within MaxDeviation
// in a ring of the last outlierRecord(FIFOSize) (outliers included: the
// median and the MAD ignore a minority of them, and leaving them out would
// shrink the scale that rejects them). When the ring first fills, and then
// every 4 turns of it (the scale changes slowly; the selections cost
// O(ring) each), it sets Regression's outlier bounds: the median residual,
// and OutlierZ robust standard deviations (1.4826·MAD, at least OutlierMin)
// around it.
func (b *robust) noteResidual(res float64) {
	b.res[b.resN] = res
	b.resN++
	if b.resN == len(b.res) {
		b.resN = 0
	}
	b.resSince++
	if b.resSince < len(b.res) || (b.oReady && b.resSince < 4*len(b.res)) {
		return
	}
	b.resSince = 0
	r := b.scratch
	copy(r, b.res)
	med := selectMedian(r)
	for i := range r {
		r[i] = math.Abs(r[i] - med)
	}
	b.oMed = med
	b.oThr = max(b.outlierZ*selectMedian(r), b.outlierMin)
	b.oReady = true
}

// selectMedian returns the upper median of v (len(v) ≥ 1), reordering v
// (Hoare's selection, expected O(len(v))).
func selectMedian(v []float64) float64 {
	k := len(v) / 2
	lo, hi := 0, len(v)-1
	for lo < hi {
		pivot := v[lo+(hi-lo)/2]
		i, j := lo, hi
		for i <= j {
			for v[i] < pivot {
				i++
			}
			for v[j] > pivot {
				j--
			}
			if i <= j {
				v[i], v[j] = v[j], v[i]
				i++
				j--
			}
		}
		switch {
		case k <= j:
			hi = j
		case k >= i:
			lo = i
		default:
			return v[k]
		}
	}
	return v[k]
}

func (p *PLL) correctedRobust(u uint64) (stamp.Time, bool) {
	b := &p.rb
	if !b.valid() {
		return 0, false
	}
	return at(b.base.r, b.line.At(float64(int64(u-b.base.t))))
}

func (p *PLL) robustStatus(s *Status) {
	b := &p.rb
	s.Fill = b.fifo.count
	if !b.locked {
		s.Fill = b.cand.count
		return
	}
	s.Invalid = b.invalid
	s.Spread = time.Duration(math.Round(math.Min(b.spreadAround(b.line), 9e18)))
	s.SlopePPM = (b.line.M/p.nominal - 1) * 1e6
	x := float64(int64(b.lastT - b.base.t))
	if t, ok := at(b.base.r, b.line.At(x)); ok {
		s.Offset = t.Sub(stamp.Time(0)) - time.Duration(float64(int64(b.lastT))*p.nominal)
	}
}

// ewls holds exponentially weighted means and co-moments of (x, y).
type ewls struct{ w, mx, my, cxx, cxy float64 }

// add adds (x, y) with weight 1 after scaling the old weights by lambda.
func (e *ewls) add(x, y, lambda float64) {
	wOld := e.w * lambda
	e.w = wOld + 1
	dx, dy := x-e.mx, y-e.my
	inv := 1 / e.w
	e.mx += dx * inv
	e.my += dy * inv
	f := wOld * inv
	e.cxx = lambda*e.cxx + f*dx*dx
	e.cxy = lambda*e.cxy + f*dx*dy
}

// envelopeStart returns the Envelope line of a hull of one point or none,
// too few for a slope: the line through the point, or through the base,
// at the nominal slope.
func envelopeStart(h *hull.Lower, nominal float64) hull.Line {
	if h.Vertices() == 0 {
		return hull.Line{M: nominal}
	}
	return h.Support(nominal)
}

// minDeque is the minimum of v over the last n pushes (monotone deque in a
// ring of n entries).
type minDeque struct {
	seq  []int
	v    []float64
	head int
	size int
	n    int
	next int
}

func newMinDeque(n int) minDeque {
	return minDeque{seq: make([]int, n), v: make([]float64, n), n: n}
}

func (d *minDeque) clear() { d.head, d.size, d.next = 0, 0, 0 }

// copyFrom makes d a copy of o, in d's memory when it has room.
func (d *minDeque) copyFrom(o *minDeque) {
	if len(d.v) < len(o.v) {
		d.seq, d.v = make([]int, len(o.seq)), make([]float64, len(o.v))
	}
	copy(d.seq, o.seq)
	copy(d.v, o.v)
	d.head, d.size, d.n, d.next = o.head, o.size, o.n, o.next
}

// shift subtracts dv from every value.
func (d *minDeque) shift(dv float64) {
	for i := range d.v {
		d.v[i] -= dv
	}
}

func (d *minDeque) push(v float64) {
	c := len(d.v)
	for d.size > 0 {
		k := d.head + d.size - 1
		if k >= c {
			k -= c
		}
		if d.v[k] < v {
			break
		}
		d.size--
	}
	for d.size > 0 && d.seq[d.head] <= d.next-d.n {
		d.head++
		if d.head == c {
			d.head = 0
		}
		d.size--
	}
	k := d.head + d.size
	if k >= c {
		k -= c
	}
	d.seq[k], d.v[k] = d.next, v
	d.size++
	d.next++
}

func (d *minDeque) min() float64 {
	if d.size == 0 {
		return 0
	}
	return d.v[d.head]
}
