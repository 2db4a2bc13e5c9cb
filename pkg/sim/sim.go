// Package sim is a seeded sensor-timing simulator with ground truth.
//
// It models what happens to the stamps of a periodic sensor between the
// moment a sample is acquired and the moment the host stamps it on arrival:
//
//   - the sensor samples every Period of its own clock; that clock has an
//     offset, a skew (ppm) that may drift over time, a tick resolution and a
//     counter of limited width that wraps around, and it restarts at zero
//     when the device reboots;
//   - each sample carries the device's tick count at acquisition and at
//     transmission, the device clock reading (time since boot) and the
//     sensor's own sample counter (limited width, wrapping);
//   - delivery adds a constant latency plus jitter (uniform, exponential,
//     heavy-tailed Pareto) and rare large outliers; by default a transport
//     delivers in order, so a late sample holds up the ones behind it;
//   - samples are lost at random or in bursts (a Gilbert–Elliott channel);
//   - a driver may deliver several samples at once (batches);
//   - the host clock may step (an NTP correction), forwards or backwards.
//
// Every [Sample] carries its true acquisition time in the host clock's time
// base, so estimators can be scored against it ([ScoreErrors]). The same
// [Config] (including Seed) gives the same samples on every machine: the
// random numbers come from PCG generators, one per concern, so changing the
// loss model does not change the latencies drawn.
//
// Generate costs O(Count) time and memory.
package sim

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/timealign/timealign/pkg/cfgerr"
	"github.com/timealign/timealign/pkg/stamp"
)

// Jitter selects the distribution of the random part of the latency.
type Jitter int

const (
	// None: latency is constant.
	None Jitter = iota
	// Uniform: jitter uniform in [0, Scale).
	Uniform
	// Exponential: jitter exponential with mean Scale.
	Exponential
	// Pareto: heavy-tailed jitter, Scale·(U^(-1/Shape) − 1) (Lomax), whose
	// median is about 0.6·Scale for Shape 1.5.
	Pareto
)

var jitterNames = []string{"none", "uniform", "exponential", "pareto"}

func (j Jitter) String() string {
	if j >= 0 && int(j) < len(jitterNames) {
		return jitterNames[j]
	}
	return fmt.Sprintf("Jitter(%d)", int(j))
}

// ParseJitter returns the Jitter named s ("none", "uniform", "exponential", "pareto").
func ParseJitter(s string) (Jitter, error) {
	for i, n := range jitterNames {
		if s == n {
			return Jitter(i), nil
		}
	}
	return 0, fmt.Errorf("sim: unknown jitter %q (want none, uniform, exponential or pareto)", s)
}

// Clock describes the device's clock.
type Clock struct {
	// Offset is the device clock's reading at the first sample (time since
	// boot, or any device epoch). It defaults to 0.
	Offset time.Duration
	// SkewPPM is how fast the device clock runs, in parts per million: at
	// +20 the device counts 20 µs too many per second, so its samples come
	// a little faster than Period of true time. It defaults to 0.
	SkewPPM float64
	// DriftPPMPerHour changes the skew linearly with time (temperature).
	// It defaults to 0.
	DriftPPMPerHour float64
	// TickPeriod is the duration of one device tick. It defaults to 1 µs.
	TickPeriod time.Duration
	// TickBits is the width of the tick counter, 1..64; ticks wrap at
	// 2^TickBits. 0 means 64.
	TickBits int
	// SendDelay is the device's own time between acquiring a sample and
	// stamping it with SendTicks for transmission. It is part of the
	// latency (Latency counts from acquisition). It defaults to 0.
	SendDelay time.Duration
	// Reboots lists the true times, after the first sample, at which the
	// device reboots: its clock and its sample counter restart at zero.
	Reboots []time.Duration
}

