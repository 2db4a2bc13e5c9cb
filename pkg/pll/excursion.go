package pll

import (
	"math"
	"time"

	"github.com/timealign/timealign/internal/hull"
)

// excursionGuard keeps earlier fits of the Envelope and Offset modes
// against a passing excursion of the receive times: a host clock stepped
// back and forward again, or a ROS clock (use_sim_time) that lagged behind
// /clock under load, so that samples were stamped early for a while.
// Early samples pull those modes below the true line: each one up to
// MaxEarly under the line is a new latency minimum (and the line goes down
// with it, for the next one), and FIFOSize earlier than that re-lock. The
// later samples, back on the true line, would then be taken for latency
// above the new line until the excursion leaves the window, 1 to 2 windows
// later, the stamps early by the excursion all that time.
//
// A mature fit (it has accepted matureAfter samples since its lock, so a
// new latency minimum no longer moves it by MaxEarly) is copied every
// FIFOSize accepted samples, into two checkpoints: the older was taken
// between FIFOSize and 2·FIFOSize samples ago. When an accepted sample
// lies more than MaxEarly/10 under the line of the current fit or of the
// older checkpoint (the start of an excursion, or of a drift down too
// slow to see sample by sample), or a lock replaces the fit, the older
// checkpoint is held for Window updates. It is restored, with its whole
// window, when the samples come back to it:
//   - FIFOSize accepted samples in a row lie on it (none under it by more
//     than MaxEarly/10, none late by MaxDeviation, the lowest within
//     MaxEarly of it) while the current line lies more than MaxEarly under
//     each of them and under it; on a noisy stream, whose samples often lie
//     more than MaxEarly above its line anyway, the run must be so long
//     that its own latency would make it less likely than once in a
//     million (revertRun);
//   - or a run of at least FIFOSize accepted samples lies on it (as
//     above) and all came more than a threshold above the current line,
//     where a right line would see so long a run so high less often than
//     once in a million, by the shares of its samples that lay above each
//     threshold before the hold (tailShares, tailRunsLeft): a current line
//     tilted by an early sample that became a vertex of the hull errs, as
//     it is extrapolated, by a growing amount less than MaxEarly, and this
//     restores the held fit once that amount is clear of the stream's
//     latency (7 samples 1–1.4 ms above it for a latency of 0.5 ms mean,
//     34 for one uniform over 3 ms);
//   - or the candidates of a lock lie on it (on a stream that quiet).
//
// Status.Reverts counts the restorations. A step that lasts never comes
// back to the held fit and is followed as before; a new latency minimum
// leaves the lines within MaxEarly of each other. Cost: a residual against
// one more line per sample and nTails shares brought up to date, and a
// copy of the hull's vertices (or of the Offset mode's minima) every
// FIFOSize samples; memory: two more hulls.
type excursionGuard struct {
	ck    [2]fitCopy
	newer int // the checkpoint taken last
	count int // accepted samples since it
	held  int // the checkpoint held, or -1
	age   int // updates since it was held
	need  int // the run that restores it (revertRun; 0: never)
	run   int // consecutive accepted samples back on it
	low   float64
	// tailRun[j]: consecutive accepted samples back on it and more than
	// tailAt[j]·MaxEarly above the current line when they came; tailLow[j]:
	// the lowest of them against the held line.
	tailRun [nTails]int
	tailLow [nTails]float64
}

// fitCopy is a copy of a fit.
type fitCopy struct {
	ok    bool
	base  sample
	line  hull.Line
	lastT uint64
	since int
	late  float64
	tails tailShares
	env   hull.Switching
	omin  minDeque
}

// matureAfter is the number of accepted samples after which a fit is
// checkpointed.
func matureAfter(fifo int) int { return max(4*fifo, 32) }

// init allocates the checkpoints' memory, so that no copy allocates.
func (g *excursionGuard) init(cfg Config) {
	for i := range g.ck {
		switch {
		case cfg.Mode == Envelope || (cfg.Mode == Offset && cfg.TrackSkew):
			g.ck[i].env.Grow(2*cfg.Window + 1)
		case cfg.Mode == Offset:
			g.ck[i].omin = newMinDeque(cfg.Window)
		}
	}
	g.clear()
}

func (g *excursionGuard) clear() {
	g.ck[0].ok, g.ck[1].ok, g.count, g.held = false, false, 0, -1
	g.resetRun()
}

