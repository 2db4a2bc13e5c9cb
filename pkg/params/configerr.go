package params

import (
	"fmt"
	"time"

	"github.com/timealign/timealign/pkg/cfgerr"
)

// Seconds is a duration written as the seconds of a parameter: 3.0, 0.5,
// 1e-09 (the form of a DOUBLE in a parameter file). It prints so with
// every fmt verb.
type Seconds float64

func (s Seconds) String() string { return formatDouble(float64(s)) }

// Format implements fmt.Formatter: every verb prints String.
func (s Seconds) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte(s.String())) }

// InSeconds returns v as the value of a parameter shows it: a
// time.Duration as [Seconds] (durations are parameters in seconds), any
// other value as it is. It is the value function a node gives to
// cfgerr.Error.SayAs.
func InSeconds(v any) any {
	if d, ok := v.(time.Duration); ok {
		return Seconds(DurationSeconds(d))
	}
	return v
}

// ConfigError is a configuration error said with parameter names: Error
// returns the message naming the parameters and values in their units;
// Unwrap returns the configuration error (so errors.Is finds its
// package's sentinel, and cfgerr.As the field).
type ConfigError struct {
	Msg string
	Err error
}

func (e *ConfigError) Error() string { return e.Msg }
func (e *ConfigError) Unwrap() error { return e.Err }

// NameFields says a Config.Validate error with the node's parameter names:
// fields maps the Go field the error names ("Estimator.Period", or
// "Streams.Period" for any element of a list) to its parameter
// ("period_sec"), and durations are written as seconds, so `ros2 param set
// ... period_sec 3.0` is answered "period_sec (3.0) must be shorter than
// window_sec (0.5)". A field without a parameter keeps its Go name; an
// error that is not a *cfgerr.Error, and nil, are returned as they are.
func NameFields(err error, fields map[string]string) error {
	ce, ok := cfgerr.As(err)
	if !ok {
		return err
	}
	return &ConfigError{Msg: ce.SayAs(func(f string) string { return fields[f] }, InSeconds), Err: err}
}
