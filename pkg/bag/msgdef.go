package bag

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/timealign/timealign/pkg/msgdef"
)

// DefSource says where a type's definition came from.
type DefSource string

// Definition sources, in the order Definitions tries them.
const (
	// FromSchema: the MCAP file's schema for the topic (ros2msg or ros2idl).
	FromSchema DefSource = "schema"
	// FromInstalled: the .msg file of a sourced ROS 2 install
	// (AMENT_PREFIX_PATH).
	FromInstalled DefSource = "installed"
	// FromBuiltin: timealign's table of the standard message types.
	FromBuiltin DefSource = "builtin"
	// Unknown: no definition was found; the messages are passed through.
	Unknown DefSource = "unknown"
)

// Definition is what timealign knows about a message type.
type Definition struct {
	Type string
	// HeaderFirst reports that the type's first field is a
	// std_msgs/Header: its messages' header.stamp can be read and
	// rewritten.
	HeaderFirst bool
	Source      DefSource
	// Schema is the full ros2msg definition (with its dependencies) for
	// writing MCAP, or nil when none is known.
	Schema *Schema
	// Err says why a definition was found but could not be parsed.
	Err error
	// NoHeader names a schema encoding whose messages cannot carry a ROS
	// std_msgs/Header ("JSON schema", "Protobuf schema", ...); HeaderFirst
	// is then false and Err nil.
	NoHeader string
}

// foreignSchemas names the MCAP schema encodings of serializations that
// are not ROS's CDR: their messages carry no ROS Header.
var foreignSchemas = map[string]string{
	"jsonschema": "JSON schema",
	"protobuf":   "Protobuf schema",
	"flatbuffer": "FlatBuffers schema",
}

// Definitions looks up message types: from a topic's MCAP schema, else
// the installed .msg files, else the built-in table. It caches answers;
// it is not safe for concurrent use.
type Definitions struct {
	// AmentPrefixPath lists the install prefixes to search for
	// share/<pkg>/msg/<Type>.msg (AMENT_PREFIX_PATH split at ':'); empty
	// when ROS 2 is not sourced.
	AmentPrefixPath []string
	// ReadFile reads a file (os.ReadFile); nil disables the installed
	// definitions.
	ReadFile func(string) ([]byte, error)
	cache    map[string]*Definition
}

// Lookup returns the definition of t's type.
func (d *Definitions) Lookup(t *Topic) *Definition {
	if t.Schema != nil && t.Schema.Encoding != "" && len(t.Schema.Data) > 0 {
		def := &Definition{Type: t.Type, Source: FromSchema, Schema: t.Schema}
		if name, ok := foreignSchemas[t.Schema.Encoding]; ok {
			def.NoHeader = name
			return def
		}
		hf, err := schemaHeaderFirst(t.Type, t.Schema)
		def.HeaderFirst, def.Err = hf, err
		return def
	}
	return d.LookupType(t.Type)
}

// LookupType returns the definition of a type by name, from the installed
// .msg files or the built-in table.
func (d *Definitions) LookupType(typ string) *Definition {
	if def, ok := d.cache[typ]; ok {
		return def
	}
	if d.cache == nil {
		d.cache = map[string]*Definition{}
	}
	def := &Definition{Type: typ, Source: Unknown}
	if text, err := fullText(typ, d.installed); err == nil {
		def.Source, def.Schema = FromInstalled, &Schema{Name: typ, Encoding: "ros2msg", Data: []byte(text)}
	} else if text, err := fullText(typ, builtinMsg); err == nil {
		def.Source, def.Schema = FromBuiltin, &Schema{Name: typ, Encoding: "ros2msg", Data: []byte(text)}
	}
	if def.Schema != nil {
		def.HeaderFirst, def.Err = msgHeaderFirst(string(def.Schema.Data))
	}
	d.cache[typ] = def
	return def
}

// installed reads pkg/Name's .msg file from the first prefix that has it.
func (d *Definitions) installed(pkg, name string) (string, bool) {
	if d.ReadFile == nil {
		return "", false
	}
	for f := range msgdef.Files(d.AmentPrefixPath, pkg, name) {
		b, err := d.ReadFile(f)
		if err == nil {
			return string(b), true
		}
	}
	return "", false
}

func builtinMsg(pkg, name string) (string, bool) {
	s, ok := builtinDefs[pkg+"/"+name]
	return s, ok
}

// msgSeparator separates the dependencies of a ros2msg schema.
const msgSeparator = "================================================================================"

