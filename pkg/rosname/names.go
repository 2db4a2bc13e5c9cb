package rosname

import (
	"errors"
	"fmt"
	"strings"
)

// ErrInvalidName is wrapped by every error of this package: an empty or
// malformed node, namespace, topic or service name.
var ErrInvalidName = errors.New("invalid name")

// Name limits of rmw (validate_full_topic_name.h, validate_namespace.h,
// validate_node_name.h).
const (
	MaxTopicNameLength = 255 - 8 // RMW_TOPIC_MAX_NAME_LENGTH
	MaxNamespaceLength = MaxTopicNameLength - 2
	MaxNodeNameLength  = 255
)

func nameErr(kind, name string, index int, msg string) error {
	return fmt.Errorf("%w: %s %q: %s (at index %d)", ErrInvalidName, kind, name, msg, index)
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func isAlnum(c byte) bool {
	return isDigit(c) || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z')
}

// ValidateNodeName checks a node name as rmw_validate_node_name does:
// non-empty, only alphanumerics and '_', not starting with a digit, at most
// 255 characters.
func ValidateNodeName(name string) error {
	const kind = "node name"
	if name == "" {
		return nameErr(kind, name, 0, "node name must not be empty")
	}
	for i := 0; i < len(name); i++ {
		if !isAlnum(name[i]) && name[i] != '_' {
			return nameErr(kind, name, i, "node name must not contain characters other than alphanumerics or '_'")
		}
	}
	if isDigit(name[0]) {
		return nameErr(kind, name, 0, "node name must not start with a number")
	}
	if len(name) > MaxNodeNameLength {
		return nameErr(kind, name, MaxNodeNameLength-1, "node name should not exceed 255 characters")
	}
	return nil
}

// ValidateFullTopicName checks a fully qualified topic or service name as
// rmw_validate_full_topic_name does: absolute, no trailing or repeated '/',
// only alphanumerics, '_' and '/', no token starting with a digit, at most
// 247 characters.
func ValidateFullTopicName(name string) error {
	return validateFull("topic name", name, MaxTopicNameLength)
}

// ValidateNamespace checks a node namespace as rmw_validate_namespace does:
// "/" or a valid fully qualified name of at most 245 characters.
func ValidateNamespace(ns string) error {
	if ns == "/" {
		return nil
	}
	return validateFull("namespace", ns, MaxNamespaceLength)
}

func validateFull(kind, name string, maxLen int) error {
	switch {
	case name == "":
		return nameErr(kind, name, 0, kind+" must not be empty")
	case name[0] != '/':
		return nameErr(kind, name, 0, kind+" must be absolute, it must lead with a '/'")
	case name[len(name)-1] == '/':
		return nameErr(kind, name, len(name)-1, kind+" must not end with a '/'")
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; !isAlnum(c) && c != '_' && c != '/' {
			return nameErr(kind, name, i, kind+" must not contain characters other than alphanumerics, '_', or '/'")
		}
	}
	for i := 0; i+1 < len(name); i++ {
		if name[i] != '/' {
			continue
		}
		if name[i+1] == '/' {
			return nameErr(kind, name, i+1, kind+" must not contain repeated '/'")
		}
		if isDigit(name[i+1]) {
			return nameErr(kind, name, i+1, "a "+kind+" token must not start with a number")
		}
	}
	if len(name) > maxLen {
		return nameErr(kind, name, maxLen-1, fmt.Sprintf("%s must not exceed %d characters", kind, maxLen))
	}
	return nil
}

// ValidateTopicName checks a topic name before expansion as
// rcl_validate_topic_name does: relative ("in"), private ("~/status"),
// absolute ("/imu/data") and with substitutions ("{node}/out") are allowed.
func ValidateTopicName(name string) error {
	const kind = "topic name"
	switch {
	case name == "":
		return nameErr(kind, name, 0, "topic name must not be empty")
	case isDigit(name[0]):
		return nameErr(kind, name, 0, "topic name must not start with a number")
	case name[len(name)-1] == '/':
		return nameErr(kind, name, len(name)-1, "topic name must not end with a forward slash")
	}
	inBrace, open := false, 0
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case isAlnum(c):
			if isDigit(c) && inBrace && i == open+1 {
				return nameErr(kind, name, i, "substitution name must not start with a number")
			}
		case c == '_':
		case c == '/':
			if inBrace {
				return nameErr(kind, name, i, "substitution contains characters other than alphanumerics or '_'")
			}
		case c == '~':
			if i != 0 {
				return nameErr(kind, name, i, "'~' must be the first character")
			}
		case c == '{':
			if inBrace {
				return nameErr(kind, name, i, "substitution contains characters other than alphanumerics or '_'")
			}
			inBrace, open = true, i
		case c == '}':
			if !inBrace {
				return nameErr(kind, name, i, "unmatched curly brace")
			}
			inBrace = false
		default:
			if inBrace {
				return nameErr(kind, name, i, "substitution contains characters other than alphanumerics or '_'")
			}
			return nameErr(kind, name, i, "topic name must not contain characters other than alphanumerics, '_', '~', '{', or '}'")
		}
	}
	if inBrace {
		return nameErr(kind, name, open, "unmatched curly brace")
	}
	for i := 0; i+1 < len(name); i++ {
		if name[i] == '/' && isDigit(name[i+1]) {
			return nameErr(kind, name, i+1, "a topic name token must not start with a number")
		}
		if i == 1 && name[0] == '~' && name[1] != '/' {
			return nameErr(kind, name, 1, "'~' must be followed by '/'")
		}
	}
	return nil
}

