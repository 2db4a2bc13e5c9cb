package sync

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timealign/timealign/internal/testutil/fuzzcheck"
	"github.com/timealign/timealign/pkg/stamp"
)

// policyInput is a decoded FuzzExtremeStamps input: a configuration (every
// input runs every policy) and the messages in arrival order. Value holds
// each message's index.
type policyInput struct {
	cfg  Config
	msgs []Message[int]
}

// maxFuzzMessages bounds the work of one input.
const maxFuzzMessages = 4096

// decodePolicyInput decodes the configuration from cfgb and the messages
// from msgb (see fuzzcheck.Bytes: every int64 field is tagged, so int64
// extremes, zero and repeats are one byte away). The configuration is
// always valid: out-of-range values are folded into range.
//
// cfgb: topics byte (2 + b%9; 255: MaxTopics), QueueSize (tagged, folded
// into 1..MaxQueueSize), AgePenalty (a byte: 0 default, 1 raw float64
// bits, 2 byte/100, 3 zero, 4 an integer up to 2^64), MaxInterval and
// Epsilon (tagged, |v|), LowerBounds (a byte: 0 none, 1 one value for all,
// 2 one per topic; tagged, |v|), RateAlpha, ErrorAlpha, MarginFactor (a
// byte: 0 default, 1 and 2 extremes, 3 raw float64 bits).
//
// msgb, per message: a topic byte (b%(Topics+2) − 1: −1 and Topics are bad
// topics), the stamp (tagged; the default is the previous message's stamp)
// and the arrival (tagged; the default is the message's stamp).
func decodePolicyInput(cfgb, msgb []byte) policyInput {
	r := fuzzcheck.New(cfgb)
	c := DefaultConfig()
	switch b := r.Byte(); b {
	case 255:
		c.Topics = MaxTopics
	default:
		c.Topics = 2 + int(b%9)
	}
	c.QueueSize = 1 + int(fuzzcheck.Abs(r.Int64(int64(c.QueueSize))-1)%MaxQueueSize)
	switch r.Byte() % 5 {
	case 1:
		f := math.Abs(math.Float64frombits(r.Uint64()))
		if math.IsNaN(f) || math.IsInf(f, 0) {
			f = math.MaxFloat64
		}
		c.AgePenalty = f
	case 2:
		c.AgePenalty = float64(r.Byte()) / 100
	case 3:
		c.AgePenalty = 0
	case 4:
		c.AgePenalty = float64(r.Uint64())
	}
	c.MaxInterval = time.Duration(r.NonNeg(0))
	c.Epsilon = time.Duration(r.NonNeg(0))
	switch r.Byte() % 3 {
	case 1:
		b := time.Duration(r.NonNeg(0))
		c.LowerBounds = make([]time.Duration, c.Topics)
		for i := range c.LowerBounds {
			c.LowerBounds[i] = b
		}
	case 2:
		c.LowerBounds = make([]time.Duration, c.Topics)
		for i := range c.LowerBounds {
			c.LowerBounds[i] = time.Duration(r.NonNeg(0))
		}
	}
	unit := func(def float64) float64 { // (0, 1]
		switch r.Byte() % 4 {
		case 1:
			return 1
		case 2:
			return math.SmallestNonzeroFloat64
		case 3:
			if f := math.Abs(math.Float64frombits(r.Uint64())); f > 0 && f <= 1 {
				return f
			}
		}
		return def
	}
	c.RateAlpha, c.ErrorAlpha = unit(c.RateAlpha), unit(c.ErrorAlpha)
	switch r.Byte() % 4 {
	case 1:
		c.MarginFactor = math.SmallestNonzeroFloat64
	case 2:
		c.MarginFactor = math.MaxFloat64
	case 3:
		if f := math.Abs(math.Float64frombits(r.Uint64())); f > 0 && !math.IsInf(f, 0) {
			c.MarginFactor = f
		}
	}

	in := policyInput{cfg: c}
	r = fuzzcheck.New(msgb)
	var prev int64
	for r.Len() > 0 && len(in.msgs) < maxFuzzMessages {
		topic := int(r.Byte())%(c.Topics+2) - 1
		st := r.Int64(prev)
		arr := r.Int64(st)
		prev = st
		in.msgs = append(in.msgs, Message[int]{Topic: topic, Stamp: stamp.Time(st), Arrival: stamp.Time(arr), Value: len(in.msgs)})
	}
	return in
}

