package nodekit

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/timealign/timealign/pkg/stamp"
)

func clockMsg(t stamp.Time) []byte {
	c := NewCDR(nil)
	c.Time(t)
	return c.B
}

func TestClockSimulated(t *testing.T) {
	c := NewClock(true)
	assert.True(t, c.Simulated())
	assert.Equal(t, stamp.Time(0), c.Now(), "no /clock yet")
	for _, want := range []stamp.Time{5_000_000_000, 5_010_000_000, 1_000_000_000 /* replay restarted */} {
		require.NoError(t, c.SetFromClockMsg(clockMsg(want)))
		assert.Equal(t, want, c.Now())
	}
	require.ErrorIs(t, c.SetFromClockMsg([]byte{0, 1, 0, 0, 1}), stamp.ErrTruncated)
	assert.Equal(t, stamp.Time(1_000_000_000), c.Now(), "a bad message leaves the clock")
}

func TestClockSystem(t *testing.T) {
	c := NewClock(false)
	require.NoError(t, c.SetFromClockMsg(clockMsg(5_000_000_000)))
	before := time.Now().UnixNano()
	now := int64(c.Now())
	assert.GreaterOrEqual(t, now, before, "the system clock ignores /clock")
	assert.LessOrEqual(t, now, time.Now().UnixNano())
}

// TestClockElapsed: Elapsed is the time since the clock was made, on the
// system's monotonic clock, and runs on under use_sim_time while /clock
// stands still or goes back.
func TestClockElapsed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := NewClock(true)
		require.NoError(t, c.SetFromClockMsg(clockMsg(5_000_000_000)))
		time.Sleep(1500 * time.Millisecond)
		require.NoError(t, c.SetFromClockMsg(clockMsg(1_000_000_000)))
		assert.Equal(t, 1500*time.Millisecond, c.Elapsed())
		assert.Equal(t, stamp.Time(1_000_000_000), c.Now())
	})
}

func BenchmarkClockSimulated(b *testing.B) {
	c := NewClock(true)
	msg := clockMsg(5_000_000_000)
	b.ReportAllocs()
	for b.Loop() {
		_ = c.SetFromClockMsg(msg)
		_ = c.Now()
	}
}
