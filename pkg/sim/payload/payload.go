package payload

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/timealign/timealign/pkg/stamp"
)

// Standard message types the simulated sensors publish.
const (
	ImuType           = "sensor_msgs/msg/Imu"
	LaserScanType     = "sensor_msgs/msg/LaserScan"
	ImageType         = "sensor_msgs/msg/Image"
	TimeReferenceType = "sensor_msgs/msg/TimeReference"
)

type encoding struct {
	name string
	bpp  int
}

// encodings are the image encodings a Generator draws, with their bytes per
// pixel (sensor_msgs/image_encodings).
var encodings = []encoding{{"mono8", 1}, {"mono16", 2}, {"rgb8", 3}, {"bgr8", 3}, {"rgba8", 4}, {"bgra8", 4}}

// ImageEncodings returns the names of the image encodings a Generator
// draws.
func ImageEncodings() []string {
	names := make([]string, len(encodings))
	for i, e := range encodings {
		names[i] = e.name
	}
	return names
}

// Options shape the simulated messages.
type Options struct {
	// ImageWidth and ImageHeight are the image size in pixels, 1..16384.
	ImageWidth, ImageHeight int
	// Encoding is one of ImageEncodings. It defaults to mono8.
	Encoding string
	// Beams is the number of ranges of a scan over a full turn, ≥ 1. It
	// defaults to 360.
	Beams int
	// ScanTime is the time a scan takes (LaserScan.scan_time). It
	// defaults to 100 ms.
	ScanTime time.Duration
}

// Generator makes the bodies of simulated sensor messages, each a function
// of the sample's number so that no two samples of a stream are alike (a
// node that rewrites only header.stamp keeps a sample recognisable by its
// stamp.Fingerprint): an IMU turning at 0.1 rad/s, a scan of a round room
// seen from a sensor that turns, and a gradient test image that moves by a
// pixel a frame and carries the frame number in its first 8 bytes (little
// endian), as test-pattern generators do. One goroutine owns a Generator.
type Generator struct {
	imu   Imu
	scan  LaserScan
	image Image
	bpp   int
}

// New returns the generator of the payloads o describes, or an error
// naming a bad option.
func New(o Options) (*Generator, error) {
	o.Encoding = cmpOr(o.Encoding, "mono8")
	if o.Beams == 0 {
		o.Beams = 360
	}
	if o.ScanTime == 0 {
		o.ScanTime = 100 * time.Millisecond
	}
	i := slices.IndexFunc(encodings, func(e encoding) bool { return e.name == o.Encoding })
	switch {
	case o.ImageWidth < 1 || o.ImageWidth > 16384 || o.ImageHeight < 1 || o.ImageHeight > 16384:
		return nil, fmt.Errorf("payload: image size %dx%d, want 1..16384 each", o.ImageWidth, o.ImageHeight)
	case i < 0:
		return nil, fmt.Errorf("payload: image encoding %q, want one of %s", o.Encoding, strings.Join(ImageEncodings(), ", "))
	case o.Beams < 1 || o.Beams > 1<<20:
		return nil, fmt.Errorf("payload: %d beams, want 1..%d", o.Beams, 1<<20)
	case o.ScanTime < 0:
		return nil, fmt.Errorf("payload: scan time %v, want > 0", o.ScanTime)
	}
	p := &Generator{bpp: encodings[i].bpp}
	p.imu.Orientation = [4]float64{0, 0, 0, 1}
	p.imu.LinearAcceleration = [3]float64{0, 0, 9.81}
	for i := 0; i < 9; i += 4 {
		p.imu.OrientationCov[i], p.imu.AngularVelocityCov[i], p.imu.LinearAccelerationCov[i] = 1e-4, 1e-6, 1e-3
	}
	n := o.Beams
	st := float32(o.ScanTime.Seconds())
	p.scan = LaserScan{AngleMin: -math.Pi, AngleMax: math.Pi, AngleIncrement: 2 * math.Pi / float32(n),
		ScanTime: st, TimeIncrement: st / float32(n), RangeMin: 0.1, RangeMax: 30,
		Ranges: make([]float32, n), Intensities: make([]float32, n)}
	for i := range n {
		p.scan.Intensities[i] = 100
	}
	w, h := o.ImageWidth, o.ImageHeight
	p.image = Image{Height: uint32(h), Width: uint32(w), Encoding: o.Encoding, Step: uint32(w * p.bpp),
		Data: make([]byte, w*h*p.bpp)}
	return p, nil
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// Imu appends sample seq of the IMU, stamped t, to buf[:0].
func (p *Generator) Imu(buf []byte, t stamp.Time, frameID string, seq int) []byte {
	a := float64(seq) * 1e-3
	p.imu.Orientation = [4]float64{0, 0, math.Sin(a / 2), math.Cos(a / 2)}
	p.imu.AngularVelocity = [3]float64{0, 0, 0.1}
	return AppendImu(buf, t, frameID, &p.imu)
}

// Scan appends scan seq, stamped t, to buf[:0].
func (p *Generator) Scan(buf []byte, t stamp.Time, frameID string, seq int) []byte {
	n := len(p.scan.Ranges)
	turn := float64(seq) * 0.01 // the sensor turns by 0.01 rad a scan: no scan repeats
	for i := range n {
		p.scan.Ranges[i] = 4 + float32(math.Sin(float64(i)*4*math.Pi/float64(n)+turn))
	}
	return AppendLaserScan(buf, t, frameID, &p.scan)
}

// Image appends frame seq, stamped t, to buf[:0].
func (p *Generator) Image(buf []byte, t stamp.Time, frameID string, seq int) []byte {
	w, bpp, d := int(p.image.Width), p.bpp, p.image.Data
	for k := range d {
		i, c := k/bpp, k%bpp
		d[k] = byte(i%w + i/w + seq + c*64)
	}
	if len(d) >= 8 {
		binary.LittleEndian.PutUint64(d, uint64(seq))
	}
	return AppendImage(buf, t, frameID, &p.image)
}

// Message appends sample seq of a simulated sensor of type typ (ImuType,
// LaserScanType or ImageType; any other type gets the IMU's), stamped t.
func (p *Generator) Message(buf []byte, typ string, t stamp.Time, frameID string, seq int) []byte {
	switch typ {
	case LaserScanType:
		return p.Scan(buf, t, frameID, seq)
	case ImageType:
		return p.Image(buf, t, frameID, seq)
	}
	return p.Imu(buf, t, frameID, seq)
}
