package nodekit_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timealign/timealign/nodes/internal/nodekit"
)

// TestBufPool: big buffers come back for messages of about their size,
// small ones are never kept, the pool stays within its bounds, and what
// no Get asked for in Idle is released.
func TestBufPool(t *testing.T) {
	now := time.Unix(1000, 0)
	p := nodekit.NewBufPool()
	p.Now = func() time.Time { return now }
	frame := 1920*1080*3 + 60
	a := p.Get(frame)
	require.Len(t, a, frame)
	require.Zero(t, cap(a)%(64<<10), "rounded to 64 KiB")
	a[0] = 7
	p.Put(a)
	b := p.Get(frame - 100)
	require.Same(t, &a[0], &b[0], "reused")
	require.Len(t, b, frame-100)
	p.Put(b)
	c := p.Get(frame / 3)
	require.NotSame(t, &a[0], &c[0], "a buffer more than twice the size is not handed out")
	p.Put(p.Get(100)) // small: never kept
	n, bytes, reused := p.Kept()
	require.Equal(t, 1, n)
	require.Equal(t, cap(a), bytes)
	require.Equal(t, uint64(1), reused)

	for range 40 {
		p.Put(make([]byte, 8<<20))
	}
	n, bytes, _ = p.Kept()
	require.LessOrEqual(t, n, p.MaxBuffers)
	require.LessOrEqual(t, bytes, p.MaxBytes)

	now = now.Add(p.Idle - time.Second)
	p.Trim()
	n, _, _ = p.Kept()
	require.NotZero(t, n, "used recently")
	now = now.Add(2 * time.Second)
	p.Trim()
	n, bytes, _ = p.Kept()
	require.Zero(t, n, "released once unused for Idle")
	require.Zero(t, bytes)
}