// Latency describes the delay from acquisition to the host's receive stamp.
type Latency struct {
	// Base is the constant part. It defaults to 0.
	Base time.Duration
	// Kind is the jitter distribution. It defaults to None.
	Kind Jitter
	// Scale parameterizes Kind (see [Jitter]).
	Scale time.Duration
	// Shape is the Pareto tail index; smaller is heavier. 0 means 1.5.
	Shape float64
	// OutlierProb is the probability that a sample is delayed by an extra
	// amount uniform in (0, OutlierMax].
	OutlierProb float64
	OutlierMax  time.Duration
	// Reorder lets a sample overtake an earlier one. By default (false)
	// delivery is in order: a sample is never received before the one
	// acquired before it, as on a serial line or a TCP stream.
	Reorder bool
}

// Loss describes lost samples, as a Gilbert–Elliott channel: in the good
// state each sample is lost with probability Prob and a burst starts with
// probability BurstProb; in a burst every sample is lost and the burst ends
// with probability 1/BurstLen per sample.
type Loss struct {
	Prob      float64
	BurstProb float64
	// BurstLen is the mean length of a burst in samples, ≥ 1 when BurstProb > 0.
	BurstLen float64
}

// Batch describes batched delivery: with probability Prob a delivered
// sample starts a batch, and it and the next Size−1 delivered samples are
// all received at the receive time of the batch's last sample.
type Batch struct {
	Prob float64
	Size int
}

// Step is a host clock step: from true time At (after the first sample)
// on, the host clock reads By more than before.
type Step struct {
	At time.Duration
	By time.Duration
}

// Config describes one simulated stream. The zero value is not valid; start
// from [DefaultConfig].
type Config struct {
	// Seed selects the random streams. It defaults to 1.
	Seed uint64
	// Start is the true time of the first sample. It defaults to
	// 1_700_000_000 s after the epoch (November 2023).
	Start stamp.Time
	// Count is the number of samples acquired, lost ones included, at most
	// MaxCount. It defaults to 1000.
	Count int
	// Period is the sampling period in device time. It defaults to 10 ms.
	Period    time.Duration
	Clock     Clock
	Latency   Latency
	Loss      Loss
	Batch     Batch
	HostSteps []Step
	// IndexBits is the width of the sensor's sample counter; it wraps at
	// 2^IndexBits. 0 means 64. It defaults to 16.
	IndexBits int
}

// MaxCount bounds Config.Count so a simulation's memory stays bounded
// (about 100 bytes a sample).
const MaxCount = 20_000_000

// DefaultStart is the default true time of the first sample.
const DefaultStart = stamp.Time(1_700_000_000 * int64(time.Second))

// DefaultConfig returns a 100 Hz sensor with 5 ms latency and uniform 2 ms
// jitter, a 1 µs 32-bit tick clock, and no loss.
func DefaultConfig() Config {
	return Config{
		Seed:      1,
		Start:     DefaultStart,
		Count:     1000,
		Period:    10 * time.Millisecond,
		Clock:     Clock{TickPeriod: time.Microsecond, TickBits: 32},
		Latency:   Latency{Base: 5 * time.Millisecond, Kind: Uniform, Scale: 2 * time.Millisecond},
		IndexBits: 16,
	}
}

// ErrConfig is wrapped by every error of [Config.Validate].
var ErrConfig = errors.New("sim: invalid config")

func bad(field string, format string, args ...any) error {
	return cfgerr.New(ErrConfig, field, format, args...)
}

func probOK(p float64) bool { return p >= 0 && p <= 1 }

