package sim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/timealign/timealign/pkg/stamp"
)

// acquirer simulates one sample at a time, in acquisition order, before
// batching: the device's clock and counter, the latency, the loss channel
// and in-order transport. It is a value: a copy is an independent
// simulator at the same point of the run (the batch look-ahead).
type acquirer struct {
	cfg            *Config // read-only, shared with copies
	period, shape  float64
	lat, out, loss rand.PCG

	seq      int     // Seq of the next sample
	elapsed  float64 // true ns since Start of the next sample
	rate     float64 // device clock rate for the next sample
	device   float64 // device clock of the next sample, before reboots
	index    uint64  // sensor counter of the next sample, before reboots and wrapping
	boot     int
	inBurst  bool
	lastRecv float64 // true ns since Start of the latest delivery so far
}

func newAcquirer(cfg *Config) acquirer {
	shape := cfg.Latency.Shape
	if shape == 0 {
		shape = 1.5
	}
	return acquirer{
		cfg:      cfg,
		period:   float64(cfg.Period),
		shape:    shape,
		lat:      newRNG(cfg.Seed, rngLatency),
		out:      newRNG(cfg.Seed, rngOutlier),
		loss:     newRNG(cfg.Seed, rngLoss),
		rate:     cfg.rateAt(0),
		device:   float64(cfg.Clock.Offset),
		lastRecv: math.Inf(-1),
	}
}

// done reports whether the run is over: the next sample would be past
// Count, or at or after Duration.
func (a *acquirer) done() bool {
	if a.cfg.Duration > 0 {
		return roundDur(a.elapsed) >= a.cfg.Duration
	}
	return a.seq >= a.cfg.Count
}

// next simulates the next sample. Its random draws are, in this order: one
// latency, two outlier, and one or two loss draws, for every sample, lost
// ones included, so that the loss model does not shift the latencies of
// the others.
func (a *acquirer) next() (Sample, bool) {
	if a.done() {
		return Sample{}, false
	}
	cfg := a.cfg
	elapsed, rate := a.elapsed, a.rate
	for a.boot < len(cfg.Clock.Reboots) && elapsed >= float64(cfg.Clock.Reboots[a.boot]) {
		// The device restarts; its clock counts from the reboot.
		a.device = (elapsed - float64(cfg.Clock.Reboots[a.boot])) * rate
		a.index = 0
		a.boot++
	}
	s := Sample{
		Seq:    a.seq,
		Boot:   a.boot,
		Index:  wrap(a.index, cfg.IndexBits),
		Device: roundDur(a.device),
		Ticks:  wrap(uint64(a.device/float64(cfg.Clock.TickPeriod)), cfg.Clock.TickBits),
		True:   cfg.Start.Add(roundDur(elapsed) + hostOffset(cfg.HostSteps, elapsed)),
	}
	sendDev := a.device + float64(cfg.Clock.SendDelay)*rate
	s.SendTicks = wrap(uint64(sendDev/float64(cfg.Clock.TickPeriod)), cfg.Clock.TickBits)

	d := float64(cfg.Latency.Base)
	u := uniform(&a.lat)
	if cfg.Latency.Scale > 0 { // a zero scale times an infinite Pareto draw is no NaN
		switch cfg.Latency.Kind {
		case Uniform:
			d += u * float64(cfg.Latency.Scale)
		case Exponential:
			d += -math.Log1p(-u) * float64(cfg.Latency.Scale)
		case Pareto:
			d += (math.Pow(1-u, -1/a.shape) - 1) * float64(cfg.Latency.Scale)
		}
	}
	if o := uniform(&a.out); o < cfg.Latency.OutlierProb {
		d += (1 - uniform(&a.out)) * float64(cfg.Latency.OutlierMax)
	} else {
		uniform(&a.out)
	}
	if d < float64(cfg.Clock.SendDelay) {
		d = float64(cfg.Clock.SendDelay) // nothing arrives before it is sent
	}

	if a.inBurst {
		s.Lost = true
		if uniform(&a.loss) < 1/cfg.Loss.BurstLen {
			a.inBurst = false
		}
	} else {
		s.Lost = uniform(&a.loss) < cfg.Loss.Prob
		if cfg.Loss.BurstProb > 0 && uniform(&a.loss) < cfg.Loss.BurstProb {
			a.inBurst = true
		}
	}
	if !s.Lost {
		recv := elapsed + d
		if !cfg.Latency.Reorder && recv < a.lastRecv {
			recv = a.lastRecv // held up behind the previous sample
		}
		a.lastRecv = max(a.lastRecv, recv)
		s.Arrival = cfg.Start.Add(roundDur(recv))
		s.Receive = s.Arrival.Add(hostOffset(cfg.HostSteps, recv))
	}

	// Advance to the next sample: Period of device time at this sample's rate.
	a.seq++
	a.rate = cfg.rateAt(elapsed)
	a.elapsed = elapsed + a.period/a.rate
	a.device += a.period
	a.index++
	return s, true
}