// ExpandTopicName turns a topic name into a fully qualified one for a node,
// as rcl_expand_topic_name does: "~" stands for the node's namespace and
// name, {node}, {ns} and {namespace} are substituted, and relative names
// are put in the node's namespace. The input, node name and namespace are
// validated; the result is not (see [ValidateFullTopicName]).
func ExpandTopicName(name, node, namespace string) (string, error) {
	if err := ValidateTopicName(name); err != nil {
		return "", err
	}
	if err := ValidateNodeName(node); err != nil {
		return "", err
	}
	if err := ValidateNamespace(namespace); err != nil {
		return "", err
	}
	if name[0] == '/' && !strings.Contains(name, "{") {
		return name, nil
	}
	out := name
	if name[0] == '~' {
		out = joinNS(namespace, node) + name[1:]
	}
	for {
		i := strings.IndexByte(out, '{')
		if i < 0 {
			break
		}
		j := strings.IndexByte(out[i:], '}') + i
		var repl string
		switch out[i : j+1] {
		case "{node}":
			repl = node
		case "{ns}", "{namespace}":
			repl = namespace
		default:
			return "", fmt.Errorf("%w: topic name %q: unknown substitution: %s", ErrInvalidName, name, out[i:j+1])
		}
		out = strings.ReplaceAll(out, out[i:j+1], repl)
	}
	if out[0] != '/' {
		out = joinNS(namespace, out)
	}
	return out, nil
}

func joinNS(ns, rest string) string {
	if ns == "/" {
		return "/" + rest
	}
	return ns + "/" + rest
}

// FQN returns a node's fully qualified name: "/ns/node", or "/node" in the
// root namespace.
func FQN(namespace, node string) string { return joinNS(namespace, node) }

// NodeName is a node's name and namespace after remapping, with the remap
// rules that apply to its topics and services.
type NodeName struct {
	Name      string
	Namespace string
	rules     []Remap
}