// Validate reports the first bad field of c.
func (c Config) Validate() error {
	switch {
	case c.Count <= 0 || c.Count > MaxCount:
		return bad("Count", "is %d, want 1..%d", c.Count, MaxCount)
	case c.Period <= 0:
		return bad("Period", "is %v, want > 0", c.Period)
	case c.Clock.TickPeriod <= 0:
		return bad("Clock.TickPeriod", "is %v, want > 0", c.Clock.TickPeriod)
	case c.Clock.TickBits < 0 || c.Clock.TickBits > 64:
		return bad("Clock.TickBits", "is %d, want 1..64 (0 for 64)", c.Clock.TickBits)
	case math.IsNaN(c.Clock.SkewPPM) || math.Abs(c.Clock.SkewPPM) >= 1e5:
		return bad("Clock.SkewPPM", "is %v, want |skew| < 100000", c.Clock.SkewPPM)
	case math.IsNaN(c.Clock.DriftPPMPerHour) || math.IsInf(c.Clock.DriftPPMPerHour, 0):
		return bad("Clock.DriftPPMPerHour", "is %v", c.Clock.DriftPPMPerHour)
	case c.Clock.SendDelay < 0:
		return bad("Clock.SendDelay", "is %v, want ≥ 0", c.Clock.SendDelay)
	case !slices.IsSorted(c.Clock.Reboots) || (len(c.Clock.Reboots) > 0 && c.Clock.Reboots[0] <= 0):
		return bad("Clock.Reboots", "must be positive and increasing, got %v", c.Clock.Reboots)
	case c.Latency.Base < 0:
		return bad("Latency.Base", "is %v, want ≥ 0", c.Latency.Base)
	case c.Latency.Kind < None || c.Latency.Kind > Pareto:
		return bad("Latency.Kind", "is %v", c.Latency.Kind)
	case c.Latency.Scale < 0:
		return bad("Latency.Scale", "is %v, want ≥ 0", c.Latency.Scale)
	case c.Latency.Shape < 0 || math.IsNaN(c.Latency.Shape):
		return bad("Latency.Shape", "is %v, want > 0 (0 for 1.5)", c.Latency.Shape)
	case !probOK(c.Latency.OutlierProb):
		return bad("Latency.OutlierProb", "is %v, want 0..1", c.Latency.OutlierProb)
	case c.Latency.OutlierMax < 0:
		return bad("Latency.OutlierMax", "is %v, want ≥ 0", c.Latency.OutlierMax)
	case !probOK(c.Loss.Prob) || c.Loss.Prob == 1:
		return bad("Loss.Prob", "is %v, want 0..1 (exclusive)", c.Loss.Prob)
	case !probOK(c.Loss.BurstProb):
		return bad("Loss.BurstProb", "is %v, want 0..1", c.Loss.BurstProb)
	case c.Loss.BurstProb > 0 && !(c.Loss.BurstLen >= 1):
		return bad("Loss.BurstLen", "is %v, want ≥ 1 when {Loss.BurstProb} > 0", c.Loss.BurstLen)
	case !probOK(c.Batch.Prob):
		return bad("Batch.Prob", "is %v, want 0..1", c.Batch.Prob)
	case c.Batch.Prob > 0 && c.Batch.Size < 2:
		return bad("Batch.Size", "is %d, want ≥ 2 when {Batch.Prob} > 0", c.Batch.Size)
	case c.IndexBits < 0 || c.IndexBits > 64:
		return bad("IndexBits", "is %d, want 1..64 (0 for 64)", c.IndexBits)
	}
	for i, s := range c.HostSteps {
		if s.At <= 0 || (i > 0 && s.At < c.HostSteps[i-1].At) {
			return bad(fmt.Sprintf("HostSteps[%d].At", i), "is %v, want positive and increasing", s.At)
		}
	}
	// The last stamp must stay far from int64 overflow.
	span := float64(c.Period) * float64(c.Count) * 2
	if span > float64(stamp.Max-c.Start)/2 || float64(c.Start) < float64(stamp.Min)/2 {
		return bad("Start", "%v with %d samples of %v overflows int64 nanoseconds", c.Start, c.Count, c.Period)
	}
	return nil
}

