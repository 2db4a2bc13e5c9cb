package soak

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timealign/timealign/pkg/stamp"
)

func TestMatcher(t *testing.T) {
	m := NewMatcher(2 * time.Second)
	at := time.Second
	// Ten IMU samples 10..100 µs late, half with the truth first.
	for i := 1; i <= 10; i++ {
		fp := uint64(i)
		tr := stamp.Time(int64(i) * int64(time.Millisecond))
		st := tr.Add(time.Duration(i) * 10 * time.Microsecond)
		if i%2 == 0 {
			m.Truth(fp, tr, at)
			m.Output("imu", fp, st, at)
		} else {
			m.Output("imu", fp, st, at)
			m.Truth(fp, tr, at)
		}
	}
	// A scan 1 ms early, and a message no truth matches.
	m.Truth(100, stamp.Time(time.Second), at)
	m.Output("scan", 100, stamp.Time(time.Second-time.Millisecond), at)
	m.Output("imu", 999, 0, at)
	require.Equal(t, 1, m.Pending())

	p90, n := m.Take("imu")
	require.Equal(t, 10, n)
	require.InDelta(t, 90, p90, 1e-9, "µs")
	p90, n = m.Take("scan")
	require.Equal(t, 1, n)
	require.InDelta(t, 1000, p90, 1e-9)
	p90, n = m.Take("imu")
	require.Zero(t, n, "taken")
	require.True(t, math.IsNaN(p90))

	m.Prune(at + 2*time.Second)
	require.Equal(t, 1, m.Pending(), "kept for 2 s")
	m.Prune(at + 2*time.Second + time.Millisecond)
	require.Zero(t, m.Pending())
}
