package sim

import (
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/timealign/timealign/pkg/stamp"
)

// drawConfig draws a valid config that may use every feature of the
// simulator: loss and bursts, batches, reorder, outliers, each jitter,
// reboots, host steps, narrow tick and index counters, a run given as a
// Count or a Duration.
func drawConfig(t *rapid.T, name string) Config {
	c := DefaultConfig()
	c.Seed = rapid.Uint64().Draw(t, name+".seed")
	c.Start = stamp.Time(rapid.Int64Range(-1e18, 4e18).Draw(t, name+".start"))
	c.Period = time.Duration(rapid.Int64Range(1000, 50_000_000).Draw(t, name+".period"))
	n := rapid.IntRange(1, 3000).Draw(t, name+".n")
	run := time.Duration(n) * c.Period
	if rapid.Bool().Draw(t, name+".byDuration") {
		c.Count, c.Duration = 0, time.Duration(rapid.Int64Range(1, int64(run)).Draw(t, name+".duration"))
	} else {
		c.Count = n
	}
	durs := func(label string, lo, hi time.Duration, maxLen int) []time.Duration {
		d := rapid.SliceOfN(rapid.Int64Range(int64(lo), int64(hi)), 0, maxLen).Draw(t, label)
		out := make([]time.Duration, len(d))
		for i, x := range d {
			out[i] = time.Duration(x)
		}
		slices.Sort(out)
		return out
	}
	c.Clock = Clock{
		Offset:          time.Duration(rapid.Int64Range(0, 1e13).Draw(t, name+".offset")),
		SkewPPM:         rapid.Float64Range(-500, 500).Draw(t, name+".skew"),
		DriftPPMPerHour: rapid.Float64Range(-2000, 2000).Draw(t, name+".drift"),
		TickPeriod:      time.Duration(rapid.Int64Range(1, 1_000_000).Draw(t, name+".tickPeriod")),
		TickBits:        rapid.IntRange(0, 64).Draw(t, name+".tickBits"),
		SendDelay:       time.Duration(rapid.Int64Range(0, 5e6).Draw(t, name+".sendDelay")),
		Reboots:         durs(name+".reboots", 1, run, 3),
	}
	c.IndexBits = rapid.IntRange(0, 64).Draw(t, name+".indexBits")
	c.Latency = Latency{
		Base:    time.Duration(rapid.Int64Range(0, 20e6).Draw(t, name+".base")),
		Kind:    rapid.SampledFrom([]Jitter{None, Uniform, Exponential, Pareto}).Draw(t, name+".kind"),
		Scale:   time.Duration(rapid.Int64Range(0, 30e6).Draw(t, name+".scale")),
		Reorder: rapid.Bool().Draw(t, name+".reorder"),
	}
	if rapid.Bool().Draw(t, name+".shaped") {
		c.Latency.Shape = rapid.Float64Range(0.3, 5).Draw(t, name+".shape")
	}
	if rapid.Bool().Draw(t, name+".outliers") {
		c.Latency.OutlierProb = rapid.Float64Range(0, 0.3).Draw(t, name+".outlierProb")
		c.Latency.OutlierMax = time.Duration(rapid.Int64Range(0, 300e6).Draw(t, name+".outlierMax"))
	}
	if rapid.Bool().Draw(t, name+".lossy") {
		c.Loss.Prob = rapid.Float64Range(0, 0.5).Draw(t, name+".lossProb")
		if rapid.Bool().Draw(t, name+".bursts") {
			c.Loss.BurstProb = rapid.Float64Range(0, 0.1).Draw(t, name+".burstProb")
			c.Loss.BurstLen = rapid.Float64Range(1, 20).Draw(t, name+".burstLen")
		}
	}
	if rapid.Bool().Draw(t, name+".batched") {
		c.Batch = Batch{
			Prob: rapid.Float64Range(0, 1).Draw(t, name+".batchProb"),
			Size: rapid.IntRange(2, 9).Draw(t, name+".batchSize"),
		}
	}
	at := durs(name+".stepAt", 1, run, 3)
	for _, a := range at {
		by := time.Duration(rapid.Int64Range(-10e9, 10e9).Draw(t, name+".stepBy"))
		c.HostSteps = append(c.HostSteps, Step{At: a, By: by})
	}
	if err := c.Validate(); err != nil {
		t.Fatalf("drawConfig made an invalid config: %v", err)
	}
	return c
}

