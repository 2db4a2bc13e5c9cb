package clocksync

import (
	"github.com/timealign/timealign/pkg/params"
	"github.com/timealign/timealign/pkg/pll"
)

// Params are the clock_sync node's parameters: the Config and the wiring.
type Params struct {
	Config      Config
	MessageType string
	Mode        string
	WhenInvalid string
	In, Out     params.QoS
}

// DefaultParams returns the node's defaults.
func DefaultParams() Params {
	c := DefaultConfig()
	return Params{Config: c, Mode: c.PLL.Mode.String(), WhenInvalid: c.WhenInvalid.String(),
		In: params.SensorDataQoS(), Out: params.ReliableQoS()}
}

// Validate checks the bound Config; pass p.Validate to params.NewBinder.
func (p *Params) Validate() error { return p.Config.Validate() }

// Bind declares the parameters on b, bound to p.
func (p *Params) Bind(b *params.Binder) {
	c := &p.Config.PLL
	b.String("message_type", &p.MessageType, params.Descriptor{ReadOnly: true,
		Description: "type of in and out, e.g. sensor_msgs/msg/LaserScan; empty: taken from the first publisher of in"})
	b.Enum("mode", &p.Mode, []string{"sick", "regression", "envelope", "offset"}, params.Descriptor{
		Description: "clock fit: sick (SICK's SoftwarePLL), regression, envelope (lower convex hull), offset (boot clocks)"})
	b.Enum("when_invalid", &p.WhenInvalid, []string{"drop", "receive_time", "passthrough"}, params.Descriptor{
		Description: "messages while no valid estimate exists: drop them (counted), stamp them with the receive time, or pass them unchanged"})
	b.Int("fifo_size", &c.FIFOSize, params.Descriptor{Description: "samples that must agree before an estimate is valid",
		IntRange: params.Ints(2, pll.MaxFIFOSize, 1)})
	b.Duration("max_deviation_sec", &c.MaxDeviation, params.Descriptor{Description: "largest distance of a sample from the fit (s)",
		FloatRange: params.Floats(0.000001, 3600, 0)})
	b.Int("max_invalid", &c.MaxInvalid, params.Descriptor{Description: "inconsistent samples in a row before the fit starts over",
		IntRange: params.Ints(1, 1_000_000, 1)})
	b.Int("tick_bits", &c.TickBits, params.Descriptor{Description: "width of the device clock in header.stamp, in ticks", IntRange: params.Ints(1, 64, 1)})
	b.Duration("tick_period_sec", &c.TickPeriod, params.Descriptor{Description: "duration of one device tick (s); 1e-9 when header.stamp holds device nanoseconds",
		FloatRange: params.Floats(1e-9, 3600, 0)})
	b.Int("window", &c.Window, params.Descriptor{Description: "samples of the envelope/offset window and of the regression slope memory",
		IntRange: params.Ints(2, pll.MaxWindow, 1)})
	b.Float64("max_skew_ppm", &c.MaxSkewPPM, params.Descriptor{Description: "bound on the fitted clock rate error (ppm)",
		FloatRange: params.Floats(0, 1e5, 0)})
	b.Bool("track_skew", &c.TrackSkew, params.Descriptor{Description: "offset mode: fit the rate too"})
	b.QoS("qos.in", &p.In)
	b.QoS("qos.out", &p.Out)
	b.Check(func() error {
		m, err := pll.ParseMode(p.Mode)
		if err != nil {
			return err
		}
		w, err := ParseInvalidPolicy(p.WhenInvalid)
		if err != nil {
			return err
		}
		c.Mode, p.Config.WhenInvalid = m, w
		return nil
	})
}
