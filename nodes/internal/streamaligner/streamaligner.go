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
package streamaligner

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/timealign/timealign/nodes/internal/nodekit"
	"github.com/timealign/timealign/pkg/cfgerr"
	"github.com/timealign/timealign/pkg/stamp"
	tsync "github.com/timealign/timealign/pkg/sync"
)

// What names the node's function in its diagnostics ("<node>: stream aligner").
const What = "stream aligner"

// MaxInputs bounds the number of inputs.
const MaxInputs = 64

// Config configures a Core.
type Config struct {
	// Aligner configures the StreamAligner; Streams has one entry per
	// input, in input order. It defaults to two inputs with Rock's stream
	// defaults (no period, automatic buffer, priority -1) and a 1 s
	// timeout.
	Aligner tsync.AlignerConfig
	// SilentAfter is how long (node time) an input may send nothing before
	// playback stops waiting for it; 0 waits by the timeout alone, as Rock
	// does. It defaults to 2 s.
	SilentAfter time.Duration
}

// DefaultConfig returns the node's defaults.
func DefaultConfig() Config {
	a := tsync.DefaultAlignerConfig()
	a.MaxBufferSize = DefaultMaxBuffer
	a.Streams = []tsync.StreamConfig{DefaultStream(0), DefaultStream(0)}
	return Config{Aligner: a, SilentAfter: 2 * time.Second}
}

// DefaultMaxBuffer bounds every input's buffer by default: a growing
// buffer stops there and then drops its oldest message as full.
const DefaultMaxBuffer = 10000

// DefaultStream returns an input with Rock's default priority and, for a
// period, an automatic buffer (sized from the timeout), otherwise a
// growing one.
func DefaultStream(period time.Duration) tsync.StreamConfig {
	s := tsync.DefaultStreamConfig(period)
	if period <= 0 {
		s.BufferSize = 0
	}
	return s
}

// ErrConfig is wrapped by the errors of Config.Validate.
var ErrConfig = errors.New("stream_aligner: invalid config")

// Validate reports the first bad field, as a *cfgerr.Error naming the
// field of Config ("Aligner.Streams[1].BufferSize").
func (c Config) Validate() error {
	if n := len(c.Aligner.Streams); n < 1 || n > MaxInputs {
		return cfgerr.New(ErrConfig, "Aligner.Streams", "has %d inputs, want 1..%d", n, MaxInputs)
	}
	if err := c.Aligner.Validate(); err != nil {
		if ce, ok := cfgerr.As(err); ok {
			ce.Nest("Aligner.")
		}
		return err
	}
	if c.SilentAfter < 0 {
		return cfgerr.New(ErrConfig, "SilentAfter", "is %v, want ≥ 0", c.SilentAfter)
	}
	return nil
}

// ErrFixed: Reconfigure was asked to change the inputs, their periods,
// priorities or buffers, which are fixed when the Core is made.
var ErrFixed = errors.New("stream_aligner: the inputs' configuration cannot change while running")

// Output receives a played message of input i: the slice given to Add.
type Output func(i int, msg []byte)

// Status is a snapshot of a Core.
type Status struct {
	Aligner          tsync.AlignerStatus
	DroppedMalformed []uint64     // per input: no readable std_msgs/Header
	Silent           []bool       // per input: not waited for (silent for SilentAfter)
	LastArrival      []stamp.Time // per input: node time of its last message (0: none yet)
	LastError        string       // the last malformed message's error
	Config           Config       // the configuration the Core runs with
}

// Core is the node's logic. One goroutine owns it.
type Core struct {
	cfg       Config
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
func New(cfg Config, out Output) (*Core, error) {
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
func (c *Core) Reconfigure(cfg Config) error {
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

// Diagnose returns the node's health against the previous status: WARN
// naming an input that is silent (not waited for), or that had messages
// dropped (late, backward in time, buffer full, malformed) since prev; OK
// otherwise. A counter lower than in prev counts as no change. The values
// end with the writable parameters the Core runs with.
func Diagnose(name string, inputs []string, s, prev Status) nodekit.Diagnostic {
	d := nodekit.Diagnostic{Name: name + ": " + What}
	var received uint64
	for _, st := range s.Aligner.Streams {
		received += st.Received
	}
	if received == 0 {
		d.Raise(nodekit.Warn, "no input yet")
	} else {
		d.Raise(nodekit.OK, "aligning")
	}
	for i, st := range s.Aligner.Streams {
		if i >= len(inputs) {
			break
		}
		if s.Silent[i] && received > 0 {
			d.Raise(nodekit.Warn, fmt.Sprintf("input %s is silent: not waited for", inputs[i]))
		}
		var p tsync.StreamStatus
		if i < len(prev.Aligner.Streams) {
			p = prev.Aligner.Streams[i]
		}
		late, back, full := nodekit.Since(st.Late, p.Late), nodekit.Since(st.Backward, p.Backward), nodekit.Since(st.Full, p.Full)
		if late+back+full > 0 {
			d.Raise(nodekit.Warn, fmt.Sprintf("input %s: %d late, %d backward in time, %d pushed out of a full buffer", inputs[i], late, back, full))
		}
		var pm uint64
		if i < len(prev.DroppedMalformed) {
			pm = prev.DroppedMalformed[i]
		}
		if n := nodekit.Since(s.DroppedMalformed[i], pm); n > 0 {
			d.Raise(nodekit.Warn, fmt.Sprintf("input %s: %d malformed messages dropped (%s)", inputs[i], n, s.LastError))
		}
	}
	if w := s.Aligner.Waiting; w >= 0 && w < len(inputs) {
		d.Add("waiting_for", inputs[w])
	}
	d.Add("played", s.Aligner.Played)
	d.Add("latency", s.Aligner.Latency)
	d.Add("timeout", s.Aligner.Timeout)
	for _, p := range Settings(s.Config) {
		d.Add(p.Name, p.Value.String())
	}
	return d
}
