package nodekit

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/timealign/timealign/pkg/msgdef"
)

// ErrNoHeader: a message type's definition does not start with a
// std_msgs/Header, so a node that reads and rewrites header.stamp cannot
// take it.
var ErrNoHeader = errors.New("does not start with a std_msgs/Header")

// CheckHeaderFirst looks up the definition of msgType ("pkg/msg/Type") as
// installed under one of prefixes (<prefix>/share/<pkg>/msg/<Type>.msg, the
// AMENT_PREFIX_PATH entries) and checks that its first field is a
// std_msgs/Header. It returns the definition file read, or "" when none is
// installed (a type defined only in .idl): the nodes then rely on the
// checks of every message. A definition whose first field is something
// else gives an error wrapping ErrNoHeader that names that field.
func CheckHeaderFirst(msgType string, prefixes []string) (file string, err error) {
	pkg, name, ok := msgdef.SplitType(msgType)
	if !ok {
		return "", fmt.Errorf("message type %q: want pkg/msg/Type", msgType)
	}
	for f := range msgdef.Files(prefixes, pkg, name) {
		text, err := os.ReadFile(f)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return f, fmt.Errorf("message type %s: %w", msgType, err)
		}
		switch first, ok := msgdef.HeaderFirst(string(text)); {
		case ok:
			return f, nil
		case first == msgdef.Field{}:
			return f, fmt.Errorf("message type %s %w: it has no fields (%s)", msgType, ErrNoHeader, f)
		default:
			return f, fmt.Errorf("message type %s %w: its first field is %q (%s)", msgType, ErrNoHeader, first.String(), f)
		}
	}
	return "", nil
}

// SplitType splits "pkg/msg/Type" (or "pkg/Type") into the package and
// the message name: [msgdef.SplitType].
func SplitType(msgType string) (pkg, name string, ok bool) { return msgdef.SplitType(msgType) }

// InputType returns the message type of input i from a parameter that
// has no entry (""), one for all inputs, or one per input; "" means: take
// it from the input's first publisher in the graph.
func InputType(types []string, i int) string {
	switch len(types) {
	case 0:
		return ""
	case 1:
		return types[0]
	}
	if i < len(types) {
		return types[i]
	}
	return ""
}