// encodePolicyInput is the inverse of decodePolicyInput (raw values), to
// turn the table's cases into seeds.
func encodePolicyInput(in policyInput) (cfgb, msgb []byte) {
	c := in.cfg
	var e fuzzcheck.Encoder
	e.Byte(byte(c.Topics - 2))
	if c.Topics == MaxTopics {
		e.B[0] = 255
	}
	e.Raw(int64(c.QueueSize)).Byte(1)
	e.Uint64(math.Float64bits(c.AgePenalty))
	e.Raw(int64(c.MaxInterval)).Raw(int64(c.Epsilon))
	if len(c.LowerBounds) == 0 {
		e.Byte(0)
	} else {
		e.Byte(2)
		for _, b := range c.LowerBounds {
			e.Raw(int64(b))
		}
	}
	for _, f := range []float64{c.RateAlpha, c.ErrorAlpha, c.MarginFactor} {
		e.Byte(3).Uint64(math.Float64bits(f))
	}
	cfgb = e.B
	e = fuzzcheck.Encoder{}
	for _, m := range in.msgs {
		e.Byte(byte(m.Topic + 1)).Raw(int64(m.Stamp)).Raw(int64(m.Arrival))
	}
	return cfgb, e.B
}

func (in policyInput) String() string {
	var b strings.Builder
	c := in.cfg
	fmt.Fprintf(&b, "Topics=%d QueueSize=%d AgePenalty=%v MaxInterval=%d Epsilon=%d LowerBounds=%d RateAlpha=%v ErrorAlpha=%v MarginFactor=%v; %d messages (topic stamp_ns arrival_ns):",
		c.Topics, c.QueueSize, c.AgePenalty, int64(c.MaxInterval), int64(c.Epsilon), c.LowerBounds, c.RateAlpha, c.ErrorAlpha, c.MarginFactor, len(in.msgs))
	for i, m := range in.msgs {
		if i == 64 {
			fmt.Fprintf(&b, " …")
			break
		}
		fmt.Fprintf(&b, " (%d %d %d)", m.Topic, int64(m.Stamp), int64(m.Arrival))
	}
	return b.String()
}

// policyRun is what one policy did with an input.
type policyRun struct {
	sets    [][]stamp.Time
	drops   [numReasons]int
	st      Status
	dropped map[int]DropReason
}

// runPolicy runs one policy over in within fuzzcheck.Deadline and checks
// the invariants every policy keeps whatever the stamps: sets in topic
// order of messages that were added, no message in two sets or both in a
// set and dropped (LatestTime repeats messages: its sets hold each topic's
// latest message), every message in a set, dropped or queued, queues
// within their bounds, Epsilon's sets within Epsilon of their oldest
// stamp, ExactTime's sets of one stamp with no older pending set left.
func runPolicy(tb testing.TB, p Policy, in policyInput) policyRun {
	tb.Helper()
	var run policyRun
	fuzzcheck.Finish(tb, func() string { return p.String() + ": " + in.String() }, func(t *fuzzcheck.T) {
		cfg := in.cfg
		cfg.Policy = p
		run.dropped = map[int]DropReason{}
		inSet := make([]bool, len(in.msgs))
		latest := make([]int, cfg.Topics)
		for i := range latest {
			latest[i] = -1
		}
		published := false
		s, err := New(cfg, func(set []Message[int]) {
			published = true
			require.Len(t, set, cfg.Topics)
			sts := make([]stamp.Time, len(set))
			for i, m := range set {
				require.Equal(t, i, m.Topic, "sets are in topic order")
				require.True(t, m.Value >= 0 && m.Value < len(in.msgs) && in.msgs[m.Value] == m, "a set holds added messages")
				sts[i] = m.Stamp
				if p == Latest {
					require.Equal(t, latest[i], m.Value, "LatestTime publishes each topic's latest message")
					continue
				}
				require.False(t, inSet[m.Value], "message %d in two sets", m.Value)
				_, gone := run.dropped[m.Value]
				require.False(t, gone, "message %d in a set after it was dropped", m.Value)
				inSet[m.Value] = true
			}
			lo, hi := sts[0], sts[0]
			for _, x := range sts {
				lo, hi = min(lo, x), max(hi, x)
			}
			switch p {
			case Exact:
				require.Equal(t, lo, hi, "ExactTime: one stamp")
			case Epsilon:
				// The oldest stamp is lo; every stamp within Epsilon of it
				// (compared without overflow: hi ≥ lo).
				require.LessOrEqual(t, uint64(hi)-uint64(lo), uint64(cfg.Epsilon), "ApproximateEpsilonTime: within Epsilon")
			}
			run.sets = append(run.sets, sts)
		}, func(m Message[int], why DropReason) {
			_, gone := run.dropped[m.Value]
			require.False(t, gone, "message %d dropped twice", m.Value)
			if p != Latest {
				require.False(t, inSet[m.Value], "message %d dropped after it was in a set", m.Value)
			}
			run.dropped[m.Value] = why
			run.drops[why]++
		})
		require.NoError(t, err)
		for i, m := range in.msgs {
			t.Step(i)
			if m.Topic >= 0 && m.Topic < cfg.Topics {
				latest[m.Topic] = m.Value
			}
			published = false
			s.Add(m)
			if e, ok := s.(*ExactTime[int]); ok && published {
				last := run.sets[len(run.sets)-1][0]
				for _, x := range e.tuples {
					require.Greater(t, x.stamp, last, "ExactTime: a pending set not newer than the published one")
				}
			}
		}
		run.st = s.Status()
		queued := 0
		for _, q := range run.st.QueueFill {
			require.LessOrEqual(t, q, cfg.QueueSize+1)
			queued += q
		}
		if p != Latest {
			require.Equal(t, len(in.msgs), len(run.sets)*cfg.Topics+len(run.dropped)+queued, "every message in a set, dropped or queued")
		}
	})
	return run
}

