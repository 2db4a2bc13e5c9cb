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
// # Runs and streams
//
// A run's length is a Count of samples or a Duration of true time. Three
// streams yield a run without holding it, so it may be arbitrarily long:
//
//   - [Generator]: every sample in acquisition order, lost ones included.
//     O(1) time a sample and constant memory: a batch's samples are all
//     received when its last one arrives, so when a batch starts the
//     generator runs a copy of itself ahead to that sample, simulating the
//     batch's samples twice instead of holding them.
//   - [Delivery]: the delivered samples in arrival order, acquisition order
//     among equal arrivals. With in-order transport arrivals never go back
//     and nothing is held; with Reorder a sample is held until the true
//     time of the next acquisition reaches its arrival (nothing arrives
//     before it is acquired), in a binary heap: memory O(m) and O(log m)
//     time a sample for m samples in flight, about (slowest latency)/Period.
//   - [MergedDelivery]: several runs by arrival, ties to the lower topic,
//     then acquisition order; O(k) time a sample for k runs.
//
// [Generate], [Delivered] and [Merge] are their slice forms: the streams
// yield exactly what they return, sample for sample. Generate costs O(n)
// time and memory for n samples, at most MaxCount. In steady state no
// stream allocates.
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
	// Count is the number of samples acquired, lost ones included. It
	// defaults to 1000. A run's length is set by exactly one of Count and
	// Duration: set Count to 0 to run for a Duration. [Generate] holds at
	// most MaxCount samples; the streams ([NewGenerator]) any run of at
	// most MaxStreamCount.
	Count int
	// Duration is the run's length in true time, the alternative to Count:
	// samples are acquired while their true time since Start (rounded to
	// the nanosecond, host clock steps not counted) is below Duration. The
	// first sample is at Start; without skew there are ceil(Duration /
	// Period) samples. It defaults to 0 (Count sets the length).
	Duration time.Duration
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

// MaxCount bounds the run that [Generate] returns as a slice, so that its
// memory stays bounded (80 bytes a sample). The streams ([NewGenerator],
// [NewDelivery], [NewMergedDelivery]) do not hold the run and have no such
// limit.
const MaxCount = 20_000_000

// MaxStreamCount bounds the samples of any run (Count, or Duration over the
// shortest true period): true time accumulates in float64 nanoseconds, which
// must still resolve a fraction of a period at the end of the run
// (2^-52·2^40 = 1/4096).
const MaxStreamCount int64 = 1 << 40

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
	case c.Count < 0:
		return bad("Count", "is %d, want > 0 (or 0 to run for a {Duration})", c.Count)
	case c.Duration < 0:
		return bad("Duration", "is %v, want > 0 (or 0 to run for {Count} samples)", c.Duration)
	case c.Count == 0 && c.Duration == 0:
		return bad("Count", "is 0 and so is {Duration}: set one of them (the run's length)")
	case c.Count > 0 && c.Duration > 0:
		return bad("Count", "is %d and {Duration} is %v: set exactly one of them (the run's length)", c.Count, c.Duration)
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
	return c.validateRun()
}

// validateRun checks what depends on the run's length: its sample count,
// the device clock's rate throughout, and the range of its stamps. It
// follows the field checks (Period > 0, |SkewPPM| < 1e5).
func (c Config) validateRun() error {
	// end bounds the true time of the last sample, and n the samples: the
	// rate stays within (0.9, 1.1) (checked below, for times up to end), so
	// a Count run takes at most Count·Period/0.9, and a Duration run at most
	// Duration·1.1/Period + 1 samples.
	field, n, end := "Count", float64(c.Count), float64(c.Count)*float64(c.Period)/0.9
	nominal := float64(c.Count) * float64(c.Period)
	if c.Duration > 0 {
		field, end, nominal = "Duration", float64(c.Duration), float64(c.Duration)
		n = end*1.1/float64(c.Period) + 1
	}
	if n > float64(MaxStreamCount) {
		return bad(field, "of about %.3g samples of %v is too long, want at most MaxStreamCount (2^40) samples", n, c.Period)
	}
	// The skew is linear in time: if it is in range at both ends, it is
	// throughout, and true time advances by at least Period/1.1 a sample.
	if skew := c.Clock.SkewPPM + c.Clock.DriftPPMPerHour*end/float64(time.Hour); !(math.Abs(skew) < 1e5) {
		return bad("Clock.DriftPPMPerHour", "is %v: the skew reaches %.0f ppm within the run, want |skew| < 100000 throughout", c.Clock.DriftPPMPerHour, skew)
	}
	// The last stamp must stay far from int64 overflow: twice the run's
	// nominal length fits in half the room after Start.
	if span := nominal * 2; span > (float64(stamp.Max)-float64(c.Start))/2 || float64(c.Start) < float64(stamp.Min)/2 {
		if c.Duration > 0 {
			return bad("Start", "%v with a run of %v overflows int64 nanoseconds", c.Start, c.Duration)
		}
		return bad("Start", "%v with %d samples of %v overflows int64 nanoseconds", c.Start, c.Count, c.Period)
	}
	return nil
}