// Sample is one simulated sample with its ground truth.
type Sample struct {
	// Seq numbers the samples in acquisition order from 0, never wrapping.
	Seq int
	// Index is the sensor's own sample counter: wraps at 2^IndexBits and
	// restarts at 0 when the device reboots.
	Index uint64
	// True is the true acquisition time in the host clock's time base (host
	// clock steps included): the stamp an estimator should produce.
	True stamp.Time
	// Receive is the host's receive stamp, read from the host clock (host
	// clock steps included).
	Receive stamp.Time
	// Arrival is the true time the sample reached the host, without host
	// clock steps: the order of arrival.
	Arrival stamp.Time
	// Device is the device clock's reading at acquisition (since its boot).
	Device time.Duration
	// Ticks is the device's tick counter at acquisition, wrapped.
	Ticks uint64
	// SendTicks is the tick counter when the device sent the sample.
	SendTicks uint64
	// Boot counts the device's reboots before this sample.
	Boot int
	// Lost marks a sample that was never delivered (Receive is then 0).
	Lost bool
}

// stream names the PCG streams, one per concern.
const (
	rngLatency = iota + 1
	rngOutlier
	rngLoss
	rngBatch
)

type rng struct{ r *rand.Rand }

func newRNG(seed uint64, concern uint64) rng {
	return rng{rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15*concern))}
}

// float returns a uniform float64 in [0, 1) built from the top 53 bits, so
// it is the same on every machine.
func (g rng) float() float64 { return float64(g.r.Uint64()>>11) * 0x1p-53 }

func wrap(v uint64, bits int) uint64 {
	if bits == 0 || bits >= 64 {
		return v
	}
	return v & (1<<uint(bits) - 1)
}

// Generate simulates cfg and returns every sample in acquisition order,
// lost ones included.
func Generate(cfg Config) ([]Sample, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	lat := newRNG(cfg.Seed, rngLatency)
	out := newRNG(cfg.Seed, rngOutlier)
	loss := newRNG(cfg.Seed, rngLoss)
	batch := newRNG(cfg.Seed, rngBatch)
	shape := cfg.Latency.Shape
	if shape == 0 {
		shape = 1.5
	}

	samples := make([]Sample, cfg.Count)
	var (
		elapsed  float64 // true ns since Start, of the current sample
		device   = float64(cfg.Clock.Offset)
		index    uint64
		boot     int
		inBurst  bool
		lastRecv = math.Inf(-1) // true ns since Start of the last delivery
	)
	period := float64(cfg.Period)
	for i := range samples {
		rate := 1 + (cfg.Clock.SkewPPM+cfg.Clock.DriftPPMPerHour*elapsed/float64(time.Hour))*1e-6
		if i > 0 {
			elapsed += period / rate
			device += period
			index++
		}
		for boot < len(cfg.Clock.Reboots) && elapsed >= float64(cfg.Clock.Reboots[boot]) {
			// The device restarts; its clock counts from the reboot.
			device = (elapsed - float64(cfg.Clock.Reboots[boot])) * rate
			index = 0
			boot++
		}
		s := &samples[i]
		s.Seq = i
		s.Boot = boot
		s.Index = wrap(index, cfg.IndexBits)
		s.Device = time.Duration(math.Round(device))
		s.Ticks = wrap(uint64(device/float64(cfg.Clock.TickPeriod)), cfg.Clock.TickBits)
		sendDev := device + float64(cfg.Clock.SendDelay)*rate
		s.SendTicks = wrap(uint64(sendDev/float64(cfg.Clock.TickPeriod)), cfg.Clock.TickBits)
		s.True = cfg.Start.Add(time.Duration(math.Round(elapsed)) + hostOffset(cfg.HostSteps, elapsed))

		// Latency draws happen for every sample, lost or not, so that the
		// loss model does not shift the latencies of the others.
		d := float64(cfg.Latency.Base)
		u := lat.float()
		switch cfg.Latency.Kind {
		case Uniform:
			d += u * float64(cfg.Latency.Scale)
		case Exponential:
			d += -math.Log1p(-u) * float64(cfg.Latency.Scale)
		case Pareto:
			d += (math.Pow(1-u, -1/shape) - 1) * float64(cfg.Latency.Scale)
		}
		if o := out.float(); o < cfg.Latency.OutlierProb {
			d += (1 - out.float()) * float64(cfg.Latency.OutlierMax)
		} else {
			out.float()
		}
		if d < float64(cfg.Clock.SendDelay) {
			d = float64(cfg.Clock.SendDelay) // nothing arrives before it is sent
		}

		if inBurst {
			s.Lost = true
			if loss.float() < 1/cfg.Loss.BurstLen {
				inBurst = false
			}
		} else {
			s.Lost = loss.float() < cfg.Loss.Prob
			if cfg.Loss.BurstProb > 0 && loss.float() < cfg.Loss.BurstProb {
				inBurst = true
			}
		}
		if s.Lost {
			continue
		}
		recv := elapsed + d
		if !cfg.Latency.Reorder && recv < lastRecv {
			recv = lastRecv // held up behind the previous sample
		}
		lastRecv = max(lastRecv, recv)
		s.Arrival = cfg.Start.Add(time.Duration(math.Round(recv)))
		s.Receive = s.Arrival.Add(hostOffset(cfg.HostSteps, recv))
	}
	if cfg.Batch.Prob > 0 {
		applyBatches(samples, cfg.Batch, batch, cfg.Start, cfg.HostSteps)
	}
	return samples, nil
}

