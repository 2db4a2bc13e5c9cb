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

// TestClockSteps: the system clock reports the wall clock stepping
// against the monotonic one by more than the threshold, either way, and
// not slewing; a simulated clock counts /clock going back.
func TestClockSteps(t *testing.T) {
	base := stamp.Time(1_700_000_000 * time.Second)
	var offset time.Duration
	mono := time.Duration(0)
	c := NewClock(false)
	c.read = func() (stamp.Time, time.Duration) { return base.Add(mono + offset), mono }
	var steps []time.Duration
	for i := range 60 {
		mono = time.Duration(i) * time.Second
		offset += 300 * time.Microsecond // slewing
		switch i {
		case 20:
			offset += 5 * time.Second
		case 40:
			offset -= 5 * time.Second
		}
		if s, ok := c.Stepped(); ok {
			steps = append(steps, s.Round(10*time.Millisecond))
		}
	}
	require.Equal(t, []time.Duration{5 * time.Second, -5 * time.Second}, steps)

	sim := NewClock(true)
	sim.SetJumpThreshold(2 * time.Second)
	for _, s := range []stamp.Time{10, 9, 12, 30, 27, 29, 5} {
		require.NoError(t, sim.SetFromClockMsg(clockMsg(s*stamp.Time(time.Second))))
	}
	n, last := sim.Jumps()
	require.Equal(t, uint64(2), n, "30 -> 27 and 29 -> 5")
	require.Equal(t, 24*time.Second, last)
	_, stepped := sim.Stepped()
	require.False(t, stepped, "a simulated clock does not step")
}
