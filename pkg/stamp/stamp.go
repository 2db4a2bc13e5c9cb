// Package stamp is the one place where timealign converts and does arithmetic
// on timestamps.
//
// A stamp is a [Time]: a signed count of nanoseconds since the epoch of the
// clock it was read from (the Unix epoch for ROS wall time, boot for a boot
// clock, an arbitrary origin for a simulator). The zero value is the epoch
// itself, which ROS also uses for "unset". Every package of timealign carries
// stamps as Time values and durations as [time.Duration]; neither is ever a
// float64 of seconds, which at 1.7e9 s resolves only about 240 ns.
//
// Conversions to and from builtin_interfaces/Time (int32 sec, uint32 nanosec)
// live here ([FromROS], [Time.ROS]), and so does access to header.stamp inside
// a serialized CDR message whose first field is a std_msgs/Header ([Header],
// [SetHeaderStamp]).
//
// Arithmetic saturates at [Min] and [Max] instead of wrapping, as
// [time.Time.Sub] does: a stamp far out of range stays far out of range.
package stamp

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"
)

// Time is a stamp in integer nanoseconds since the epoch of its clock.
type Time int64

const (
	// Min and Max are the extreme stamps; arithmetic saturates at them.
	Min Time = math.MinInt64
	Max Time = math.MaxInt64

	nsPerSec = int64(time.Second)
)

// Errors returned by the conversions.
var (
	// ErrNanosecRange: a builtin_interfaces/Time nanosec field is not below 1e9.
	ErrNanosecRange = errors.New("stamp: nanosec out of range [0, 1e9)")
	// ErrSecRange: the stamp does not fit the int32 seconds of builtin_interfaces/Time.
	ErrSecRange = errors.New("stamp: seconds out of int32 range")
)

// FromROS converts a builtin_interfaces/Time to a Time. A nanosec of 1e9 or
// more is an error (ROS requires nanosec < 1e9); use [Normalize] first to
// accept such values.
func FromROS(sec int32, nanosec uint32) (Time, error) {
	if nanosec >= uint32(nsPerSec) {
		return 0, fmt.Errorf("%w: %d", ErrNanosecRange, nanosec)
	}
	return Time(int64(sec)*nsPerSec + int64(nanosec)), nil
}

// Normalize returns the Time of a possibly non-normalized sec/nanosec pair,
// carrying whole seconds out of nanosec. It never fails: every pair has a
// value in range.
func Normalize(sec int32, nanosec uint32) Time {
	return Time(int64(sec)*nsPerSec + int64(nanosec))
}

// ROS converts t to builtin_interfaces/Time fields. The nanosec part is
// always in [0, 1e9), also for negative stamps (sec is then rounded down, as
// rclcpp does). It fails with [ErrSecRange] if the seconds do not fit int32.
func (t Time) ROS() (sec int32, nanosec uint32, err error) {
	s := int64(t) / nsPerSec
	ns := int64(t) % nsPerSec
	if ns < 0 {
		s--
		ns += nsPerSec
	}
	if s < math.MinInt32 || s > math.MaxInt32 {
		return 0, 0, fmt.Errorf("%w: %d s", ErrSecRange, s)
	}
	return int32(s), uint32(ns), nil
}

// FromDuration returns the stamp d after the epoch.
func FromDuration(d time.Duration) Time { return Time(d) }

// Add returns t+d, saturating at [Min] and [Max].
func (t Time) Add(d time.Duration) Time {
	s := int64(t) + int64(d)
	// Overflow happens only when both operands have the same sign and the
	// result's sign differs.
	if (int64(t) >= 0) == (int64(d) >= 0) && (s >= 0) != (int64(t) >= 0) {
		if int64(t) >= 0 {
			return Max
		}
		return Min
	}
	return Time(s)
}

// Sub returns t-u as a duration, saturating at the extreme durations.
func (t Time) Sub(u Time) time.Duration {
	d := int64(t) - int64(u)
	if (int64(t) >= 0) != (int64(u) >= 0) && (d >= 0) != (int64(t) >= 0) {
		if int64(t) >= 0 {
			return time.Duration(math.MaxInt64)
		}
		return time.Duration(math.MinInt64)
	}
	return time.Duration(d)
}

// Before reports whether t is earlier than u.
func (t Time) Before(u Time) bool { return t < u }

// After reports whether t is later than u.
func (t Time) After(u Time) bool { return t > u }

// IsZero reports whether t is the epoch, which ROS uses for "no stamp".
func (t Time) IsZero() bool { return t == 0 }

// Nanoseconds returns t as an int64 count of nanoseconds.
func (t Time) Nanoseconds() int64 { return int64(t) }

// String formats t as seconds with nine decimals, e.g. "1700000000.000000001".
func (t Time) String() string {
	sec := int64(t) / nsPerSec
	ns := int64(t) % nsPerSec
	sign := ""
	if t < 0 {
		sign = "-"
		if sec < 0 {
			sec = -sec
		}
		if ns < 0 {
			ns = -ns
		}
	}
	return fmt.Sprintf("%s%d.%09d", sign, sec, ns)
}

// AppendNanos appends t as a decimal integer of nanoseconds, the form of
// every CSV file timealign reads and writes.
func (t Time) AppendNanos(b []byte) []byte { return strconv.AppendInt(b, int64(t), 10) }

// ParseNanos parses a decimal integer of nanoseconds.
func ParseNanos(s string) (Time, error) {
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("stamp: %q is not an integer of nanoseconds: %w", s, err)
	}
	return Time(v), nil
}
