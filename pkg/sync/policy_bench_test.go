package sync

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timealign/timealign/pkg/stamp"
)

// BenchmarkPolicies measures Add per message for every policy on the
// 3-topic jittered stream of BenchmarkApproximate (Exact on stamps rounded
// to the 10 ms grid, so sets form; Approximate also with a max interval and
// lower bounds, which exercise the virtual search).
func BenchmarkPolicies(b *testing.B) {
	msgs := benchStream(100_000)
	span := msgs[len(msgs)-1].Stamp + stamp.Time(time.Second)
	cases := []struct {
		name string
		cfg  func(*Config)
		grid bool
	}{
		{"approximate", func(*Config) {}, false},
		{"approximate-bounds", func(c *Config) {
			c.MaxInterval = 5 * time.Millisecond
			c.LowerBounds = []time.Duration{9 * time.Millisecond, 19 * time.Millisecond, 49 * time.Millisecond}
		}, false},
		{"exact", func(c *Config) { c.Policy = Exact }, true},
		{"epsilon", func(c *Config) { c.Policy, c.Epsilon = Epsilon, 3*time.Millisecond }, false},
		{"latest", func(c *Config) { c.Policy = Latest }, false},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			cfg := DefaultConfig()
			cfg.Topics = 3
			tc.cfg(&cfg)
			sets := 0
			s, err := New(cfg, func([]Message[int]) { sets++ }, nil)
			require.NoError(b, err)
			b.ReportAllocs()
			i, pass := 0, stamp.Time(0)
			for b.Loop() {
				m := msgs[i]
				m.Stamp += pass
				if tc.grid {
					m.Stamp -= m.Stamp % stamp.Time(10*time.Millisecond)
				}
				m.Arrival = m.Stamp
				s.Add(m)
				if i++; i == len(msgs) {
					i, pass = 0, pass+span
				}
			}
			if sets == 0 && b.N > 1000 {
				b.Fatal("no set published")
			}
		})
	}
}
