package config

import (
	"errors"
	"time"

	"github.com/timealign/timealign/pkg/cfgerr"
)

// ErrConfig is wrapped by every error of Config.Validate.
var ErrConfig = errors.New("stamp_monitor: invalid config")

// MaxInputs bounds the inputs.
const MaxInputs = 32

// Config configures the node's Core (in the package above).
type Config struct {
	// Window is the span of the sliding window the figures cover. It
	// defaults to 10 s.
	Window time.Duration
	// MaxSamples bounds each row's window. It defaults to 20000.
	MaxSamples int
	// MatchTimeout is how long a ground truth waits for its corrected
	// message, and a corrected message for its ground truth. It defaults
	// to 2 s.
	MatchTimeout time.Duration
	// MaxPending bounds the samples waiting for their other half; beyond
	// it the oldest are dropped and counted. It defaults to 100000.
	MaxPending int
	// SilentAfter is how long the ground truth or an input may go without
	// a message before the diagnostics say so. It defaults to 3 s.
	SilentAfter time.Duration
	// LogEvery is the period of the table the node logs. It defaults to
	// 5 s.
	LogEvery time.Duration
}

// DefaultConfig returns the node's defaults.
func DefaultConfig() Config {
	return Config{Window: 10 * time.Second, MaxSamples: 20_000, MatchTimeout: 2 * time.Second,
		MaxPending: 100_000, SilentAfter: 3 * time.Second, LogEvery: 5 * time.Second}
}

func bad(field, format string, args ...any) error {
	return cfgerr.New(ErrConfig, field, format, args...)
}

// Validate reports the first bad field, as a *cfgerr.Error.
func (c Config) Validate() error {
	switch {
	case c.Window <= 0 || c.Window > time.Hour:
		return bad("Window", "is %v, want 0 < window ≤ 1h", c.Window)
	case c.MaxSamples < 1 || c.MaxSamples > 10_000_000:
		return bad("MaxSamples", "is %d, want 1..10000000", c.MaxSamples)
	case c.MatchTimeout <= 0 || c.MatchTimeout > time.Minute:
		return bad("MatchTimeout", "is %v, want 0 < timeout ≤ 1m", c.MatchTimeout)
	case c.MaxPending < 1 || c.MaxPending > 10_000_000:
		return bad("MaxPending", "is %d, want 1..10000000", c.MaxPending)
	case c.SilentAfter <= 0 || c.SilentAfter > time.Hour:
		return bad("SilentAfter", "is %v, want 0 < silent_after ≤ 1h", c.SilentAfter)
	case c.LogEvery <= 0 || c.LogEvery > time.Hour:
		return bad("LogEvery", "is %v, want 0 < period ≤ 1h", c.LogEvery)
	}
	return nil
}
