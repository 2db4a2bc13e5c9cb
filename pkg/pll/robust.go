package pll

import (
	"github.com/timealign/timealign/internal/hull"
	"math"
	"time"

	"github.com/timealign/timealign/pkg/stamp"
)

// robust is the common frame of the Regression, Envelope and Offset modes:
// warm-up and locking on FIFOSize consistent samples, gating, re-locking on
// a consistent run of rejected samples, validity. Coordinates are float64
// offsets from a base sample: x in ticks, y in nanoseconds (exact below
// 2^53, about 104 days of nanoseconds).
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
	spread     float64
	recent     ring // accepted samples: the FIFO
	cand       ring // warm-up / re-lock candidates
	line       line
	reg        ewls
	env        hull.Switching
	window     int
	omin       minDeque
}

// line is y = y0 + m·(x − x0).
type line struct{ m, x0, y0 float64 }

func (l line) at(x float64) float64 { return l.y0 + l.m*(x-l.x0) }

func (b *robust) init(cfg Config) {
	b.mode, b.trackSkew, b.window = cfg.Mode, cfg.TrackSkew, cfg.Window
	b.recent = newRing(cfg.FIFOSize)
	b.cand = newRing(cfg.FIFOSize)
	switch {
	case cfg.Mode == Envelope || (cfg.Mode == Offset && cfg.TrackSkew):
	case cfg.Mode == Offset:
		b.omin = newMinDeque(cfg.Window)
	}
}

func (b *robust) reset() {
	b.locked, b.everLocked, b.hasSeen, b.invalid, b.spreadOK, b.spread = false, false, false, 0, false, 0
	b.recent.clear()
	b.cand.clear()
}

func (b *robust) valid() bool { return b.locked && b.invalid == 0 && b.spreadOK }

func (b *robust) usesHull() bool { return b.mode == Envelope || (b.mode == Offset && b.trackSkew) }

