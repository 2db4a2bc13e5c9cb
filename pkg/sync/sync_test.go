package sync

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/timealign/timealign/internal/testutil/fuzzcheck"
	"github.com/timealign/timealign/pkg/stamp"
)

type rec struct {
	sets  [][]stamp.Time
	drops map[DropReason]int
	used  map[[2]int64]int // (topic, stamp) → times in a set
}

func collect[T any](t require.TestingT, cfg Config) (Synchronizer[T], *rec) {
	r := &rec{drops: map[DropReason]int{}, used: map[[2]int64]int{}}
	s, err := New(cfg, func(set []Message[T]) {
		st := make([]stamp.Time, len(set))
		for i, m := range set {
			require.Equal(t, i, m.Topic, "sets are in topic order")
			st[i] = m.Stamp
			r.used[[2]int64{int64(i), int64(m.Stamp)}]++
		}
		r.sets = append(r.sets, st)
	}, func(m Message[T], why DropReason) { r.drops[why]++ })
	require.NoError(t, err)
	return s, r
}

func TestScale(t *testing.T) {
	for _, tc := range []struct {
		d    int64
		f    float64
		want int64
	}{
		{10, 1.1, 11}, {3, 1.1, 3}, {-10, 1.1, -11}, {0, 1.5, 0}, {1_000_000_000, 1.1, 1_100_000_000},
		{7, 0.5, 3}, {-7, 0.5, -3}, {math.MaxInt64, 2, math.MaxInt64}, {math.MinInt64, 2, math.MinInt64},
		{-123456789012345, 1.1, -135802467913579}, {999999999, 1.1, 1099999998}, {-1000000001, 1.1, -1100000001},
		// Computed by g++ on x86-64 with long double, as rclcpp does: the
		// 64-bit significand rounds before the truncation.
		{4503599627370497, 1.1, 4953959590107547},
		{3540506427710223, 3, 10621519283130669},
		{7554739338216194, 1.9757027625461974, 14925919380830165},
		{8825378241455889, 1.177938847420881, 10395755873793871},
		{7118795219775673, 2.652514108528922, 18882704756183219},
		{285667017530225783, 2.0337609383925286, 580978421640066901},
		{973099562644685006, 1.3, 1265029431438090551},
		{81722069913949880, 1.001, 81803791983863820},
		{252498377754894485, 1.01, 255023361532443432},
	} {
		require.Equal(t, tc.want, scale(tc.d, tc.f), "%d × %v", tc.d, tc.f)
	}
}

// TestApproximateDocumentedExample: two topics, the first at 10 Hz with
// one late message, matched as message_filters documents.
func TestApproximateBasics(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Topics = 3
	s, r := collect[int](t, cfg)
	for i := 0; i < 10; i++ {
		base := stamp.Time(i) * stamp.Time(time.Second)
		s.Add(Message[int]{Topic: 0, Stamp: base, Arrival: base})
		s.Add(Message[int]{Topic: 1, Stamp: base + 1e6, Arrival: base})
		s.Add(Message[int]{Topic: 2, Stamp: base + 2e6, Arrival: base})
	}
	require.Len(t, r.sets, 9, "the last set waits for a possibly better one")
	st := s.Status()
	require.Equal(t, uint64(9), st.Sets)
	require.Equal(t, 2*time.Millisecond, st.MaxSpread)
	require.Equal(t, []stamp.Time{9e9, 9e9 + 1e6, 9e9 + 2e6}, st.LastStamp)
	s.Add(Message[int]{Topic: 7, Stamp: 1})
	require.Equal(t, uint64(1), s.Status().BadTopic)
}

