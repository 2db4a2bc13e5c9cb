// Package runtimeparams declares the parameters that the node runtime
// (nodekit) gives every node besides the node's own: use_sim_time and the
// bounds of the node's inbox. The runtime binds them when a node starts;
// the offline tools (nodes/nodeparams) bind the same declarations to
// resolve a parameter file as a node would, without linking the runtime.
package runtimeparams

import (
	"time"

	"github.com/timealign/timealign/pkg/params"
)

// Limits bound what a node's inbox holds (the parameters inbox.*).
type Limits struct {
	// Messages is the most messages queued. It defaults to
	// DefaultLimits().Messages.
	Messages int
	// Bytes is the most bytes queued (the sum of the messages' lengths).
	// A message that finds the inbox empty is queued whatever its size, so
	// a message of any size gets through a node that keeps up; memory is
	// bounded by Bytes plus one message. It defaults to
	// DefaultLimits().Bytes.
	Bytes int64
	// MessageBytes, if positive, is the size of the largest message
	// taken: larger ones are dropped (and counted) even when the inbox is
	// empty. It defaults to 0: no limit.
	MessageBytes int64
}

// DefaultLimits returns the inbox bounds of the nodes: 1024 messages,
// 128 MiB (five 4K rgb8 images, twenty 1080p ones).
func DefaultLimits() Limits { return Limits{Messages: 1024, Bytes: 128 << 20} }

// Params are the parameters the runtime declares on every node.
type Params struct {
	// UseSimTime: the node's time follows /clock.
	UseSimTime bool
	// Inbox bounds the node's inbox (and, in bytes, each output's queue).
	Inbox Limits
	// TimeJumpThreshold is how far time must go back to be a jump that
	// resets the node's state: on /clock (use_sim_time), in the header
	// stamps of an input, or the host clock stepped (either way).
	TimeJumpThreshold time.Duration
}

// DefaultParams returns the runtime's defaults: the system clock, the
// DefaultLimits, jumps of more than a second.
func DefaultParams() Params { return Params{Inbox: DefaultLimits(), TimeJumpThreshold: time.Second} }

// Names are the names of the runtime's parameters.
var Names = []string{"use_sim_time", "inbox.max_messages", "inbox.max_bytes", "inbox.max_message_bytes", "time_jump_threshold_sec"}

// Bind declares the runtime's parameters on b, bound to p: use_sim_time
// read-only, the inbox limits live.
func (p *Params) Bind(b *params.Binder) {
	b.Bool("use_sim_time", &p.UseSimTime, params.Descriptor{ReadOnly: true,
		Description: "take the node's time (receive stamps, status and diagnostics stamps) from /clock (rosgraph_msgs/msg/Clock)" +
			params.ReadOnlyReason + "the node chooses its clock, and subscribes /clock, at start-up"})
	b.Int("inbox.max_messages", &p.Inbox.Messages, params.Descriptor{
		Description: "most messages waiting between the middleware and the node's algorithm; beyond, messages are dropped, counted in ~/status (dropped_queue) and reported",
		IntRange:    params.Ints(1, 1<<20, 1)})
	b.Int64("inbox.max_bytes", &p.Inbox.Bytes, params.Descriptor{
		Description: "most bytes waiting between the middleware and the node's algorithm (and in each output's queue); a message that finds none waiting is taken whatever its size",
		IntRange:    params.Ints(1, 1<<40, 1)})
	b.Int64("inbox.max_message_bytes", &p.Inbox.MessageBytes, params.Descriptor{
		Description: "largest message taken (bytes); larger ones are dropped, counted in ~/status (dropped_queue) and reported; 0: no limit",
		IntRange:    params.Ints(0, 1<<40, 1)})
	b.Duration("time_jump_threshold_sec", &p.TimeJumpThreshold, params.Descriptor{
		Description: "time going back by more than this (s) is a jump that resets the node's state (fits, queues, references), logged and counted in ~/status and /diagnostics (time_jumps): /clock under use_sim_time (a bag played with --loop, a restarted simulator), the header stamps of an input, or the host clock stepped either way",
		FloatRange:  params.Floats(0.001, 86400, 0)})
}

// Settings returns the runtime's writable parameters as p has them (the
// inbox limits, the jump threshold), under the names a user sets them by:
// what a node's diagnostics list besides its core's settings.
func Settings(p Params) []params.Parameter {
	b := params.NewBinder(nil, nil)
	p.Bind(b)
	return b.Writable()
}