// resetRun ends the runs of samples back on the held fit.
func (g *excursionGuard) resetRun() {
	g.run = 0
	g.tailRun = [nTails]int{}
}

// tick ages the held checkpoint by one update: after window updates it is
// let go.
func (g *excursionGuard) tick(window int) {
	if g.held >= 0 {
		if g.age++; g.age > window {
			g.clear()
		}
	}
}

// older returns the older checkpoint (the only one, if only one is
// taken), or -1.
func (g *excursionGuard) older() int {
	o := 1 - g.newer
	switch {
	case g.ck[o].ok:
		return o
	case g.ck[g.newer].ok:
		return g.newer
	}
	return -1
}

// hold holds the older checkpoint, if any and none is held.
func (p *PLL) hold() {
	g := &p.rb.guard
	if g.held >= 0 {
		return
	}
	if g.held = g.older(); g.held >= 0 {
		g.age = 0
		g.resetRun()
		g.need = revertRun(p.cfg.FIFOSize, p.rb.window, g.ck[g.held].late)
	}
}

// revertRun is the run of samples back on a held fit that restores it: at
// least FIFOSize, and so long that the fit's own latency would put that
// many samples in a row more than MaxEarly above its line less often than
// once in a million (late: the share of its samples that lay so high); 0
// (never) where that needs more than a window.
func revertRun(fifo, window int, late float64) int {
	if late <= 0 {
		return fifo
	}
	if late >= 1 {
		return 0
	}
	k := math.Ceil(math.Log(1e-6) / math.Log(late))
	if k > float64(window) {
		return 0
	}
	return max(fifo, int(k))
}

// residual is the residual of s against the line of c.
func (c *fitCopy) residual(s *sample) float64 {
	return float64(s.r.Sub(c.base.r)) - c.line.At(float64(int64(s.t-c.base.t)))
}

// guardAccepting runs before s, with residual res against the current
// line, is accepted: it notes how high s lies, and holds the older
// checkpoint when s lies low.
func (p *PLL) guardAccepting(s sample, res float64) {
	b := &p.rb
	if b.mode == Regression {
		return
	}
	hi := 0.0
	if res > p.maxEarly {
		hi = 1
	}
	w := float64(min(b.since+1, b.window))
	b.late += (hi - b.late) / w
	b.tails.note(res/p.maxEarly, w)
	g := &b.guard
	if g.held >= 0 {
		return
	}
	tol := -p.maxEarly / 10
	if o := g.older(); o >= 0 && (res < tol || g.ck[o].residual(&s) < tol) {
		p.hold()
	}
}

// guardAccepted runs after s, with residual res against the line before
// it, was accepted: it restores the held checkpoint when the run back on
// it is long enough, and takes a checkpoint when one is due.
func (p *PLL) guardAccepted(s sample, res float64) {
	b := &p.rb
	if b.mode == Regression {
		return
	}
	g := &b.guard
	if g.held >= 0 {
		c := &g.ck[g.held]
		r, on := p.onHeld(c, &s)
		if !on {
			g.resetRun()
			return
		}
		if p.tailRunsLeft(c, res, r) {
			p.restore(false)
			return
		}
		if res <= p.maxEarly || res-r <= p.maxEarly {
			g.run = 0
			return
		}
		if g.run == 0 || r < g.low {
			g.low = r
		}
		if g.run++; g.need > 0 && g.run >= g.need && g.low < p.maxEarly {
			p.restore(false)
		}
		return
	}
	if b.since < matureAfter(p.cfg.FIFOSize) {
		return
	}
	if g.count++; g.count >= p.cfg.FIFOSize || !g.ck[g.newer].ok {
		w := 1 - g.newer
		if !g.ck[g.newer].ok {
			w = g.newer
		}
		c := &g.ck[w]
		c.ok, c.base, c.line, c.lastT, c.since, c.late, c.tails = true, b.base, b.line, b.lastT, b.since, b.late, b.tails
		c.env.CopyFrom(&b.env)
		c.omin.copyFrom(&b.omin)
		g.newer, g.count = w, 0
	}
}

