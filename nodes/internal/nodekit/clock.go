package nodekit

import (
	"fmt"
	"sync/atomic"
	"time"

	"github.com/timealign/timealign/pkg/stamp"
)

// Clock is a node's clock, the one place the runtime reads the time from.
// Now is the ROS time: the system clock, or with use_sim_time the last
// time received on /clock (rosgraph_msgs/msg/Clock), as rclcpp's time
// source does; before the first /clock message a simulated clock reads 0.
// Elapsed is the monotonic time the runtime paces itself by, whatever the
// ROS time does. Now, Elapsed, Jumps and SetJumpThreshold may be called
// from any goroutine; SetFromClockMsg from one; Stepped from one.
//
// The clock watches for jumps: a simulated clock for /clock going back by
// more than the jump threshold (Jumps), the system clock for the wall
// clock stepping against the monotonic one, either way (Stepped).
type Clock struct {
	sim       bool
	last      atomic.Int64
	start     time.Time // the origin of Elapsed, with its monotonic reading
	threshold atomic.Int64
	jumps     atomic.Uint64 // /clock jumps back
	lastBack  atomic.Int64  // how far the last one went back
	step      stamp.StepDetector
	read      func() (wall stamp.Time, mono time.Duration) // the system clock; tests step it
}

// wallOffset is added to the wall clock that system Clocks read: zero,
// but a test steps it (the host clock cannot be stepped for one process).
var wallOffset = func() time.Duration { return 0 }

// NewClock returns the system clock, or a simulated one if useSimTime.
func NewClock(useSimTime bool) *Clock {
	c := &Clock{sim: useSimTime, start: time.Now()}
	c.read = func() (stamp.Time, time.Duration) {
		t := time.Now()
		return stamp.Time(t.UnixNano()).Add(wallOffset()), t.Sub(c.start)
	}
	c.SetJumpThreshold(time.Second)
	return c
}

// SetJumpThreshold sets how far time must go back to be a jump
// (time_jump_threshold_sec).
func (c *Clock) SetJumpThreshold(d time.Duration) { c.threshold.Store(int64(d)) }

// Jumps returns how many times /clock went back by more than the jump
// threshold, and how far it went the last time.
func (c *Clock) Jumps() (n uint64, last time.Duration) {
	return c.jumps.Load(), time.Duration(c.lastBack.Load())
}

// Stepped reads the system clock (wall and monotonic) and reports a step
// of the wall clock since the previous call larger than the jump threshold
// (positive: forward). A simulated clock never steps.
func (c *Clock) Stepped() (time.Duration, bool) {
	if c.sim {
		return 0, false
	}
	wall, mono := c.read()
	c.step.Threshold = time.Duration(c.threshold.Load())
	return c.step.Observe(wall, mono)
}

// Simulated says whether the clock follows /clock.
func (c *Clock) Simulated() bool { return c.sim }

// Now returns the current time of the clock.
func (c *Clock) Now() stamp.Time {
	if c.sim {
		return stamp.Time(c.last.Load())
	}
	wall, _ := c.read()
	return wall
}

// Elapsed returns the monotonic time since the clock was made. It runs
// on under use_sim_time, whether /clock runs, stops or jumps back: the
// runtime's own pacing (the batches of messages, the log throttle, the
// rates in the status) goes by it.
func (c *Clock) Elapsed() time.Duration { return time.Since(c.start) }

// SetFromClockMsg sets a simulated clock from a serialized
// rosgraph_msgs/msg/Clock (a builtin_interfaces/Time in CDR). The time may
// jump back (a replay restarted); a system clock ignores the message.
func (c *Clock) SetFromClockMsg(msg []byte) error {
	// The layout of a Clock is the leading stamp of a Header-first message.
	t, err := stamp.HeaderStamp(msg)
	if err != nil {
		return fmt.Errorf("/clock message: %w", err)
	}
	if c.sim {
		prev := stamp.Time(c.last.Swap(int64(t)))
		if prev != 0 && t < prev.Add(-time.Duration(c.threshold.Load())) {
			c.lastBack.Store(int64(prev.Sub(t)))
			c.jumps.Add(1)
		}
	}
	return nil
}
