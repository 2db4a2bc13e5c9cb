package config

import (
	"errors"
	"time"

	"github.com/timealign/timealign/pkg/cfgerr"
	tsync "github.com/timealign/timealign/pkg/sync"
)

// MaxInputs bounds the number of inputs.
const MaxInputs = 64

// Config configures the node's Core (in the package above).
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