// FuzzExtremeStamps: any stamps and arrival times (int64 extremes, equal,
// backwards) and any parameters (zero and huge epsilon, max interval,
// lower bounds, queue sizes, rate factors) through every policy: each
// input finishes within fuzzcheck.Deadline, never panics, and keeps the
// invariants runPolicy checks.
func FuzzExtremeStamps(f *testing.F) {
	for _, tc := range extremeCases {
		cfgb, msgb := encodePolicyInput(tc.input())
		f.Add(cfgb, msgb)
	}
	f.Fuzz(func(t *testing.T, cfgb, msgb []byte) {
		in := decodePolicyInput(cfgb, msgb)
		require.NoError(t, in.cfg.Validate())
		for p := Approximate; p <= Latest; p++ {
			runPolicy(t, p, in)
		}
	})
}

const (
	maxStamp = stamp.Max
	minStamp = stamp.Min
)

// extremeCase is a case of TestExtremeCases: messages (topic, stamp;
// arrival = stamp) and what some policies must publish and drop.
type extremeCase struct {
	name  string
	cfg   func(*Config)
	msgs  [][2]int64
	sets  map[Policy][][]stamp.Time // absent: no check; nil: no set
	drops map[Policy]map[DropReason]int
}

func (tc extremeCase) input() policyInput {
	in := policyInput{cfg: DefaultConfig()}
	if tc.cfg != nil {
		tc.cfg(&in.cfg)
	}
	for i, m := range tc.msgs {
		in.msgs = append(in.msgs, Message[int]{Topic: int(m[0]), Stamp: stamp.Time(m[1]), Arrival: stamp.Time(m[1]), Value: i})
	}
	return in
}

func stamps(s ...stamp.Time) []stamp.Time { return s }

