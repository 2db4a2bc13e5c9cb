package config

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/timealign/timealign/pkg/cfgerr"
	"github.com/timealign/timealign/pkg/sim"
	"github.com/timealign/timealign/pkg/sim/payload"
	"github.com/timealign/timealign/pkg/stamp"
)

// ErrConfig is wrapped by every error of Config.Validate.
var ErrConfig = errors.New("sensor_sim: invalid config")

// Stamping says what a sensor writes into header.stamp.
type Stamping int

const (
	// ReceiveStamp: the host's receive time (a driver that stamps on
	// arrival): late by the latency, with its jitter.
	ReceiveStamp Stamping = iota
	// DeviceStamp: the device clock at acquisition, as its wrapped tick
	// counter times the tick period (time since the device booted).
	DeviceStamp
)

var stampingNames = []string{"receive_time", "device_clock"}

// StampingNames returns the names of the stampings, indexed by Stamping (a copy).
func StampingNames() []string { return slices.Clone(stampingNames) }

func (s Stamping) String() string {
	if s >= 0 && int(s) < len(stampingNames) {
		return stampingNames[s]
	}
	return fmt.Sprintf("Stamping(%d)", int(s))
}

// Sensor configures one simulated sensor (see pkg/sim for the models).
type Sensor struct {
	// Enabled: the sensor publishes.
	Enabled bool
	// Rate is the sampling rate in samples per second of the device's
	// clock, > 0.
	Rate float64
	// Latency is the constant part of the delay from acquisition to
	// arrival, ≥ 0.
	Latency time.Duration
	// Jitter is the distribution of the random part, of scale JitterScale
	// (uniform in [0, scale), exponential of mean scale, Pareto).
	Jitter      sim.Jitter
	JitterScale time.Duration
	// Loss is the probability that a sample is lost, in [0, 1); BurstProb
	// the probability that a burst of losses starts, of mean length
	// BurstLen samples (≥ 1 when BurstProb > 0).
	Loss, BurstProb, BurstLen float64
	// BatchProb is the probability that a delivered sample starts a batch
	// of BatchSize (≥ 2 when BatchProb > 0) that arrive together.
	BatchProb float64
	BatchSize int
	// Stamp is what header.stamp holds.
	Stamp Stamping
	// The device clock: SkewPPM fast (parts per million), drifting by
	// DriftPPMPerHour, reading DeviceOffset at the first sample, counting
	// ticks of TickPeriod in a counter of TickBits (1..64) that wraps.
	SkewPPM, DriftPPMPerHour float64
	DeviceOffset             time.Duration
	TickPeriod               time.Duration
	TickBits                 int
	// FrameID is header.frame_id.
	FrameID string
}

// Image is the camera's picture.
type Image struct {
	Width, Height int    // pixels, 1..16384
	Encoding      string // one of payload.ImageEncodings()
}

// Reference configures the hardware reference pulses: one every Every IMU
// samples (0: none), on the IMU's true acquisition time, late by up to
// Jitter (uniform), as a sync line read by a driver; each is published
// Latency after the acquisition it marks.
type Reference struct {
	Every   int
	Jitter  time.Duration
	Latency time.Duration
}

// Config configures the node's Core (in the package above).
type Config struct {
	// Seed selects the random streams; the same seed gives the same
	// samples (their stamps relative to the start).
	Seed               uint64
	IMU, Lidar, Camera Sensor
	Image              Image
	// Beams is the number of ranges of a scan.
	Beams     int
	Reference Reference
}

// The sensors, in the order of their outputs.
const (
	IMU = iota
	Lidar
	Camera
	// NumSensors is the number of sensors.
	NumSensors
)

// SensorNames are the sensors' names, as their parameters' prefixes and in
// the status: imu, lidar, camera (and reference, the pulses).
var SensorNames = []string{"imu", "lidar", "camera"}

// Sensors returns the sensors in output order.
func (c *Config) Sensors() [NumSensors]*Sensor {
	return [NumSensors]*Sensor{&c.IMU, &c.Lidar, &c.Camera}
}