// randomStream returns messages of n topics with loss, jitter and
// out-of-order arrival across topics.
func randomStream(r *rand.Rand, n, count int) []Message[int] {
	var msgs []Message[int]
	for topic := 0; topic < n; topic++ {
		period := time.Duration(5+r.IntN(50)) * time.Millisecond
		t := stamp.Time(r.IntN(20)) * stamp.Time(time.Millisecond)
		for k := 0; k < count; k++ {
			t = t.Add(period + time.Duration(r.IntN(3000))*time.Microsecond)
			if r.Float64() < 0.05 {
				continue // lost
			}
			lat := time.Duration(r.IntN(40)) * time.Millisecond
			msgs = append(msgs, Message[int]{Topic: topic, Stamp: t, Arrival: t.Add(lat)})
		}
	}
	// Arrival order across topics; per topic, arrival follows stamp order.
	slices.SortStableFunc(msgs, func(a, b Message[int]) int { return cmp.Compare(a.Arrival, b.Arrival) })
	for topic := 0; topic < n; topic++ {
		var idx []int
		var st []stamp.Time
		for i, m := range msgs {
			if m.Topic == topic {
				idx, st = append(idx, i), append(st, m.Stamp)
			}
		}
		slices.Sort(st)
		for j, i := range idx {
			msgs[i].Stamp = st[j]
		}
	}
	return msgs
}

// TestApproximateProperties checks the documented properties of the
// algorithm on random streams: each message in at most one set, sets in
// increasing order per topic (sets never cross), and every message either
// published, dropped or still queued.
func TestApproximateProperties(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		seed := rapid.Uint64().Draw(rt, "seed")
		n := rapid.IntRange(2, 9).Draw(rt, "topics")
		cfg := DefaultConfig()
		cfg.Topics = n
		cfg.QueueSize = rapid.IntRange(1, 20).Draw(rt, "queue")
		cfg.AgePenalty = rapid.Float64Range(0, 2).Draw(rt, "age")
		if rapid.Bool().Draw(rt, "maxint") {
			cfg.MaxInterval = time.Duration(rapid.IntRange(1, 100).Draw(rt, "maxint_ms")) * time.Millisecond
		}
		msgs := randomStream(rand.New(rand.NewPCG(seed, 1)), n, 60)
		s, r := collect[int](rt, cfg)
		for _, m := range msgs {
			s.Add(m)
		}
		for k, c := range r.used {
			if c != 1 {
				rt.Fatalf("message %v used %d times", k, c)
			}
		}
		for i := 1; i < len(r.sets); i++ {
			for tp := 0; tp < n; tp++ {
				if r.sets[i][tp] <= r.sets[i-1][tp] {
					rt.Fatalf("sets %d and %d cross on topic %d", i-1, i, tp)
				}
			}
		}
		// Sets are contiguous: between two consecutive sets there is a
		// topic with no unused message (no room for another set), unless
		// messages were dropped for other reasons than a better set.
		if r.drops[QueueFull]+r.drops[MaxInterval]+r.drops[AfterDrop] == 0 {
			for i := 1; i < len(r.sets); i++ {
				room := 0
				for tp := 0; tp < n; tp++ {
					for _, m := range msgs {
						if m.Topic == tp && m.Stamp > r.sets[i-1][tp] && m.Stamp < r.sets[i][tp] {
							room++
							break
						}
					}
				}
				if room == n {
					rt.Fatalf("sets %d and %d are not contiguous: %v, %v", i-1, i, r.sets[i-1], r.sets[i])
				}
			}
		}
		for _, set := range r.sets {
			lo, hi := slices.Min(set), slices.Max(set)
			if cfg.MaxInterval > 0 && hi.Sub(lo) > cfg.MaxInterval {
				rt.Fatalf("set spread %v over max interval %v", hi.Sub(lo), cfg.MaxInterval)
			}
		}
		st := s.Status()
		total := 0
		for _, c := range r.drops {
			total += c
		}
		queued := 0
		for _, q := range st.QueueFill {
			queued += q
			if q > cfg.QueueSize {
				rt.Fatalf("queue %d over size %d", q, cfg.QueueSize)
			}
		}
		if got := len(r.sets)*n + total + queued; got != len(msgs) {
			rt.Fatalf("%d messages, %d accounted for (sets %d, drops %d, queued %d)", len(msgs), got, len(r.sets), total, queued)
		}
	})
}