// Generator yields the samples of a run one at a time, in acquisition
// order, lost ones included: the samples [Generate] returns, without
// holding them. Its memory is constant, whatever the run's length.
//
// A batch's samples are all received when its last one arrives, which is
// known only later in the run: when a batch starts, the generator runs a
// copy of itself ahead to the batch's last sample (lost ones in between
// included), which costs the simulation of those samples a second time but
// no memory.
//
// A Generator is not safe for concurrent use.
type Generator struct {
	acq   acquirer
	batch rand.PCG
	// The open batch: its delivered samples still to come, and their stamps.
	batchLeft    int
	batchArrival stamp.Time
	batchReceive stamp.Time
	batchProb    float64
	batchSize    int
	start        stamp.Time
	steps        []Step
}

// NewGenerator validates cfg and returns a generator of its samples. It
// keeps its own copy of cfg.
func NewGenerator(cfg Config) (*Generator, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	c := cfg
	c.Clock.Reboots = slices.Clone(cfg.Clock.Reboots)
	c.HostSteps = slices.Clone(cfg.HostSteps)
	return &Generator{
		acq:       newAcquirer(&c),
		batch:     newRNG(c.Seed, rngBatch),
		batchProb: c.Batch.Prob,
		batchSize: c.Batch.Size,
		start:     c.Start,
		steps:     c.HostSteps,
	}, nil
}

// Next returns the next sample in acquisition order, and false when the
// run is over. It costs O(1) time, plus the look-ahead over a batch's
// samples when one starts.
func (g *Generator) Next() (Sample, bool) {
	s, ok := g.acq.next()
	if !ok || s.Lost {
		return s, ok
	}
	if g.batchLeft > 0 {
		g.batchLeft--
		s.Arrival, s.Receive = g.batchArrival, g.batchReceive
		return s, true
	}
	// One batch draw for every delivered sample outside a batch.
	if g.batchProb == 0 || uniform(&g.batch) >= g.batchProb {
		return s, true
	}
	// s starts a batch of itself and the next Size−1 delivered samples (or
	// as many as the run still has), all received when the latest of them
	// arrives.
	latest := s.Arrival
	ahead := g.acq
	n := 0
	for n < g.batchSize-1 {
		x, ok := ahead.next()
		if !ok {
			break
		}
		if !x.Lost {
			latest = max(latest, x.Arrival)
			n++
		}
	}
	g.batchLeft = n
	g.batchArrival = latest
	g.batchReceive = latest.Add(hostOffset(g.steps, float64(latest.Sub(g.start))))
	s.Arrival, s.Receive = g.batchArrival, g.batchReceive
	return s, true
}

// horizon is the earliest Arrival any sample not yet yielded can have:
// nothing arrives before it is acquired, and true time only advances. It
// is stamp.Max once the run is over.
func (g *Generator) horizon() stamp.Time {
	if g.acq.done() {
		return stamp.Max
	}
	return g.start.Add(roundDur(g.acq.elapsed))
}

// Delivery yields the delivered samples of a run in the order they reach
// the host: by Arrival, acquisition order among equal ones, as [Delivered]
// orders them.
//
// With in-order transport (Latency.Reorder false) arrivals never go back,
// so a delivered sample is yielded as soon as it is acquired, and the
// stream holds no sample. With Reorder, a sample is held until every
// sample acquired later must arrive after it, that is until true time
// (the next acquisition) passes its arrival: the stream holds the samples
// in flight, about (latency of the slowest) / Period of them, in a binary
// heap, and Next costs O(log m) for m samples held.
//
// A Delivery is not safe for concurrent use.
type Delivery struct {
	gen     *Generator
	reorder bool
	held    arrivalHeap
}

