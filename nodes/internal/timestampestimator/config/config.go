package config

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/timealign/timealign/pkg/cfgerr"
	"github.com/timealign/timealign/pkg/tsest"
)

// Source says which time of a message is its receive time.
type Source int

const (
	// HeaderStamp: the driver's header.stamp (it stamped on arrival).
	HeaderStamp Source = iota
	// ReceiveTime: the time the message reached this node (DDS receive
	// time, or the node clock).
	ReceiveTime
)

var sourceNames = []string{"header", "receive_time"}

// SourceNames returns the names of the sources, indexed by Source (a copy).
func SourceNames() []string { return slices.Clone(sourceNames) }

func (s Source) String() string {
	if s >= 0 && int(s) < len(sourceNames) {
		return sourceNames[s]
	}
	return fmt.Sprintf("Source(%d)", int(s))
}

// ErrConfig is wrapped by every error of Config.Validate.
var ErrConfig = errors.New("timestamp_estimator: invalid config")

// ParseSource returns the Source named s.
func ParseSource(s string) (Source, error) {
	for i, n := range sourceNames {
		if n == s {
			return Source(i), nil
		}
	}
	return 0, fmt.Errorf("%w: stamp_source is %q, want one of %s", ErrConfig, s, strings.Join(sourceNames, ", "))
}

// Config configures the node's Core (in the package above).
type Config struct {
	// Estimator configures pkg/tsest. It defaults to tsest.DefaultConfig.
	Estimator tsest.Config
	// Source is the receive time fed to the estimator. It defaults to
	// HeaderStamp.
	Source Source
	// ReferenceTimeRef says that reference messages are
	// sensor_msgs/msg/TimeReference and their time_ref is the reference
	// stamp; false: the header.stamp of any Header-first message is. It
	// defaults to true.
	ReferenceTimeRef bool
}

// DefaultConfig returns the node's defaults.
func DefaultConfig() Config { return Config{Estimator: tsest.DefaultConfig(), ReferenceTimeRef: true} }

// Validate reports the first bad field, as a *cfgerr.Error naming the
// field of Config ("Estimator.Window").
func (c Config) Validate() error {
	if err := c.Estimator.Validate(); err != nil {
		if ce, ok := cfgerr.As(err); ok {
			ce.Nest("Estimator.")
		}
		return err
	}
	if c.Source < HeaderStamp || c.Source > ReceiveTime {
		return cfgerr.New(ErrConfig, "Source", "is %v, want one of %s", c.Source, strings.Join(sourceNames, ", "))
	}
	return nil
}
