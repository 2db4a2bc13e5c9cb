package tsestnode

import (
	"github.com/timealign/timealign/pkg/params"
)

// Params are the timestamp_estimator node's parameters: the Config and the
// wiring.
type Params struct {
	Config Config
	// MessageType is the type of `in` and `out`, "pkg/msg/Type"; empty:
	// discovered from the first publisher of `in`.
	MessageType string
	Source      string
	In, Out     params.QoS
}

// DefaultParams returns the node's defaults.
func DefaultParams() Params {
	return Params{Config: DefaultConfig(), Source: HeaderStamp.String(),
		In: params.SensorDataQoS(), Out: params.ReliableQoS()}
}

// Bind declares the parameters on b, bound to p; every set runs the
// Config's Validate, so a bad value is rejected with its reason.
func (p *Params) Bind(b *params.Binder) {
	e := &p.Config.Estimator
	b.String("message_type", &p.MessageType, params.Descriptor{ReadOnly: true,
		Description: "type of in and out, e.g. sensor_msgs/msg/Imu; empty: taken from the first publisher of in"})
	b.Enum("stamp_source", &p.Source, []string{HeaderStamp.String(), ReceiveTime.String()}, params.Descriptor{
		Description: "the receive time fed to the estimator: the driver's header stamp, or the time the message reached this node"})
	b.Duration("window_sec", &e.Window, params.Descriptor{Description: "estimation window (s): receive time the fit spans",
		FloatRange: params.Floats(0.001, 3600, 0)})
	b.Duration("period_sec", &e.Period, params.Descriptor{Description: "expected period (s), 0 for unknown",
		FloatRange: params.Floats(0, 3600, 0)})
	b.Duration("min_latency_sec", &e.MinLatency, params.Descriptor{Description: "least latency from acquisition to reception (s)",
		FloatRange: params.Floats(0, 3600, 0)})
	b.Int("loss_threshold", &e.LossThreshold, params.Descriptor{Description: "suspect samples in a row that make a loss (0 or 1: the first)",
		IntRange: params.Ints(0, 1000, 1)})
	b.Bool("never_infer_loss", &e.NeverInferLoss, params.Descriptor{Description: "infer no loss from timing (losses are announced or indexed)"})
	b.Int("index_bits", &e.IndexBits, params.Descriptor{Description: "width of the sensor's sample counter", IntRange: params.Ints(1, 64, 1)})
	b.QoS("qos.in", &p.In)
	b.QoS("qos.out", &p.Out)
	b.Check(func() error {
		s, err := ParseSource(p.Source)
		if err != nil {
			return err
		}
		p.Config.Source = s
		return nil
	})
}

// Validate checks the bound Config; pass p.Validate to params.NewBinder (a
// method value of the Config would check a copy).
func (p *Params) Validate() error { return p.Config.Validate() }