// collect drains a stream.
func collect[T any](next func() (T, bool)) []T {
	var out []T
	for x, ok := next(); ok; x, ok = next() {
		out = append(out, x)
	}
	return out
}

// requireSame fails at the first element where got and want differ.
func requireSame[T comparable](t require.TestingT, want, got []T, what string) {
	for i := range min(len(want), len(got)) {
		if want[i] != got[i] {
			require.Failf(t, what+" differ", "at %d:\nwant %+v\n got %+v", i, want[i], got[i])
		}
	}
	require.Equal(t, len(want), len(got), what+": lengths")
}

// countConfig is c with its run given as the Count of samples n.
func countConfig(c Config, n int) Config {
	c.Count, c.Duration = n, 0
	return c
}

// TestGenerateMatchesLegacy: Generate, now built on the Generator, gives
// the samples the slice implementation gave, for Count and Duration runs
// (a Duration run is the Count run of as many samples). The one change: a
// latency past the int64 range (a heavy Pareto tail) saturates at the
// largest Duration, where the slice implementation's conversion was
// undefined (on amd64 the most negative one); those stamps are not
// compared.
func TestGenerateMatchesLegacy(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := drawConfig(t, "c")
		got, err := Generate(c)
		require.NoError(t, err)
		if c.Duration > 0 {
			require.NotEmpty(t, got, "a Duration run has at least its first sample")
		}
		want := legacyGenerate(countConfig(c, len(got)))
		never := c.Start.Add(math.MaxInt64) // the arrival of a saturated latency
		for i := range min(len(got), len(want)) {
			if got[i].Arrival == never {
				require.Equal(t, Pareto, c.Latency.Kind)
				want[i].Arrival, want[i].Receive = got[i].Arrival, got[i].Receive
			}
		}
		requireSame(t, want, got, "Generate and the legacy slice generator")
	})
}

// TestStreamsMatchSlices: the streams yield exactly what Generate,
// Delivered and Merge give.
func TestStreamsMatchSlices(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		k := rapid.IntRange(1, 4).Draw(t, "streams")
		cfgs := make([]Config, k)
		all := make([][]Sample, k)
		for i := range cfgs {
			cfgs[i] = drawConfig(t, fmt.Sprint("c", i))
			s, err := Generate(cfgs[i])
			require.NoError(t, err)
			all[i] = s

			g, err := NewGenerator(cfgs[i])
			require.NoError(t, err)
			requireSame(t, s, collect(g.Next), "Generator and Generate")
			d, err := NewDelivery(cfgs[i])
			require.NoError(t, err)
			requireSame(t, Delivered(s), collect(d.Next), "Delivery and Delivered")
			if !cfgs[i].Latency.Reorder {
				require.Zero(t, d.held.cap(), "in-order delivery holds nothing")
			}
		}
		m, err := NewMergedDelivery(cfgs...)
		require.NoError(t, err)
		requireSame(t, Merge(all...), collect(m.Next), "MergedDelivery and Merge")
	})
}

func (h arrivalHeap) cap() int { return cap(h) }

// TestTiedArrivals: streams whose samples arrive at the same instants (a
// zero latency on a common grid, batches) keep Merge's tie order: lower
// topic, then acquisition order.
func TestTiedArrivals(t *testing.T) {
	var cfgs []Config
	var all [][]Sample
	for i, p := range []time.Duration{10, 20, 10, 5} {
		c := DefaultConfig()
		c.Seed, c.Count, c.Period = uint64(i+1), 400, p*time.Millisecond
		c.Latency = Latency{Base: 3 * time.Millisecond, Kind: Uniform, Scale: time.Duration(i%2) * 7 * time.Millisecond, Reorder: i%2 == 1}
		c.Batch = Batch{Prob: 0.2, Size: 3}
		s, err := Generate(c)
		require.NoError(t, err)
		cfgs, all = append(cfgs, c), append(all, s)
	}
	want := Merge(all...)
	ties := 0
	for i := 1; i < len(want); i++ {
		if want[i].Arrival == want[i-1].Arrival {
			ties++
		}
	}
	require.Greater(t, ties, 100, "the case has ties to break")
	m, err := NewMergedDelivery(cfgs...)
	require.NoError(t, err)
	requireSame(t, want, collect(m.Next), "MergedDelivery and Merge")
}

