package nodekit

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/timealign/timealign/nodes/internal/runtimeparams"
	"github.com/timealign/timealign/pkg/stamp"
)

// take drains every waiting message.
func take(b *Inbox) []Msg {
	var out []Msg
	b.Drain(1<<30, func(m Msg) { out = append(out, m) })
	return out
}

func TestInboxLimits(t *testing.T) {
	for _, tc := range []struct {
		name   string
		lim    runtimeparams.Limits
		sizes  []int
		queued []int // indexes of sizes queued
	}{
		// inputs alternate 0, 1, 0, 1...
		{"messages: the oldest of the input holding the most", runtimeparams.Limits{Messages: 2, Bytes: 100}, []int{1, 2, 3}, []int{1, 2}},
		{"bytes: the oldest of the input holding the most", runtimeparams.Limits{Messages: 10, Bytes: 10}, []int{4, 4, 4, 2}, []int{1, 2, 3}},
		{"a message larger than the bound finds the inbox empty", runtimeparams.Limits{Messages: 10, Bytes: 10}, []int{25, 1}, []int{1}},
		{"a message larger than the bound while others wait", runtimeparams.Limits{Messages: 10, Bytes: 10}, []int{1, 25, 2}, []int{0, 2}},
		{"empty messages count as messages; a tie sheds the offering input", runtimeparams.Limits{Messages: 3, Bytes: 10}, []int{0, 0, 0, 0}, []int{0, 2, 3}},
		{"an offering input with nothing older is dropped", runtimeparams.Limits{Messages: 1, Bytes: 100}, []int{1, 1}, []int{0}},
		{"a message larger than MessageBytes never", runtimeparams.Limits{Messages: 10, Bytes: 100, MessageBytes: 5}, []int{6, 5, 7, 1}, []int{1, 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := NewInbox(tc.lim)
			for i, n := range tc.sizes {
				b.Offer(i%2, make([]byte, n), stamp.Time(i))
			}
			var got []int
			for _, m := range take(b) {
				got = append(got, int(m.Receive))
			}
			require.Equal(t, tc.queued, got)
			require.Equal(t, uint64(len(tc.sizes)-len(tc.queued)), b.Dropped())
			var count, bytes uint64
			for _, d := range b.Drops(nil) {
				count += d.Count
				bytes += d.Bytes
			}
			require.Equal(t, b.Dropped(), count, "the inputs' drops add up")
			want := uint64(0)
			for i, n := range tc.sizes {
				if !contains(tc.queued, i) {
					want += uint64(n)
				}
			}
			require.Equal(t, want, bytes)
			n, by := b.Len()
			require.Zero(t, n)
			require.Zero(t, by)
		})
	}
}

