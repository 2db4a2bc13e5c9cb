package sync

import (
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/timealign/timealign/pkg/cfgerr"
	"github.com/timealign/timealign/pkg/stamp"
)

// alignerEv is one event of an aligner test: the CLI's events.
type alignerEv struct {
	kind   byte // 'p'ush 's'tep 'd'rain 'x' disable 'e'nable 'r'emove 'c'lear 't'imeout
	stream int
	t      stamp.Time
}

// alignerOut is a played or dropped sample, as the CLI writes it.
type alignerOut struct {
	stream int
	t      stamp.Time
	why    AlignerDrop // AlignerNoDrop for a played sample
}

// alignerApply runs one event and appends what it played or dropped.
func alignerApply(a *StreamAligner[int], e alignerEv, out []alignerOut) []alignerOut {
	switch e.kind {
	case 'p':
		if x, why := a.Push(e.stream, e.t, 0); why != AlignerNoDrop {
			out = append(out, alignerOut{x.Stream, x.Stamp, why})
		}
	case 's':
		if x, ok := a.Step(); ok {
			out = append(out, alignerOut{x.Stream, x.Stamp, AlignerNoDrop})
		}
	case 'd':
		a.Drain(func(x StreamSample[int]) { out = append(out, alignerOut{x.Stream, x.Stamp, AlignerNoDrop}) })
	case 'x', 'e':
		_ = a.SetActive(e.stream, e.kind == 'e')
	case 'r':
		_ = a.Remove(e.stream)
	case 'c':
		a.Clear()
	case 't':
		_ = a.SetTimeout(time.Duration(e.t))
	}
	return out
}

const sec = stamp.Time(time.Second)

func push(s int, t stamp.Time) alignerEv { return alignerEv{'p', s, t} }

var (
	step  = alignerEv{kind: 's'}
	drain = alignerEv{kind: 'd'}
)

func played(s int, t stamp.Time) alignerOut { return alignerOut{s, t, AlignerNoDrop} }

