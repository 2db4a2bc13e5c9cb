package mavcmd

import (
	"errors"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestAsyncWriter: the writer writes every element, in order, and hands
// every run back to done once; after a write fails it writes no more, add
// and finish return the error, and every element handed over still comes
// back to done (the merge releases its batches there); the goroutine ends.
func TestAsyncWriter(t *testing.T) {
	before := runtime.NumGoroutine()
	errFull := errors.New("disk full")
	for _, failAt := range []int{-1, 0, 1500, 4999} {
		written, done := []int{}, []int{}
		a := newAsyncWriter(func(e int) error {
			if e == failAt {
				return errFull
			}
			written = append(written, e)
			return nil
		}, func(run []int) { done = append(done, run...) })
		var addErr error
		n := 0
		for ; n < 5000; n++ {
			if addErr = a.add(n); addErr != nil {
				break
			}
		}
		err := a.finish()
		require.Equal(t, err, a.finish(), "finish says the same twice")
		a.abort()
		want := make([]int, 0, 5000)
		for i := range n {
			want = append(want, i)
		}
		require.Equal(t, want, done, "fail at %d: every element handed over comes back, in order", failAt)
		if failAt < 0 {
			require.NoError(t, err)
			require.Equal(t, want, written)
			continue
		}
		require.ErrorIs(t, err, errFull)
		require.Equal(t, want[:failAt], written, "nothing written after the failure")
		if addErr != nil {
			require.ErrorIs(t, addErr, errFull)
		}
	}
	// A writer aborted before it wrote anything.
	a := newAsyncWriter(func(int) error { return nil }, func([]int) {})
	a.abort()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	require.LessOrEqual(t, runtime.NumGoroutine(), before, "every writer goroutine ended")
}
