package sync

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/timealign/timealign/pkg/stamp"
)

// alignerBenchStream is a 3-stream arrival sequence: 100, 50 and 20 Hz
// with different latencies and jitter, 1 % loss, merged in arrival order.
func alignerBenchStream(n int) []alignerEv {
	r := rand.New(rand.NewPCG(1, 2))
	periods := []stamp.Time{10e6, 20e6, 50e6}
	base := []stamp.Time{2e6, 15e6, 40e6}
	type arr struct {
		at stamp.Time
		e  alignerEv
	}
	var all []arr
	span := stamp.Time(n) * stamp.Time(time.Second) / 170 // 170 samples a second
	var idx, ends []int
	for s, p := range periods {
		idx = append(idx, len(all))
		at := stamp.Time(0)
		for t := stamp.Time(0); t < span; t += p {
			if r.Float64() < 0.01 {
				continue
			}
			at = max(at, t+base[s]+stamp.Time(r.Int64N(int64(p/2)))) // in order on its link
			all = append(all, arr{at, alignerEv{'p', s, t}})
		}
		ends = append(ends, len(all))
	}
	// merge by arrival
	evs := make([]alignerEv, 0, len(all))
	for {
		best := -1
		for s := range idx {
			if idx[s] < ends[s] && (best < 0 || all[idx[s]].at < all[idx[best]].at) {
				best = s
			}
		}
		if best < 0 {
			return evs
		}
		evs = append(evs, all[idx[best]].e)
		idx[best]++
	}
}

// BenchmarkAlignerPush: one push and a drain per arrival, steady state;
// reports pushes per second.
func BenchmarkAlignerPush(b *testing.B) {
	evs := alignerBenchStream(300_000)
	cfg := DefaultAlignerConfig()
	cfg.Timeout = 100 * time.Millisecond
	for _, p := range []time.Duration{10e6, 20e6, 50e6} {
		cfg.Streams = append(cfg.Streams, DefaultStreamConfig(p))
	}
	a, err := NewStreamAligner[[]byte](cfg)
	if err != nil {
		b.Fatal(err)
	}
	msg := make([]byte, 64)
	played := 0
	play := func(StreamSample[[]byte]) { played++ }
	span := evs[len(evs)-1].t + stamp.Time(time.Second)
	var offset stamp.Time
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		k := i % len(evs)
		if k == 0 && i > 0 {
			offset += span
		}
		e := evs[k]
		a.Push(e.stream, e.t+offset, msg)
		a.Drain(play)
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "pushes/s")
	if played == 0 {
		b.Fatal("nothing played")
	}
}

// BenchmarkAlignerTable runs the table's cases (push, step, drain...).
func BenchmarkAlignerTable(b *testing.B) {
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		c := alignerCases[i%len(alignerCases)]
		a, _ := NewStreamAligner[int](AlignerConfig{Timeout: c.timeout, Streams: c.streams, MaxBufferSize: 1 << 10})
		for _, e := range c.events {
			alignerApply(a, e, nil)
		}
	}
}