// alignerCases: the table of the unit tests, which also seeds the fuzz
// test and the property test's reference comparison.
var alignerCases = []struct {
	name    string
	timeout time.Duration
	streams []StreamConfig
	events  []alignerEv
	want    []alignerOut
}{
	{"priority breaks ties, data before lookahead", 2 * time.Second,
		[]StreamConfig{{Period: 2 * time.Second, BufferSize: 4, Priority: 1}, {Period: 2 * time.Second, BufferSize: 4, Priority: -1}},
		[]alignerEv{push(0, 1*sec), push(1, 1*sec), push(0, 3*sec), push(1, 3*sec), drain},
		[]alignerOut{played(1, 1*sec), played(0, 1*sec), played(1, 3*sec), played(0, 3*sec)}},
	{"lookahead: no wait before last+period", 10 * time.Second,
		[]StreamConfig{{Period: time.Second, BufferSize: 4}, {Period: 5 * time.Second, BufferSize: 4}},
		[]alignerEv{push(1, 1*sec), push(0, 1*sec), push(0, 2*sec), push(0, 6*sec), push(0, 7*sec), drain, push(1, 6*sec), drain},
		// stream 1 is due at 6 s: 6 s of stream 0 waits until it comes
		[]alignerOut{played(0, 1*sec), played(1, 1*sec), played(0, 2*sec), played(0, 6*sec), played(1, 6*sec), played(0, 7*sec)}},
	{"timeout releases a silent stream", 2 * time.Second,
		[]StreamConfig{{Period: time.Second, BufferSize: 8}, {Period: 0, BufferSize: 8}},
		// 11 s − 10 s < 2 s: wait for stream 1; at 12 s play up to 12 − 2
		[]alignerEv{push(0, 10*sec), push(0, 11*sec), drain, push(0, 12*sec), drain, push(1, 10*sec+sec/2), push(1, 13*sec), drain},
		[]alignerOut{played(0, 10*sec), played(0, 11*sec), {1, 10*sec + sec/2, AlignerLate}, played(0, 12*sec), played(1, 13*sec)}},
	{"after playing, the timeout runs from the last played stamp", 2 * time.Second,
		[]StreamConfig{{Period: time.Second, BufferSize: 5}, {Period: 0, BufferSize: 5}},
		[]alignerEv{push(0, 1*sec), push(0, 3*sec), drain, push(0, 4*sec), step, push(0, 5*sec), step},
		[]alignerOut{played(0, 1*sec), played(0, 3*sec), played(0, 4*sec)}},
	{"full buffer drops its oldest sample", 2 * time.Second,
		[]StreamConfig{{Period: time.Second, BufferSize: 2}},
		[]alignerEv{push(0, 1*sec), push(0, 2*sec), push(0, 3*sec), drain},
		[]alignerOut{{0, 1 * sec, AlignerFull}, played(0, 2*sec), played(0, 3*sec)}},
	{"backward and equal stamps on one stream", 0,
		[]StreamConfig{{Period: 0, BufferSize: 0}},
		[]alignerEv{push(0, 5*sec), push(0, 4*sec), push(0, 5*sec), drain},
		[]alignerOut{{0, 4 * sec, AlignerBackward}, played(0, 5*sec), played(0, 5*sec)}},
	{"negative stamps are late before anything played", time.Second,
		[]StreamConfig{{Period: 0, BufferSize: 0}},
		[]alignerEv{push(0, -1), push(0, 0), drain},
		[]alignerOut{{0, -1, AlignerLate}, played(0, 0)}},
	{"disabled stream is not waited for; a push enables it", 2 * time.Second,
		[]StreamConfig{{Period: time.Second, BufferSize: 4}, {Period: 0, BufferSize: 4, Priority: 1}},
		[]alignerEv{push(0, 1*sec), push(1, 2*sec), {'x', 1, 0}, drain, push(0, 3*sec), drain, push(1, 4*sec), push(0, 5*sec), drain},
		[]alignerOut{played(0, 1*sec), played(1, 2*sec), played(0, 3*sec), played(1, 4*sec)}},
	{"clear keeps a disabled stream disabled", 10 * time.Second,
		[]StreamConfig{{Period: time.Second, BufferSize: 4}, {Period: 0, BufferSize: 4}},
		[]alignerEv{{'x', 1, 0}, push(0, 1*sec), {'c', 0, 0}, push(0, 2*sec), drain},
		[]alignerOut{played(0, 2*sec)}},
	{"remove discards data and stops waiting", 10 * time.Second,
		[]StreamConfig{{Period: time.Second, BufferSize: 4}, {Period: 0, BufferSize: 4}},
		[]alignerEv{push(1, 1*sec), push(0, 1*sec), push(0, 2*sec), {'r', 1, 0}, push(1, 3*sec), drain},
		[]alignerOut{{1, 3 * sec, AlignerBadStream}, played(0, 1*sec), played(0, 2*sec)}},
	{"bad stream index is a counted drop", time.Second,
		[]StreamConfig{{Period: 0, BufferSize: 0}},
		[]alignerEv{push(-1, 1), push(7, 2), push(0, 3), drain},
		[]alignerOut{{-1, 1, AlignerBadStream}, {7, 2, AlignerBadStream}, played(0, 3)}},
	{"initial wait measured from the oldest non-zero stamp", 2 * time.Second,
		[]StreamConfig{{Period: 0, BufferSize: 0}, {Period: 0, BufferSize: 0}, {Period: 0, BufferSize: 0}},
		[]alignerEv{push(0, 0), push(1, 1*sec), push(1, 2*sec), drain, push(1, 3*sec), drain},
		// newest 2 s − oldest non-zero 1 s < 2 s: wait; 3 s − 1 s: go
		// then 3 s − last played 1 s ≥ 2 s plays 2 s; 3 s − 2 s < 2 s waits
		[]alignerOut{played(0, 0), played(1, 1*sec), played(1, 2*sec)}},
	{"timeout event", 10 * time.Second,
		[]StreamConfig{{Period: 0, BufferSize: 0}, {Period: 0, BufferSize: 0}},
		[]alignerEv{push(0, 1*sec), push(0, 2*sec), drain, {'t', 0, sec}, drain},
		[]alignerOut{played(0, 1*sec), played(0, 2*sec)}},
}