// NewDelivery validates cfg and returns the stream of its delivered
// samples.
func NewDelivery(cfg Config) (*Delivery, error) {
	g, err := NewGenerator(cfg)
	if err != nil {
		return nil, err
	}
	return &Delivery{gen: g, reorder: cfg.Latency.Reorder}, nil
}

// Next returns the next delivered sample in arrival order, and false when
// the run is over.
func (d *Delivery) Next() (Sample, bool) {
	if !d.reorder {
		for {
			s, ok := d.gen.Next()
			if !ok || !s.Lost {
				return s, ok
			}
		}
	}
	for {
		if len(d.held) > 0 && d.held[0].Arrival <= d.gen.horizon() {
			// Every later acquisition arrives at or after the horizon,
			// and an equal Arrival goes to the earlier acquisition.
			return d.held.pop(), true
		}
		s, ok := d.gen.Next()
		if !ok {
			if len(d.held) > 0 {
				return d.held.pop(), true
			}
			return Sample{}, false
		}
		if !s.Lost {
			d.held.push(s)
		}
	}
}

// heldLen reports the samples the stream holds back (those in flight).
func (d *Delivery) heldLen() int { return len(d.held) }

// arrivalHeap is a binary min-heap of samples by (Arrival, Seq): typed, so
// that pushing a sample does not allocate once the slice has grown.
type arrivalHeap []Sample

func earlier(a, b *Sample) bool {
	return a.Arrival < b.Arrival || a.Arrival == b.Arrival && a.Seq < b.Seq
}

func (h *arrivalHeap) push(s Sample) {
	*h = append(*h, s)
	q := *h
	for i := len(q) - 1; i > 0; {
		p := (i - 1) / 2
		if !earlier(&q[i], &q[p]) {
			break
		}
		q[i], q[p] = q[p], q[i]
		i = p
	}
}

func (h *arrivalHeap) pop() Sample {
	q := *h
	top := q[0]
	n := len(q) - 1
	q[0] = q[n]
	q = q[:n]
	for i := 0; ; {
		m, l, r := i, 2*i+1, 2*i+2
		if l < n && earlier(&q[l], &q[m]) {
			m = l
		}
		if r < n && earlier(&q[r], &q[m]) {
			m = r
		}
		if m == i {
			break
		}
		q[i], q[m] = q[m], q[i]
		i = m
	}
	*h = q
	return top
}

// MergedDelivery yields the delivered samples of several runs in the order
// they reach the host, as [Merge] interleaves them: by Arrival, then the
// lower topic (the index of the stream's Config), then acquisition order.
// It holds one sample per stream besides what each stream holds (see
// [Delivery]), and Next costs O(k) for k streams.
//
// A MergedDelivery is not safe for concurrent use.
type MergedDelivery struct {
	streams []*Delivery
	heads   []Sample
	live    []bool
}

// NewMergedDelivery validates every config and returns the merged stream
// of their delivered samples; an error names the first bad stream by its
// index. No config gives an empty stream.
func NewMergedDelivery(cfgs ...Config) (*MergedDelivery, error) {
	m := &MergedDelivery{
		streams: make([]*Delivery, len(cfgs)),
		heads:   make([]Sample, len(cfgs)),
		live:    make([]bool, len(cfgs)),
	}
	for i, c := range cfgs {
		d, err := NewDelivery(c)
		if err != nil {
			return nil, fmt.Errorf("stream %d: %w", i, err)
		}
		m.streams[i] = d
		m.heads[i], m.live[i] = d.Next()
	}
	return m, nil
}

// Next returns the next delivered sample of all the streams in arrival
// order, and false when every run is over.
func (m *MergedDelivery) Next() (Tagged, bool) {
	best := -1
	for i, ok := range m.live {
		if ok && (best < 0 || m.heads[i].Arrival < m.heads[best].Arrival) {
			best = i
		}
	}
	if best < 0 {
		return Tagged{}, false
	}
	t := Tagged{Topic: best, Sample: m.heads[best]}
	m.heads[best], m.live[best] = m.streams[best].Next()
	return t, true
}