func (b *robust) xy(s *sample) (x, y float64) {
	// Plain int64 difference: receive times within ±292 years of the base
	// (anything else is rejected by the gate as inconsistent anyway).
	return float64(int64(s.t - b.base.t)), float64(int64(s.r) - int64(b.base.r))
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
	if !b.locked {
		p.addCandidate(s)
		if b.cand.full() && p.candidateFits() {
			p.lock()
			return Accepted
		}
		return Warming
	}
	ok := int64(t-b.lastT) > 0
	if !ok {
		p.st.Stale++
	} else {
		x, y := b.xy(&s)
		res := y - b.line.at(x)
		if b.mode == Regression {
			ok = math.Abs(res) < p.maxDev
		} else {
			ok = res >= -p.maxEarly && res < p.maxDev
		}
	}
	if ok {
		b.invalid = 0
		b.cand.clear()
		p.accept(s)
		p.refit()
		return Accepted
	}
	b.invalid++
	p.addCandidate(s)
	if b.cand.full() && p.candidateFits() {
		if int64(b.cand.at(0).t-b.lastT) <= 0 {
			p.st.Reboots++
		}
		p.st.Relocks++
		p.lock()
		return Rejected
	}
	if b.invalid >= p.cfg.MaxInvalid {
		p.st.Resets++
		b.locked = false
		b.recent.clear()
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

// lock starts a new fit from the candidates.
func (p *PLL) lock() {
	b := &p.rb
	b.base = *b.cand.at(0)
	b.recent.clear()
	b.reg = ewls{}
	b.env.Clear()
	b.omin.clear()
	for i := range b.cand.count {
		p.accept(*b.cand.at(i))
	}
	b.cand.clear()
	b.locked, b.everLocked, b.invalid = true, true, 0
	p.refit()
}

// accept adds s to the FIFO and the estimator.
func (p *PLL) accept(s sample) {
	b := &p.rb
	b.lastT = s.t
	b.recent.push(s)
	// Rebase when offsets grow large, so float64 keeps full precision.
	if x, _ := b.xy(&s); math.Abs(x) > 1<<50 {
		p.rebase(s)
	}
	x, y := b.xy(&s)
	switch {
	case b.mode == Regression:
		b.reg.add(x, y, 1-1/float64(b.window))
	case b.usesHull():
		b.env.Push(x, y)
		if b.env.Young().Count() >= b.window {
			b.env.Switch()
		}
	default:
		b.omin.push(x, y-p.nominal*x)
	}
}

// rebase moves the origin to s (rare: after 2^50 ticks). The estimators
// restart from the FIFO.
func (p *PLL) rebase(s sample) {
	b := &p.rb
	b.base = s
	b.reg = ewls{}
	b.env.Clear()
	b.omin.clear()
	for i := range b.recent.count {
		q := b.recent.at(i)
		if int64(q.t-s.t) > 0 {
			continue
		}
		x, y := b.xy(q)
		switch {
		case b.mode == Regression:
			b.reg.add(x, y, 1-1/float64(b.window))
		case b.usesHull():
			b.env.Push(x, y)
		default:
			b.omin.push(x, y-p.nominal*x)
		}
	}
}

// refit recomputes the line and the FIFO's agreement with it.
func (p *PLL) refit() {
	b := &p.rb
	switch {
	case b.mode == Regression:
		// Slope: exponentially forgotten least squares over ~Window
		// samples; intercept: least squares over the FIFO given the slope.
		m := p.nominal
		if b.reg.cxx > 0 {
			m = p.clampSlope(b.reg.cxy / b.reg.cxx)
		}
		var sx, sy float64
		for i := range b.recent.items() {
			x, y := b.xy(&b.recent.buf[i])
			sx += x
			sy += y
		}
		n := float64(b.recent.count)
		b.line = line{m: m, x0: sx / n, y0: sy / n}
	case b.usesHull():
		b.line = fitEnvelope(b.env.Answering(), p.nominal, p.minSlope, p.maxSlo)
	default:
		b.line = line{m: p.nominal, x0: 0, y0: b.omin.min()}
	}
	b.spread, b.spreadOK = 0, true
	for i := range b.recent.items() {
		x, y := b.xy(&b.recent.buf[i])
		d := math.Abs(y - b.line.at(x))
		if d > b.spread {
			b.spread = d
		}
		if !(d < p.maxDev) {
			b.spreadOK = false
		}
	}
}

func (p *PLL) correctedRobust(u uint64) (stamp.Time, bool) {
	b := &p.rb
	if !b.valid() {
		return 0, false
	}
	return at(b.base.r, b.line.at(float64(int64(u-b.base.t))))
}

func (p *PLL) robustStatus(s *Status) {
	b := &p.rb
	s.Fill = b.recent.count
	if !b.locked {
		s.Fill = b.cand.count
		return
	}
	s.Invalid = b.invalid
	s.Spread = time.Duration(math.Round(math.Min(b.spread, 9e18)))
	s.SlopePPM = (b.line.m/p.nominal - 1) * 1e6
	x := float64(int64(b.lastT - b.base.t))
	if t, ok := at(b.base.r, b.line.at(x)); ok {
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
	e.mx += dx / e.w
	e.my += dy / e.w
	f := wOld / e.w
	e.cxx = lambda*e.cxx + f*dx*dx
	e.cxy = lambda*e.cxy + f*dx*dy
}

// fitEnvelope is the Zhang, Liu & Xia line of h with its slope held in
// [lo, hi]; with fewer than two vertices, the nominal slope.
func fitEnvelope(h *hull.Lower, nominal, lo, hi float64) line {
	switch h.Vertices() {
	case 0:
		return line{m: nominal}
	case 1:
		l := h.Support(nominal)
		return line{m: nominal, x0: l.X0, y0: l.Y0}
	}
	l, _ := h.Fit(lo, hi)
	return line{m: l.M, x0: l.X0, y0: l.Y0}
}

// minDeque is the minimum of v over the last n pushes (monotone deque).
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

func (d *minDeque) push(_, v float64) {
	c := len(d.v)
	for d.size > 0 {
		k := (d.head + d.size - 1) % c
		if d.v[k] < v {
			break
		}
		d.size--
	}
	for d.size > 0 && d.seq[d.head] <= d.next-d.n {
		d.head = (d.head + 1) % c
		d.size--
	}
	k := (d.head + d.size) % c
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
