// Package cfgerr is the error of every Config.Validate in timealign: it names
// the bad field so that each front end can say it in its own words.
//
// A library user reads the Go field ("pll: invalid config: FIFOSize is 1,
// want 2..65536"); the command-line tool names its flag ("--fifo-size is 1,
// want 2..65536") and a ROS 2 node its parameter ("fifo_size is 1, want
// 2..65536"), from one [Error] and a naming function given to [Error.Say].
//
// A message may name other fields in braces ("must be shorter than {Window}
// (500ms)"); they are renamed the same way. The values in a message are kept
// as given, so a front end can also write them in its own units with
// [Error.SayAs]: a ROS 2 node writes durations as the seconds of its
// parameters ("period_sec (3.0) must be shorter than window_sec (0.5)").
package cfgerr

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Error is a bad configuration field.
type Error struct {
	// Kind is the package's sentinel (pll.ErrConfig, sync.ErrConfig, ...):
	// errors.Is(err, pll.ErrConfig) holds.
	Kind error
	// Field is the Go field, with an index for an element of a list
	// ("LowerBounds[2]") and dots for nested fields ("Latency.Scale").
	Field string
	// Msg is what is wrong, after the field's name ("is 1, want 2..1024"); it
	// may name other fields in braces: "{Window}".
	Msg string

	// format and args are what New formatted Msg from, for SayAs.
	format string
	args   []any
}

// New returns an *Error of kind for field, with Msg formatted. The
// arguments are kept, typed, for [Error.SayAs].
func New(kind error, field, format string, args ...any) *Error {
	return &Error{Kind: kind, Field: field, Msg: fmt.Sprintf(format, args...), format: format, args: args}
}

// Values returns the values the message was formatted from, in order (none
// for an Error not made by New).
func (e *Error) Values() []any { return e.args }

// Error names Go fields: "pll: invalid config: FIFOSize is 1, want 2..65536".
func (e *Error) Error() string {
	s := e.Say(nil)
	if e.Kind != nil {
		return e.Kind.Error() + ": " + s
	}
	return s
}

// Unwrap returns Kind.
func (e *Error) Unwrap() error { return e.Kind }

// Say returns the message without the package's prefix, every field named
// by name (nil keeps the Go names). name gets a field without its index
// ("LowerBounds"); an indexed field reads "value 3 of --lower-bounds"
// (counting from 1); a field of an element, "Streams[1].BufferSize", is
// named as "Streams.BufferSize" with the index. A name that returns ""
// keeps the Go name.
func (e *Error) Say(name func(field string) string) string {
	return e.say(name, e.Msg)
}

// SayAs is Say with the message formatted again from its values, each
// passed through value first: a front end's units. value gets every value
// given to New and returns what to format in its place (a ROS 2 node turns a
// time.Duration into the seconds of its parameters). With a nil value, or
// for an Error not made by New, it is Say.
func (e *Error) SayAs(name func(field string) string, value func(v any) any) string {
	if value == nil || e.format == "" && len(e.args) == 0 {
		return e.Say(name)
	}
	args := make([]any, len(e.args))
	for i, a := range e.args {
		args[i] = value(a)
	}
	return e.say(name, fmt.Sprintf(e.format, args...))
}

func (e *Error) say(name func(field string) string, msg string) string {
	rename := func(f string) string {
		base, idx := splitIndex(f)
		n := base
		if name != nil {
			if m := name(base); m != "" {
				n = m
			}
		}
		if idx < 0 {
			return n
		}
		if name == nil {
			return f
		}
		return "value " + strconv.Itoa(idx+1) + " of " + n
	}
	sep := " "
	if msg == "" || strings.HasPrefix(msg, ",") {
		sep = ""
	}
	return rename(e.Field) + sep + mapFields(msg, rename)
}

// mapFields replaces every field named in braces in msg ("{Window}") by
// f of its name; other braces stay as they are.
func mapFields(msg string, f func(field string) string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(msg, '{')
		j := strings.IndexByte(msg[max(i, 0):], '}') + max(i, 0)
		if i < 0 || j <= i || !isField(msg[i+1:j]) {
			b.WriteString(msg)
			return b.String()
		}
		b.WriteString(msg[:i])
		b.WriteString(f(msg[i+1 : j]))
		msg = msg[j+1:]
	}
}

// isField reports whether s looks like a Go field reference (so that braces
// in values, say a quoted "{x}", are left alone).
func isField(s string) bool {
	if s == "" || s[0] < 'A' || s[0] > 'Z' {
		return false
	}
	for _, r := range s {
		if !(r == '.' || r == '[' || r == ']' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return false
		}
	}
	return true
}

// splitIndex splits "LowerBounds[2]" into "LowerBounds" and 2, and
// "Streams[1].BufferSize" into "Streams.BufferSize" and 1; a field without
// an index gives -1.
func splitIndex(f string) (string, int) {
	i := strings.IndexByte(f, '[')
	if i < 0 {
		return f, -1
	}
	j := strings.IndexByte(f[i:], ']') + i
	if j < i {
		return f, -1
	}
	n, err := strconv.Atoi(f[i+1 : j])
	if err != nil || n < 0 {
		return f, -1
	}
	return f[:i] + f[j+1:], n
}

// Nest makes e name fields of an element of a list: the field and every
// field the message names get prefix ("Streams[2]."), so a StreamConfig's
// "BufferSize" becomes the AlignerConfig's "Streams[2].BufferSize".
func (e *Error) Nest(prefix string) {
	e.Field = prefix + e.Field
	e.Msg = nest(e.Msg, prefix)
	e.format = nest(e.format, prefix)
}

// nest prefixes every field named in braces in msg.
func nest(msg, prefix string) string {
	return mapFields(msg, func(field string) string { return "{" + prefix + field + "}" })
}

// As returns the *Error in err's chain, if any.
func As(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}