// NewNodeName applies the node-name (__node/__name) and namespace (__ns)
// rules of rules to a node created as name in namespace (rclcpp's default
// namespace "" is "/"), and validates the result. As in rcl, a rule with a
// node prefix applies only if the prefix equals the original node name, and
// the first matching rule wins.
func NewNodeName(name, namespace string, rules []Remap) (NodeName, error) {
	if namespace == "" {
		namespace = "/"
	} else if namespace[0] != '/' {
		namespace = "/" + namespace
	}
	n := NodeName{Name: name, Namespace: namespace, rules: rules}
	if r, ok := firstRule(rules, RemapNodeName, name); ok {
		n.Name = r.Replacement
	}
	if r, ok := firstRule(rules, RemapNamespace, name); ok {
		n.Namespace = r.Replacement
	}
	if err := ValidateNodeName(n.Name); err != nil {
		return NodeName{}, err
	}
	if err := ValidateNamespace(n.Namespace); err != nil {
		return NodeName{}, err
	}
	return n, nil
}

func firstRule(rules []Remap, kind RemapKind, node string) (Remap, bool) {
	for _, r := range rules {
		if r.Kind == kind && (r.Node == "" || r.Node == node) {
			return r, true
		}
	}
	return Remap{}, false
}

// FQN returns the node's fully qualified name.
func (n NodeName) FQN() string { return FQN(n.Namespace, n.Name) }

// Topic resolves a topic name the node uses, as rcl_node_resolve_name:
// expand it (relative names into the namespace, "~/x" to "/ns/node/x"),
// apply the first remap rule whose match, expanded the same way, equals it
// (topic rules and rules without a rostopic:// or rosservice:// prefix;
// node-prefixed rules only for this node), and validate the result.
func (n NodeName) Topic(name string) (string, error) { return n.resolve(name, RemapTopic) }

// Service resolves a service name like Topic, with service rules.
func (n NodeName) Service(name string) (string, error) { return n.resolve(name, RemapService) }

func (n NodeName) resolve(name string, kind RemapKind) (string, error) {
	exp, err := ExpandTopicName(name, n.Name, n.Namespace)
	if err != nil {
		return "", err
	}
	out := exp
	for _, r := range n.rules {
		if r.Kind != kind && r.Kind != RemapName {
			continue
		}
		if r.Node != "" && r.Node != n.Name {
			continue
		}
		m, err := ExpandTopicName(r.Match, n.Name, n.Namespace)
		if err != nil || m != exp {
			continue
		}
		if out, err = ExpandTopicName(r.Replacement, n.Name, n.Namespace); err != nil {
			return "", err
		}
		break
	}
	if err := ValidateFullTopicName(out); err != nil {
		return "", err
	}
	return out, nil
}

// RemapKind says what a remap rule renames.
type RemapKind uint8

const (
	// RemapName renames topics and services ("from:=to").
	RemapName RemapKind = iota
	// RemapTopic renames topics only ("rostopic://from:=to").
	RemapTopic
	// RemapService renames services only ("rosservice://from:=to").
	RemapService
	// RemapNodeName renames the node ("__node:=name" or "__name:=name").
	RemapNodeName
	// RemapNamespace moves the node ("__ns:=/ns").
	RemapNamespace
)

// Remap is one -r/--remap rule of the command line.
type Remap struct {
	// Node, if not empty, limits the rule to the node of that name
	// ("node:from:=to").
	Node string
	Kind RemapKind
	// Match is the name to replace (topic and service rules).
	Match string
	// Replacement is the new name, node name or namespace.
	Replacement string
}

// String formats a rule as it is written on the command line.
func (r Remap) String() string {
	var sb strings.Builder
	if r.Node != "" {
		sb.WriteString(r.Node + ":")
	}
	switch r.Kind {
	case RemapNodeName:
		return sb.String() + "__node:=" + r.Replacement
	case RemapNamespace:
		return sb.String() + "__ns:=" + r.Replacement
	case RemapTopic:
		sb.WriteString("rostopic://")
	case RemapService:
		sb.WriteString("rosservice://")
	}
	return sb.String() + r.Match + ":=" + r.Replacement
}
