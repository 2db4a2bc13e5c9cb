package sync

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/timealign/timealign/pkg/stamp"
)

type played struct {
	stream int
	t      stamp.Time
}

func newTestAligner(t require.TestingT, timeout time.Duration, cfgs []StreamConfig) (*StreamAligner[int], *[]played, map[AlignerDrop]int) {
	var out []played
	drops := map[AlignerDrop]int{}
	a, err := NewStreamAligner(timeout, cfgs,
		func(s int, ts stamp.Time, _ int) { out = append(out, played{s, ts}) },
		func(_ int, _ stamp.Time, _ int, why AlignerDrop) { drops[why]++ })
	require.NoError(t, err)
	return a, &out, drops
}

func TestAlignerOrderAndDrops(t *testing.T) {
	sec := stamp.Time(time.Second)
	a, out, drops := newTestAligner(t, 2*time.Second, []StreamConfig{
		{Period: time.Second, BufferSize: 2, Priority: -1},
		{Period: 0, BufferSize: 0, Priority: 1},
	})
	a.Push(0, 1*sec, 0)
	a.Push(1, 1*sec, 0) // same stamp: the lower priority value plays first
	a.Push(0, 2*sec, 0)
	a.Push(0, 3*sec, 0) // buffer of 2 full: 1 s is pushed out
	require.Equal(t, 1, drops[AlignerFull])
	// Stream 1 (no period) is waited for while the newest sample is less
	// than the timeout ahead of the last played one.
	require.Equal(t, 2, a.Drain())
	require.NoError(t, a.SetActive(1, false))
	require.Equal(t, 1, a.Drain(), "a disabled stream is not waited for")
	require.Equal(t, []played{{1, 1 * sec}, {0, 2 * sec}, {0, 3 * sec}}, *out)
	a.Push(1, 2*sec, 0) // older than the last played: late
	require.Equal(t, 1, drops[AlignerLate])
	a.Push(0, 5*sec, 0)
	a.Push(0, 4*sec, 0) // back on its stream
	require.Equal(t, 1, drops[AlignerBackward])
	a.Push(9, 4*sec, 0)
	require.Equal(t, 1, drops[AlignerBadStream])
	st := a.Status()
	require.Equal(t, 2*time.Second, st.Latency)
	require.Equal(t, uint64(1), st.Late)
	require.Equal(t, 1, st.Streams[0].BufferFill)
	require.Equal(t, uint64(1), st.Streams[0].Full)
	require.Error(t, a.SetActive(5, true))
	require.NoError(t, a.Remove(1))
	require.ErrorIs(t, a.Remove(1), ErrNoStream)
	i, err := a.Register(StreamConfig{Period: time.Second, BufferSize: -1})
	require.NoError(t, err)
	require.Equal(t, 1, i, "a removed slot is reused")
	require.Equal(t, 4, a.Status().Streams[1].BufferSize, "automatic: 2·⌈2 s / 1 s⌉")
}

func TestAlignerConfig(t *testing.T) {
	_, err := NewStreamAligner[int](-time.Second, nil, func(int, stamp.Time, int) {}, nil)
	require.ErrorIs(t, err, ErrAlignerConfig)
	_, err = NewStreamAligner[int](time.Second, []StreamConfig{{BufferSize: -1}}, func(int, stamp.Time, int) {}, nil)
	require.ErrorContains(t, err, "stream 0")
	_, err = NewStreamAligner[int](time.Second, nil, nil, nil)
	require.ErrorIs(t, err, ErrAlignerConfig)
}

