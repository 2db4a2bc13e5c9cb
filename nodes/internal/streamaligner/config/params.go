package config

import (
	"fmt"
	"time"

	"github.com/timealign/timealign/pkg/params"
	"github.com/timealign/timealign/pkg/qos"
	tsync "github.com/timealign/timealign/pkg/sync"
)

// Params are the stream_aligner node's parameters: the Config and the
// wiring.
type Params struct {
	Config Config
	Inputs int
	// MessageTypes has one type per input, or one for all; none, or an
	// empty entry: the type of the input's first publisher in the graph.
	MessageTypes []string
	// Periods, Priorities and BufferSizes have no entry (the default),
	// one for all inputs, or one per input.
	Periods     []time.Duration
	Priorities  []int64
	BufferSizes []int64
	In, Out     qos.Profile
}

// DefaultParams returns the node's defaults.
func DefaultParams() Params {
	c := DefaultConfig()
	return Params{Config: c, Inputs: len(c.Aligner.Streams), In: qos.SensorData(), Out: qos.Default()}
}

// fieldParams names the Config's fields as parameters, for the reasons of
// rejected values (an element of Streams is an entry of the per-input
// arrays).
var fieldParams = map[string]string{
	"Aligner.Timeout":            "timeout_sec",
	"Aligner.MaxBufferSize":      "max_buffer_size",
	"Aligner.Streams":            "inputs",
	"Aligner.Streams.Period":     "periods_sec",
	"Aligner.Streams.BufferSize": "buffer_sizes",
	"Aligner.Streams.Priority":   "priorities",
	"SilentAfter":                "silent_after_sec",
}

// Validate checks the bound Config, naming parameters; pass p.Validate to
// params.NewBinder.
func (p *Params) Validate() error { return params.NameFields(p.Config.Validate(), fieldParams) }

// Settings returns the writable parameters as cfg has them: what a Core
// runs with, under the names a user sets them by.
func Settings(cfg Config) []params.Parameter {
	p := Params{Config: cfg}
	b := params.NewBinder(nil, nil)
	p.Bind(b)
	return b.Writable()
}

// perInput returns entry i of an array parameter that has none, one for
// all, or one per input.
func perInput[T any](name string, v []T, inputs, i int, def T) (T, error) {
	switch len(v) {
	case 0:
		return def, nil
	case 1:
		return v[0], nil
	case inputs:
		return v[i], nil
	}
	return def, fmt.Errorf("%w: %s has %d entries, want none, 1 or one per input (%d)", ErrConfig, name, len(v), inputs)
}

// streams builds the aligner's streams from the array parameters.
func (p *Params) streams() error {
	if _, err := perInput("message_types", p.MessageTypes, p.Inputs, 0, ""); err != nil {
		return err
	}
	streams := make([]tsync.StreamConfig, p.Inputs)
	for i := range streams {
		period, err := perInput("periods_sec", p.Periods, p.Inputs, i, 0)
		if err != nil {
			return err
		}
		s := DefaultStream(period)
		prio, err := perInput("priorities", p.Priorities, p.Inputs, i, int64(s.Priority))
		if err != nil {
			return err
		}
		size, err := perInput("buffer_sizes", p.BufferSizes, p.Inputs, i, int64(s.BufferSize))
		if err != nil {
			return err
		}
		s.Priority, s.BufferSize = int(prio), int(size)
		if int64(s.Priority) != prio || int64(s.BufferSize) != size {
			return fmt.Errorf("%w: input %d: priority %d or buffer size %d out of range", ErrConfig, i, prio, size)
		}
		streams[i] = s
	}
	p.Config.Aligner.Streams = streams
	return nil
}

// Bind declares the parameters on b, bound to p. The writable ones take
// effect through Core.Reconfigure; those of the inputs are read-only.
func (p *Params) Bind(b *params.Binder) {
	const ports = params.ReadOnlyReason + "the subscriptions and publishers are created with it"
	const buffers = params.ReadOnlyReason + "the aligner registers its inputs with it at start-up and cannot change them"
	b.Int("inputs", &p.Inputs, params.Descriptor{ReadOnly: true, Description: "number of inputs in0 … in{N-1} (outputs out0 … out{N-1})" + ports,
		IntRange: params.Ints(1, MaxInputs, 1)})
	b.Strings("message_types", &p.MessageTypes, params.Descriptor{ReadOnly: true,
		Description: "type of each input (one entry for all), e.g. [sensor_msgs/msg/Imu, sensor_msgs/msg/LaserScan]; none or an empty entry: taken from the input's first publisher" + ports})
	b.Duration("timeout_sec", &p.Config.Aligner.Timeout, params.Descriptor{
		Description: "longest playback waits for an input without data, measured in stamps (s): the most the newest stamp may be ahead of the last played one (Rock's timeout); its value at start-up sizes automatic buffers",
		FloatRange:  params.Floats(0, 3600, 0)})
	b.Durations("periods_sec", &p.Periods, params.Descriptor{ReadOnly: true,
		Description: "period of each input (one entry for all), its lookahead: after a message stamped t nothing is waited for on that input before t + period (s); 0: not periodic (waited for as soon as it has no data); negative: only sizes an automatic buffer" + buffers})
	b.Int64s("priorities", &p.Priorities, params.Descriptor{ReadOnly: true,
		Description: "priority of each input (one entry for all): for equal stamps the lower plays first (default -1, Rock's)" + buffers})
	b.Int64s("buffer_sizes", &p.BufferSizes, params.Descriptor{ReadOnly: true,
		Description: "buffer of each input (one entry for all): -1 automatic (2 x timeout / |period|), 0 growing (from 20, doubling up to max_buffer_size), or a number of messages; default: automatic with a period, growing without" + buffers})
	b.Int("max_buffer_size", &p.Config.Aligner.MaxBufferSize, params.Descriptor{ReadOnly: true,
		Description: "most messages any input buffers (a full buffer drops its oldest message)" + buffers,
		IntRange:    params.Ints(1, 1<<20, 1)})
	b.Duration("silent_after_sec", &p.Config.SilentAfter, params.Descriptor{
		Description: "an input that sends nothing this long (node time) is not waited for until it sends again (s); 0: wait by timeout_sec alone, as Rock does; a change applies to the inputs marked silent too",
		FloatRange:  params.Floats(0, 1e6, 0)})
	qos.Bind(b, "qos.in", &p.In)
	qos.Bind(b, "qos.out", &p.Out)
	b.Check(p.streams)
}
