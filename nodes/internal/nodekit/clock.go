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
// ROS time does. Now and Elapsed may be called from any goroutine;
// SetFromClockMsg from one.
type Clock struct {
	sim   bool
	last  atomic.Int64
	start time.Time // the origin of Elapsed, with its monotonic reading
}

// NewClock returns the system clock, or a simulated one if useSimTime.
func NewClock(useSimTime bool) *Clock { return &Clock{sim: useSimTime, start: time.Now()} }

// Simulated says whether the clock follows /clock.
func (c *Clock) Simulated() bool { return c.sim }

// Now returns the current time of the clock.
func (c *Clock) Now() stamp.Time {
	if c.sim {
		return stamp.Time(c.last.Load())
	}
	return stamp.Time(time.Now().UnixNano())
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
		c.last.Store(int64(t))
	}
	return nil
}
