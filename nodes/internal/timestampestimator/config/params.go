package config

import (
	"fmt"

	"github.com/timealign/timealign/pkg/params"
	"github.com/timealign/timealign/pkg/qos"
)

// TimeReferenceType is the default type of the reference topic: its
// time_ref is the reference stamp.
const TimeReferenceType = "sensor_msgs/msg/TimeReference"

// Params are the timestamp_estimator node's parameters: the Config and the
// wiring.
type Params struct {
	Config Config
	// MessageType is the type of `in` and `out`, "pkg/msg/Type"; empty:
	// discovered from the first publisher of `in`.
	MessageType string
	// ReferenceType is the type of `reference`: TimeReferenceType, or a
	// type whose first field is a std_msgs/Header (header.stamp is then
	// the reference).
	ReferenceType string
	In, Out       qos.Profile
}

// DefaultParams returns the node's defaults.
func DefaultParams() Params {
	return Params{Config: DefaultConfig(), ReferenceType: TimeReferenceType,
		In: qos.SensorData(), Out: qos.Default()}
}

// fieldParams names the Config's fields as parameters, for the reasons of
// rejected values.
var fieldParams = map[string]string{
	"Estimator.Window":         "window_sec",
	"Estimator.Period":         "period_sec",
	"Estimator.MinLatency":     "min_latency_sec",
	"Estimator.LossThreshold":  "loss_threshold",
	"Estimator.NeverInferLoss": "never_infer_loss",
	"Source":                   "stamp_source",
}

// Bind declares the parameters on b, bound to p; every set runs Validate,
// so a bad value is rejected with its reason. The writable ones take
// effect through Core.Reconfigure.
func (p *Params) Bind(b *params.Binder) {
	e := &p.Config.Estimator
	b.String("message_type", &p.MessageType, params.Descriptor{ReadOnly: true,
		Description: "type of in and out, e.g. sensor_msgs/msg/Imu; empty: taken from the first publisher of in" + params.ReadOnlyReason + "the subscription and publisher are created with it"})
	b.String("reference_type", &p.ReferenceType, params.Descriptor{ReadOnly: true,
		Description: "type of the topic reference (hardware reference stamps): " + TimeReferenceType +
			" (its time_ref is the reference), or any type whose first field is a std_msgs/Header (its header.stamp is)" + params.ReadOnlyReason + "the subscription is created with it"})
	params.Choice(b, "stamp_source", &p.Config.Source, SourceNames(), params.Descriptor{
		Description: "the receive time fed to the estimator: the driver's header stamp, or the time the message reached this node (a change restarts the estimator)"})
	b.Duration("window_sec", &e.Window, params.Descriptor{Description: "estimation window (s): receive time the fit spans (a change restarts the estimator)",
		FloatRange: params.Floats(0.001, 3600, 0)})
	b.Duration("period_sec", &e.Period, params.Descriptor{Description: "expected period (s), used until the window has samples; 0: unknown (a change restarts the estimator)",
		FloatRange: params.Floats(0, 3600, 0)})
	b.Duration("min_latency_sec", &e.MinLatency, params.Descriptor{Description: "least latency from acquisition to reception (s): estimates without references are the fitted line minus this (a change restarts the estimator)",
		FloatRange: params.Floats(0, 3600, 0)})
	b.Int("loss_threshold", &e.LossThreshold, params.Descriptor{Description: "suspect samples in a row that make a loss (0 or 1: the first) (a change restarts the estimator)",
		IntRange: params.Ints(0, 1000, 1)})
	b.Bool("never_infer_loss", &e.NeverInferLoss, params.Descriptor{Description: "infer no loss from timing (losses are announced or indexed) (a change restarts the estimator)"})
	qos.Bind(b, "qos.in", &p.In)
	qos.Bind(b, "qos.out", &p.Out)
	b.Check(func() error {
		if p.ReferenceType == "" { // no discovery for it: the node would wait for a reference publisher
			return fmt.Errorf("%w: reference_type is empty: give %s or a type whose first field is a std_msgs/Header", ErrConfig, TimeReferenceType)
		}
		p.Config.ReferenceTimeRef = p.ReferenceType == TimeReferenceType
		return nil
	})
}

// Validate checks the bound Config, naming parameters; pass p.Validate to
// params.NewBinder (a method value of the Config would check a copy).
func (p *Params) Validate() error { return params.NameFields(p.Config.Validate(), fieldParams) }

// Settings returns the writable parameters as cfg has them: what a Core
// runs with, under the names a user sets them by.
func Settings(cfg Config) []params.Parameter {
	p := Params{Config: cfg}
	b := params.NewBinder(nil, nil)
	p.Bind(b)
	return b.Writable()
}
