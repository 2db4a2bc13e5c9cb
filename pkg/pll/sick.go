package pll

import (
	"math"
	"time"

	"github.com/timealign/timealign/pkg/stamp"
)

// sample is one (receive, unwrapped transmit tick, unwrapped scan tick).
type sample struct {
	r    stamp.Time
	t, s uint64
	sec  float64 // Sick mode: the receive time as SICK holds it, sec + nsec·1e-9 in float64
}

// sickSeconds is the receive time the way SICK's updatePLL computes it from
// ROS sec and nanosec. Sick mode regresses on differences of these values,
// so its slope, and its decisions, are bit-for-bit the original's; stamps
// themselves stay exact int64 nanoseconds.
func sickSeconds(r stamp.Time) float64 {
	sec, nsec := int64(r)/1e9, int64(r)%1e9
	if nsec < 0 {
		sec, nsec = sec-1, nsec+1e9
	}
	return float64(uint32(sec)) + float64(uint32(nsec))*1e-9
}

// ring is a fixed-capacity FIFO of samples; pushing onto a full ring drops
// the oldest.
type ring struct {
	buf   []sample
	head  int // next write
	count int
}

func newRing(n int) ring { return ring{buf: make([]sample, n)} }

func (q *ring) push(s sample) {
	q.buf[q.head] = s
	q.head++
	if q.head == len(q.buf) {
		q.head = 0
	}
	if q.count < len(q.buf) {
		q.count++
	}
}

// items returns how many entries of buf hold samples: buf[:items()] in
// some order (a ring fills buf from index 0), for order-free loops.
func (q *ring) items() int { return q.count }

func (q *ring) full() bool { return q.count == len(q.buf) }
func (q *ring) clear()     { q.head, q.count = 0, 0 }

// at returns the i-th oldest sample, 0 ≤ i < count.
func (q *ring) at(i int) *sample {
	j := q.head - q.count + i
	if j < 0 {
		j += len(q.buf)
	}
	return &q.buf[j]
}

func (q *ring) last() *sample { return q.at(q.count - 1) }

// sickState mirrors the state of SICK's SoftwarePLL.
type sickState struct {
	fifo        ring
	initialized bool
	lastTick    uint64 // SICK's lastcurtick: 0 before the first sample
	slope       float64
	first       sample // FirstTimeStamp, FirstTickTransmit, FirstTickScan
	divergence  int
	fitM        float64 // the last slope computed (accepted or not)
	fitted      bool
	xs, ys      []float64 // fitSlope's scratch: the FIFO's offsets
}

func (k *sickState) init(n int) {
	k.fifo = newRing(n)
	k.xs, k.ys = make([]float64, n), make([]float64, n)
}

func (k *sickState) reset() {
	k.fifo.clear()
	clear(k.fifo.buf)
	k.initialized, k.lastTick, k.slope, k.first, k.divergence, k.fitM, k.fitted = false, 0, 0, sample{}, 0, 0, false
}

// push shifts a sample into the FIFO and re-anchors at its oldest entry
// (SICK's pushIntoFifo; before the FIFO fills, the oldest entry is the
// zero sample SICK's vectors start with).
func (k *sickState) push(s sample) {
	k.fifo.push(s)
	if k.fifo.full() {
		k.first = *k.fifo.at(0)
	} else {
		k.first = k.fifo.buf[k.fifo.head] // head < len after a push
	}
}

// fitSlope is SICK's updateInterpolationSlope: least squares on offsets
// from the oldest FIFO sample, accepted only if every sample lies within
// the maximum deviation of the line through the oldest sample.
func (p *PLL) fitSlope() bool {
	k := &p.sk
	q := &k.fifo
	if !q.full() {
		return false
	}
	// Full: the oldest sample is at head. The sums run oldest first, as
	// SICK's do, so they round as SICK's do.
	k.first = q.buf[q.head]
	t0, s0 := k.first.t, k.first.sec
	xs, ys := k.xs, k.ys
	var sxy, sx, sy, sxx float64
	i := 0
	for _, seg := range [2][]sample{q.buf[q.head:], q.buf[:q.head]} {
		for j := range seg {
			x := float64(seg[j].t - t0) // SICK takes this difference unsigned
			y := seg[j].sec - s0
			xs[i], ys[i] = x, y
			i++
			sxy += x * y
			sx += x
			sy += y
			sxx += x * x
		}
	}
	n := float64(q.count)
	den := n*sxx - sx*sx
	if den == 0 {
		return false
	}
	m := (n*sxy - sx*sy) / den
	if math.IsNaN(m) || math.IsInf(m, 0) {
		return false
	}
	k.fitM, k.fitted = m, true // Status computes the spread from these
	for i := range xs {
		if !(math.Abs(m*xs[i]-ys[i]) < p.maxDevSec) {
			return false
		}
	}
	k.slope = m
	return true
}

// sickSpread is the largest |residual| (seconds) of the FIFO around the
// last slope fitSlope computed, through the oldest sample.
func (k *sickState) sickSpread() float64 {
	if !k.fitted || !k.fifo.full() {
		return 0
	}
	var d float64
	for i := range k.fifo.count {
		s := k.fifo.at(i)
		if e := math.Abs(k.fitM*float64(s.t-k.first.t) - (s.sec - k.first.sec)); e > d {
			d = e
		}
	}
	return d
}

// updateSick is SICK's updatePLL on unwrapped ticks.
func (p *PLL) updateSick(r stamp.Time, t uint64) Outcome {
	k := &p.sk
	if t == k.lastTick {
		return Duplicate
	}
	if int64(t-k.lastTick) < 0 && k.lastTick != 0 {
		p.st.Stale++
	}
	k.lastTick = t
	s := sample{r: r, t: t, s: p.scan.last, sec: sickSeconds(r)}
	o := Warming
	if !k.initialized {
		k.push(s)
		if p.fitSlope() {
			k.initialized = true
		}
	}
	if !k.initialized {
		return o
	}
	rel := float64(int64(t-k.first.t)) * k.slope
	cmp := s.sec - k.first.sec
	if math.Abs(rel-cmp) < p.maxDevSec {
		k.push(s)
		p.fitSlope()
		k.divergence = 0
		return Accepted
	}
	k.divergence++
	if k.divergence >= p.cfg.MaxInvalid {
		if k.initialized {
			p.st.Resets++
		}
		k.initialized = false
	}
	return Rejected
}

// correctedSick is SICK's getCorrectedTimeStamp: slope·(scan − first scan)
// + first receive time.
func (p *PLL) correctedSick(u uint64) (stamp.Time, bool) {
	k := &p.sk
	if !k.initialized {
		return 0, false
	}
	return at(k.first.r, float64(int64(u-k.first.s))*k.slope*1e9)
}

func (p *PLL) sickStatus(s *Status) {
	k := &p.sk
	s.Fill = k.fifo.count
	s.Invalid = k.divergence
	s.Spread = time.Duration(math.Round(math.Min(k.sickSpread()*1e9, 9e18)))
	if k.initialized {
		s.SlopePPM = (k.slope*1e9/p.nominal - 1) * 1e6
		last := k.fifo.last()
		if t, ok := at(k.first.r, float64(int64(last.t-k.first.t))*k.slope*1e9); ok {
			s.Offset = t.Sub(stamp.Time(0)) - time.Duration(float64(int64(last.t))*p.nominal)
		}
	}
}
