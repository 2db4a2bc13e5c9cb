package config

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/timealign/timealign/pkg/cfgerr"
	"github.com/timealign/timealign/pkg/pll"
)

// InvalidPolicy says what happens to a message while the estimate is invalid.
type InvalidPolicy int

const (
	// Drop drops the message and counts it.
	Drop InvalidPolicy = iota
	// ReceiveTime publishes it stamped with its receive time.
	ReceiveTime
	// Passthrough publishes it unchanged (device time in header.stamp).
	Passthrough
)

var policyNames = []string{"drop", "receive_time", "passthrough"}

// InvalidPolicyNames returns the names of the policies, indexed by
// InvalidPolicy (a copy).
func InvalidPolicyNames() []string { return slices.Clone(policyNames) }

func (p InvalidPolicy) String() string {
	if p >= 0 && int(p) < len(policyNames) {
		return policyNames[p]
	}
	return fmt.Sprintf("InvalidPolicy(%d)", int(p))
}

// ParseInvalidPolicy returns the policy named s.
func ParseInvalidPolicy(s string) (InvalidPolicy, error) {
	for i, n := range policyNames {
		if n == s {
			return InvalidPolicy(i), nil
		}
	}
	return 0, fmt.Errorf("%w: when_invalid is %q, want one of %s", ErrConfig, s, strings.Join(policyNames, ", "))
}

// ErrConfig is wrapped by every error of Config.Validate.
var ErrConfig = errors.New("clock_sync: invalid config")

// Config configures the node's Core (in the package above).
type Config struct {
	// PLL configures the clock fit. Its TickPeriod is the duration of one
	// device tick in header.stamp's device time and TickBits the width the
	// device's counter wraps at. It defaults to the envelope mode with 1 ns
	// ticks and 64 bits (header.stamp holds device time in nanoseconds).
	PLL pll.Config
	// WhenInvalid says what happens to messages while the estimate is
	// invalid. It defaults to Drop.
	WhenInvalid InvalidPolicy
}

// DefaultConfig returns the node's defaults.
func DefaultConfig() Config {
	c := pll.DefaultConfig()
	c.Mode = pll.Envelope
	c.TickPeriod = time.Nanosecond
	c.TickBits = 64
	return Config{PLL: c}
}

// Validate reports the first bad field, as a *cfgerr.Error naming the
// field of Config ("PLL.FIFOSize").
func (c Config) Validate() error {
	if err := c.PLL.Validate(); err != nil {
		if ce, ok := cfgerr.As(err); ok {
			ce.Nest("PLL.")
		}
		return err
	}
	if c.WhenInvalid < Drop || c.WhenInvalid > Passthrough {
		return cfgerr.New(ErrConfig, "WhenInvalid", "is %v, want one of %s", c.WhenInvalid, strings.Join(policyNames, ", "))
	}
	return nil
}
