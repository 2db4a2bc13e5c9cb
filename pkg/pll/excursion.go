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
//   - or the candidates of a lock lie on it (on a stream that quiet).
//
// Status.Reverts counts the restorations. A step that lasts never comes
// back to the held fit and is followed as before; a new latency minimum
// leaves the lines within MaxEarly of each other. Cost: a residual against
// one more line per sample, and a copy of the hull's vertices (or of the
// Offset mode's minima) every FIFOSize samples; memory: two more hulls.
type excursionGuard struct {
	ck    [2]fitCopy
	newer int // the checkpoint taken last
	count int // accepted samples since it
	held  int // the checkpoint held, or -1
	age   int // updates since it was held
	need  int // the run that restores it (revertRun; 0: never)
	run   int // consecutive accepted samples back on it
	low   float64
}

// fitCopy is a copy of a fit.
type fitCopy struct {
	ok    bool
	base  sample
	line  hull.Line
	lastT uint64
	since int
	late  float64
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
	g.ck[0].ok, g.ck[1].ok, g.count, g.held, g.run = false, false, 0, -1, 0
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
		g.age, g.run = 0, 0
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
	b.late += (hi - b.late) / float64(min(b.since+1, b.window))
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
		if !on || res <= p.maxEarly || res-r <= p.maxEarly {
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
		c.ok, c.base, c.line, c.lastT, c.since, c.late = true, b.base, b.line, b.lastT, b.since, b.late
		c.env.CopyFrom(&b.env)
		c.omin.copyFrom(&b.omin)
		g.newer, g.count = w, 0
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
	b.base, b.line, b.lastT, b.since, b.late = c.base, c.line, c.lastT, c.since, c.late
	b.env, c.env = c.env, b.env // no copy: the checkpoint is let go
	b.omin, c.omin = c.omin, b.omin
	g.clear()
	p.takeCandidates()
	p.st.Reverts++
}
