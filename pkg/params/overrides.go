package params

import (
	"errors"
	"fmt"
	"strings"
)

// Rule is one parameter override of the command line (-p/--param
// [node:]name:=value, parsed by package rosargs).
type Rule struct {
	// Node, if not empty, limits the rule to the node named so in the root
	// namespace (rcl matches it as the pattern "/node").
	Node  string
	Name  string
	Value Value
}

// String formats a rule as it is written on the command line.
func (r Rule) String() string {
	s := r.Name + ":=" + r.Value.String()
	if r.Node != "" {
		s = r.Node + ":" + s
	}
	return s
}

// MatchNode reports whether a node-name pattern of a parameter file (as in
// [NodeParams.Pattern]) applies to the node with fully qualified name fqn,
// as rclcpp matches them: the pattern is anchored at both ends, '*' matches
// exactly one name token and '**' any number (zero included), so "/**"
// matches every node, "/*" every node in the root namespace, "/**/imu" a
// node named imu in any namespace, and "/imu" only the imu of the root
// namespace.
func MatchNode(pattern, fqn string) bool {
	if !strings.HasPrefix(pattern, "/") {
		pattern = "/" + pattern
	}
	return matchSegs(strings.Split(pattern[1:], "/"), strings.Split(strings.TrimPrefix(fqn, "/"), "/"))
}

func matchSegs(pat, name []string) bool {
	for len(pat) > 0 {
		switch pat[0] {
		case "**":
			for k := 0; k <= len(name); k++ {
				if matchSegs(pat[1:], name[k:]) {
					return true
				}
			}
			return false
		case "*":
			if len(name) == 0 || name[0] == "" {
				return false
			}
		default:
			if len(name) == 0 || pat[0] != name[0] {
				return false
			}
		}
		pat, name = pat[1:], name[1:]
	}
	return len(name) == 0
}

// ResolveOverrides returns the initial parameter values for the node with
// fully qualified name fqn: the values of every block of every file whose
// pattern matches the node, in file order and then in the order within each
// file, so later files win over earlier ones; then the -p rules for this
// node (without a node prefix, or with its name when the node is in the
// root namespace), which win over the files, later rules over earlier.
//
// (rcl merges all files into one table ordered by the first appearance of
// each node pattern, so there a "/**" block of a later file can lose to a
// "/node" block of an earlier one, and -p competes with files by position
// on the command line. Here the order is simply files, then -p.)
func ResolveOverrides(fqn string, files []*File, rules []Rule) map[string]Override {
	out := map[string]Override{}
	for _, f := range files {
		if f == nil {
			continue
		}
		for _, np := range f.Nodes {
			if !MatchNode(np.Pattern, fqn) {
				continue
			}
			for _, e := range np.Params {
				out[e.Name] = Override{Value: e.Value, Source: fmt.Sprintf("%s:%d", f.Name, e.Line)}
			}
		}
	}
	for _, r := range rules {
		if r.Node != "" && !MatchNode("/"+r.Node, fqn) {
			continue
		}
		out[r.Name] = Override{Value: r.Value, Source: "-p " + r.String()}
	}
	return out
}

// LoadOverrides reads and parses the parameter files paths (--params-file,
// in order) with read (os.ReadFile in a node) and resolves the overrides
// for the node fqn, the -p rules winning over the files. A file that cannot
// be read or parsed is skipped: the overrides of the others are still
// returned, with an error joining every failure (each naming its file, and
// its line for syntax errors) for the node to log or refuse to start on.
func LoadOverrides(fqn string, paths []string, rules []Rule, read func(path string) ([]byte, error)) (map[string]Override, error) {
	var files []*File
	var errs []error
	for _, path := range paths {
		data, err := read(path)
		if err != nil {
			errs = append(errs, fmt.Errorf("params file %s: %w", path, err))
			continue
		}
		f, err := ParseFile(path, data)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		files = append(files, f)
	}
	return ResolveOverrides(fqn, files, rules), errors.Join(errs...)
}
