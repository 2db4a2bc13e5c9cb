// Package sensorsim is the ROS-free logic of the sensor_sim node: simulated
// sensors (pkg/sim) published live as standard sensor messages, each sample
// with its ground truth, so that timealign's nodes can be tried, and
// measured, without hardware.
//
// Three sensors and a pulse: an IMU (sensor_msgs/msg/Imu) stamped on
// arrival with a scheduler's jitter, a lidar (sensor_msgs/msg/LaserScan)
// stamped by its own drifting clock whose tick counter wraps around, a
// camera (sensor_msgs/msg/Image) of a real image size, and hardware
// reference pulses (sensor_msgs/msg/TimeReference) every so many IMU
// samples. Each sensor is a pkg/sim stream with its own rate, latency,
// jitter, loss, bursts, drift and wraparound (config.Sensor), started at the node
// clock's time: its samples are published when the node's clock reaches
// their arrival, so with use_sim_time they follow /clock. Every published
// sample is described on `truth` (timealign/msg/GroundTruth): its topic,
// number, true acquisition time, the stamp it was published with and its
// stamp.Fingerprint, by which stamp_monitor finds it again after a node
// rewrote its stamp.
//
// Cost: per sample one pkg/sim step (O(1)), the message (its size: an image
// is drawn anew) and two publications; memory is constant.
//
// Spec is the node that nodes/sensor_sim runs; Report is what it
// reports once a second (~/status, /diagnostics). Its parameters are
// declared in the package config beneath, which the offline tools read
// without the node runtime.
package sensorsim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/timealign/timealign/nodes/internal/sensorsim/config"
	"github.com/timealign/timealign/pkg/sim"
	"github.com/timealign/timealign/pkg/sim/payload"
	"github.com/timealign/timealign/pkg/stamp"
)

// The outputs of a Core, in order: the sensors', the reference pulses',
// the ground truth.
const (
	OutIMU = iota
	OutScan
	OutImage
	OutReference
	OutTruth
	numOutputs
)

// MaxJump is the largest step of the node's clock between two ticks that
// the sensors catch up with, publishing what they acquired meanwhile; after
// a larger one, or a step back (a replay restarted under use_sim_time), the
// sensors start over at the clock's time.
const MaxJump = 2 * time.Second

// Sample is one published sample, as its ground truth describes it.
type Sample struct {
	// Output is the output it was published on (OutIMU … OutReference).
	Output int
	// Number counts the samples of the sensor from 0, lost ones included.
	Number uint64
	// True is the true acquisition time; Stamp the stamp it was published
	// with (header.stamp, or a TimeReference's time_ref).
	True, Stamp stamp.Time
	// Msg is the serialized message and Fingerprint its stamp.Fingerprint.
	Msg         []byte
	Fingerprint uint64
	FrameID     string
	// At is when it was published: the time of the tick.
	At stamp.Time
}

// pulse is a reference pulse on its way.
type pulse struct {
	arrival stamp.Time
	s       Sample
}

// stream is one sensor's run.
type stream struct {
	del  *sim.Delivery
	head sim.Sample
	ok   bool   // head is the next sample
	base uint64 // the number of the run's first sample
}

// SensorStatus counts one sensor's samples.
type SensorStatus struct {
	Published uint64 `json:"published"`
	Lost      uint64 `json:"lost"`
}

// Status is a snapshot of a Core.
type Status struct {
	// Running: the node's clock runs (with use_sim_time, /clock came).
	Running bool
	// Restarts counts the times the sensors started over (the clock went
	// back or jumped ahead, a parameter changed).
	Restarts uint64
	// Sensors are the imu, lidar and camera counters, then the reference
	// pulses'.
	Sensors [config.NumSensors + 1]SensorStatus
	// Truths counts the ground-truth messages.
	Truths uint64
	// Config is the configuration the Core runs with.
	Config config.Config
}

// Core simulates the sensors. Tick publishes what the sensors acquired and
// delivered up to the node's time. One goroutine owns it.
type Core struct {
	cfg      config.Config
	emit     func(Sample)
	streams  [config.NumSensors]*stream
	payloads *payload.Generator
	refRNG   *rand.Rand
	next     [config.NumSensors]uint64     // the number of each sensor's next sample
	last     [config.NumSensors]sim.Sample // each sensor's last sample
	any      [config.NumSensors]bool       // last is set
	pulses   []pulse                       // reference pulses waiting for their arrival, oldest first
	running  bool
	now      stamp.Time // of the last tick
	st       Status
	notes    []string // what Tick did that the node should log
}