// TestInterleavingIndependence: the sets do not depend on how arrivals of
// different topics interleave, as long as each topic's order is kept and
// every topic is complete (the algorithm sees the same per-topic streams).
func TestInterleavingIndependence(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		seed := rapid.Uint64().Draw(rt, "seed")
		n := rapid.IntRange(2, 5).Draw(rt, "topics")
		msgs := randomStream(rand.New(rand.NewPCG(seed, 2)), n, 30)
		cfg := DefaultConfig()
		cfg.Topics, cfg.QueueSize = n, 1000 // no overflow: order can only matter through drops
		a, ra := collect[int](rt, cfg)
		for _, m := range msgs {
			a.Add(m)
		}
		// Another interleaving: round robin over topics.
		per := make([][]Message[int], n)
		for _, m := range msgs {
			per[m.Topic] = append(per[m.Topic], m)
		}
		b, rb := collect[int](rt, cfg)
		for k := 0; ; k++ {
			any := false
			for tp := range per {
				if k < len(per[tp]) {
					b.Add(per[tp][k])
					any = true
				}
			}
			if !any {
				break
			}
		}
		// Both must agree on every set both have published (the last may
		// still be pending in one of them).
		m := min(len(ra.sets), len(rb.sets))
		if len(ra.sets)-m > 1 || len(rb.sets)-m > 1 {
			rt.Fatalf("%d vs %d sets", len(ra.sets), len(rb.sets))
		}
		for i := 0; i < m; i++ {
			if !slices.Equal(ra.sets[i], rb.sets[i]) {
				rt.Fatalf("set %d differs: %v vs %v", i, ra.sets[i], rb.sets[i])
			}
		}
	})
}

func TestExact(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Policy, cfg.Topics, cfg.QueueSize = Exact, 2, 3
	s, r := collect[int](t, cfg)
	add := func(topic int, st stamp.Time) { s.Add(Message[int]{Topic: topic, Stamp: st}) }
	add(0, 1)
	add(0, 2)
	add(1, 2) // publishes 2, drops the pending 1
	require.Equal(t, [][]stamp.Time{{2, 2}}, r.sets)
	require.Equal(t, 1, r.drops[NotMatched])
	add(0, 5)
	add(0, 5) // same stamp twice: the first is replaced
	require.Equal(t, 1, r.drops[Replaced])
	for i := 6; i < 10; i++ {
		add(1, stamp.Time(i))
	}
	require.Equal(t, 2, r.drops[QueueFull], "only 3 pending sets are kept")
	add(1, 5)
	require.Len(t, r.sets, 1, "the pending set at 5 was dropped when the queue overflowed")
}

func TestEpsilon(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Policy, cfg.Topics, cfg.Epsilon = Epsilon, 3, 5*time.Millisecond
	s, r := collect[int](t, cfg)
	ms := stamp.Time(time.Millisecond)
	for i, m := range []struct {
		topic int
		st    stamp.Time
	}{{0, 0}, {1, 3 * ms}, {2, 9 * ms}, {0, 10 * ms}, {1, 12 * ms}, {2, 14 * ms}} {
		s.Add(Message[int]{Topic: m.topic, Stamp: m.st, Arrival: stamp.Time(i)})
	}
	// 0 and 3 ms have no partner within 5 ms on topic 2 and are dropped;
	// then 9 ms is the oldest front and 10 and 12 ms lie within 5 ms of it.
	require.Equal(t, [][]stamp.Time{{10 * ms, 12 * ms, 9 * ms}}, r.sets)
	require.Equal(t, 2, r.drops[NotMatched])
	require.Equal(t, []int{0, 0, 1}, s.Status().QueueFill)
}

