package config

import (
	"fmt"

	"github.com/timealign/timealign/pkg/params"
	"github.com/timealign/timealign/pkg/qos"
	tsync "github.com/timealign/timealign/pkg/sync"
)

// Params are the synchronizer node's parameters: the Config and the wiring.
type Params struct {
	Config Config
	// MessageTypes has one type per input, or one for all; none, or an
	// empty entry: the type of the input's first publisher in the graph.
	MessageTypes []string
	In, Out      qos.Profile
}

// DefaultParams returns the node's defaults.
func DefaultParams() Params {
	return Params{Config: DefaultConfig(), In: qos.SensorData(), Out: qos.Default()}
}

// fieldParams names the Config's fields as parameters, for the reasons of
// rejected values.
var fieldParams = map[string]string{
	"Sync.Policy":      "policy",
	"Sync.Topics":      "inputs",
	"Sync.QueueSize":   "queue_size",
	"Sync.AgePenalty":  "age_penalty",
	"Sync.MaxInterval": "max_interval_sec",
	"Sync.LowerBounds": "lower_bounds_sec",
	"Sync.Epsilon":     "epsilon_sec",
	"SilentAfter":      "silent_after_sec",
	"MaxDropShare":     "max_drop_share",
}

// Validate checks the bound Config, naming parameters; pass p.Validate to
// params.NewBinder.
func (p *Params) Validate() error { return params.NameFields(p.Config.Validate(), fieldParams) }

// CheckTypes checks that message_types has no entry, one, or one per input.
func (p *Params) CheckTypes() error {
	if n := len(p.MessageTypes); n > 1 && n != p.Config.Sync.Topics {
		return fmt.Errorf("%w: message_types has %d entries, want none (discover), 1 or one per input (%d)", ErrConfig, n, p.Config.Sync.Topics)
	}
	return nil
}

// Bind declares the parameters on b, bound to p. The writable ones take
// effect through Core.Reconfigure; those of the policy are read-only: the
// policy's queues hold the sets being formed, which a new policy
// configuration would throw away unmatched and uncounted.
func (p *Params) Bind(b *params.Binder) {
	s := &p.Config.Sync
	const policy = params.ReadOnlyReason + "the policy is made with it at start-up; a change would drop the sets being formed"
	b.Int("inputs", &s.Topics, params.Descriptor{ReadOnly: true,
		Description: "number of inputs in0 … in{N-1}" + params.ReadOnlyReason + "the subscriptions and publishers are created with it",
		IntRange:    params.Ints(2, tsync.MaxTopics, 1)})
	b.Strings("message_types", &p.MessageTypes, params.Descriptor{ReadOnly: true,
		Description: "type of each input (one entry for all), e.g. [sensor_msgs/msg/Image, sensor_msgs/msg/Imu]; none or an empty entry: taken from the input's first publisher" + params.ReadOnlyReason + "the subscriptions and publishers are created with it"})
	params.Choice(b, "policy", &s.Policy, tsync.PolicyNames(), params.Descriptor{ReadOnly: true,
		Description: "message_filters policy: approximate (ApproximateTime), exact, epsilon (ApproximateEpsilonTime), latest" + policy})
	b.Int("queue_size", &s.QueueSize, params.Descriptor{ReadOnly: true, Description: "messages queued per input" + policy,
		IntRange: params.Ints(1, tsync.MaxQueueSize, 1)})
	b.Float64("age_penalty", &s.AgePenalty, params.Descriptor{ReadOnly: true, Description: "approximate: age penalty" + policy,
		FloatRange: params.Floats(0, 1e6, 0)})
	b.Duration("max_interval_sec", &s.MaxInterval, params.Descriptor{ReadOnly: true, Description: "approximate: largest spread of a set (s), 0: no limit" + policy,
		FloatRange: params.Floats(0, 1e6, 0)})
	b.Durations("lower_bounds_sec", &s.LowerBounds, params.Descriptor{ReadOnly: true,
		Description: "approximate: least interval between two messages of each input (s); empty: 0" + policy})
	b.Duration("epsilon_sec", &s.Epsilon, params.Descriptor{ReadOnly: true, Description: "epsilon: largest distance from a set's oldest stamp (s)" + policy,
		FloatRange: params.Floats(0, 1e6, 0)})
	b.Duration("silent_after_sec", &p.Config.SilentAfter, params.Descriptor{Description: "an input silent this long while others deliver is reported as blocking (s)",
		FloatRange: params.Floats(0.001, 1e6, 0)})
	b.Float64("max_drop_share", &p.Config.MaxDropShare, params.Descriptor{Description: "share of an input's messages dropped (in a status period) above which the node warns; 1: never",
		FloatRange: params.Floats(0, 1, 0)})
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