func TestAlignerCases(t *testing.T) {
	for _, c := range alignerCases {
		t.Run(c.name, func(t *testing.T) {
			a, err := NewStreamAligner[int](AlignerConfig{Timeout: c.timeout, Streams: c.streams, MaxBufferSize: 1 << 10})
			require.NoError(t, err)
			var out []alignerOut
			for _, e := range c.events {
				out = alignerApply(a, e, out)
			}
			require.Equal(t, c.want, out)
			require.Equal(t, alignerReference(c.timeout, c.streams, c.events), out, "reference model")
		})
	}
}

func TestAlignerStatus(t *testing.T) {
	cfg := DefaultAlignerConfig()
	cfg.Timeout = 2 * time.Second
	cfg.Streams = []StreamConfig{
		{Period: time.Second, BufferSize: 2, Priority: -1, Name: "a"},
		{Period: 0, BufferSize: 0, Priority: 1, Name: "b"},
		DefaultStreamConfig(-500 * time.Millisecond),
	}
	a, err := NewStreamAligner[string](cfg)
	require.NoError(t, err)
	st := a.Status()
	require.Equal(t, 20, st.Streams[1].BufferSize, "a growing buffer starts at 20")
	require.Equal(t, 8, st.Streams[2].BufferSize, "automatic: 2·⌈2 s / 0.5 s⌉")
	require.Equal(t, time.Duration(0), st.Streams[2].Period, "a negative period sets no lookahead")
	a.Push(0, 1*sec, "x")
	a.Push(0, 2*sec, "y")
	x, why := a.Push(0, 3*sec, "z")
	require.Equal(t, AlignerFull, why)
	require.Equal(t, StreamSample[string]{0, 1 * sec, "x"}, x, "the evicted sample is returned")
	for i := 0; i < 50; i++ {
		a.Push(1, 3*sec, "g")
	}
	st = a.Status()
	require.Equal(t, 2, st.Waiting, "stream 1 has data now, stream 2 is silent")
	a.Push(2, 10*sec, "w") // every stream has data: nothing to wait for
	st = a.Status()
	assert.Equal(t, 2, st.Streams[0].BufferFill)
	assert.Equal(t, 50, st.Streams[1].BufferFill)
	assert.Equal(t, 80, st.Streams[1].BufferSize, "grown 20 → 40 → 80")
	assert.Equal(t, uint64(1), st.Streams[0].Full)
	assert.Equal(t, 10*time.Second, st.Latency)
	assert.Equal(t, -1, st.Waiting)
	require.Equal(t, 53, a.Drain(nil))
	_, why = a.Push(0, 5*sec, "late")
	require.Equal(t, AlignerLate, why)
	_, why = a.Push(9, 5*sec, "bad")
	require.Equal(t, AlignerBadStream, why)
	st = a.Status()
	assert.Equal(t, uint64(53), st.Played)
	assert.Equal(t, uint64(1), st.Late)
	assert.Equal(t, uint64(1), st.BadStream)
	assert.Equal(t, 10*sec, st.Current)
	assert.Equal(t, time.Duration(0), st.Latency)
	require.NoError(t, a.SetActive(1, false))
	require.False(t, a.Status().Streams[1].Active)
	a.Clear()
	st = a.Status()
	assert.False(t, st.Streams[1].Active, "Rock's clear does not enable streams")
	assert.Equal(t, uint64(0), st.Late)
	assert.Equal(t, uint64(0), st.Streams[0].Full)
	assert.Equal(t, uint64(4), st.Streams[0].Received)
	require.NoError(t, a.Remove(1))
	require.ErrorIs(t, a.Remove(1), ErrNoStream)
	require.ErrorIs(t, a.SetActive(1, true), ErrNoStream)
	require.True(t, a.Status().Streams[1].Removed)
	i, err := a.Register(DefaultStreamConfig(time.Second))
	require.NoError(t, err)
	require.Equal(t, 1, i, "a removed index is reused")
	require.Equal(t, 4, a.Status().Streams[1].BufferSize)
	require.Equal(t, 3, a.Len())
}

