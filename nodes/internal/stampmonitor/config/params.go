package config

import (
	"fmt"

	"github.com/timealign/timealign/pkg/params"
	"github.com/timealign/timealign/pkg/qos"
)

// Params are the stamp_monitor node's parameters: the Config and the
// wiring.
type Params struct {
	Config Config
	// Inputs is the number of corrected topics in0 … in{Inputs-1}.
	Inputs int
	// MessageTypes has one type per input, or one for all; none, or an
	// empty entry: the type of the input's first publisher.
	MessageTypes []string
	// Labels name the inputs in the status and the log; none, or an empty
	// entry: the input's topic.
	Labels    []string
	In, Truth qos.Profile
}

// DefaultParams returns the node's defaults: no input (the raw errors of
// every sensor_sim topic), inputs best effort (they match every
// publisher), `truth` reliable with a deep queue (sensor_sim's).
func DefaultParams() Params {
	truth := qos.Default()
	truth.Depth = 1000
	return Params{Config: DefaultConfig(), In: qos.SensorData(), Truth: truth}
}

var fieldParams = map[string]string{
	"Window":       "window_sec",
	"MaxSamples":   "max_samples",
	"MatchTimeout": "match_timeout_sec",
	"MaxPending":   "max_pending",
	"SilentAfter":  "silent_after_sec",
	"LogEvery":     "log_period_sec",
}

// Validate checks the bound Config, naming parameters; pass p.Validate to
// params.NewBinder.
func (p *Params) Validate() error { return params.NameFields(p.Config.Validate(), fieldParams) }

// CheckInputs checks that message_types and labels have an entry per
// input (message_types: or none, or one for all; labels: or none).
func (p *Params) CheckInputs() error {
	if n := len(p.MessageTypes); n > 1 && n != p.Inputs {
		return fmt.Errorf("%w: message_types has %d entries, want none (discover), 1 or one per input (%d)", ErrConfig, n, p.Inputs)
	}
	if n := len(p.Labels); n > 0 && n != p.Inputs {
		return fmt.Errorf("%w: labels has %d entries, want none (the topics) or one per input (%d)", ErrConfig, n, p.Inputs)
	}
	return nil
}

// Bind declares the parameters on b, bound to p. The Config's take effect
// live (Core.Reconfigure); the wiring is read-only.
func (p *Params) Bind(b *params.Binder) {
	c := &p.Config
	const wiring = params.ReadOnlyReason + "the subscriptions are created with it at start-up"
	b.Int("inputs", &p.Inputs, params.Descriptor{ReadOnly: true,
		Description: "number of corrected topics in0 … in{N-1}, each matched to sensor_sim's ground truth on `truth`" + wiring,
		IntRange:    params.Ints(0, MaxInputs, 1)})
	b.Strings("message_types", &p.MessageTypes, params.Descriptor{ReadOnly: true,
		Description: "type of each input (one entry for all); none or an empty entry: taken from the input's first publisher" + wiring})
	b.Strings("labels", &p.Labels, params.Descriptor{ReadOnly: true,
		Description: "name of each input in the status and the log (e.g. [imu, lidar]); none or an empty entry: its topic" + params.ReadOnlyReason + "the status's rows are laid out with it at start-up"})
	b.Duration("window_sec", &c.Window, params.Descriptor{Description: "the sliding window the figures cover (s)",
		FloatRange: params.Floats(0.001, 3600, 0)})
	b.Int("max_samples", &c.MaxSamples, params.Descriptor{Description: "most samples a window keeps per topic (the oldest go first)",
		IntRange: params.Ints(1, 10_000_000, 1)})
	b.Duration("match_timeout_sec", &c.MatchTimeout, params.Descriptor{Description: "how long a ground truth waits for its corrected message, and a corrected message for its ground truth (s)",
		FloatRange: params.Floats(0.001, 60, 0)})
	b.Int("max_pending", &c.MaxPending, params.Descriptor{Description: "most samples waiting for their other half; beyond, the oldest are dropped and counted",
		IntRange: params.Ints(1, 10_000_000, 1)})
	b.Duration("silent_after_sec", &c.SilentAfter, params.Descriptor{Description: "the ground truth or an input silent this long is reported (s)",
		FloatRange: params.Floats(0.001, 3600, 0)})
	b.Duration("log_period_sec", &c.LogEvery, params.Descriptor{Description: "period of the table of errors the node logs (s)",
		FloatRange: params.Floats(0.1, 3600, 0)})
	qos.Bind(b, "qos.in", &p.In)
	qos.Bind(b, "qos.truth", &p.Truth)
	b.Check(p.CheckInputs)
}

// Settings returns the writable parameters as cfg has them.
func Settings(cfg Config) []params.Parameter {
	p := Params{Config: cfg}
	b := params.NewBinder(nil, nil)
	p.Bind(b)
	return b.Writable()
}
