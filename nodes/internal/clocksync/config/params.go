package config

import (
	"github.com/timealign/timealign/pkg/params"
	"github.com/timealign/timealign/pkg/pll"
	"github.com/timealign/timealign/pkg/qos"
)

// Params are the clock_sync node's parameters: the Config and the wiring.
type Params struct {
	Config      Config
	MessageType string
	In, Out     qos.Profile
}

// DefaultParams returns the node's defaults.
func DefaultParams() Params {
	return Params{Config: DefaultConfig(), In: qos.SensorData(), Out: qos.Default()}
}

// fieldParams names the Config's fields as parameters, for the reasons of
// rejected values.
var fieldParams = map[string]string{
	"PLL.Mode":         "mode",
	"PLL.FIFOSize":     "fifo_size",
	"PLL.MaxDeviation": "max_deviation_sec",
	"PLL.MaxInvalid":   "max_invalid",
	"PLL.TickBits":     "tick_bits",
	"PLL.TickPeriod":   "tick_period_sec",
	"PLL.MaxSkewPPM":   "max_skew_ppm",
	"PLL.Window":       "window",
	"PLL.TrackSkew":    "track_skew",
	"WhenInvalid":      "when_invalid",
}

// Validate checks the bound Config, naming parameters; pass p.Validate to
// params.NewBinder.
func (p *Params) Validate() error { return params.NameFields(p.Config.Validate(), fieldParams) }

// Bind declares the parameters on b, bound to p. The writable ones take
// effect through Core.Reconfigure.
func (p *Params) Bind(b *params.Binder) {
	c := &p.Config.PLL
	const restarts = " (a change restarts the fit)"
	b.String("message_type", &p.MessageType, params.Descriptor{ReadOnly: true,
		Description: "type of in and out, e.g. sensor_msgs/msg/LaserScan; empty: taken from the first publisher of in" + params.ReadOnlyReason + "the subscription and publisher are created with it"})
	params.Choice(b, "mode", &c.Mode, pll.ModeNames(), params.Descriptor{
		Description: "clock fit: sick (SICK's SoftwarePLL), regression, envelope (lower convex hull), offset (boot clocks)" + restarts})
	params.Choice(b, "when_invalid", &p.Config.WhenInvalid, InvalidPolicyNames(), params.Descriptor{
		Description: "messages while no valid estimate exists: drop them (counted), stamp them with the receive time, or pass them unchanged"})
	b.Int("fifo_size", &c.FIFOSize, params.Descriptor{Description: "samples that must agree before an estimate is valid" + restarts,
		IntRange: params.Ints(2, pll.MaxFIFOSize, 1)})
	b.Duration("max_deviation_sec", &c.MaxDeviation, params.Descriptor{Description: "largest distance of a sample from the fit (s)" + restarts,
		FloatRange: params.Floats(0.000001, 3600, 0)})
	b.Int("max_invalid", &c.MaxInvalid, params.Descriptor{Description: "inconsistent samples in a row before the fit starts over" + restarts,
		IntRange: params.Ints(1, 1_000_000, 1)})
	b.Int("tick_bits", &c.TickBits, params.Descriptor{Description: "width of the device clock in header.stamp, in ticks" + restarts, IntRange: params.Ints(1, 64, 1)})
	b.Duration("tick_period_sec", &c.TickPeriod, params.Descriptor{Description: "duration of one device tick (s); 1e-9 when header.stamp holds device nanoseconds" + restarts,
		FloatRange: params.Floats(1e-9, 3600, 0)})
	b.Int("window", &c.Window, params.Descriptor{Description: "samples of the envelope/offset window and of the regression slope memory" + restarts,
		IntRange: params.Ints(2, pll.MaxWindow, 1)})
	b.Float64("max_skew_ppm", &c.MaxSkewPPM, params.Descriptor{Description: "bound on the fitted clock rate error (ppm)" + restarts,
		FloatRange: params.Floats(0, 1e5, 0)})
	b.Bool("track_skew", &c.TrackSkew, params.Descriptor{Description: "offset mode: fit the rate too" + restarts})
	qos.Bind(b, "qos.in", &p.In)
	qos.Bind(b, "qos.out", &p.Out)
}

// Settings returns the writable parameters as cfg has them: what a Core
// runs with, under the names a user sets them by.
func Settings(cfg Config) []params.Parameter {
	p := Params{Config: cfg}
	b := params.NewBinder(nil, nil)
	p.Bind(b)
	return b.Writable()
}