func TestAlignerValidate(t *testing.T) {
	for _, c := range []struct {
		mod   func(*AlignerConfig)
		field string
	}{
		{func(c *AlignerConfig) { c.Timeout = -1 }, "Timeout"},
		{func(c *AlignerConfig) { c.MaxBufferSize = 0 }, "MaxBufferSize"},
		{func(c *AlignerConfig) { c.Streams[1].Period = 0 }, "Streams[1].BufferSize"},
		{func(c *AlignerConfig) { c.Streams[0] = StreamConfig{Period: -time.Second, BufferSize: 3} }, "Streams[0].Period"},
		{func(c *AlignerConfig) { c.Streams[0].BufferSize = 1 << 21 }, "Streams[0].BufferSize"},
		{func(c *AlignerConfig) { c.Streams[1].Period = time.Nanosecond }, "Streams[1].BufferSize"},
	} {
		cfg := DefaultAlignerConfig()
		cfg.Streams = []StreamConfig{{BufferSize: 0}, DefaultStreamConfig(time.Millisecond)}
		require.NoError(t, cfg.Validate())
		c.mod(&cfg)
		err := cfg.Validate()
		require.ErrorIs(t, err, ErrAlignerConfig)
		ce, ok := cfgerr.As(err)
		require.True(t, ok)
		require.Equal(t, c.field, ce.Field, err.Error())
		_, err = NewStreamAligner[int](cfg)
		require.ErrorIs(t, err, ErrAlignerConfig)
	}
	a, err := NewStreamAligner[int](DefaultAlignerConfig())
	require.NoError(t, err)
	require.ErrorIs(t, a.SetTimeout(-time.Second), ErrAlignerConfig)
	_, err = a.Register(StreamConfig{Period: 0, BufferSize: -1})
	require.ErrorIs(t, err, ErrAlignerConfig)
	_, ok := a.Step()
	require.False(t, ok, "no streams, nothing to play")
}

func TestAlignerAutomaticSize(t *testing.T) {
	for _, c := range []struct {
		timeout, period time.Duration
		want            int
	}{
		{2 * time.Second, time.Second, 4},
		{time.Second, 300 * time.Millisecond, 8},
		{33 * time.Millisecond, 11 * time.Millisecond, 8}, // Rock's doubles: 0.033/0.011 = 3.0000000000000004
		{0, time.Second, 20},                              // 0: a growing buffer
		{time.Second, -250 * time.Millisecond, 8},
	} {
		a, err := NewStreamAligner[int](AlignerConfig{Timeout: c.timeout, MaxBufferSize: 1000,
			Streams: []StreamConfig{DefaultStreamConfig(c.period)}})
		require.NoError(t, err)
		require.Equal(t, c.want, a.Status().Streams[0].BufferSize, "%v/%v", c.timeout, c.period)
	}
}

// TestAlignerGrowingCap: a growing buffer stops at MaxBufferSize and then
// drops its oldest samples as full.
func TestAlignerGrowingCap(t *testing.T) {
	a, err := NewStreamAligner[int](AlignerConfig{Timeout: time.Second, MaxBufferSize: 50,
		Streams: []StreamConfig{{BufferSize: 0}, {BufferSize: 0}}})
	require.NoError(t, err)
	full := 0
	for i := 0; i < 100; i++ {
		if _, why := a.Push(0, stamp.Time(i), i); why == AlignerFull {
			full++
		}
	}
	st := a.Status().Streams[0]
	require.Equal(t, 40, st.BufferSize, "20 → 40; 80 is over the cap")
	require.Equal(t, 40, st.BufferFill)
	require.Equal(t, 60, full)
}