// TestDuration: a Duration run starts at Start, ends before Start+Duration,
// and without skew has ceil(Duration/Period) samples.
func TestDuration(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := DefaultConfig()
		c.Seed = rapid.Uint64().Draw(t, "seed")
		c.Period = time.Duration(rapid.Int64Range(1, 100e6).Draw(t, "period"))
		c.Count = 0
		c.Duration = time.Duration(rapid.Int64Range(1, 5000).Draw(t, "periods")) * c.Period
		if rapid.Bool().Draw(t, "offGrid") {
			c.Duration += time.Duration(rapid.Int64Range(-int64(c.Period)+1, int64(c.Period)-1).Draw(t, "off"))
			c.Duration = max(c.Duration, 1)
		}
		skewed := rapid.Bool().Draw(t, "skewed")
		if skewed {
			c.Clock.SkewPPM = rapid.Float64Range(-1000, 1000).Draw(t, "skew")
		}
		g, err := NewGenerator(c)
		require.NoError(t, err)
		s := collect(g.Next)
		require.NotEmpty(t, s)
		require.Equal(t, c.Start, s[0].True, "the first sample is at Start")
		last := s[len(s)-1].True.Sub(c.Start)
		require.Less(t, last, c.Duration, "the last sample is before Start+Duration")
		// The next sample would have been at or after the end.
		next := float64(last) + float64(c.Period)/c.rateAt(float64(last))
		require.GreaterOrEqual(t, next, float64(c.Duration)-1)
		if !skewed {
			want := (c.Duration + c.Period - 1) / c.Period
			require.Equal(t, int(want), len(s), "ceil(Duration/Period) samples")
		}
		lo, hi := c.durationCount()
		require.LessOrEqual(t, lo, float64(len(s)))
		require.GreaterOrEqual(t, hi, float64(len(s)))
	})
}

// TestLongRun: a Duration far beyond MaxCount's slice streams and ends. A
// 250 Hz sensor for a day (21.6 million samples) would take long to
// simulate, so the test drives only the acquirer's clock, as the
// acquirer does, and checks the end of the run.
func TestLongRun(t *testing.T) {
	c := DefaultConfig()
	c.Count, c.Duration, c.Period = 0, 24*time.Hour, 4*time.Millisecond
	c.Clock.SkewPPM, c.Clock.DriftPPMPerHour = 30, -5
	require.NoError(t, c.Validate())
	_, err := Generate(c)
	require.ErrorContains(t, err, "MaxCount")
	g, err := NewGenerator(c)
	require.NoError(t, err)
	lo, hi := c.durationCount()
	a, n := g.acq, 0
	for !a.done() {
		a.rate = c.rateAt(a.elapsed)
		a.elapsed += a.period / a.rate
		n++
	}
	g.acq = a
	require.GreaterOrEqual(t, float64(n), lo)
	require.LessOrEqual(t, float64(n), hi)
	_, ok := g.Next()
	require.False(t, ok)
	require.Equal(t, stamp.Max, g.horizon())
}