// DefaultConfig returns the node's defaults: a 400 Hz IMU stamped on
// arrival (1 ms latency, uniform 0–2 ms jitter), a 10 Hz lidar stamped by a
// 32-bit microsecond tick counter 20 ppm fast, a 30 Hz 640x480 rgb8 camera
// (15 ms + exponential 3 ms, 1 % loss), a reference pulse every 40 IMU
// samples (10 Hz) late by up to 20 µs, published 50 ms after the sample.
func DefaultConfig() Config {
	imu := Sensor{Enabled: true, Rate: 400, Latency: time.Millisecond, Jitter: sim.Uniform, JitterScale: 2 * time.Millisecond,
		BurstLen: 1, BatchSize: 2, TickPeriod: time.Microsecond, TickBits: 32, FrameID: "imu_link"}
	lidar := Sensor{Enabled: true, Rate: 10, Latency: time.Millisecond, Jitter: sim.Exponential, JitterScale: 500 * time.Microsecond,
		BurstLen: 1, BatchSize: 2, Stamp: DeviceStamp, SkewPPM: 20, DeviceOffset: 1234 * time.Second,
		TickPeriod: time.Microsecond, TickBits: 32, FrameID: "laser"}
	camera := Sensor{Enabled: true, Rate: 30, Latency: 15 * time.Millisecond, Jitter: sim.Exponential, JitterScale: 3 * time.Millisecond,
		Loss: 0.01, BurstLen: 1, BatchSize: 2, TickPeriod: time.Microsecond, TickBits: 32, FrameID: "camera"}
	return Config{Seed: 1, IMU: imu, Lidar: lidar, Camera: camera,
		Image: Image{Width: 640, Height: 480, Encoding: "rgb8"}, Beams: 720,
		Reference: Reference{Every: 40, Jitter: 20 * time.Microsecond, Latency: 50 * time.Millisecond}}
}

// Limits of the parameters: a sensor runs for RunLength of node time
// before it starts over, and its device clock's rate must stay within
// pkg/sim's range throughout.
const (
	MaxRate        = 100_000
	MaxSkewPPM     = 1000
	MaxDriftPPMh   = 100
	MaxLatency     = time.Minute
	MaxImageSide   = 16384
	MaxBeams       = 100_000
	MaxDeviceClock = 1_000_000 * time.Second
	// RunLength is how long a sensor's stream runs before it starts over
	// (as after a reboot of the device).
	RunLength = 7 * 24 * time.Hour
)

func bad(field, format string, args ...any) error {
	return cfgerr.New(ErrConfig, field, format, args...)
}

func probOK(p float64) bool { return p >= 0 && p <= 1 }

// validate checks s, naming its fields after prefix ("IMU.").
func (s *Sensor) validate(prefix string) error {
	switch {
	case !(s.Rate > 0 && s.Rate <= MaxRate):
		return bad(prefix+"Rate", "is %v, want 0 < rate ≤ %d samples a second", s.Rate, MaxRate)
	case s.Latency < 0 || s.Latency > MaxLatency:
		return bad(prefix+"Latency", "is %v, want 0..%v", s.Latency, MaxLatency)
	case s.Jitter < sim.None || s.Jitter > sim.Pareto:
		return bad(prefix+"Jitter", "is %v, want none, uniform, exponential or pareto", s.Jitter)
	case s.JitterScale < 0 || s.JitterScale > MaxLatency:
		return bad(prefix+"JitterScale", "is %v, want 0..%v", s.JitterScale, MaxLatency)
	case !(s.Loss >= 0 && s.Loss < 1):
		return bad(prefix+"Loss", "is %v, want 0 ≤ loss < 1 (a probability; 1 would lose every sample)", s.Loss)
	case !probOK(s.BurstProb):
		return bad(prefix+"BurstProb", "is %v, want 0..1 (a probability)", s.BurstProb)
	case s.BurstProb > 0 && !(s.BurstLen >= 1):
		return bad(prefix+"BurstLen", "is %v, want ≥ 1 (samples) when {%sBurstProb} is above 0", s.BurstLen, prefix)
	case !probOK(s.BatchProb):
		return bad(prefix+"BatchProb", "is %v, want 0..1 (a probability)", s.BatchProb)
	case s.BatchProb > 0 && s.BatchSize < 2:
		return bad(prefix+"BatchSize", "is %d, want ≥ 2 when {%sBatchProb} is above 0", s.BatchSize, prefix)
	case s.Stamp < ReceiveStamp || s.Stamp > DeviceStamp:
		return bad(prefix+"Stamp", "is %v, want one of %s", s.Stamp, strings.Join(stampingNames, ", "))
	case !(math.Abs(s.SkewPPM) <= MaxSkewPPM):
		return bad(prefix+"SkewPPM", "is %v, want -%d..%d", s.SkewPPM, MaxSkewPPM, MaxSkewPPM)
	case !(math.Abs(s.DriftPPMPerHour) <= MaxDriftPPMh):
		return bad(prefix+"DriftPPMPerHour", "is %v, want -%d..%d", s.DriftPPMPerHour, MaxDriftPPMh, MaxDriftPPMh)
	case s.DeviceOffset < 0 || s.DeviceOffset > MaxDeviceClock:
		return bad(prefix+"DeviceOffset", "is %v, want 0..%v", s.DeviceOffset, MaxDeviceClock)
	case s.TickPeriod <= 0 || s.TickPeriod > time.Second:
		return bad(prefix+"TickPeriod", "is %v, want 0 < period ≤ %v", s.TickPeriod, time.Second)
	case s.TickBits < 1 || s.TickBits > 64:
		return bad(prefix+"TickBits", "is %d, want 1..64", s.TickBits)
	}
	// What remains is pkg/sim's (the ranges above keep a run valid).
	if err := s.SimConfig(1, sim.DefaultStart).Validate(); err != nil {
		return fmt.Errorf("%w: %s: %w", ErrConfig, strings.TrimSuffix(prefix, "."), err)
	}
	return nil
}

