// Package payload makes the messages of simulated sensors, the ones the
// sensor_sim node publishes and `simulate --bag` records: the standard
// sensor messages (sensor_msgs/Imu, LaserScan, Image, TimeReference)
// serialized as CDR with pkg/cdr, and [Generator], the contents of each
// sample, different from every other sample's so that a node that
// rewrites only header.stamp keeps a sample recognisable
// (stamp.Fingerprint). pkg/sim decides when the samples are taken and
// arrive; this package what they carry.
//
// A message costs O(its size); a Generator reuses its buffers and the
// caller's, so a stream of messages allocates nothing once they are
// sized.
package payload

import (
	"github.com/timealign/timealign/pkg/cdr"
	"github.com/timealign/timealign/pkg/stamp"
)

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
	e := cdr.NewEncoder(buf)
	e.Header(t, frameID)
	for _, v := range m.Orientation {
		e.Float64(v)
	}
	for _, v := range m.OrientationCov {
		e.Float64(v)
	}
	for _, v := range m.AngularVelocity {
		e.Float64(v)
	}
	for _, v := range m.AngularVelocityCov {
		e.Float64(v)
	}
	for _, v := range m.LinearAcceleration {
		e.Float64(v)
	}
	for _, v := range m.LinearAccelerationCov {
		e.Float64(v)
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
	e := cdr.NewEncoder(buf)
	e.Header(t, frameID)
	for _, v := range []float32{m.AngleMin, m.AngleMax, m.AngleIncrement, m.TimeIncrement, m.ScanTime, m.RangeMin, m.RangeMax} {
		e.Float32(v)
	}
	for _, seq := range [][]float32{m.Ranges, m.Intensities} {
		e.Uint32(uint32(len(seq)))
		for _, v := range seq {
			e.Float32(v)
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
	e := cdr.NewEncoder(buf)
	e.Header(t, frameID)
	e.Uint32(m.Height)
	e.Uint32(m.Width)
	e.String(m.Encoding)
	e.Uint8(m.IsBigEndian)
	e.Uint32(m.Step)
	e.Bytes(m.Data)
	return e.B
}

// AppendTimeReference serializes a sensor_msgs/TimeReference into buf:
// header (stamp t, frameID), time_ref ref, source.
func AppendTimeReference(buf []byte, t stamp.Time, frameID string, ref stamp.Time, source string) []byte {
	e := cdr.NewEncoder(buf)
	e.Header(t, frameID)
	e.Time(ref)
	e.String(source)
	return e.B
}