// rateAt is the device clock's rate (device time per true time) at true
// time t ns after Start.
func (c *Config) rateAt(t float64) float64 {
	return 1 + (c.Clock.SkewPPM+c.Clock.DriftPPMPerHour*t/float64(time.Hour))*1e-6
}

// durationCount bounds the samples of a valid Duration run.
func (c *Config) durationCount() (lo, hi float64) {
	r0, r1 := c.rateAt(0), c.rateAt(float64(c.Duration))
	per := float64(c.Duration) / float64(c.Period)
	return math.Floor(per * min(r0, r1)), math.Ceil(per*max(r0, r1)) + 1
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

// newRNG returns the PCG stream of one concern. It is a value, so that a
// copy of the generator's state (the batch look-ahead) copies it too.
func newRNG(seed uint64, concern uint64) rand.PCG {
	return *rand.NewPCG(seed, 0x9e3779b97f4a7c15*concern)
}

// uniform returns a uniform float64 in [0, 1) built from the top 53 bits
// of the next draw of g, so it is the same on every machine.
func uniform(g *rand.PCG) float64 { return float64(g.Uint64()>>11) * 0x1p-53 }

func wrap(v uint64, bits int) uint64 {
	if bits == 0 || bits >= 64 {
		return v
	}
	return v & (1<<uint(bits) - 1)
}

// roundDur rounds ns to a Duration, saturating at the extreme durations (a
// Pareto tail can be infinite) instead of the undefined conversion.
func roundDur(ns float64) time.Duration {
	r := math.Round(ns)
	switch {
	case !(r < 0x1p63): // too large, or NaN
		return time.Duration(math.MaxInt64)
	case r < -0x1p63:
		return time.Duration(math.MinInt64)
	}
	return time.Duration(r)
}

// Generate simulates cfg and returns every sample in acquisition order,
// lost ones included: what a [Generator] yields, in a slice of at most
// MaxCount samples. Stream longer runs with [NewGenerator].
func Generate(cfg Config) ([]Sample, error) {
	g, err := NewGenerator(cfg)
	if err != nil {
		return nil, err
	}
	n := cfg.Count
	if cfg.Duration > 0 {
		lo, hi := cfg.durationCount()
		if lo > MaxCount {
			return nil, bad("Duration", "%v of %v samples is at least %.0f samples, more than MaxCount (%d) for Generate: stream the run with NewGenerator", cfg.Duration, cfg.Period, lo, MaxCount)
		}
		n = int(min(hi, MaxCount))
	} else if n > MaxCount {
		return nil, bad("Count", "is %d, more than MaxCount (%d) for Generate: stream the run with NewGenerator", n, MaxCount)
	}
	samples := make([]Sample, 0, n)
	for s, ok := g.Next(); ok; s, ok = g.Next() {
		if len(samples) == MaxCount {
			return nil, bad("Duration", "%v of %v is more than MaxCount (%d) samples for Generate: stream the run with NewGenerator", cfg.Duration, cfg.Period, MaxCount)
		}
		samples = append(samples, s)
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
	Topic int // index of the stream in the arguments of Merge or NewMergedDelivery
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