// alignerReference is Rock's StreamAligner transcribed literally (sort the
// streams, walk them), for comparison with the linear scan. Ties keep the
// stream order, as libstdc++'s std::sort does for up to 16 elements.
func alignerReference(timeout time.Duration, cfgs []StreamConfig, events []alignerEv) []alignerOut {
	type item struct{ t stamp.Time }
	type rs struct {
		q        []stamp.Time
		size     int // 0 growing
		period   time.Duration
		last     stamp.Time
		prio     int
		active   bool
		capacity int
	}
	var streams []*rs
	for _, c := range cfgs {
		size, period, err := alignerSize(c, timeout, 1<<10)
		if err != nil {
			panic(err)
		}
		capacity := size
		if size == 0 {
			capacity = 20
		}
		streams = append(streams, &rs{size: size, period: period, prio: c.Priority, active: true, capacity: capacity})
	}
	var latest, current stamp.Time
	var out []alignerOut
	key := func(s *rs) stamp.Time {
		if len(s.q) > 0 {
			return s.q[0]
		}
		return s.last.Add(s.period)
	}
	stepOnce := func() bool {
		idx := make([]int, len(streams))
		for i := range idx {
			idx[i] = i
		}
		sort.SliceStable(idx, func(x, y int) bool {
			b1, b2 := streams[idx[x]], streams[idx[y]]
			if b1 == nil {
				return false
			}
			if b2 == nil {
				return true
			}
			t1, t2 := key(b1), key(b2)
			if t1 == t2 {
				if (len(b1.q) > 0) != (len(b2.q) > 0) {
					return len(b1.q) > 0
				}
				return b1.prio < b2.prio
			}
			return t1 < t2
		})
		for _, i := range idx {
			s := streams[i]
			if s == nil {
				return false
			}
			if len(s.q) > 0 {
				current = s.q[0]
				s.q = s.q[1:]
				out = append(out, alignerOut{i, current, AlignerNoDrop})
				return true
			}
			if !s.active {
				continue
			}
			var newest, first stamp.Time
			if current == 0 {
				for _, j := range idx {
					s2 := streams[j]
					if s2 != nil && len(s2.q) > 0 {
						newest = max(newest, s2.last)
						if first == 0 || first > s2.q[0] {
							first = s2.q[0]
						}
					}
				}
			} else {
				newest, first = latest, current
			}
			if newest.Sub(first) < timeout {
				return false
			}
		}
		return false
	}
	for _, e := range events {
		valid := e.stream >= 0 && e.stream < len(streams) && streams[e.stream] != nil
		switch e.kind {
		case 'p':
			if !valid {
				out = append(out, alignerOut{e.stream, e.t, AlignerBadStream})
				continue
			}
			s := streams[e.stream]
			s.active = true
			if e.t < current {
				out = append(out, alignerOut{e.stream, e.t, AlignerLate})
				continue
			}
			latest = max(latest, e.t)
			if e.t < s.last {
				out = append(out, alignerOut{e.stream, e.t, AlignerBackward})
				continue
			}
			s.last = e.t
			if len(s.q) == s.capacity {
				if s.size > 0 || s.capacity*2 > 1<<10 {
					out = append(out, alignerOut{e.stream, s.q[0], AlignerFull})
					s.q = s.q[1:]
				} else {
					s.capacity *= 2
				}
			}
			s.q = append(s.q, e.t)
		case 's':
			stepOnce()
		case 'd':
			for stepOnce() {
			}
		case 'x', 'e':
			if valid {
				streams[e.stream].active = e.kind == 'e'
			}
		case 'r':
			if valid {
				streams[e.stream] = nil
			}
		case 'c':
			for _, s := range streams {
				if s != nil {
					s.q, s.last = nil, 0
				}
			}
			latest, current = 0, 0
		case 't':
			if e.t >= 0 {
				timeout = time.Duration(e.t)
			}
		}
	}
	return out
}

// alignerGen draws a configuration and an event sequence on a coarse time
// grid (so that ties, equal stamps and timeouts happen often).
func alignerGen(rt *rapid.T) (time.Duration, []StreamConfig, []alignerEv) {
	n := rapid.IntRange(1, 6).Draw(rt, "streams")
	unit := stamp.Time(rapid.SampledFrom([]int64{1, 1000, int64(time.Millisecond)}).Draw(rt, "unit"))
	timeout := time.Duration(unit) * time.Duration(rapid.IntRange(0, 40).Draw(rt, "timeout"))
	cfgs := make([]StreamConfig, n)
	for i := range cfgs {
		p := time.Duration(unit) * time.Duration(rapid.IntRange(0, 12).Draw(rt, "period"))
		size := rapid.IntRange(0, 6).Draw(rt, "size")
		if p > 0 && rapid.Bool().Draw(rt, "auto") {
			size = -1
		}
		cfgs[i] = StreamConfig{Period: p, BufferSize: size, Priority: rapid.IntRange(-1, 2).Draw(rt, "prio")}
		if size < 0 && int64(timeout)/int64(p) > 200 {
			cfgs[i].BufferSize = 0
		}
	}
	evs := rapid.SliceOfN(rapid.Custom(func(rt *rapid.T) alignerEv {
		k := rapid.SampledFrom([]byte("ppppppppsssddxeect")).Draw(rt, "kind")
		s := rapid.IntRange(-1, n).Draw(rt, "stream")
		t := unit * stamp.Time(rapid.IntRange(-2, 60).Draw(rt, "t"))
		if k == 'r' || k == 'x' || k == 'e' {
			s = rapid.IntRange(0, n-1).Draw(rt, "stream")
		}
		return alignerEv{k, s, t}
	}), 0, 150).Draw(rt, "events")
	return timeout, cfgs, evs
}