// hostOffset is the host clock's total step at true elapsed time t.
func hostOffset(steps []Step, t float64) time.Duration {
	var off time.Duration
	for _, s := range steps {
		if t >= float64(s.At) {
			off += s.By
		}
	}
	return off
}

// applyBatches holds back runs of delivered samples and releases them
// together with the run's latest.
func applyBatches(samples []Sample, b Batch, g rng, start stamp.Time, steps []Step) {
	// The batch is released when its last sample arrives; the receive
	// stamp is the host clock at that moment.
	delivered := make([]int, 0, len(samples))
	for i := range samples {
		if !samples[i].Lost {
			delivered = append(delivered, i)
		}
	}
	for k := 0; k < len(delivered); k++ {
		if g.float() >= b.Prob {
			continue
		}
		end := min(k+b.Size, len(delivered))
		latest := samples[delivered[k]].Arrival
		for _, j := range delivered[k:end] {
			latest = max(latest, samples[j].Arrival)
		}
		recv := latest.Add(hostOffset(steps, float64(latest.Sub(start))))
		for _, j := range delivered[k:end] {
			samples[j].Arrival = latest
			samples[j].Receive = recv
		}
		k = end - 1
	}
}

// Delivered returns the samples that were not lost, in the order they
// reached the host (by Arrival; acquisition order among equal ones).
func Delivered(samples []Sample) []Sample {
	out := make([]Sample, 0, len(samples))
	for _, s := range samples {
		if !s.Lost {
			out = append(out, s)
		}
	}
	slices.SortStableFunc(out, func(a, b Sample) int { return cmp.Compare(a.Arrival, b.Arrival) })
	return out
}

// Tagged is a delivered sample of one of several streams.
type Tagged struct {
	Topic int // index of the stream in the arguments of Merge
	Sample
}

// Merge interleaves the delivered samples of several streams in arrival
// order; ties go to the lower topic, then to acquisition order.
func Merge(streams ...[]Sample) []Tagged {
	n := 0
	for _, s := range streams {
		n += len(s)
	}
	out := make([]Tagged, 0, n)
	for t, s := range streams {
		for _, x := range Delivered(s) {
			out = append(out, Tagged{Topic: t, Sample: x})
		}
	}
	slices.SortStableFunc(out, func(a, b Tagged) int {
		if c := cmp.Compare(a.Arrival, b.Arrival); c != 0 {
			return c
		}
		return a.Topic - b.Topic
	})
	return out
}
