// Package qos is the part of a ROS 2 QoS profile the timealign nodes make
// configurable (reliability, durability, history, depth), with rmw's
// policy codes and names, the two profiles the nodes start from
// ([SensorData] for inputs, [Default] for outputs), and [Bind], which
// declares a profile as four read-only parameters of a node.
//
// Nothing here starts goroutines, reads clocks or files, or logs.
package qos

import (
	"fmt"
	"strings"

	"github.com/timealign/timealign/pkg/params"
)

// Reliability is a QoS reliability policy, with rmw's codes.
type Reliability uint8

// Reliability policies.
const (
	ReliabilitySystemDefault Reliability = 0
	Reliable                 Reliability = 1
	BestEffort               Reliability = 2
)

// Durability is a QoS durability policy, with rmw's codes.
type Durability uint8

// Durability policies.
const (
	DurabilitySystemDefault Durability = 0
	TransientLocal          Durability = 1
	Volatile                Durability = 2
)

// History is a QoS history policy, with rmw's codes.
type History uint8

// History policies.
const (
	HistorySystemDefault History = 0
	KeepLast             History = 1
	KeepAll              History = 2
)

var (
	reliabilityNames = []string{"system_default", "reliable", "best_effort"}
	durabilityNames  = []string{"system_default", "transient_local", "volatile"}
	historyNames     = []string{"system_default", "keep_last", "keep_all"}
)

func enumName(names []string, i uint8) string {
	if int(i) < len(names) {
		return names[i]
	}
	return fmt.Sprintf("unknown(%d)", i)
}

func (r Reliability) String() string { return enumName(reliabilityNames, uint8(r)) }
func (d Durability) String() string  { return enumName(durabilityNames, uint8(d)) }
func (h History) String() string     { return enumName(historyNames, uint8(h)) }

// Profile is the part of a ROS 2 QoS profile a node makes configurable.
type Profile struct {
	Reliability Reliability
	Durability  Durability
	History     History
	// Depth is the queue depth for KeepLast (at least 1); ignored by
	// KeepAll.
	Depth int
}

// SensorData is rmw_qos_profile_sensor_data: best effort, volatile, keep
// last 5. It is the default for a node's inputs: a best-effort subscription
// matches every publisher, reliable or not.
func SensorData() Profile {
	return Profile{Reliability: BestEffort, Durability: Volatile, History: KeepLast, Depth: 5}
}

// Default is rmw_qos_profile_default: reliable, volatile, keep last 10.
// It is the default for a node's outputs: a reliable publisher matches
// every subscriber, reliable or best effort.
func Default() Profile {
	return Profile{Reliability: Reliable, Durability: Volatile, History: KeepLast, Depth: 10}
}

// Validate checks the policies' codes and the depth.
func (q Profile) Validate() error {
	switch {
	case q.Reliability > BestEffort:
		return fmt.Errorf("%w: reliability %s", params.ErrInvalidValue, q.Reliability)
	case q.Durability > Volatile:
		return fmt.Errorf("%w: durability %s", params.ErrInvalidValue, q.Durability)
	case q.History > KeepAll:
		return fmt.Errorf("%w: history %s", params.ErrInvalidValue, q.History)
	case q.Depth < 0:
		return fmt.Errorf("%w: depth %d is negative", params.ErrInvalidValue, q.Depth)
	case q.History == KeepLast && q.Depth < 1:
		return fmt.Errorf("%w: depth must be at least 1 with keep_last", params.ErrInvalidValue)
	}
	return nil
}

// String formats the profile as "reliable/volatile/keep_last(10)".
func (q Profile) String() string {
	h := q.History.String()
	if q.History == KeepLast {
		h = fmt.Sprintf("%s(%d)", h, q.Depth)
	}
	return q.Reliability.String() + "/" + q.Durability.String() + "/" + h
}

// Bind binds a QoS profile to four parameters of b under prefix (e.g. "qos.in"):
// prefix.reliability (best_effort, reliable, system_default),
// prefix.durability (volatile, transient_local, system_default),
// prefix.history (keep_last, keep_all, system_default) and prefix.depth
// (INTEGER, at least 1 with keep_last). The profile's current value is the
// default. QoS parameters are read-only: the adapter creates the
// subscription or publisher once, with the declared profile. Errors name
// the parameter.
func Bind(b *params.Binder, prefix string, q *Profile) {
	const why = params.ReadOnlyReason + "the subscriptions and publishers are created with it at start-up"
	enum := func(name string, names []string, get func() uint8, set func(uint8), what string) {
		b.Func(prefix+"."+name, params.Descriptor{
			Description:           what + why,
			AdditionalConstraints: "one of: " + strings.Join(names, ", "),
			ReadOnly:              true,
		}, func() params.Value { return params.StringValue(enumName(names, get())) }, func(v params.Value) error {
			for i, n := range names {
				if n == v.Str() {
					set(uint8(i))
					return nil
				}
			}
			return fmt.Errorf("%w: parameter '%s.%s': %q is not one of %s", params.ErrInvalidValue, prefix, name, v.Str(), strings.Join(names, ", "))
		})
	}
	enum("reliability", reliabilityNames, func() uint8 { return uint8(q.Reliability) },
		func(x uint8) { q.Reliability = Reliability(x) }, "QoS reliability of "+prefix)
	enum("durability", durabilityNames, func() uint8 { return uint8(q.Durability) },
		func(x uint8) { q.Durability = Durability(x) }, "QoS durability of "+prefix)
	enum("history", historyNames, func() uint8 { return uint8(q.History) },
		func(x uint8) { q.History = History(x) }, "QoS history of "+prefix)
	b.Func(prefix+".depth", params.Descriptor{
		Description: "QoS history depth of " + prefix + " (keep_last)" + why,
		ReadOnly:    true,
		IntRange:    params.Ints(0, 1<<31-1, 0),
	}, func() params.Value { return params.IntValue(int64(q.Depth)) }, func(v params.Value) error { q.Depth = int(v.Int()); return nil })
	b.Check(func() error {
		if q.History == KeepLast && q.Depth < 1 {
			return fmt.Errorf("%w: parameter '%s.depth': must be at least 1 with keep_last", params.ErrInvalidValue, prefix)
		}
		if err := q.Validate(); err != nil {
			return fmt.Errorf("parameters '%s.*': %w", prefix, err)
		}
		return nil
	})
}
