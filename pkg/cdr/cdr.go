// Package cdr serializes ROS 2 messages in Go as CDR (XCDR1, little
// endian, after the 4-byte encapsulation header): the bytes rmw_serialize
// produces and rosbag2 records. It is the one CDR encoder of timealign:
// the nodes' status and diagnostics (nodekit.CDR), the simulated sensors'
// messages (pkg/sim/payload) and bag fix's matched sets are written with
// it. Decoding header.stamp is pkg/stamp's.
//
// An Encoder appends to a byte slice the caller may reuse; each field
// costs O(its size) and allocates only when the slice grows.
package cdr

import (
	"encoding/binary"
	"math"
	"time"

	"github.com/timealign/timealign/pkg/stamp"
)

// Encoder appends the fields of a ROS 2 message in little-endian CDR
// (XCDR1), the serialization rmw_cyclonedds and rosbag2 use, so that
// messages of fixed types (sensor data, status, diagnostics) are
// serialized in Go, without generated bindings. Alignment is relative to
// the end of the 4-byte encapsulation header. B is the message so far. The
// zero value is not ready: use NewEncoder.
type Encoder struct{ B []byte }

// NewEncoder starts a message in b (reused) with the encapsulation header.
func NewEncoder(b []byte) Encoder { return Encoder{B: append(b[:0], 0x00, 0x01, 0x00, 0x00)} }

func (c *Encoder) align(n int) {
	for (len(c.B)-4)%n != 0 {
		c.B = append(c.B, 0)
	}
}

// Uint8 appends a byte (also bool, char, octet).
func (c *Encoder) Uint8(v uint8) { c.B = append(c.B, v) }

// Bool appends a bool.
func (c *Encoder) Bool(v bool) {
	if v {
		c.Uint8(1)
	} else {
		c.Uint8(0)
	}
}

// Uint32 appends a uint32 (also the length of sequences).
func (c *Encoder) Uint32(v uint32) { c.align(4); c.B = binary.LittleEndian.AppendUint32(c.B, v) }

// Int32 appends an int32.
func (c *Encoder) Int32(v int32) { c.Uint32(uint32(v)) }

// Float32 appends a float32.
func (c *Encoder) Float32(v float32) { c.Uint32(math.Float32bits(v)) }

// Uint64 appends a uint64.
func (c *Encoder) Uint64(v uint64) { c.align(8); c.B = binary.LittleEndian.AppendUint64(c.B, v) }

// Float64 appends a float64.
func (c *Encoder) Float64(v float64) { c.Uint64(math.Float64bits(v)) }

// String appends a string (length with the NUL, bytes, NUL).
func (c *Encoder) String(s string) {
	c.Uint32(uint32(len(s) + 1))
	c.B = append(c.B, s...)
	c.B = append(c.B, 0)
}

// Bytes appends a uint8[] sequence.
func (c *Encoder) Bytes(b []byte) {
	c.Uint32(uint32(len(b)))
	c.B = append(c.B, b...)
}

// Time appends a builtin_interfaces/Time; stamps out of its range are
// written as 0.
func (c *Encoder) Time(t stamp.Time) {
	sec, ns, err := t.ROS()
	if err != nil {
		sec, ns = 0, 0
	}
	c.Int32(sec)
	c.Uint32(ns)
}

// Duration appends a builtin_interfaces/Duration (sec rounded down,
// nanosec in [0, 1e9)).
func (c *Encoder) Duration(d time.Duration) { c.Time(stamp.Time(d)) }

// Header appends a std_msgs/Header.
func (c *Encoder) Header(t stamp.Time, frameID string) {
	c.Time(t)
	c.String(frameID)
}