var extremeCases = []extremeCase{
	{name: "epsilon: older+Epsilon past MaxInt64 (issue #12)",
		cfg:  func(c *Config) { c.Epsilon = time.Millisecond },
		msgs: [][2]int64{{0, 9223372036854775000}, {1, 9223372036854775807}},
		sets: map[Policy][][]stamp.Time{Epsilon: {stamps(9223372036854775000, maxStamp)}, Exact: nil, Latest: nil}},
	{name: "epsilon: huge Epsilon, ordinary stamps",
		cfg:  func(c *Config) { c.Epsilon = math.MaxInt64 },
		msgs: [][2]int64{{0, 1_000_000_000}, {1, 2_000_000_000}, {1, 3_000_000_000}, {0, 4_000_000_000}},
		sets: map[Policy][][]stamp.Time{Epsilon: {stamps(1e9, 2e9), stamps(4e9, 3e9)}}},
	{name: "epsilon: Min and Max are not within MaxInt64",
		cfg:   func(c *Config) { c.Epsilon = math.MaxInt64 },
		msgs:  [][2]int64{{0, math.MinInt64}, {1, math.MaxInt64}, {0, math.MaxInt64}},
		sets:  map[Policy][][]stamp.Time{Epsilon: {stamps(maxStamp, maxStamp)}},
		drops: map[Policy]map[DropReason]int{Epsilon: {NotMatched: 1}}},
	{name: "epsilon: zero Epsilon, equal stamps",
		msgs: [][2]int64{{0, 5}, {1, 5}, {1, 5}, {0, 6}},
		sets: map[Policy][][]stamp.Time{Epsilon: {stamps(5, 5)}, Exact: {stamps(5, 5)}}},
	{name: "approximate: a spread past MaxInt64 is over any MaxInterval",
		cfg:   func(c *Config) { c.MaxInterval = math.MaxInt64 },
		msgs:  [][2]int64{{0, math.MinInt64 + 100}, {1, 200}, {0, 300}, {1, 400}},
		sets:  map[Policy][][]stamp.Time{Approximate: {stamps(300, 200)}},
		drops: map[Policy]map[DropReason]int{Approximate: {MaxInterval: 1}}},
	{name: "approximate: a spread past MaxInt64 is over the default limit",
		msgs:  [][2]int64{{0, math.MinInt64 + 100}, {1, 200}, {0, 300}, {1, 400}},
		sets:  map[Policy][][]stamp.Time{Approximate: {stamps(300, 200)}},
		drops: map[Policy]map[DropReason]int{Approximate: {MaxInterval: 1}}},
	{name: "approximate: lower bounds past MaxInt64",
		cfg: func(c *Config) {
			c.LowerBounds, c.MaxInterval = []time.Duration{math.MaxInt64, math.MaxInt64}, math.MaxInt64
		},
		msgs: [][2]int64{{0, 10}, {1, 20}, {0, 30}, {1, math.MaxInt64}, {0, math.MaxInt64}},
		// After (10, 20), topic 0's next stamp is at least 10+MaxInt64:
		// past any stamp, so no later set can be better. (30, MaxInt64)
		// waits (its spread is large), and (MaxInt64, MaxInt64) replaces it.
		sets:  map[Policy][][]stamp.Time{Approximate: {stamps(10, 20), stamps(maxStamp, maxStamp)}},
		drops: map[Policy]map[DropReason]int{Approximate: {NotMatched: 1}}},
	{name: "approximate: stamps at both extremes, huge age penalty",
		cfg:  func(c *Config) { c.AgePenalty = 1e300; c.MaxInterval = math.MaxInt64 },
		msgs: [][2]int64{{0, math.MinInt64}, {1, math.MinInt64}, {0, math.MaxInt64}, {1, math.MaxInt64}, {0, math.MinInt64}, {1, 0}},
		sets: map[Policy][][]stamp.Time{Approximate: {stamps(minStamp, minStamp), stamps(maxStamp, maxStamp)}}},
	{name: "exact: a set at MaxInt64 makes every pending set stale",
		msgs:  [][2]int64{{0, 5}, {0, math.MaxInt64}, {1, math.MaxInt64}, {1, 5}},
		sets:  map[Policy][][]stamp.Time{Exact: {stamps(maxStamp, maxStamp)}},
		drops: map[Policy]map[DropReason]int{Exact: {NotMatched: 1}}},
	{name: "exact: MinInt64",
		msgs: [][2]int64{{0, math.MinInt64}, {1, math.MinInt64}, {1, math.MaxInt64}, {0, math.MaxInt64}},
		sets: map[Policy][][]stamp.Time{Exact: {stamps(minStamp, minStamp), stamps(maxStamp, maxStamp)}}},
	{name: "stamps going back across the range, queue of one",
		cfg: func(c *Config) { c.QueueSize = 1 },
		msgs: [][2]int64{{0, math.MaxInt64}, {1, math.MinInt64}, {0, math.MinInt64}, {1, math.MaxInt64},
			{0, 0}, {1, -1}, {0, math.MaxInt64}, {1, math.MaxInt64}}},
	{name: "huge queue, every parameter at its extreme",
		cfg: func(c *Config) {
			c.QueueSize, c.MaxInterval, c.Epsilon, c.AgePenalty = MaxQueueSize, math.MaxInt64, math.MaxInt64, math.MaxFloat64
			c.LowerBounds = []time.Duration{math.MaxInt64, 0}
			c.RateAlpha, c.ErrorAlpha, c.MarginFactor = math.SmallestNonzeroFloat64, 1, math.MaxFloat64
		},
		msgs: [][2]int64{{0, math.MaxInt64}, {1, math.MinInt64}, {0, math.MinInt64}, {1, math.MaxInt64}, {0, 0}, {1, 0},
			{0, math.MaxInt64 - 1}, {1, math.MaxInt64}, {0, math.MaxInt64}}},
}

// TestExtremeCases runs the extreme stamps and parameters through every
// policy: each finishes (within fuzzcheck.Deadline), keeps runPolicy's
// invariants, and publishes and drops what the case says.
func TestExtremeCases(t *testing.T) {
	for _, tc := range extremeCases {
		t.Run(tc.name, func(t *testing.T) {
			in := tc.input()
			require.NoError(t, in.cfg.Validate())
			for p := Approximate; p <= Latest; p++ {
				run := runPolicy(t, p, in)
				if want, ok := tc.sets[p]; ok {
					require.Equal(t, want, run.sets, "%v: sets", p)
				}
				for why, n := range tc.drops[p] {
					require.Equal(t, n, run.drops[why], "%v: %v drops", p, why)
				}
			}
		})
	}
}
