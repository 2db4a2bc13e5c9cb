package config

import (
	"errors"
	"time"

	"github.com/timealign/timealign/pkg/cfgerr"
	tsync "github.com/timealign/timealign/pkg/sync"
)

// Config configures the node's Core (in the package above).
type Config struct {
	// Sync configures the policy and the number of inputs.
	Sync tsync.Config
	// SilentAfter is how long an input may stay silent while others
	// deliver before the diagnostics name it as blocking every set. It
	// defaults to 2 s.
	SilentAfter time.Duration
	// MaxDropShare is the share of an input's messages that may be dropped
	// (over a status period) before the diagnostics warn. It defaults to 0.5.
	MaxDropShare float64
}

// DefaultConfig returns the node's defaults: message_filters' for 2 inputs.
func DefaultConfig() Config {
	return Config{Sync: tsync.DefaultConfig(), SilentAfter: 2 * time.Second, MaxDropShare: 0.5}
}

// ErrConfig is wrapped by the errors of Config.Validate.
var ErrConfig = errors.New("synchronizer: invalid config")

// Validate reports the first bad field, as a *cfgerr.Error naming the
// field of Config ("Sync.QueueSize").
func (c Config) Validate() error {
	if err := c.Sync.Validate(); err != nil {
		if ce, ok := cfgerr.As(err); ok {
			ce.Nest("Sync.")
		}
		return err
	}
	if c.SilentAfter <= 0 {
		return cfgerr.New(ErrConfig, "SilentAfter", "is %v, want > 0", c.SilentAfter)
	}
	if !(c.MaxDropShare >= 0 && c.MaxDropShare <= 1) {
		return cfgerr.New(ErrConfig, "MaxDropShare", "is %v, want 0..1", c.MaxDropShare)
	}
	return nil
}