func contains(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func TestInboxDropsPerInput(t *testing.T) {
	b := NewInbox(runtimeparams.Limits{Messages: 1, Bytes: 1 << 30})
	require.True(t, b.Offer(0, make([]byte, 10), 0))
	require.False(t, b.Offer(2, make([]byte, 7), 0))
	require.False(t, b.Offer(2, make([]byte, 9), 0))
	require.Equal(t, []Drops{{}, {}, {Count: 2, Bytes: 16, LastSize: 9}}, b.Drops(nil))
	require.Len(t, take(b), 1)
	require.True(t, b.Offer(2, nil, 0), "room again")
	b.SetLimits(runtimeparams.Limits{Messages: 10, MessageBytes: 8})
	require.False(t, b.Offer(1, make([]byte, 9), 0))
	require.Equal(t, []Drops{{}, {Count: 1, Bytes: 9, LastSize: 9, TooBig: 1}, {Count: 2, Bytes: 16, LastSize: 9}}, b.Drops(nil))
}

func TestInboxHandsOver(t *testing.T) {
	b := NewInbox(runtimeparams.Limits{})
	src := []byte("hello")
	b.Offer(3, src, 42)
	got := take(b)
	require.Len(t, got, 1)
	require.Equal(t, Msg{Input: 3, Data: src, Receive: 42}, got[0])
	require.Same(t, &src[0], &got[0].Data[0], "the message is handed over, not copied")
}

func TestInboxSetLimits(t *testing.T) {
	b := NewInbox(runtimeparams.Limits{Messages: 2})
	require.Equal(t, runtimeparams.DefaultLimits().Bytes, b.Limits().Bytes, "zero takes the default")
	b.Offer(0, []byte("a"), 0)
	b.Offer(0, []byte("b"), 0)
	require.True(t, b.Offer(0, []byte("c"), 0), "queued, the oldest dropped")
	require.Equal(t, uint64(1), b.Dropped())
	b.SetLimits(runtimeparams.Limits{Messages: 3})
	require.True(t, b.Offer(0, []byte("d"), 0), "raised live")
	require.Equal(t, uint64(1), b.Dropped())
	b.SetLimits(runtimeparams.Limits{Messages: 1})
	var got []string
	b.Drain(10, func(m Msg) { got = append(got, string(m.Data)) })
	require.Equal(t, []string{"b", "c", "d"}, got, "what was queued stays")
}

// TestInboxFloodSheddsTheFlooder: one input floods a small inbox five
// times faster than the owner drains it; the other input's messages all
// get through, in arrival order with the flood's, and of the flood the
// newest are kept.
func TestInboxFloodSheddsTheFlooder(t *testing.T) {
	for _, byCount := range []bool{true, false} {
		lim := runtimeparams.Limits{Messages: 8, Bytes: 1 << 20}
		if !byCount {
			lim = runtimeparams.Limits{Messages: 1000, Bytes: 800}
		}
		b := NewInbox(lim)
		var slow []stamp.Time
		var got []Msg
		for i := range 1000 {
			if i%5 == 0 {
				b.Drain(1, func(m Msg) { got = append(got, m) })
			}
			if i%100 == 50 {
				require.True(t, b.Offer(1, make([]byte, 10), stamp.Time(i)), "the quiet input's message is queued")
				slow = append(slow, stamp.Time(i))
			}
			b.Offer(0, make([]byte, 100), stamp.Time(i))
		}
		got = append(got, take(b)...)
		var quiet, flood []stamp.Time
		for k, m := range got {
			if k > 0 {
				require.Less(t, got[k-1].Receive, m.Receive, "arrival order")
			}
			if m.Input == 1 {
				quiet = append(quiet, m.Receive)
			} else {
				flood = append(flood, m.Receive)
			}
		}
		require.Equal(t, slow, quiet, "no message of the quiet input dropped")
		require.NotEmpty(t, flood)
		require.Equal(t, stamp.Time(999), flood[len(flood)-1], "the newest of the flood kept")
		last := flood[len(flood)-7:]
		for k := 1; k < len(last); k++ {
			require.Equal(t, last[k-1]+1, last[k], "the backlog left at the end is the flood's newest")
		}
		ds := b.Drops(nil)
		require.Equal(t, uint64(1000-len(flood)), ds[0].Count, "byCount=%v", byCount)
		require.Len(t, ds, 1, "no drop counted for the quiet input")
	}
}

func TestInboxFIFOAcrossGrowth(t *testing.T) {
	b := NewInbox(runtimeparams.Limits{Messages: 1000})
	next := 0
	for round := range 50 {
		for range round {
			b.Offer(0, nil, stamp.Time(next))
			next++
		}
		b.Drain(round/2+1, func(Msg) {})
	}
	got := take(b)
	for i := 1; i < len(got); i++ {
		require.Equal(t, got[i-1].Receive+1, got[i].Receive, "arrival order")
	}
	require.Equal(t, stamp.Time(next-1), got[len(got)-1].Receive)
}

func TestInboxReady(t *testing.T) {
	b := NewInbox(runtimeparams.Limits{})
	select {
	case <-b.Ready():
		t.Fatal("ready while empty")
	default:
	}
	for i := range 5 {
		b.Offer(0, nil, stamp.Time(i))
	}
	<-b.Ready()
	require.Equal(t, 2, b.Drain(2, func(Msg) {}))
	select {
	case <-b.Ready():
	default:
		t.Fatal("not ready again with messages left")
	}
	require.Equal(t, 3, b.Drain(10, func(Msg) {}))
}

func TestInboxConcurrent(t *testing.T) {
	b := NewInbox(runtimeparams.Limits{Messages: 16, Bytes: 1 << 20})
	var g Group
	const producers, each = 4, 1000
	for p := range producers {
		g.Go(func() {
			for i := range each {
				b.Offer(p, []byte{byte(p), byte(i)}, 0)
			}
		})
	}
	got := 0
	done := make(chan struct{})
	stop := make(chan struct{})
	var mu sync.Mutex
	go func() {
		defer close(done)
		for {
			select {
			case <-b.Ready():
			case <-stop:
				b.Drain(1<<30, func(Msg) { mu.Lock(); got++; mu.Unlock() })
				return
			}
			b.Drain(8, func(m Msg) {
				assert.Equal(t, byte(m.Input), m.Data[0])
				mu.Lock()
				got++
				mu.Unlock()
			})
		}
	}()
	g.Wait()
	close(stop)
	<-done
	require.Equal(t, uint64(producers*each), uint64(got)+b.Dropped(), "every message delivered or counted")
}

func TestInboxNoAllocs(t *testing.T) {
	b := NewInbox(runtimeparams.Limits{Messages: 4})
	data := make([]byte, 300)
	f := func(Msg) {}
	allocs := testing.AllocsPerRun(1000, func() {
		b.Offer(0, data, 0)
		b.Drain(1, f)
	})
	require.LessOrEqual(t, allocs, 0.01)
}

func BenchmarkInbox(b *testing.B) {
	in := NewInbox(runtimeparams.Limits{Messages: 64})
	data := make([]byte, 330) // a sensor_msgs/Imu
	f := func(Msg) {}
	b.ReportAllocs()
	for b.Loop() {
		in.Offer(0, data, 0)
		in.Drain(1, f)
	}
}