// TestDeliveryBounded streams a million samples with reordering, outliers
// and batches, and checks that the samples the stream holds stay below
// the bound the config gives: a sample is held only while it is in
// flight, and with at most dmax of latency, a batch spanning Size
// acquisitions and acquisitions at least Period/maxRate apart, at most
// W/(Period/maxRate)+1 samples are, with W = dmax + (Size−1)·Period/minRate.
func TestDeliveryBounded(t *testing.T) {
	const n = 1_000_000
	c := DefaultConfig()
	c.Count = n
	c.Clock.SkewPPM, c.Clock.DriftPPMPerHour = 40, -10
	c.Latency = Latency{Base: 5 * time.Millisecond, Kind: Uniform, Scale: 40 * time.Millisecond,
		OutlierProb: 0.01, OutlierMax: 200 * time.Millisecond, Reorder: true}
	c.Batch = Batch{Prob: 0.1, Size: 5}
	r0, r1 := c.rateAt(0), c.rateAt(float64(n)*float64(c.Period))
	minRate, maxRate := min(r0, r1), max(r0, r1)
	dmax := float64(c.Latency.Base + c.Latency.Scale + c.Latency.OutlierMax)
	w := dmax + float64(c.Batch.Size-1)*float64(c.Period)/minRate + 1
	bound := int(w/(float64(c.Period)/maxRate)) + 1

	d, err := NewDelivery(c)
	require.NoError(t, err)
	most, got := 0, 0
	last := Sample{Arrival: stamp.Min}
	for s, ok := d.Next(); ok; s, ok = d.Next() {
		require.False(t, earlier(&s, &last), "arrival order")
		last = s
		most = max(most, d.heldLen())
		got++
	}
	require.Equal(t, n, got)
	require.LessOrEqual(t, most, bound, "held samples")
	require.Greater(t, most, bound/4, "the stream does hold the samples in flight")
	t.Logf("held at most %d samples (bound %d) over %d", most, bound, n)
}

// TestDeliveryHoldsOnlyInFlight: with unbounded (Pareto) latency, loss and
// batches the stream holds exactly what it must: it pulls a new
// acquisition only when the next sample in arrival order could still be
// overtaken. The count is computed independently from Generate's slice.
func TestDeliveryHoldsOnlyInFlight(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := drawConfig(t, "c")
		c.HostSteps = nil // True is then Start + elapsed: the horizon
		c.Latency.Reorder = true
		all, err := Generate(c)
		require.NoError(t, err)
		horizon := func(p int) stamp.Time {
			if p < len(all) {
				return all[p].True
			}
			return stamp.Max
		}
		// pulled counts the acquisitions the stream needs to yield each
		// delivered sample in turn.
		d, err := NewDelivery(c)
		require.NoError(t, err)
		pulled, delivered, k := 0, 0, 0
		for _, want := range Delivered(all) {
			p := want.Seq + 1
			for horizon(p) < want.Arrival {
				p++
			}
			for ; pulled < p; pulled++ {
				if !all[pulled].Lost {
					delivered++
				}
			}
			got, ok := d.Next()
			require.True(t, ok)
			require.Equal(t, want, got)
			k++
			require.Equal(t, delivered-k, d.heldLen(), "held after %d samples", k)
		}
		_, ok := d.Next()
		require.False(t, ok)
	})
}

// TestStreamAllocs: in steady state the streams allocate nothing per
// sample.
func TestStreamAllocs(t *testing.T) {
	c := scenario(t, 8, 1_000_000) // reorder
	c.Batch = Batch{Prob: 0.05, Size: 4}
	c.Latency.Kind = Uniform // bounded: the held samples reach their most early
	g, err := NewGenerator(c)
	require.NoError(t, err)
	d, err := NewDelivery(c)
	require.NoError(t, err)
	a, b := c, c
	b.Seed, b.Period = 9, 7*time.Millisecond
	m, err := NewMergedDelivery(a, b)
	require.NoError(t, err)
	for range 100_000 {
		g.Next()
		d.Next()
		m.Next()
	}
	require.Zero(t, testing.AllocsPerRun(10_000, func() { g.Next() }), "Generator")
	require.Zero(t, testing.AllocsPerRun(10_000, func() { d.Next() }), "Delivery")
	require.Zero(t, testing.AllocsPerRun(10_000, func() { m.Next() }), "MergedDelivery")
}

