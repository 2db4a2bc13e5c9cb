package pll

import (
	"math"
	"time"

	"github.com/timealign/timealign/pkg/stamp"
)

// Outcome says what [PLL.Update] did with a sample.
type Outcome int

const (
	// Accepted: the sample was consistent and entered the fit.
	Accepted Outcome = iota
	// Warming: the sample entered the FIFO while the estimator is not
	// locked (not enough consistent samples yet).
	Warming
	// Rejected: the sample lies further than the allowed deviation from the
	// fit (a delayed packet, a host clock step, a device reboot). It is
	// kept as a candidate for re-locking.
	Rejected
	// Duplicate: the sample repeats the previous tick and was ignored.
	Duplicate
	// OutOfRange: the tick does not fit in TickBits and was dropped.
	OutOfRange
	// Outlier (Regression mode): the sample lies within MaxDeviation of the
	// fit but far outside the FIFO's robust spread (see Config.OutlierZ); it
	// does not enter the fit and does not invalidate the estimate. It is
	// kept as a candidate for re-locking.
	Outlier
)

var outcomeNames = []string{"accepted", "warming", "rejected", "duplicate", "out-of-range", "outlier"}

func (o Outcome) String() string {
	if o >= 0 && int(o) < len(outcomeNames) {
		return outcomeNames[o]
	}
	return "Outcome(?)"
}

// Status is a snapshot of a [PLL].
type Status struct {
	Mode Mode `json:"mode"`
	// Valid reports whether Corrected currently returns estimates.
	Valid bool `json:"valid"`
	// Fill is the number of samples in the FIFO (FIFOSize when full).
	Fill int `json:"fill"`
	// SlopePPM is the fitted rate error against TickPeriod, in ppm (0 while
	// not locked).
	SlopePPM float64 `json:"slope_ppm"`
	// Offset is the fitted host time minus device time (ticks·TickPeriod)
	// at the last accepted tick (0 while not locked).
	Offset time.Duration `json:"offset_ns"`
	// Spread is the largest |residual| of the FIFO samples around the fit.
	Spread time.Duration `json:"spread_ns"`
	// Invalid counts consecutive inconsistent samples.
	Invalid int `json:"invalid"`
	// Resets counts restarts after MaxInvalid inconsistent samples.
	Resets int `json:"resets"`
	// Relocks counts switches to a new consistent run of samples (a host
	// clock step, a device reboot); Reboots counts those whose ticks went
	// back.
	Relocks int `json:"relocks"`
	Reboots int `json:"reboots"`
	// Reverts counts re-locks undone: the samples came back to the fit a
	// re-lock had replaced, which resumed (a passing excursion of the
	// receive times; see the package doc).
	Reverts int `json:"reverts"`
	// FirstTick and LastTick are the smallest and largest unwrapped ticks
	// seen (unwrapping starts at the first raw tick).
	FirstTick uint64 `json:"first_tick"`
	LastTick  uint64 `json:"last_tick"`
	// Counts of inputs.
	Updates    int `json:"updates"`
	Accepted   int `json:"accepted"`
	Rejected   int `json:"rejected"`
	Duplicates int `json:"duplicates"`
	// Outliers counts samples the Regression mode kept out of its fit
	// (see Config.OutlierZ).
	Outliers int `json:"outliers"`
	// Stale counts ticks that went back (stale packets, reboots).
	Stale int `json:"stale"`
	// OutOfRange counts ticks ≥ 2^TickBits (dropped).
	OutOfRange int `json:"out_of_range"`
	// TimeBack counts receive times earlier than the previous one.
	TimeBack int `json:"time_back"`
}

// PLL maps device ticks to host time. It is not safe for concurrent use;
// one goroutine owns it. Create it with [New].
type PLL struct {
	cfg              Config
	tick, scan       unwrapper
	nominal          float64 // ns per tick
	minSlope, maxSlo float64
	maxDev, maxEarly float64 // ns
	maxDevSec        float64 // Sick mode: seconds, as SICK compares

	sk sickState
	rb robust

	st       Status
	lastRecv stamp.Time
	seen     bool
}

// New returns a PLL for cfg, or the error of cfg.Validate. It allocates
// all its memory here: FIFOSize and Window samples.
func New(cfg Config) (*PLL, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	p := &PLL{cfg: cfg}
	p.nominal = float64(cfg.TickPeriod)
	p.minSlope = p.nominal * (1 - cfg.MaxSkewPPM*1e-6)
	p.maxSlo = p.nominal * (1 + cfg.MaxSkewPPM*1e-6)
	p.maxDev = float64(cfg.MaxDeviation)
	p.maxEarly = float64(min(cfg.MaxEarly, cfg.MaxDeviation)) // capped: see Config.MaxEarly
	p.maxDevSec = cfg.MaxDeviation.Seconds()
	if cfg.Mode == Sick {
		p.sk.init(cfg.FIFOSize)
	} else {
		p.rb.init(cfg)
	}
	p.Reset()
	return p, nil
}

