// Package msgdef reads ROS 2 message definitions (.msg text) as far as
// timealign needs them: a type's package and name, where an install keeps
// its .msg file, its fields, and whether its first field is a
// std_msgs/Header. That last test is the one the nodes (which refuse input
// types whose header.stamp they cannot rewrite) and pkg/bag (which passes
// such types through untouched) share.
//
// It works on names and text, without file I/O: callers read the files
// [Files] names. Every function is linear in its input.
package msgdef

import (
	"iter"
	"path/filepath"
	"strings"
)

// SplitType splits "pkg/msg/Type" (or "pkg/Type") into the package and the
// message name; ok is false for anything else.
func SplitType(typ string) (pkg, name string, ok bool) {
	parts := strings.Split(typ, "/")
	if len(parts) == 3 && parts[1] == "msg" {
		parts = []string{parts[0], parts[2]}
	}
	if len(parts) != 2 || parts[0] == "" || parts[1] == "" {
		return "", "", false
	}
	return parts[0], parts[1], true
}

// Files yields, for each non-empty install prefix in order (the entries of
// AMENT_PREFIX_PATH), the path where that install keeps the definition of
// pkg's message name: <prefix>/share/<pkg>/msg/<name>.msg. The first one
// that exists is the definition ROS 2 uses.
func Files(prefixes []string, pkg, name string) iter.Seq[string] {
	return func(yield func(string) bool) {
		for _, p := range prefixes {
			if p == "" {
				continue
			}
			if !yield(filepath.Join(p, "share", pkg, "msg", name+".msg")) {
				return
			}
		}
	}
}

// Field is one field declaration of a .msg text: its type as written
// ("std_msgs/Header", "float64[9]", "string<=10") and its name.
type Field struct{ Type, Name string }

// String returns the declaration, "type name".
func (f Field) String() string { return f.Type + " " + f.Name }

// ParseField returns the field one line of a .msg text declares; ok is
// false for a blank line, a comment or a constant (TYPE NAME=VALUE).
func ParseField(line string) (f Field, ok bool) {
	line, _, _ = strings.Cut(line, "#")
	w := strings.Fields(line)
	if len(w) < 2 {
		return Field{}, false
	}
	if strings.Contains(w[1], "=") || len(w) > 2 && strings.HasPrefix(w[2], "=") {
		return Field{}, false // a constant
	}
	return Field{Type: w[0], Name: w[1]}, true
}

// Fields returns the fields a .msg text declares, in order (not its
// constants).
func Fields(text string) []Field {
	var out []Field
	for line := range strings.Lines(text) {
		if f, ok := ParseField(line); ok {
			out = append(out, f)
		}
	}
	return out
}

// HeaderFirst reports whether the first field a .msg text declares is a
// std_msgs/Header (written std_msgs/Header, std_msgs/msg/Header, or Header
// as ROS 1 definitions and std_msgs' own do), and returns that field: the
// zero Field when the text declares none. An array of headers is not a
// header.
func HeaderFirst(text string) (first Field, ok bool) {
	for line := range strings.Lines(text) {
		if f, found := ParseField(line); found {
			return f, IsHeader(f.Type)
		}
	}
	return Field{}, false
}

// IsHeader reports whether a field type names std_msgs/Header.
func IsHeader(typ string) bool {
	switch typ {
	case "std_msgs/Header", "std_msgs/msg/Header", "Header":
		return true
	}
	return false
}
