package nodekit_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timealign/timealign/nodes/internal/nodekit"
	"github.com/timealign/timealign/pkg/stamp"
)

// take is a message for TestWaits: its publisher, when its writer's clock
// said it was sent and when (the node's clocks) it was taken.
type take struct {
	pub        uint64
	sent, wall time.Duration // the writer's clock (noSend: not given); the node's wall clock
	mono       time.Duration // the node's monotonic clock (0: the wall's)
}

// noSend is the send time of a middleware that gives none.
const noSend = time.Duration(-1 << 62)

// feed takes m into w; times count from an epoch of 1000 s.
func feed(w *nodekit.Waits, m ...take) {
	const epoch = stamp.Time(1000 * time.Second)
	for _, t := range m {
		sent := epoch.Add(t.sent)
		if t.sent == noSend {
			sent = 0
		}
		mono := t.mono
		if mono == 0 {
			mono = t.wall
		}
		w.Take(t.pub, sent, epoch.Add(t.wall), mono)
	}
}

// steady is publisher 1's messages taken from from to to, every every: a
// writer 100 s ahead of the node, 1 ms of transport.
func steady(from, to, every time.Duration) []take {
	var m []take
	for w := from; w < to; w += every {
		m = append(m, take{1, w + 100*time.Second - time.Millisecond, w, 0})
	}
	return m
}

// stepped returns m with every send time moved back by d (the writer's
// clock stepped back: its messages look d later).
func stepped(m []take, d time.Duration) []take {
	for i := range m {
		m[i].sent -= d
	}
	return m
}

// TestWaits: a message's wait is its transit above its publisher's least
// in the window, whatever the offset of the writer's clock; a node clock
// step starts over; the window forgets; publishers are told apart and
// bounded; a middleware without send times says nothing.
func TestWaits(t *testing.T) {
	const ms = time.Millisecond
	const s = time.Second
	backlog := append(steady(10*s, 11*s, 10*ms),
		take{1, 11*s + 100*s, 11*s + 400*ms, 0}, // waited 399 ms more than the least
		take{1, 11*s + 100*s + 10*ms, 11*s + 910*ms, 0})
	for _, tc := range []struct {
		name  string
		takes []take
		want  time.Duration
		ok    bool
	}{
		{"none taken", nil, 0, false},
		{"no send times", []take{{1, noSend, 10 * s, 0}, {1, noSend, 11 * s, 0}}, 0, false},
		{"steady, another clock", steady(10*s, 12*s, 10*ms), 0, true},
		{"jitter of the transport", append(steady(10*s, 11*s, 10*ms), take{1, 11*s + 100*s, 11*s + 2*ms, 0}), 1 * ms, true},
		{"a backlog", backlog, 899 * ms, true},
		{"two publishers, two clocks", append(steady(10*s, 11*s, 10*ms),
			take{2, 10*s - 50*s, 10*s + 5*ms, 0}, take{2, 10*s - 50*s + 10*ms, 10*s + 25*ms, 0}), 10 * ms, true},
		{"a publisher back (new GID): its own least", append(steady(10*s, 11*s, 10*ms),
			take{3, 11*s - 30*s, 11 * s, 0}, take{3, 11*s - 30*s + 10*ms, 11*s + 10*ms, 0}), 0, true},
		{"the node's clock stepped 5 s", append(steady(10*s, 11*s, 10*ms),
			take{1, 11*s + 100*s, 16 * s, 11 * s}, take{1, 11*s + 100*s + 10*ms, 16*s + 10*ms, 11*s + 10*ms}), 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var w nodekit.Waits
			feed(&w, tc.takes...)
			got, ok := w.Worst()
			require.Equal(t, tc.ok, ok)
			require.Equal(t, tc.want, got)
		})
	}
	t.Run("Worst starts over", func(t *testing.T) {
		var w nodekit.Waits
		feed(&w, backlog...)
		got, _ := w.Worst()
		require.Equal(t, 899*ms, got)
		got, ok := w.Worst()
		require.True(t, ok)
		require.Zero(t, got, "nothing taken since")
	})
	t.Run("the window forgets a writer's step", func(t *testing.T) {
		var w nodekit.Waits
		feed(&w, steady(10*s, 11*s, 10*ms)...)
		feed(&w, stepped(steady(11*s, 12*s, 10*ms), 2*s)...)
		got, _ := w.Worst()
		require.Equal(t, 2*s, got, "within the window, a step looks like a wait")
		feed(&w, stepped(steady(12*s, 75*s, 100*ms), 2*s)...)
		_, _ = w.Worst()
		feed(&w, stepped(steady(75*s, 76*s, 10*ms), 2*s)...)
		got, _ = w.Worst()
		require.Zero(t, got, "a minute later, the window holds only the new transit")
	})
	t.Run("bounded", func(t *testing.T) {
		var w nodekit.Waits
		for p := range uint64(10_000) {
			feed(&w, take{p, 100 * s, 100*s + ms, 0})
		}
		require.LessOrEqual(t, nodekit.WaitsFollowed(&w), 256)
	})
}

// TestWaitsBatches: the takes that found the queue at its limit are
// counted among all, and Takes starts over.
func TestWaitsBatches(t *testing.T) {
	var w nodekit.Waits
	for _, n := range []int{1, 64, 3, 64, 70, 0} {
		w.Batch(n, 64)
	}
	full, all := w.Takes()
	require.Equal(t, [2]int64{3, 6}, [2]int64{full, all})
	w.Batch(10, 10) // a keep-last queue 10 deep, full
	full, all = w.Takes()
	require.Equal(t, [2]int64{1, 1}, [2]int64{full, all})
	full, all = w.Takes()
	require.Equal(t, [2]int64{0, 0}, [2]int64{full, all})
}
