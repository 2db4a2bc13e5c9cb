package params

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/timealign/timealign/pkg/rosname"
)

// File is a parsed YAML parameter file: the blocks of parameters it gives,
// in file order.
type File struct {
	// Name is the file name given to ParseFile, used in messages.
	Name string
	// Nodes are the ros__parameters blocks in the order they appear.
	Nodes []NodeParams
}

// NodeParams are the parameters of one ros__parameters block.
type NodeParams struct {
	// Pattern is the node name the block applies to, with a leading '/':
	// "/ns/node", "/node", or with wildcards "/**", "/*", "/**/node",
	// "/ns/*". '*' stands for one name token, '**' for any number.
	Pattern string
	// Line is the line of the ros__parameters key.
	Line int
	// Params are the block's parameters, nested names joined with '.'.
	Params []Entry
}

// Entry is one parameter value of a file.
type Entry struct {
	Name  string
	Value Value
	Line  int
}

// SyntaxError is a malformed parameter file or value: where, and what.
// It unwraps to ErrSyntax.
type SyntaxError struct {
	File  string // "" for a -p value
	Line  int    // 0 when unknown
	Param string // the parameter, when known
	Msg   string
}

func (e *SyntaxError) Error() string {
	var sb strings.Builder
	if e.File != "" {
		sb.WriteString(e.File)
		if e.Line > 0 {
			sb.WriteString(":" + strconv.Itoa(e.Line))
		}
		sb.WriteString(": ")
	} else if e.Line > 0 {
		sb.WriteString("line " + strconv.Itoa(e.Line) + ": ")
	}
	if e.Param != "" {
		sb.WriteString("parameter " + strconv.Quote(e.Param) + ": ")
	}
	sb.WriteString(e.Msg)
	return sb.String()
}

func (e *SyntaxError) Unwrap() error { return ErrSyntax }

// ParseFile parses a YAML parameter file with the rules of ROS 2's
// rcl_yaml_param_parser:
//
//   - the top level maps node names to maps that contain the key
//     ros__parameters; node names may be split over nested keys
//     ("/ns: {node: {ros__parameters: ...}}" is "/ns/node") and use the
//     wildcards "/**" and "/*" ("/**/node", "/*");
//   - under ros__parameters, nested maps flatten into names joined with '.';
//   - unquoted scalars are typed as rcl types them ([ParseValue]); quoted
//     ones are strings; a sequence is an array whose elements all have the
//     same type (a mixed array is an error, and so is an empty one, whose
//     type cannot be inferred);
//   - aliases, values before ros__parameters, empty values and nested
//     sequences are errors.
//
// Errors are *SyntaxError naming the file, the line and the parameter.
// Several documents in one file are read in order.
func ParseFile(name string, data []byte) (*File, error) {
	f := &File{Name: name}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var doc yaml.Node
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			return f, nil
		}
		if err != nil {
			line, msg := yamlErrLine(err)
			return nil, &SyntaxError{File: name, Line: line, Msg: msg}
		}
		if len(doc.Content) == 0 {
			continue
		}
		top := doc.Content[0]
		if top.Kind == yaml.ScalarNode && top.Tag == "!!null" {
			continue // an empty document
		}
		p := fileParser{f: f}
		if err := p.nodes(top, nil); err != nil {
			return nil, err
		}
	}
}

// yamlErrLine splits a yaml.v3 error ("yaml: line 3: msg") into its line
// and message.
func yamlErrLine(err error) (int, string) {
	s := strings.TrimPrefix(err.Error(), "yaml: ")
	if rest, ok := strings.CutPrefix(s, "line "); ok {
		k := 0
		for k < len(rest) && isDigit(rest[k]) {
			k++
		}
		if n, e := strconv.Atoi(rest[:k]); e == nil && strings.HasPrefix(rest[k:], ": ") {
			return n, rest[k+2:]
		}
	}
	return 0, s
}

type fileParser struct {
	f *File
}

func (p *fileParser) errf(n *yaml.Node, param, format string, args ...any) error {
	return &SyntaxError{File: p.f.Name, Line: n.Line, Param: param, Msg: fmt.Sprintf(format, args...)}
}

const paramsKey = "ros__parameters"

// nodes walks the node-name levels above ros__parameters.
func (p *fileParser) nodes(m *yaml.Node, ns []string) error {
	if m.Kind == yaml.AliasNode {
		return p.errf(m, "", "aliases are not supported")
	}
	if m.Kind != yaml.MappingNode {
		if len(ns) == 0 {
			return p.errf(m, "", "the top level must map node names to their parameters")
		}
		if m.Kind == yaml.SequenceNode {
			return p.errf(m, "", "sequences can only be values and not keys in params (under %q)", strings.Join(ns, "/"))
		}
		return p.errf(m, "", "cannot have a value before %s (under %q)", paramsKey, strings.Join(ns, "/"))
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			return p.errf(k, "", "node name keys must be plain strings")
		}
		if k.Value == "" {
			return p.errf(k, "", "no key")
		}
		if !strings.HasPrefix(k.Value, paramsKey) {
			if err := p.nodes(v, append(ns, k.Value)); err != nil {
				return err
			}
			continue
		}
		if len(ns) == 0 {
			return p.errf(k, "", "there are no node names before %s", paramsKey)
		}
		name := strings.Join(ns, "/")
		if err := validateNodePattern(name); err != nil {
			return p.errf(k, "", "node name %q: %v", name, err)
		}
		if !strings.HasPrefix(name, "/") {
			name = "/" + name
		}
		if v.Kind != yaml.MappingNode {
			return p.errf(v, "", "%s of %q must be a map of parameters", paramsKey, name)
		}
		np := NodeParams{Pattern: name, Line: k.Line}
		if err := p.params(v, "", &np); err != nil {
			return err
		}
		p.f.Nodes = append(p.f.Nodes, np)
	}
	return nil
}