// TestAlignerProperties: whatever is pushed, playback is in time order and
// never plays a sample older than one already played; every sample pushed
// is played, dropped or still buffered.
func TestAlignerProperties(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		n := rapid.IntRange(1, 6).Draw(rt, "streams")
		cfgs := make([]StreamConfig, n)
		for i := range cfgs {
			cfgs[i] = StreamConfig{
				Period:     time.Duration(rapid.IntRange(0, 50).Draw(rt, "period_ms")) * time.Millisecond,
				BufferSize: rapid.IntRange(0, 8).Draw(rt, "size"),
				Priority:   rapid.IntRange(-2, 2).Draw(rt, "prio"),
			}
		}
		a, out, drops := newTestAligner(rt, time.Duration(rapid.IntRange(0, 200).Draw(rt, "timeout_ms"))*time.Millisecond, cfgs)
		pushed := 0
		now := stamp.Time(0)
		steps := rapid.IntRange(0, 300).Draw(rt, "steps")
		for k := 0; k < steps; k++ {
			switch rapid.IntRange(0, 9).Draw(rt, "op") {
			case 0:
				a.Step()
			case 1:
				a.Drain()
			case 2:
				_ = a.SetActive(rapid.IntRange(0, n-1).Draw(rt, "s"), rapid.Bool().Draw(rt, "on"))
			default:
				now = now.Add(time.Duration(rapid.IntRange(-5, 20).Draw(rt, "dt_ms")) * time.Millisecond)
				a.Push(rapid.IntRange(0, n-1).Draw(rt, "s"), now, 0)
				pushed++
			}
		}
		for i := 1; i < len(*out); i++ {
			if (*out)[i].t < (*out)[i-1].t {
				rt.Fatalf("played %v after %v", (*out)[i], (*out)[i-1])
			}
		}
		buffered := 0
		for _, s := range a.Status().Streams {
			buffered += s.BufferFill
		}
		dropped := 0
		for _, c := range drops {
			dropped += c
		}
		if len(*out)+dropped+buffered != pushed {
			rt.Fatalf("pushed %d: played %d, dropped %d, buffered %d", pushed, len(*out), dropped, buffered)
		}
	})
}

func FuzzAligner(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 200, 100, 7}, uint8(3))
	f.Fuzz(func(t *testing.T, ops []byte, streams uint8) {
		n := 1 + int(streams%5)
		cfgs := make([]StreamConfig, n)
		for i := range cfgs {
			cfgs[i] = StreamConfig{Period: time.Duration(i) * time.Millisecond, BufferSize: i % 3, Priority: i % 2}
		}
		a, err := NewStreamAligner(10*time.Millisecond, cfgs, func(int, stamp.Time, int) {}, nil)
		require.NoError(t, err)
		now := stamp.Time(0)
		for _, op := range ops {
			switch op % 8 {
			case 0:
				a.Step()
			case 1:
				a.Drain()
			case 2:
				_ = a.SetActive(int(op)%(n+1), op&1 == 0)
			case 3:
				if op > 240 {
					a.Clear()
				}
			default:
				now += stamp.Time(op) * 1000 * stamp.Time(int(op%3)-1)
				a.Push(int(op)%(n+1)-1, now, 0)
			}
		}
		for _, s := range a.Status().Streams {
			require.LessOrEqual(t, s.BufferFill, max(s.BufferSize, 20)+len(ops))
		}
	})
}

func BenchmarkAlignerPush(b *testing.B) {
	cfgs := []StreamConfig{{Period: 10 * time.Millisecond, BufferSize: -1}, {Period: 20 * time.Millisecond, BufferSize: -1}, {Period: 50 * time.Millisecond, BufferSize: -1}}
	a, err := NewStreamAligner(100*time.Millisecond, cfgs, func(int, stamp.Time, int) {}, nil)
	require.NoError(b, err)
	msgs := benchStream(10000)
	b.ReportAllocs()
	i, pass := 0, stamp.Time(0)
	span := msgs[len(msgs)-1].Stamp + stamp.Time(time.Second)
	for b.Loop() {
		m := msgs[i]
		a.Push(m.Topic, m.Stamp+pass, 0)
		if i%4 == 3 {
			a.Drain()
		}
		if i++; i == len(msgs) {
			i, pass = 0, pass+span
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "pushes/s")
}
