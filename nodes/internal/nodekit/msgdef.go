package nodekit

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
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
	pkg, name, ok := SplitType(msgType)
	if !ok {
		return "", fmt.Errorf("message type %q: want pkg/msg/Type", msgType)
	}
	for _, p := range prefixes {
		if p == "" {
			continue
		}
		f := filepath.Join(p, "share", pkg, "msg", name+".msg")
		field, err := firstField(f)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return f, fmt.Errorf("message type %s: %w", msgType, err)
		}
		typ, _, _ := strings.Cut(field, " ")
		switch typ {
		case "std_msgs/Header", "std_msgs/msg/Header", "Header":
			return f, nil
		case "":
			return f, fmt.Errorf("message type %s %w: it has no fields (%s)", msgType, ErrNoHeader, f)
		}
		return f, fmt.Errorf("message type %s %w: its first field is %q (%s)", msgType, ErrNoHeader, field, f)
	}
	return "", nil
}

// SplitType splits "pkg/msg/Type" (or "pkg/Type") into the package and
// the message name.
func SplitType(msgType string) (pkg, name string, ok bool) {
	parts := strings.Split(msgType, "/")
	if len(parts) == 3 && parts[1] == "msg" {
		parts = []string{parts[0], parts[2]}
	}
	if len(parts) != 2 || parts[0] == "" || parts[1] == "" {
		return "", "", false
	}
	return parts[0], parts[1], true
}

// firstField returns the first field declaration of a .msg file ("type
// name", whitespace collapsed), skipping comments, blank lines and
// constants (TYPE NAME=VALUE); "" if there is none.
func firstField(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line, _, _ := strings.Cut(sc.Text(), "#")
		fields := strings.Fields(line)
		if len(fields) < 2 {
			continue
		}
		if strings.Contains(fields[1], "=") || (len(fields) > 2 && strings.HasPrefix(fields[2], "=")) {
			continue // a constant
		}
		return fields[0] + " " + fields[1], nil
	}
	if err := sc.Err(); err != nil {
		return "", fmt.Errorf("reading %s: %w", path, err)
	}
	return "", nil
}

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
