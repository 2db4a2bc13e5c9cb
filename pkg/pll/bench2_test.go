package pll

import (
	"testing"
	"time"
)

// BenchmarkUpdate measures one UpdateScan plus one Corrected per sample in
// steady state: a 25 Hz stream with a 32-bit µs tick clock (wrapping),
// 20 ppm skew, 1–3 ms latency and 1 % outliers, after a warm-up.
func BenchmarkUpdate(b *testing.B) {
	for _, m := range []Mode{Sick, Regression, Envelope, Offset} {
		b.Run(m.String(), func(b *testing.B) {
			cfg := SickConfig()
			cfg.Mode = m
			p, err := New(cfg)
			if err != nil {
				b.Fatal(err)
			}
			var x uint64 = 88172645463325252 // xorshift state
			tk := uint64(1<<32 - 20_000_000)
			truth := base
			next := func() {
				x ^= x << 13
				x ^= x >> 7
				x ^= x << 17
				truth = truth.Add(40*time.Millisecond + 800*time.Nanosecond)
				tk += 40_000
				lat := time.Millisecond + time.Duration(x%2_000_000)
				if x%100 == 0 {
					lat += 50 * time.Millisecond
				}
				p.UpdateScan(truth.Add(lat), tk&0xffffffff, tk&0xffffffff)
				p.Corrected(tk & 0xffffffff)
			}
			for range 2 * cfg.Window {
				next()
			}
			if !p.Valid() {
				b.Fatal("not locked after warm-up")
			}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				next()
			}
		})
	}
}
