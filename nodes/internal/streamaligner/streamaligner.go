// Package streamaligner is the ROS-free logic of the stream_aligner node:
// messages of N input topics (any types whose first field is a
// std_msgs/Header) are held back and republished, each on its own output,
// in the order of their header stamps across all inputs, by pkg/sync's
// StreamAligner (Rock's aggregator semantics: each input's period is its
// lookahead, equal stamps play by priority, playback waits for an input
// without data at most Timeout, measured in stamps).
//
// On a live robot a sensor can stop altogether: an input that has sent
// nothing for SilentAfter of node time is no longer waited for (its
// stream is disabled until its next message), so the others flow at once
// and what is buffered drains even when every input has stopped.
//
// The Core keeps the messages it is given (Add takes ownership: no copy,
// whatever their size) until they are played or dropped: memory is bounded
// by the aligner's buffers times the messages' sizes.
//
// Reconfigure changes the timeout and SilentAfter of a running Core; the
// inputs, their periods, priorities and buffers are fixed when it is made.
//
// Spec is the node that nodes/stream_aligner runs; Report is what it
// reports once a second (~/status, /diagnostics). Its parameters are
// declared in the package config beneath, which the offline tools read
// without the node runtime.
package streamaligner

import (
	"errors"
	"fmt"
	"slices"

	"github.com/timealign/timealign/nodes/internal/streamaligner/config"
	"github.com/timealign/timealign/pkg/stamp"
	tsync "github.com/timealign/timealign/pkg/sync"
)

// ErrFixed: Reconfigure was asked to change the inputs, their periods,
// priorities or buffers, which are fixed when the Core is made.
var ErrFixed = errors.New("stream_aligner: the inputs' configuration cannot change while running")

// Output receives a played message of input i: the slice given to Add.
type Output func(i int, msg []byte)

// Status is a snapshot of a Core.
type Status struct {
	Aligner          tsync.AlignerStatus
	DroppedMalformed []uint64      // per input: no readable std_msgs/Header
	Silent           []bool        // per input: not waited for (silent for SilentAfter)
	LastArrival      []stamp.Time  // per input: node time of its last message (0: none yet)
	LastError        string        // the last malformed message's error
	Config           config.Config // the configuration the Core runs with
}

// Core is the node's logic. One goroutine owns it.
type Core struct {
	cfg       config.Config
	a         *tsync.StreamAligner[[]byte]
	out       Output
	malformed []uint64
	arrival   []stamp.Time
	silent    []bool
	since     stamp.Time // node time of the first Add or Tick: silence counts from it
	now       stamp.Time // node time of the last Tick
	lastErr   error
	play      func(tsync.StreamSample[[]byte])
}

// New returns a Core for cfg that plays messages to out.
func New(cfg config.Config, out Output) (*Core, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	a, err := tsync.NewStreamAligner[[]byte](cfg.Aligner)
	if err != nil {
		return nil, err
	}
	k := len(cfg.Aligner.Streams)
	c := &Core{cfg: cfg, a: a, out: out, malformed: make([]uint64, k), arrival: make([]stamp.Time, k), silent: make([]bool, k)}
	c.play = func(x tsync.StreamSample[[]byte]) { c.out(x.Stream, x.Value) }
	return c, nil
}

// Add offers a serialized message of input i, received at arrival (node
// time), and plays every message that is then ready; msg belongs to the
// Core from then on (it is played as it is). err describes a
// message without a readable std_msgs/Header (dropped and counted);
// drops of the aligner (late, backward, full) are counted in its status.
func (c *Core) Add(i int, msg []byte, arrival stamp.Time) error {
	if i < 0 || i >= len(c.arrival) {
		return fmt.Errorf("stream_aligner: input %d out of range", i)
	}
	if c.since == 0 {
		c.since = arrival
	}
	t, _, err := stamp.Header(msg) // frame_id checked too: evidence of a leading Header
	if err != nil {
		c.malformed[i]++
		c.lastErr = err
		return err
	}
	c.arrival[i] = arrival
	c.silent[i] = false // a push enables the stream again
	c.a.Push(i, t, msg) // a drop is counted in the aligner's status

	c.a.Drain(c.play)
	return nil
}

// Tick stops waiting for inputs that have sent nothing for SilentAfter
// before now (node time) and plays what is then ready. Call it
// periodically; it returns the number of messages played.
func (c *Core) Tick(now stamp.Time) int {
	if c.since == 0 {
		c.since = now
	}
	c.now = now
	if c.cfg.SilentAfter > 0 {
		for i, last := range c.arrival {
			if last == 0 {
				last = c.since
			}
			if !c.silent[i] && now.Sub(last) >= c.cfg.SilentAfter {
				c.silent[i] = true
				_ = c.a.SetActive(i, false) // i is a stream: cannot fail
			}
		}
	}
	return c.a.Drain(c.play)
}

// Reconfigure runs the Core with cfg from now on (a parameter changed):
// the timeout applies at once (a shorter one may play what was held back;
// automatic buffers keep their size, as in Rock), and inputs marked silent
// that have not been silent for the new SilentAfter (as of the last Tick)
// are waited for again. The inputs' configuration must be the Core's
// (ErrFixed); an invalid cfg is refused. Either way nothing changes on an
// error.
func (c *Core) Reconfigure(cfg config.Config) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	if !slices.Equal(cfg.Aligner.Streams, c.cfg.Aligner.Streams) || cfg.Aligner.MaxBufferSize != c.cfg.Aligner.MaxBufferSize {
		return ErrFixed
	}
	if err := c.a.SetTimeout(cfg.Aligner.Timeout); err != nil {
		return err
	}
	c.cfg.Aligner.Timeout, c.cfg.SilentAfter = cfg.Aligner.Timeout, cfg.SilentAfter
	for i, last := range c.arrival {
		if last == 0 {
			last = c.since
		}
		if c.silent[i] && (cfg.SilentAfter == 0 || c.now.Sub(last) < cfg.SilentAfter) {
			c.silent[i] = false
			_ = c.a.SetActive(i, true) // i is a stream: cannot fail
		}
	}
	c.a.Drain(c.play) // a shorter timeout may release samples
	return nil
}

// Status returns a snapshot.
func (c *Core) Status() Status {
	s := Status{Aligner: c.a.Status(), DroppedMalformed: append([]uint64(nil), c.malformed...),
		Silent: append([]bool(nil), c.silent...), LastArrival: append([]stamp.Time(nil), c.arrival...), Config: c.cfg}
	if c.lastErr != nil {
		s.LastError = c.lastErr.Error()
	}
	return s
}

// Reset discards every buffered message and the playback times (a jump of
// time made them of another timeline); the streams, whether they are
// enabled, and the counters of the status go on.
func (c *Core) Reset() {
	c.a.Restart()
}
