package nodekit_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/timealign/timealign/nodes/internal/nodekit"
)

// TestSeqGaps: gaps in each publisher's numbers are losses; a new
// publisher (a restart: a new GID), a number again or an earlier one are
// not; a middleware that does not number its messages leaves the count
// unknown; the publishers followed are bounded.
func TestSeqGaps(t *testing.T) {
	for _, tc := range []struct {
		name string
		take [][2]uint64 // publisher, number
		want int64
	}{
		{"none taken", nil, -1},
		{"in order", [][2]uint64{{1, 1}, {1, 2}, {1, 3}}, 0},
		{"first seen late", [][2]uint64{{1, 500}, {1, 501}}, 0},
		{"a gap", [][2]uint64{{1, 1}, {1, 2}, {1, 6}, {1, 7}}, 3},
		{"two publishers interleaved", [][2]uint64{{1, 1}, {2, 10}, {1, 2}, {2, 12}, {1, 5}, {2, 13}}, 3},
		{"a restart: new GID", [][2]uint64{{1, 1}, {1, 2}, {3, 1}, {3, 2}}, 0},
		{"a number again", [][2]uint64{{1, 1}, {1, 2}, {1, 2}, {1, 3}}, 0},
		{"starts over, same GID", [][2]uint64{{1, 100}, {1, 1}, {1, 2}, {1, 4}}, 1},
		{"not numbered", [][2]uint64{{1, nodekit.NotNumbered}, {1, nodekit.NotNumbered}}, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var g nodekit.SeqGaps
			for _, m := range tc.take {
				g.Take(m[0], m[1])
			}
			require.Equal(t, tc.want, g.Lost())
		})
	}
	t.Run("bounded", func(t *testing.T) {
		var g nodekit.SeqGaps
		for p := range uint64(10_000) {
			g.Take(p, 1)
		}
		g.Take(0, 5) // forgotten: a first message again, no loss
		require.Equal(t, int64(0), g.Lost())
		g.Take(9_999, 3) // still followed
		require.Equal(t, int64(1), g.Lost())
		require.LessOrEqual(t, nodekit.SeqGapsFollowed(&g), 256)
	})
}