// New returns a Core for cfg that hands every sample to emit, or the error
// of cfg.Validate.
func New(cfg config.Config, emit func(Sample)) (*Core, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	c := &Core{emit: emit}
	if err := c.setConfig(cfg); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *Core) setConfig(cfg config.Config) error {
	p, err := payload.New(payload.Options{ImageWidth: cfg.Image.Width, ImageHeight: cfg.Image.Height,
		Encoding: cfg.Image.Encoding, Beams: cfg.Beams, ScanTime: time.Duration(float64(time.Second) / cfg.Lidar.Rate)})
	if err != nil {
		return fmt.Errorf("%w: %w", config.ErrConfig, err)
	}
	if c.refRNG == nil || cfg.Seed != c.cfg.Seed {
		c.refRNG = rand.New(rand.NewPCG(config.SensorSeed(cfg.Seed, config.NumSensors), 0x7265665f70707321))
	}
	c.payloads, c.cfg = p, cfg
	return nil
}

// Tick publishes every sample whose arrival time is at most now (the
// node's clock). A clock that reads 0 (use_sim_time before the first
// /clock) starts nothing; the sensors start at the first time the clock
// reads, and over again after it went back or jumped ahead by more than
// MaxJump.
func (c *Core) Tick(now stamp.Time) {
	if now <= 0 {
		return
	}
	switch {
	case !c.running:
		c.running = true
		c.start(now, -1, false)
	case now < c.now:
		c.note(fmt.Sprintf("the clock went back by %v: the sensors start over", c.now.Sub(now)))
		c.restart(now)
	case now.Sub(c.now) > MaxJump:
		c.note(fmt.Sprintf("the clock jumped ahead by %v: the sensors start over", now.Sub(c.now)))
		c.restart(now)
	}
	c.now = now
	for {
		best := -1
		for i, s := range c.streams {
			if s != nil && s.ok && s.head.Arrival <= now && (best < 0 || s.head.Arrival < c.streams[best].head.Arrival) {
				best = i
			}
		}
		if len(c.pulses) > 0 && c.pulses[0].arrival <= now && (best < 0 || c.pulses[0].arrival <= c.streams[best].head.Arrival) {
			c.send(c.pulses[0].s)
			c.pulses = c.pulses[1:]
			continue
		}
		if best < 0 {
			return
		}
		c.publish(best)
	}
}

// Next returns the arrival time of the next sample to publish, and false
// while no sensor runs.
func (c *Core) Next() (stamp.Time, bool) {
	var next stamp.Time
	found := len(c.pulses) > 0
	if found {
		next = c.pulses[0].arrival
	}
	for _, s := range c.streams {
		if s != nil && s.ok && (!found || s.head.Arrival < next) {
			next, found = s.head.Arrival, true
		}
	}
	return next, found
}

func (c *Core) note(s string) { c.notes = append(c.notes, s) }

// Notes returns what the Core did that is worth a log line since the last
// call (restarts), and forgets them.
func (c *Core) Notes() []string {
	n := c.notes
	c.notes = nil
	return n
}

func (c *Core) restart(now stamp.Time) {
	c.st.Restarts++
	c.pulses = nil
	c.start(now, -1, false)
}