// Config returns the configuration.
func (p *PLL) Config() Config { return p.cfg }

// Reset forgets every sample, as if the PLL were new (counters included).
func (p *PLL) Reset() {
	p.tick = newUnwrapper(p.cfg.TickBits)
	p.scan = newUnwrapper(p.cfg.TickBits)
	if p.cfg.Mode == Sick {
		p.sk.reset()
	} else {
		p.rb.reset()
	}
	p.st = Status{Mode: p.cfg.Mode}
	p.seen = false
}

// Update feeds one sample: the host's receive stamp and the device tick
// the sample was sent with. It is UpdateScan(receive, ticks, ticks).
func (p *PLL) Update(receive stamp.Time, ticks uint64) Outcome {
	return p.UpdateScan(receive, ticks, ticks)
}

// UpdateScan feeds one sample whose measurement was taken at device tick
// scanTicks and sent at tick ticks (SICK's scan and transmit ticks). The
// fit uses ticks; scanTicks only advances the unwrapping that [PLL.Corrected]
// uses.
func (p *PLL) UpdateScan(receive stamp.Time, ticks, scanTicks uint64) Outcome {
	p.st.Updates++
	if ticks > p.tick.mask || scanTicks > p.tick.mask {
		p.st.OutOfRange++
		return OutOfRange
	}
	if p.seen && receive < p.lastRecv {
		p.st.TimeBack++
	}
	p.seen = true
	p.lastRecv = receive
	t := p.tick.update(ticks)
	if !p.scan.init {
		// Start the scan ticks in the transmit ticks' epoch, so a first
		// sample that straddles a wrap is consistent.
		p.scan.init, p.scan.lastRaw, p.scan.last = true, scanTicks, p.tick.peek(scanTicks)
	} else {
		p.scan.update(scanTicks)
	}
	if p.st.Updates-p.st.OutOfRange == 1 {
		p.st.FirstTick, p.st.LastTick = t, t
	} else {
		if int64(t-p.st.FirstTick) < 0 {
			p.st.FirstTick = t
		}
		if int64(t-p.st.LastTick) > 0 {
			p.st.LastTick = t
		}
	}
	var o Outcome
	if p.cfg.Mode == Sick {
		o = p.updateSick(receive, t)
	} else {
		o = p.updateRobust(receive, t)
	}
	switch o {
	case Accepted:
		p.st.Accepted++
	case Rejected:
		p.st.Rejected++
	case Duplicate:
		p.st.Duplicates++
	}
	return o
}

// Corrected maps a device tick (raw, wrapped) to host time. ok is false
// while no valid estimate exists, and for results that would be negative
// or overflow. The tick is unwrapped against the latest scan tick (or
// transmit tick) without changing any state.
func (p *PLL) Corrected(ticks uint64) (t stamp.Time, ok bool) {
	if ticks > p.tick.mask || !p.tick.init {
		return 0, false
	}
	u := p.scan.peek(ticks)
	if !p.scan.init {
		u = p.tick.peek(ticks)
	}
	if p.cfg.Mode == Sick {
		return p.correctedSick(u)
	}
	return p.correctedRobust(u)
}

// Valid reports whether Corrected currently returns estimates.
func (p *PLL) Valid() bool {
	if p.cfg.Mode == Sick {
		return p.sk.initialized
	}
	return p.rb.valid()
}

// Status returns a snapshot.
func (p *PLL) Status() Status {
	s := p.st
	s.Valid = p.Valid()
	if p.cfg.Mode == Sick {
		p.sickStatus(&s)
	} else {
		p.robustStatus(&s)
	}
	return s
}

// at returns base + d for a float64 nanosecond offset d, with ok false on
// overflow, NaN or a negative result.
func at(base stamp.Time, d float64) (stamp.Time, bool) {
	if math.IsNaN(d) || math.Abs(d) > 9e18 {
		return 0, false
	}
	t := base.Add(time.Duration(math.Round(d)))
	if t < 0 || t == stamp.Max {
		return 0, false
	}
	return t, true
}

// unwrapper turns a wrapping counter into a 64-bit one: each tick is taken
// as the unwrapped value nearest to the previous one (within half the
// counter's range, ties backward).
type unwrapper struct {
	mask, half uint64
	init       bool
	lastRaw    uint64
	last       uint64 // unwrapped; differences are taken as int64(a−b)
}

func newUnwrapper(bits int) unwrapper {
	return unwrapper{mask: ^uint64(0) >> (64 - bits), half: 1 << (bits - 1)}
}

// peek returns the unwrapped value of raw (≤ mask) without storing it.
func (u *unwrapper) peek(raw uint64) uint64 {
	if !u.init {
		return raw
	}
	d := (raw - u.lastRaw) & u.mask
	if d < u.half {
		return u.last + d
	}
	return u.last - (u.mask - d) - 1
}

func (u *unwrapper) update(raw uint64) uint64 {
	v := u.peek(raw)
	u.init, u.lastRaw, u.last = true, raw, v
	return v
}