// TestAlignerProperties: whatever arrives, playback is in time order (no
// sample older than one already played, between clears), every push is
// accounted for, buffers stay within their size, and the result equals the
// literal transcription of Rock's algorithm.
func TestAlignerProperties(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		timeout, cfgs, evs := alignerGen(rt)
		a, err := NewStreamAligner[int](AlignerConfig{Timeout: timeout, Streams: cfgs, MaxBufferSize: 1 << 10})
		require.NoError(rt, err)
		var out []alignerOut
		var last stamp.Time
		pushed := 0
		for _, e := range evs {
			if e.kind == 'c' {
				last = 0
			}
			n0 := len(out)
			out = alignerApply(a, e, out)
			for _, o := range out[n0:] {
				if o.why == AlignerNoDrop {
					require.GreaterOrEqual(rt, o.t, last, "played out of order")
					last = o.t
				}
			}
			if e.kind == 'p' {
				pushed++
			}
			for _, s := range a.Status().Streams {
				require.LessOrEqual(rt, s.BufferFill, s.BufferSize)
			}
		}
		require.Equal(rt, alignerReference(timeout, cfgs, evs), out)
		if !alignerHas(evs, 'c', 'r') {
			st := a.Status()
			total := st.BadStream
			for _, s := range st.Streams {
				total += s.Processed + s.Late + s.Backward + s.Full + uint64(s.BufferFill)
			}
			require.Equal(rt, uint64(pushed), total, "every push played, dropped or buffered")
		}
	})
}

func alignerHas(evs []alignerEv, kinds ...byte) bool {
	for _, e := range evs {
		for _, k := range kinds {
			if e.kind == k {
				return true
			}
		}
	}
	return false
}

// TestAlignerPlaysInTimeOrder: with timeout 0 every stream is skipped when
// silent, so whatever the interleaving, a drain after every push plays all
// non-late samples in nondecreasing order.
func TestAlignerPlaysInTimeOrder(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		n := rapid.IntRange(1, 5).Draw(rt, "n")
		cfg := AlignerConfig{Timeout: time.Duration(rapid.IntRange(0, 100).Draw(rt, "timeout")), MaxBufferSize: 1 << 12}
		for i := 0; i < n; i++ {
			cfg.Streams = append(cfg.Streams, StreamConfig{Period: time.Duration(rapid.IntRange(0, 20).Draw(rt, "p")), BufferSize: 0})
		}
		a, err := NewStreamAligner[int](cfg)
		require.NoError(rt, err)
		var last stamp.Time
		prev := make([]stamp.Time, n)
		for k, m := 0, rapid.IntRange(0, 300).Draw(rt, "m"); k < m; k++ {
			s := rapid.IntRange(0, n-1).Draw(rt, "s")
			prev[s] += stamp.Time(rapid.IntRange(0, 15).Draw(rt, "dt"))
			a.Push(s, prev[s], k)
			a.Drain(func(x StreamSample[int]) {
				if x.Stamp < last {
					rt.Fatalf("played %v after %v", x.Stamp, last)
				}
				last = x.Stamp
			})
		}
	})
}

func ExampleAlignerDrop() {
	fmt.Println(AlignerLate, AlignerBackward, AlignerFull, AlignerBadStream)
	// Output: late backward full bad_stream
}