// Validate reports the first bad field, as a *cfgerr.Error naming the
// field of Config ("IMU.Rate").
func (c Config) Validate() error {
	for i, s := range c.Sensors() {
		if err := s.validate([]string{"IMU.", "Lidar.", "Camera."}[i]); err != nil {
			return err
		}
	}
	switch {
	case c.Image.Width < 1 || c.Image.Width > MaxImageSide:
		return bad("Image.Width", "is %d, want 1..%d pixels", c.Image.Width, MaxImageSide)
	case c.Image.Height < 1 || c.Image.Height > MaxImageSide:
		return bad("Image.Height", "is %d, want 1..%d pixels", c.Image.Height, MaxImageSide)
	case !slices.Contains(payload.ImageEncodings(), c.Image.Encoding):
		return bad("Image.Encoding", "is %q, want one of %s", c.Image.Encoding, strings.Join(payload.ImageEncodings(), ", "))
	case c.Beams < 1 || c.Beams > MaxBeams:
		return bad("Beams", "is %d, want 1..%d", c.Beams, MaxBeams)
	case c.Reference.Every < 0:
		return bad("Reference.Every", "is %d, want ≥ 0 (0: no pulses)", c.Reference.Every)
	case c.Reference.Jitter < 0 || c.Reference.Jitter > time.Second:
		return bad("Reference.Jitter", "is %v, want 0..%v", c.Reference.Jitter, time.Second)
	case c.Reference.Latency < 0 || c.Reference.Latency > time.Second:
		return bad("Reference.Latency", "is %v, want 0..%v", c.Reference.Latency, time.Second)
	}
	return nil
}

// SimConfig returns the pkg/sim configuration of s for a run of RunLength
// from start, with seed.
func (s *Sensor) SimConfig(seed uint64, start stamp.Time) sim.Config {
	c := sim.DefaultConfig()
	c.Seed = seed
	c.Start = start
	c.Count, c.Duration = 0, RunLength
	c.Period = time.Duration(math.Round(1e9 / s.Rate))
	c.Clock = sim.Clock{Offset: s.DeviceOffset, SkewPPM: s.SkewPPM, DriftPPMPerHour: s.DriftPPMPerHour,
		TickPeriod: s.TickPeriod, TickBits: s.TickBits}
	c.Latency = sim.Latency{Base: s.Latency, Kind: s.Jitter, Scale: s.JitterScale}
	c.Loss = sim.Loss{Prob: s.Loss, BurstProb: s.BurstProb, BurstLen: s.BurstLen}
	c.Batch = sim.Batch{Prob: s.BatchProb, Size: s.BatchSize}
	c.IndexBits = 0
	return c
}

// SensorSeed is the seed of sensor i's stream (and, for i = NumSensors,
// of the reference pulses' jitter) for the node's seed.
func SensorSeed(seed uint64, i int) uint64 { return seed*(NumSensors+1) + uint64(i) + 1 }

// HeaderStamp is what sensor s writes into header.stamp for sample x.
func (s *Sensor) HeaderStamp(x sim.Sample) stamp.Time {
	if s.Stamp == DeviceStamp {
		return stamp.Time(int64(x.Ticks) * int64(s.TickPeriod))
	}
	return x.Receive
}