func TestLatest(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Policy, cfg.Topics = Latest, 2
	s, r := collect[int](t, cfg)
	ms := stamp.Time(time.Millisecond)
	// Topic 0 at 100 Hz, topic 1 at 10 Hz: sets at the rate of topic 0.
	for k := stamp.Time(0); k < 100; k++ {
		at := k * 10 * ms
		s.Add(Message[int]{Topic: 0, Stamp: at, Arrival: at})
		if k%10 == 0 {
			s.Add(Message[int]{Topic: 1, Stamp: at, Arrival: at + ms})
		}
	}
	require.Greater(t, len(r.sets), 90)
	last := r.sets[len(r.sets)-1]
	require.Equal(t, 99*10*ms, last[0])
	require.Equal(t, 90*10*ms, last[1], "the slow topic is held")
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		field string
		edit  func(*Config)
	}{
		{"Topics", func(c *Config) { c.Topics = 1 }},
		{"QueueSize", func(c *Config) { c.QueueSize = 0 }},
		{"AgePenalty", func(c *Config) { c.AgePenalty = -1 }},
		{"AgePenalty", func(c *Config) { c.AgePenalty = math.NaN() }},
		{"MaxInterval", func(c *Config) { c.MaxInterval = -1 }},
		{"LowerBounds", func(c *Config) { c.LowerBounds = []time.Duration{0, 0, 0} }},
		{"LowerBounds[1]", func(c *Config) { c.LowerBounds = []time.Duration{0, -1} }},
		{"Epsilon", func(c *Config) { c.Epsilon = -1 }},
		{"Policy", func(c *Config) { c.Policy = 9 }},
	} {
		c := DefaultConfig()
		tc.edit(&c)
		_, err := New(c, func([]Message[int]) {}, nil)
		require.ErrorIs(t, err, ErrConfig)
		require.Contains(t, err.Error(), tc.field)
	}
	_, err := ParsePolicy("fastest")
	require.ErrorIs(t, err, ErrConfig)
}

// FuzzPolicies feeds arbitrary arrival sequences to every policy: each
// finishes within fuzzcheck.Deadline, never a panic, queues within their
// bounds.
func FuzzPolicies(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, uint8(2), uint8(3))
	f.Add([]byte{9, 9, 9, 0, 0, 0, 255, 1, 128}, uint8(3), uint8(1))
	f.Fuzz(func(t *testing.T, ops []byte, topics, queue uint8) {
		for p := Approximate; p <= Latest; p++ {
			cfg := DefaultConfig()
			cfg.Policy, cfg.Topics, cfg.QueueSize = p, 2+int(topics%8), 1+int(queue%16)
			cfg.Epsilon = 3
			describe := func() string { return fmt.Sprintf("%+v, ops %v", cfg, ops) }
			fuzzcheck.Finish(t, describe, func(t *fuzzcheck.T) {
				s, err := New(cfg, func([]Message[int]) {}, nil)
				require.NoError(t, err)
				now := stamp.Time(0)
				for i, op := range ops {
					t.Step(i)
					now += stamp.Time(op % 7)
					s.Add(Message[int]{Topic: int(op) % (cfg.Topics + 1), Stamp: stamp.Time(int(op)*3 - i), Arrival: now})
				}
				for _, q := range s.Status().QueueFill {
					require.LessOrEqual(t, q, max(cfg.QueueSize, 1)+1)
				}
			})
		}
	})
}

// benchStream is a 3-topic 100/50/20 Hz stream with 1 % loss and jitter.
func benchStream(n int) []Message[int] {
	r := rand.New(rand.NewPCG(1, 1))
	var msgs []Message[int]
	periods := []time.Duration{10 * time.Millisecond, 20 * time.Millisecond, 50 * time.Millisecond}
	next := make([]stamp.Time, 3)
	for len(msgs) < n {
		tp := 0
		for i := range next {
			if next[i] < next[tp] {
				tp = i
			}
		}
		st := next[tp].Add(time.Duration(r.IntN(2000)) * time.Microsecond)
		next[tp] = next[tp].Add(periods[tp])
		if r.Float64() < 0.01 {
			continue
		}
		msgs = append(msgs, Message[int]{Topic: tp, Stamp: st, Arrival: st})
	}
	return msgs
}

func BenchmarkApproximate(b *testing.B) {
	msgs := benchStream(100_000)
	span := msgs[len(msgs)-1].Stamp + stamp.Time(time.Second)
	cfg := DefaultConfig()
	cfg.Topics = 3
	sets := 0
	s, err := New(cfg, func([]Message[int]) { sets++ }, nil)
	require.NoError(b, err)
	b.ReportAllocs()
	i, pass := 0, stamp.Time(0)
	for b.Loop() {
		m := msgs[i]
		m.Stamp += pass
		m.Arrival = m.Stamp
		s.Add(m)
		if i++; i == len(msgs) {
			i, pass = 0, pass+span
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
}