// params walks a ros__parameters map, flattening nested maps with '.'.
func (p *fileParser) params(m *yaml.Node, prefix string, np *NodeParams) error {
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			return p.errf(k, prefix, "parameter keys must be plain strings")
		}
		if k.Value == "" {
			return p.errf(k, prefix, "no key")
		}
		name := k.Value
		if prefix != "" {
			name = prefix + "." + k.Value
		}
		switch v.Kind {
		case yaml.MappingNode:
			if len(v.Content) == 0 {
				return p.errf(v, name, "empty map: no value")
			}
			if err := p.params(v, name, np); err != nil {
				return err
			}
			continue
		case yaml.AliasNode:
			return p.errf(v, name, "aliases are not supported")
		}
		val, err := yamlValue(v)
		if err != nil {
			var se *SyntaxError
			if errors.As(err, &se) {
				se.File, se.Param = p.f.Name, name
			}
			return err
		}
		np.Params = append(np.Params, Entry{Name: name, Value: val, Line: k.Line})
	}
	return nil
}

// yamlValue types a scalar or a sequence of scalars.
func yamlValue(v *yaml.Node) (Value, error) {
	bad := func(n *yaml.Node, format string, args ...any) error {
		return &SyntaxError{Line: n.Line, Msg: fmt.Sprintf(format, args...)}
	}
	switch v.Kind {
	case yaml.ScalarNode:
		return scalarValue(v, bad)
	case yaml.SequenceNode:
		if len(v.Content) == 0 {
			return Value{}, bad(v, "empty array: its type cannot be inferred")
		}
		vals := make([]Value, len(v.Content))
		for i, e := range v.Content {
			if e.Kind != yaml.ScalarNode {
				return Value{}, bad(e, "array elements must be scalars")
			}
			x, err := scalarValue(e, bad)
			if err != nil {
				return Value{}, err
			}
			if i > 0 && x.Type() != vals[0].Type() {
				return Value{}, bad(e, "arrays must have elements of one type: %s %q among %ss", x.Type(), e.Value, vals[0].Type())
			}
			vals[i] = x
		}
		return arrayValue(vals), nil
	case yaml.AliasNode:
		return Value{}, bad(v, "aliases are not supported")
	}
	return Value{}, bad(v, "a map is not a parameter value")
}

func scalarValue(n *yaml.Node, bad func(*yaml.Node, string, ...any) error) (Value, error) {
	if n.Style&(yaml.SingleQuotedStyle|yaml.DoubleQuotedStyle) != 0 {
		return StringValue(n.Value), nil
	}
	if n.Value == "" {
		return Value{}, bad(n, "no value")
	}
	return inferScalar(n.Value), nil
}

func arrayValue(vals []Value) Value {
	switch vals[0].Type() {
	case Bool:
		a := make([]bool, len(vals))
		for i, v := range vals {
			a[i] = v.b
		}
		return Value{typ: BoolArray, arr: a}
	case Integer:
		a := make([]int64, len(vals))
		for i, v := range vals {
			a[i] = v.i
		}
		return Value{typ: IntegerArray, arr: a}
	case Double:
		a := make([]float64, len(vals))
		for i, v := range vals {
			a[i] = v.d
		}
		return Value{typ: DoubleArray, arr: a}
	default:
		a := make([]string, len(vals))
		for i, v := range vals {
			a[i] = v.s
		}
		return Value{typ: StringArray, arr: a}
	}
}

// ParseValue parses a parameter value written in YAML, as rcl parses the
// value of `-p name:=value` and as `ros2 param set` users write them:
// "true", "42", "0x1f", "0.5", "1e-3", ".inf", "'quoted string'", "text",
// "[1, 2, 3]", "[a, b]". Unquoted scalars are typed as in parameter files
// (see [ParseFile]); an empty value, a map, or a mixed array is an error
// wrapping ErrSyntax.
func ParseValue(s string) (Value, error) {
	if s == "" {
		return Value{}, &SyntaxError{Msg: "empty value"}
	}
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(s), &doc); err != nil {
		return Value{}, &SyntaxError{Msg: fmt.Sprintf("value %q: %s", s, strings.TrimPrefix(err.Error(), "yaml: "))}
	}
	if len(doc.Content) == 0 {
		return Value{}, &SyntaxError{Msg: fmt.Sprintf("value %q: no value", s)}
	}
	return yamlValue(doc.Content[0])
}

// validateNodePattern applies rcl's checks to a node name key: "/**" and
// "/*" alone, or a namespace of valid tokens or wildcards and a node name
// that is a valid node name, '*' or '**'.
func validateNodePattern(name string) error {
	if name == "/**" || name == "/*" {
		return nil
	}
	ns, node := "", name
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		ns, node = name[:i+1], name[i+1:]
		if !strings.HasPrefix(ns, "/") {
			ns = "/" + ns
		}
	}
	if ns != "" && ns != "/" {
		segs := strings.Split(strings.TrimSuffix(ns[1:], "/"), "/")
		for _, seg := range segs {
			if seg == "" {
				return fmt.Errorf("%w: %s contains repeated forward slash", ErrInvalidName, ns)
			}
			if seg == "*" || seg == "**" {
				continue
			}
			if err := rosname.ValidateNamespace("/" + seg); err != nil {
				return err
			}
		}
	}
	if node == "*" || node == "**" {
		return nil
	}
	return rosname.ValidateNodeName(node)
}