// start starts sensor only (all of them for -1) at now. A sensor numbers
// its samples on, and its device clock goes on from where it was: a
// restart is the host's, not the device's. With keepPhase (its settings
// changed, its run ended) a sensor that ran goes on acquiring on its own
// schedule, a period after its last sample, as a real sensor does when
// its driver or link changes; without (the clock went back or jumped), at
// now.
func (c *Core) start(now stamp.Time, only int, keepPhase bool) {
	for i, s := range c.cfg.Sensors() {
		if only >= 0 && i != only {
			continue
		}
		c.streams[i] = nil
		if !s.Enabled {
			continue
		}
		at := now
		if keepPhase && c.any[i] && now.Sub(c.last[i].True) < time.Second {
			at = c.last[i].True.Add(time.Duration(math.Round(1e9 / s.Rate)))
		}
		sc := s.SimConfig(config.SensorSeed(c.cfg.Seed, i), at)
		if c.any[i] {
			last := c.last[i]
			gap := max(at.Sub(last.True), 0) // a clock that went back: the device's went on
			off := last.Device + time.Duration(float64(gap)*(1+s.SkewPPM*1e-6))
			sc.Clock.Offset = min(max(off, 0), config.MaxDeviceClock)
		}
		d, err := sim.NewDelivery(sc)
		if err != nil { // Validate checked the configuration; a restart keeps it valid
			c.note(fmt.Sprintf("%s: %v", config.SensorNames[i], err))
			continue
		}
		st := &stream{del: d, base: c.next[i]}
		st.head, st.ok = d.Next()
		c.streams[i] = st
	}
}

// publish emits the head of stream i and advances it.
func (c *Core) publish(i int) {
	s := c.streams[i]
	x := s.head
	num := s.base + uint64(x.Seq)
	c.st.Sensors[i].Lost += num - c.next[i]
	c.st.Sensors[i].Published++
	c.next[i] = num + 1
	c.last[i], c.any[i] = x, true
	if s.head, s.ok = s.del.Next(); !s.ok {
		// The run is over (RunLength): the sensor starts over, its clock
		// and numbers going on.
		c.start(x.Arrival, i, true)
	}
	sensor := c.cfg.Sensors()[i]
	hdr := sensor.HeaderStamp(x)
	var msg []byte
	switch i {
	case config.IMU:
		msg = c.payloads.Imu(nil, hdr, sensor.FrameID, int(num))
	case config.Lidar:
		msg = c.payloads.Scan(nil, hdr, sensor.FrameID, int(num))
	default:
		msg = c.payloads.Image(nil, hdr, sensor.FrameID, int(num))
	}
	c.send(Sample{Output: i, Number: num, True: x.True, Stamp: hdr, Msg: msg, FrameID: sensor.FrameID})
	if i != config.IMU {
		return
	}
	if c.cfg.Reference.Every > 0 && num%uint64(c.cfg.Reference.Every) == 0 {
		ref := x.True.Add(time.Duration(c.refRNG.Float64() * float64(c.cfg.Reference.Jitter)))
		c.st.Sensors[config.NumSensors].Published++
		// The pulse arrives Reference.Latency after the acquisition: read
		// by another driver, it comes later than its sample (a node that
		// saw it first would have to guess which sample it marks).
		c.pulses = append(c.pulses, pulse{arrival: x.True.Add(c.cfg.Reference.Latency), s: Sample{Output: OutReference,
			Number: num / uint64(c.cfg.Reference.Every), True: x.True, Stamp: ref,
			Msg: payload.AppendTimeReference(nil, x.Arrival, sensor.FrameID, ref, "sensor_sim"), FrameID: sensor.FrameID}})
	}
}

func (c *Core) send(s Sample) {
	fp, err := stamp.Fingerprint(s.Msg)
	if err != nil { // our own messages always have a stamp
		c.note(fmt.Sprintf("fingerprint: %v", err))
	}
	s.Fingerprint, s.At = fp, c.now
	c.st.Truths++
	c.emit(s)
}

// Reconfigure runs the Core with cfg from now on: a sensor whose settings
// changed (every one, for a new seed) starts over at the time of the last
// tick, numbering on; image and scan settings apply to the next message.
// An invalid cfg is refused and changes nothing.
func (c *Core) Reconfigure(cfg config.Config) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	old := c.cfg
	if err := c.setConfig(cfg); err != nil {
		return err
	}
	if !c.running {
		return nil
	}
	oldS, newS := old.Sensors(), c.cfg.Sensors()
	changed := false
	for i := range newS {
		if *oldS[i] != *newS[i] || old.Seed != cfg.Seed {
			c.start(c.now, i, true)
			changed = true
		}
	}
	if changed {
		c.st.Restarts++
	}
	return nil
}

// Status returns a snapshot.
func (c *Core) Status() Status {
	s := c.st
	s.Running = c.running
	s.Config = c.cfg
	return s
}
