package nodekit

import (
	"fmt"
	"strconv"
	"time"
)

// Level is a diagnostic_msgs/DiagnosticStatus level.
type Level byte

// The levels of diagnostic_msgs/DiagnosticStatus, with their wire values.
const (
	OK    Level = 0
	Warn  Level = 1
	Error Level = 2
	Stale Level = 3
)

func (l Level) String() string {
	switch l {
	case OK:
		return "OK"
	case Warn:
		return "WARN"
	case Error:
		return "ERROR"
	case Stale:
		return "STALE"
	}
	return "Level(" + strconv.Itoa(int(l)) + ")"
}

// KeyValue is a diagnostic_msgs/KeyValue.
type KeyValue struct{ Key, Value string }

// Diagnostic is the content of one diagnostic_msgs/DiagnosticStatus.
type Diagnostic struct {
	Level      Level
	Name       string // "<node name>: <what>", as rqt_robot_monitor groups it
	Message    string // the worst problem, or "ok"
	HardwareID string
	Values     []KeyValue
}

// Raise sets the level to l, with message msg, if l is worse than the
// current level; messages of equal level are joined.
func (d *Diagnostic) Raise(l Level, msg string) {
	switch {
	case l > d.Level || d.Message == "":
		d.Level, d.Message = l, msg
	case l == d.Level && l != OK:
		d.Message += "; " + msg
	}
}

// Add appends a key/value pair, formatting v: durations in their Go form,
// floats with 6 significant digits.
func (d *Diagnostic) Add(key string, v any) {
	var s string
	switch x := v.(type) {
	case string:
		s = x
	case time.Duration:
		s = x.String()
	case float64:
		s = strconv.FormatFloat(x, 'g', 6, 64)
	case bool:
		s = strconv.FormatBool(x)
	default:
		s = fmt.Sprint(x)
	}
	d.Values = append(d.Values, KeyValue{Key: key, Value: s})
}

// Rate turns a counter into a rate per second between two snapshots.
type Rate struct {
	last  uint64
	at    time.Duration
	valid bool
}

// Update takes the counter's value at time now (any monotonic clock) and
// returns the rate per second since the previous update (0 the first time).
func (r *Rate) Update(count uint64, now time.Duration) float64 {
	defer func() { r.last, r.at, r.valid = count, now, true }()
	if !r.valid || now <= r.at || count < r.last {
		return 0
	}
	return float64(count-r.last) / (now - r.at).Seconds()
}

// Since returns how much a counter grew from prev to now: 0 if it went
// back (a status of another core), never a wrapped-around difference.
func Since(now, prev uint64) uint64 {
	if now < prev {
		return 0
	}
	return now - prev
}

// Share returns part/total, 0 when total is 0.
func Share(part, total uint64) float64 {
	if total == 0 {
		return 0
	}
	return float64(part) / float64(total)
}