// tailRunsLeft notes an accepted sample back on the held fit c (residual
// held against it, res against the current line when it came), and says
// whether the held fit is to be restored: for some threshold j, the last k
// ≥ FIFOSize accepted samples all lay on c, the lowest within MaxEarly of
// it, and all more than tailAt[j]·MaxEarly above the current line, where
// a right line would see that less often than once in a million
// (q^k < 10⁻⁶), q being the larger share of samples that lay so high
// above the held fit (before the hold) and above the current one (both
// over a window: the held fit must have accepted one, for its shares to
// stand for the stream and its floor to be found).
func (p *PLL) tailRunsLeft(c *fitCopy, res, held float64) bool {
	b := &p.rb
	g := &b.guard
	if p.maxEarly <= 0 || c.since < b.window {
		return false // shares of too few samples (and a floor still found)
	}
	for j := range nTails {
		if res <= tailAt[j]*p.maxEarly {
			g.tailRun[j] = 0
			continue
		}
		if g.tailRun[j] == 0 || held < g.tailLow[j] {
			g.tailLow[j] = held
		}
		g.tailRun[j]++
		k := g.tailRun[j]
		q := max(c.tails[j], b.tails[j], 1/float64(b.window))
		if k >= p.cfg.FIFOSize && g.tailLow[j] < p.maxEarly && float64(k)*math.Log(q) < math.Log(1e-6) {
			return true
		}
	}
	return false
}

// tailShares are the recent shares of accepted samples whose residual
// lies above a fit's line by more than each of tailAt[j]·MaxEarly: the
// lower part of the stream's latency as the fit sees it.
type tailShares [nTails]float64

// nTails thresholds from MaxEarly/40 up, each √2 times the one before:
// 0.25 ms to 11.3 ms for a MaxEarly of 10 ms.
const nTails = 12

// tailAt are the thresholds, as fractions of MaxEarly.
var tailAt = func() (f [nTails]float64) {
	for j := range f {
		f[j] = math.Pow(2, float64(j)/2) / 40
	}
	return f
}()

// note adds a residual (as a fraction of MaxEarly) with weight 1/w.
func (t *tailShares) note(res, w float64) {
	k := 1 / w
	for j := range t {
		t[j] -= t[j] * k
		if res > tailAt[j] {
			t[j] += k
		}
	}
}

// onHeld says whether s lies on the held fit c as its own samples would:
// not under it by more than MaxEarly/10 (the tail of the excursion must
// not come back with it), not late by MaxDeviation, after its last tick.
func (p *PLL) onHeld(c *fitCopy, s *sample) (res float64, ok bool) {
	res = c.residual(s)
	return res, int64(s.t-c.lastT) > 0 && res >= -p.maxEarly/10 && res < p.maxDev
}

// guardLock runs when the candidates are about to start a new fit: it
// restores the held checkpoint instead when they lie on it, and reports
// whether it did; otherwise the fit to be replaced is held (its older
// checkpoint).
func (p *PLL) guardLock() bool {
	b := &p.rb
	if b.mode == Regression || !b.everLocked {
		return false
	}
	p.hold()
	g := &b.guard
	if g.held < 0 || g.need == 0 || g.need > p.cfg.FIFOSize {
		return false // too noisy a fit for FIFOSize candidates to tell
	}
	c := &g.ck[g.held]
	low := math.Inf(1)
	for i := range b.cand.count {
		r, ok := p.onHeld(c, b.cand.at(i))
		if !ok {
			return false
		}
		low = min(low, r)
	}
	if low >= p.maxEarly {
		return false
	}
	p.restore(true)
	return true
}

// restore makes the held checkpoint the fit, adding to it the samples
// that came back to it: the candidates (fromCandidates) or the FIFO (the
// run of guardAccepted). Both checkpoints are let go.
func (p *PLL) restore(fromCandidates bool) {
	b := &p.rb
	if !fromCandidates {
		b.cand.clear()
		for i := range b.fifo.count {
			q := b.fifo.buf[(b.fifo.head-b.fifo.count+i+len(b.fifo.buf))%len(b.fifo.buf)]
			b.cand.push(sample{t: b.base.t + uint64(q.x), r: b.base.r.Add(time.Duration(q.y))})
		}
	}
	g := &b.guard
	c := &g.ck[g.held]
	b.base, b.line, b.lastT, b.since, b.late, b.tails = c.base, c.line, c.lastT, c.since, c.late, c.tails
	b.env, c.env = c.env, b.env // no copy: the checkpoint is let go
	b.omin, c.omin = c.omin, b.omin
	g.clear()
	p.takeCandidates()
	p.st.Reverts++
}
