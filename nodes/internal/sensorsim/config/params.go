package config

import (
	"github.com/timealign/timealign/pkg/params"
	"github.com/timealign/timealign/pkg/qos"
	"github.com/timealign/timealign/pkg/sim"
	"github.com/timealign/timealign/pkg/sim/payload"
)

// Params are the sensor_sim node's parameters: the Config and the QoS of
// its outputs.
type Params struct {
	Config Config
	// Out is the QoS of the sensors' topics, Truth of `truth`.
	Out, Truth qos.Profile
}

// DefaultParams returns the node's defaults: the outputs reliable (a
// reliable publisher matches every subscriber), `truth` with a deep queue.
func DefaultParams() Params {
	truth := qos.Default()
	truth.Depth = 1000
	return Params{Config: DefaultConfig(), Out: qos.Default(), Truth: truth}
}

// sensorFields names a Sensor's fields as parameters (after the sensor's
// prefix).
var sensorFields = []struct{ field, param string }{
	{"Enabled", "enabled"}, {"Rate", "rate_hz"}, {"Latency", "latency_sec"}, {"Jitter", "jitter"},
	{"JitterScale", "jitter_sec"}, {"Loss", "loss"}, {"BurstProb", "loss_burst_prob"}, {"BurstLen", "loss_burst_len"},
	{"BatchProb", "batch_prob"}, {"BatchSize", "batch_size"}, {"Stamp", "stamp"}, {"SkewPPM", "skew_ppm"},
	{"DriftPPMPerHour", "drift_ppm_per_hour"}, {"DeviceOffset", "device_offset_sec"}, {"TickPeriod", "tick_period_sec"},
	{"TickBits", "tick_bits"}, {"FrameID", "frame_id"},
}

// fieldParams names the Config's fields as parameters, for the reasons of
// rejected values.
func fieldParams() map[string]string {
	m := map[string]string{
		"Seed": "seed", "Image.Width": "camera.width", "Image.Height": "camera.height", "Image.Encoding": "camera.encoding",
		"Beams": "lidar.beams", "Reference.Every": "reference.every", "Reference.Jitter": "reference.jitter_sec",
		"Reference.Latency": "reference.latency_sec",
	}
	for i, name := range SensorNames {
		for _, f := range sensorFields {
			m[[]string{"IMU.", "Lidar.", "Camera."}[i]+f.field] = name + "." + f.param
		}
	}
	return m
}

// Validate checks the bound Config, naming parameters; pass p.Validate to
// params.NewBinder.
func (p *Params) Validate() error { return params.NameFields(p.Config.Validate(), fieldParams()) }

// Bind declares the parameters on b, bound to p. Every sensor parameter
// takes effect live: the sensor starts over with it (Core.Reconfigure).
func (p *Params) Bind(b *params.Binder) {
	c := &p.Config
	b.Func("seed", params.Descriptor{Description: "seed of the random streams: the same seed gives the same samples (a change restarts every sensor)",
		IntRange: params.Ints(0, 1<<53, 1)},
		func() params.Value { return params.IntValue(int64(c.Seed)) },
		func(v params.Value) error { c.Seed = uint64(v.Int()); return nil })
	for i, s := range c.Sensors() {
		bindSensor(b, SensorNames[i], s)
	}
	b.Int("camera.width", &c.Image.Width, params.Descriptor{Description: "image width (pixels)", IntRange: params.Ints(1, MaxImageSide, 1)})
	b.Int("camera.height", &c.Image.Height, params.Descriptor{Description: "image height (pixels)", IntRange: params.Ints(1, MaxImageSide, 1)})
	b.Enum("camera.encoding", &c.Image.Encoding, payload.ImageEncodings(), params.Descriptor{Description: "image encoding (sensor_msgs/image_encodings)"})
	b.Int("lidar.beams", &c.Beams, params.Descriptor{Description: "ranges of a scan over a full turn", IntRange: params.Ints(1, MaxBeams, 1)})
	b.Int("reference.every", &c.Reference.Every, params.Descriptor{
		Description: "a hardware reference pulse (sensor_msgs/msg/TimeReference on `reference`) every so many IMU samples; 0: none",
		IntRange:    params.Ints(0, 1_000_000, 1)})
	b.Duration("reference.jitter_sec", &c.Reference.Jitter, params.Descriptor{
		Description: "the pulses' time_ref is the IMU sample's true acquisition time plus up to this much (s, uniform)",
		FloatRange:  params.Floats(0, 1, 0)})
	b.Duration("reference.latency_sec", &c.Reference.Latency, params.Descriptor{
		Description: "a pulse is published this long after the acquisition it marks (s): read by another driver, it comes after its sample",
		FloatRange:  params.Floats(0, 1, 0)})
	qos.Bind(b, "qos.out", &p.Out)
	qos.Bind(b, "qos.truth", &p.Truth)
}