var primitives = map[string]bool{
	"bool": true, "byte": true, "char": true, "float32": true, "float64": true, "int8": true, "uint8": true,
	"int16": true, "uint16": true, "int32": true, "uint32": true, "int64": true, "uint64": true,
	"string": true, "wstring": true, "time": true, "duration": true,
}

// baseType strips array and bound suffixes: "float64[9]" -> "float64",
// "string<=10" -> "string".
func baseType(t string) string {
	if i := strings.IndexByte(t, '['); i >= 0 {
		t = t[:i]
	}
	if i := strings.Index(t, "<="); i >= 0 {
		t = t[:i]
	}
	return t
}

// fullText returns typ's .msg text followed by its dependencies, as
// rosbag2 writes ros2msg schemas; get returns a package's type's text.
func fullText(typ string, get func(pkg, name string) (string, bool)) (string, error) {
	pkg, name, ok := msgdef.SplitType(typ)
	if !ok {
		return "", fmt.Errorf("%w: type %q is not pkg/msg/Name", ErrFormat, typ)
	}
	main, ok := get(pkg, name)
	if !ok {
		return "", fmt.Errorf("%w: no definition of %s", ErrFormat, typ)
	}
	var b strings.Builder
	b.WriteString(main)
	seen := map[string]bool{pkg + "/" + name: true}
	var walk func(pkg, text string) error
	walk = func(pkg, text string) error {
		for _, f := range msgdef.Fields(text) {
			bt := baseType(f.Type)
			if primitives[bt] {
				continue
			}
			dp, dn, ok := msgdef.SplitType(bt)
			if !ok {
				dp, dn = pkg, bt
				if bt == "Header" {
					dp = "std_msgs"
				}
			}
			key := dp + "/" + dn
			if seen[key] {
				continue
			}
			seen[key] = true
			dt, ok := get(dp, dn)
			if !ok {
				return fmt.Errorf("%w: no definition of %s (a field of %s)", ErrFormat, key, typ)
			}
			if !strings.HasSuffix(b.String(), "\n") {
				b.WriteByte('\n')
			}
			fmt.Fprintf(&b, "%s\nMSG: %s\n%s", msgSeparator, key, dt)
			if err := walk(dp, dt); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(pkg, main); err != nil {
		return "", err
	}
	return b.String(), nil
}

// msgHeaderFirst reports whether the first field of a ros2msg text's main
// definition (before the first separator) is a std_msgs/Header.
func msgHeaderFirst(text string) (bool, error) {
	if i := strings.Index(text, "\n"+msgSeparator); i >= 0 {
		text = text[:i]
	} else if strings.HasPrefix(text, msgSeparator) {
		text = ""
	}
	_, ok := msgdef.HeaderFirst(text)
	return ok, nil
}

var (
	idlComment    = regexp.MustCompile(`(?s)//[^\n]*|/\*.*?\*/`)
	idlAnnotation = regexp.MustCompile(`@[A-Za-z_][A-Za-z0-9_:]*\s*(\((?:[^()"]|"(?:[^"\\]|\\.)*")*\))?`)
	idlStruct     = regexp.MustCompile(`\bstruct\s+([A-Za-z_][A-Za-z0-9_]*)\s*\{([^}]*)\}`)
)

// idlHeaderFirst reports whether struct name of an IDL text has a
// std_msgs::msg::Header as its first member.
func idlHeaderFirst(name, text string) (bool, error) {
	text = idlComment.ReplaceAllString(text, " ")
	text = idlAnnotation.ReplaceAllString(text, " ")
	for _, m := range idlStruct.FindAllStringSubmatch(text, -1) {
		if m[1] != name {
			continue
		}
		body := strings.TrimSpace(m[2])
		first, _, _ := strings.Cut(body, ";")
		f := strings.Fields(first)
		if len(f) < 2 {
			return false, nil
		}
		typ := strings.TrimPrefix(strings.Join(f[:len(f)-1], ""), "::")
		return typ == "std_msgs::msg::Header", nil
	}
	return false, fmt.Errorf("%w: the IDL schema has no struct %s", ErrFormat, name)
}

// schemaHeaderFirst decides from an MCAP schema.
func schemaHeaderFirst(typ string, s *Schema) (bool, error) {
	switch s.Encoding {
	case "ros2msg", "ros1msg":
		return msgHeaderFirst(string(s.Data))
	case "ros2idl":
		_, name, ok := msgdef.SplitType(typ)
		if !ok {
			name = typ
		}
		return idlHeaderFirst(name, string(s.Data))
	}
	return false, fmt.Errorf("%w: schema encoding %q of %s", ErrUnsupported, s.Encoding, typ)
}
