// Package rosmsgs serializes the standard sensor messages that the
// simulated bags hold (sensor_msgs/Imu, LaserScan, Image) as ROS 2 CDR
// (XCDR1, little endian, with the 4-byte encapsulation header), the bytes
// rmw_serialize produces and rosbag2 records.
package rosmsgs

import (
	"encoding/binary"
	"math"

	"github.com/timealign/timealign/pkg/stamp"
)

// Enc appends CDR fields; alignment is relative to the body, which starts
// after the 4-byte encapsulation header.
type Enc struct{ B []byte }

// NewEnc starts a little-endian CDR message in buf (reused).
func NewEnc(buf []byte) *Enc { return &Enc{B: append(buf[:0], 0x00, 0x01, 0x00, 0x00)} }

func (e *Enc) align(n int) {
	for (len(e.B)-4)%n != 0 {
		e.B = append(e.B, 0)
	}
}

// U8 appends a uint8.
func (e *Enc) U8(v uint8) { e.B = append(e.B, v) }

// U32 appends a uint32.
func (e *Enc) U32(v uint32) { e.align(4); e.B = binary.LittleEndian.AppendUint32(e.B, v) }

// I32 appends an int32.
func (e *Enc) I32(v int32) { e.U32(uint32(v)) }

// F32 appends a float32.
func (e *Enc) F32(v float32) { e.U32(math.Float32bits(v)) }

// F64 appends a float64.
func (e *Enc) F64(v float64) {
	e.align(8)
	e.B = binary.LittleEndian.AppendUint64(e.B, math.Float64bits(v))
}

// String appends a string (length with its NUL, bytes, NUL).
func (e *Enc) String(s string) {
	e.U32(uint32(len(s) + 1))
	e.B = append(e.B, s...)
	e.B = append(e.B, 0)
}

// Bytes appends a uint8[] sequence.
func (e *Enc) Bytes(b []byte) {
	e.U32(uint32(len(b)))
	e.B = append(e.B, b...)
}

// Header appends a std_msgs/Header; a stamp outside builtin_interfaces/Time
// is written as 0.
func (e *Enc) Header(t stamp.Time, frameID string) {
	sec, ns, err := t.ROS()
	if err != nil {
		sec, ns = 0, 0
	}
	e.I32(sec)
	e.U32(ns)
	e.String(frameID)
}

// Imu is a sensor_msgs/Imu.
type Imu struct {
	Orientation        [4]float64 // x, y, z, w
	AngularVelocity    [3]float64
	LinearAcceleration [3]float64
	// Covariances (orientation, angular velocity, linear acceleration).
	OrientationCov, AngularVelocityCov, LinearAccelerationCov [9]float64
}

// AppendImu serializes an Imu message into buf.
func AppendImu(buf []byte, t stamp.Time, frameID string, m *Imu) []byte {
	e := NewEnc(buf)
	e.Header(t, frameID)
	for _, v := range m.Orientation {
		e.F64(v)
	}
	for _, v := range m.OrientationCov {
		e.F64(v)
	}
	for _, v := range m.AngularVelocity {
		e.F64(v)
	}
	for _, v := range m.AngularVelocityCov {
		e.F64(v)
	}
	for _, v := range m.LinearAcceleration {
		e.F64(v)
	}
	for _, v := range m.LinearAccelerationCov {
		e.F64(v)
	}
	return e.B
}

// LaserScan is a sensor_msgs/LaserScan.
type LaserScan struct {
	AngleMin, AngleMax, AngleIncrement, TimeIncrement, ScanTime, RangeMin, RangeMax float32
	Ranges, Intensities                                                             []float32
}

// AppendLaserScan serializes a LaserScan message into buf.
func AppendLaserScan(buf []byte, t stamp.Time, frameID string, m *LaserScan) []byte {
	e := NewEnc(buf)
	e.Header(t, frameID)
	for _, v := range []float32{m.AngleMin, m.AngleMax, m.AngleIncrement, m.TimeIncrement, m.ScanTime, m.RangeMin, m.RangeMax} {
		e.F32(v)
	}
	for _, seq := range [][]float32{m.Ranges, m.Intensities} {
		e.U32(uint32(len(seq)))
		for _, v := range seq {
			e.F32(v)
		}
	}
	return e.B
}

// Image is a sensor_msgs/Image.
type Image struct {
	Height, Width uint32
	Encoding      string
	IsBigEndian   uint8
	Step          uint32
	Data          []byte
}

// AppendImage serializes an Image message into buf.
func AppendImage(buf []byte, t stamp.Time, frameID string, m *Image) []byte {
	e := NewEnc(buf)
	e.Header(t, frameID)
	e.U32(m.Height)
	e.U32(m.Width)
	e.String(m.Encoding)
	e.U8(m.IsBigEndian)
	e.U32(m.Step)
	e.Bytes(m.Data)
	return e.B
}