func bindSensor(b *params.Binder, name string, s *Sensor) {
	const restarts = " (a change restarts the sensor)"
	n := func(param string) string { return name + "." + param }
	b.Bool(n("enabled"), &s.Enabled, params.Descriptor{Description: "the sensor publishes"})
	b.Float64(n("rate_hz"), &s.Rate, params.Descriptor{Description: "samples per second (of the device's clock)" + restarts,
		FloatRange: params.Floats(0.001, MaxRate, 0)})
	b.Duration(n("latency_sec"), &s.Latency, params.Descriptor{Description: "constant delay from acquisition to arrival (s)" + restarts,
		FloatRange: params.Floats(0, MaxLatency.Seconds(), 0)})
	params.Choice(b, n("jitter"), &s.Jitter, []string{sim.None.String(), sim.Uniform.String(), sim.Exponential.String(), sim.Pareto.String()},
		params.Descriptor{Description: "distribution of the random delay: uniform in [0, jitter_sec), exponential of mean jitter_sec, pareto (heavy tail)" + restarts})
	b.Duration(n("jitter_sec"), &s.JitterScale, params.Descriptor{Description: "scale of the random delay (s)" + restarts,
		FloatRange: params.Floats(0, MaxLatency.Seconds(), 0)})
	b.Float64(n("loss"), &s.Loss, params.Descriptor{Description: "probability that a sample is lost (0 ≤ loss < 1)" + restarts,
		FloatRange: params.Floats(0, 1, 0)})
	b.Float64(n("loss_burst_prob"), &s.BurstProb, params.Descriptor{Description: "probability that a burst of losses starts" + restarts,
		FloatRange: params.Floats(0, 1, 0)})
	b.Float64(n("loss_burst_len"), &s.BurstLen, params.Descriptor{Description: "mean length of a burst of losses (samples)" + restarts,
		FloatRange: params.Floats(1, 1e6, 0)})
	b.Float64(n("batch_prob"), &s.BatchProb, params.Descriptor{Description: "probability that a sample starts a batch delivered at once" + restarts,
		FloatRange: params.Floats(0, 1, 0)})
	b.Int(n("batch_size"), &s.BatchSize, params.Descriptor{Description: "samples in a batch (at least 2 when batch_prob is above 0)" + restarts,
		IntRange: params.Ints(1, 1000, 1)})
	params.Choice(b, n("stamp"), &s.Stamp, StampingNames(), params.Descriptor{
		Description: "header.stamp: receive_time (stamped on arrival) or device_clock (the device's tick counter times tick_period_sec, wrapping at tick_bits)" + restarts})
	b.Float64(n("skew_ppm"), &s.SkewPPM, params.Descriptor{Description: "how fast the device clock runs (ppm)" + restarts,
		FloatRange: params.Floats(-MaxSkewPPM, MaxSkewPPM, 0)})
	b.Float64(n("drift_ppm_per_hour"), &s.DriftPPMPerHour, params.Descriptor{Description: "change of skew_ppm an hour (temperature)" + restarts,
		FloatRange: params.Floats(-MaxDriftPPMh, MaxDriftPPMh, 0)})
	b.Duration(n("device_offset_sec"), &s.DeviceOffset, params.Descriptor{Description: "the device clock's reading at the first sample (s since its boot)" + restarts,
		FloatRange: params.Floats(0, MaxDeviceClock.Seconds(), 0)})
	b.Duration(n("tick_period_sec"), &s.TickPeriod, params.Descriptor{Description: "duration of a device clock tick (s)" + restarts,
		FloatRange: params.Floats(1e-9, 1, 0)})
	b.Int(n("tick_bits"), &s.TickBits, params.Descriptor{Description: "width of the device's tick counter: it wraps at 2^tick_bits" + restarts,
		IntRange: params.Ints(1, 64, 1)})
	b.String(n("frame_id"), &s.FrameID, params.Descriptor{Description: "header.frame_id"})
}

// Settings returns the writable parameters as cfg has them: what a Core
// runs with, under the names a user sets them by.
func Settings(cfg Config) []params.Parameter {
	p := Params{Config: cfg}
	b := params.NewBinder(nil, nil)
	p.Bind(b)
	return b.Writable()
}