func TestStreamErrors(t *testing.T) {
	bad := DefaultConfig()
	bad.Period = 0
	_, err := NewGenerator(bad)
	require.ErrorIs(t, err, ErrConfig)
	_, err = NewDelivery(bad)
	require.ErrorIs(t, err, ErrConfig)
	_, err = NewMergedDelivery(DefaultConfig(), bad)
	require.ErrorIs(t, err, ErrConfig)
	require.ErrorContains(t, err, "stream 1")
	m, err := NewMergedDelivery()
	require.NoError(t, err)
	_, ok := m.Next()
	require.False(t, ok)
}

// TestStreamOwnsConfig: changing the caller's slices after NewGenerator
// changes nothing.
func TestStreamOwnsConfig(t *testing.T) {
	c := scenario(t, 6, 1000) // host steps
	c.Clock.Reboots = []time.Duration{3 * time.Second}
	want, err := Generate(c)
	require.NoError(t, err)
	g, err := NewGenerator(c)
	require.NoError(t, err)
	c.HostSteps[0].By, c.Clock.Reboots[0] = time.Hour, time.Second
	requireSame(t, want, collect(g.Next), "samples")
}

// TestInfiniteLatency: a Pareto draw can be infinite; the sample then
// arrives at stamp.Max, never at a wrapped stamp, and holds up the
// in-order samples behind it.
func TestInfiniteLatency(t *testing.T) {
	c := DefaultConfig()
	c.Count = 20000
	c.Latency = Latency{Kind: Pareto, Scale: time.Millisecond, Shape: 0.02}
	s, err := Generate(c)
	require.NoError(t, err)
	inf := slices.IndexFunc(s, func(x Sample) bool { return x.Arrival == stamp.Max })
	require.GreaterOrEqual(t, inf, 0, "the case has an infinite draw")
	for _, x := range s[inf:] {
		require.Equal(t, stamp.Max, x.Arrival)
	}
	for _, x := range s[:inf] {
		require.Less(t, x.Arrival, stamp.Max)
		require.GreaterOrEqual(t, x.Arrival, x.True)
	}
	c.Latency.Scale = 0 // zero times infinity is no NaN
	s, err = Generate(c)
	require.NoError(t, err)
	for _, x := range s {
		require.Equal(t, x.True, x.Arrival)
	}
	require.Equal(t, time.Duration(math.MaxInt64), roundDur(math.Inf(1)))
	require.Equal(t, time.Duration(math.MaxInt64), roundDur(math.NaN()))
	require.Equal(t, time.Duration(math.MinInt64), roundDur(-1e300))
}

func benchStream(b *testing.B, next func(Config) func() bool) {
	for i, sc := range scenarios {
		b.Run(sc.name, func(b *testing.B) {
			c := scenario(b, i, 10_000_000)
			step := next(c)
			b.ReportAllocs()
			for b.Loop() {
				if !step() {
					step = next(c)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/sample")
		})
	}
}

// BenchmarkGenerator: one op is one sample, in acquisition order.
func BenchmarkGenerator(b *testing.B) {
	benchStream(b, func(c Config) func() bool {
		g, err := NewGenerator(c)
		if err != nil {
			b.Fatal(err)
		}
		return func() bool { _, ok := g.Next(); return ok }
	})
}

// BenchmarkDelivery: one op is one delivered sample, in arrival order.
func BenchmarkDelivery(b *testing.B) {
	benchStream(b, func(c Config) func() bool {
		d, err := NewDelivery(c)
		if err != nil {
			b.Fatal(err)
		}
		return func() bool { _, ok := d.Next(); return ok }
	})
}

// BenchmarkMergedDelivery: one op is one sample of three merged streams
// (the scenario, and two presets).
func BenchmarkMergedDelivery(b *testing.B) {
	benchStream(b, func(c Config) func() bool {
		cam, _ := LookupPreset("camera")
		lidar, _ := LookupPreset("lidar")
		cam.Config.Count, lidar.Config.Count = c.Count/3, c.Count/10
		m, err := NewMergedDelivery(c, cam.Config, lidar.Config)
		if err != nil {
			b.Fatal(err)
		}
		return func() bool { _, ok := m.Next(); return ok }
	})
}
