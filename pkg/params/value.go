package params

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Type is a parameter type with the numeric codes of
// rcl_interfaces/msg/ParameterType.
type Type uint8

// The parameter types, with their rcl_interfaces/msg/ParameterType codes.
const (
	NotSet       Type = 0 // PARAMETER_NOT_SET: no value
	Bool         Type = 1 // PARAMETER_BOOL
	Integer      Type = 2 // PARAMETER_INTEGER (int64)
	Double       Type = 3 // PARAMETER_DOUBLE (float64)
	String       Type = 4 // PARAMETER_STRING
	ByteArray    Type = 5 // PARAMETER_BYTE_ARRAY
	BoolArray    Type = 6 // PARAMETER_BOOL_ARRAY
	IntegerArray Type = 7 // PARAMETER_INTEGER_ARRAY
	DoubleArray  Type = 8 // PARAMETER_DOUBLE_ARRAY
	StringArray  Type = 9 // PARAMETER_STRING_ARRAY
)

var typeNames = [...]string{"not set", "bool", "integer", "double", "string",
	"byte_array", "bool_array", "integer_array", "double_array", "string_array"}

// String returns the name rclcpp gives the type ("not set", "bool",
// "integer", "double", "string", "byte_array", ..., "string_array"), which
// is what appears in rejection reasons and in `ros2 param describe`.
func (t Type) String() string {
	if int(t) < len(typeNames) {
		return typeNames[t]
	}
	return "unknown type"
}

// Valid reports whether t is one of the ten ParameterType codes.
func (t Type) Valid() bool { return t <= StringArray }

// Value is a parameter value: one of the types of
// rcl_interfaces/msg/ParameterValue. The zero Value is NOT_SET.
//
// Values are immutable: constructors copy slices in, accessors copy them out.
type Value struct {
	typ Type
	b   bool
	i   int64
	d   float64
	s   string
	arr any // []byte, []bool, []int64, []float64 or []string
}

// BoolValue returns a BOOL value.
func BoolValue(b bool) Value { return Value{typ: Bool, b: b} }

// IntValue returns an INTEGER value.
func IntValue(i int64) Value { return Value{typ: Integer, i: i} }

// DoubleValue returns a DOUBLE value.
func DoubleValue(d float64) Value { return Value{typ: Double, d: d} }

// StringValue returns a STRING value.
func StringValue(s string) Value { return Value{typ: String, s: s} }

// BytesValue returns a BYTE_ARRAY value holding a copy of b.
func BytesValue(b []byte) Value { return Value{typ: ByteArray, arr: clone(b)} }

// BoolsValue returns a BOOL_ARRAY value holding a copy of b.
func BoolsValue(b []bool) Value { return Value{typ: BoolArray, arr: clone(b)} }

// IntsValue returns an INTEGER_ARRAY value holding a copy of v.
func IntsValue(v []int64) Value { return Value{typ: IntegerArray, arr: clone(v)} }

// DoublesValue returns a DOUBLE_ARRAY value holding a copy of v.
func DoublesValue(v []float64) Value { return Value{typ: DoubleArray, arr: clone(v)} }

// StringsValue returns a STRING_ARRAY value holding a copy of v.
func StringsValue(v []string) Value { return Value{typ: StringArray, arr: clone(v)} }

func clone[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return slices.Clone(s)
}

// Type returns the value's type; NotSet for the zero Value.
func (v Value) Type() Type { return v.typ }

// IsSet reports whether the value has a type other than NOT_SET.
func (v Value) IsSet() bool { return v.typ != NotSet }

// Bool returns the value of a BOOL, false for other types.
func (v Value) Bool() bool { return v.typ == Bool && v.b }

// Int returns the value of an INTEGER, 0 for other types.
func (v Value) Int() int64 {
	if v.typ != Integer {
		return 0
	}
	return v.i
}

// Double returns the value of a DOUBLE, 0 for other types.
func (v Value) Double() float64 {
	if v.typ != Double {
		return 0
	}
	return v.d
}

// Str returns the value of a STRING, "" for other types. (String formats
// any value.)
func (v Value) Str() string {
	if v.typ != String {
		return ""
	}
	return v.s
}

// Bytes returns a copy of a BYTE_ARRAY, nil for other types.
func (v Value) Bytes() []byte { return arrayOf[byte](v, ByteArray) }

// Bools returns a copy of a BOOL_ARRAY, nil for other types.
func (v Value) Bools() []bool { return arrayOf[bool](v, BoolArray) }

// Ints returns a copy of an INTEGER_ARRAY, nil for other types.
func (v Value) Ints() []int64 { return arrayOf[int64](v, IntegerArray) }

// Doubles returns a copy of a DOUBLE_ARRAY, nil for other types.
func (v Value) Doubles() []float64 { return arrayOf[float64](v, DoubleArray) }

// Strings returns a copy of a STRING_ARRAY, nil for other types.
func (v Value) Strings() []string { return arrayOf[string](v, StringArray) }

func arrayOf[T any](v Value, t Type) []T {
	if v.typ != t {
		return nil
	}
	return slices.Clone(v.arr.([]T))
}

// Len returns the number of elements of an array value, 0 for scalars.
func (v Value) Len() int {
	switch a := v.arr.(type) {
	case []byte:
		return len(a)
	case []bool:
		return len(a)
	case []int64:
		return len(a)
	case []float64:
		return len(a)
	case []string:
		return len(a)
	}
	return 0
}

// Equal reports whether v and w have the same type and contents. Doubles
// compare by bits, so a NaN equals the same NaN and 0 differs from -0: the
// question answered is "would a parameter event show a change".
func (v Value) Equal(w Value) bool {
	if v.typ != w.typ {
		return false
	}
	switch v.typ {
	case NotSet:
		return true
	case Bool:
		return v.b == w.b
	case Integer:
		return v.i == w.i
	case Double:
		return math.Float64bits(v.d) == math.Float64bits(w.d)
	case String:
		return v.s == w.s
	case ByteArray:
		return slices.Equal(v.arr.([]byte), w.arr.([]byte))
	case BoolArray:
		return slices.Equal(v.arr.([]bool), w.arr.([]bool))
	case IntegerArray:
		return slices.Equal(v.arr.([]int64), w.arr.([]int64))
	case DoubleArray:
		return slices.EqualFunc(v.arr.([]float64), w.arr.([]float64), func(a, b float64) bool {
			return math.Float64bits(a) == math.Float64bits(b)
		})
	case StringArray:
		return slices.Equal(v.arr.([]string), w.arr.([]string))
	}
	return false
}

// String formats the value as a YAML flow scalar or sequence that
// [ParseValue] reads back as an equal value (for every type but
// BYTE_ARRAY, which YAML parameter files cannot express and which reads
// back as an INTEGER_ARRAY): true/false, 42, 0.5, 1.0, .inf, .nan, plain or
// double-quoted strings, [1, 2, 3]. NOT_SET formats as "not set".
func (v Value) String() string {
	var sb strings.Builder
	v.appendTo(&sb)
	return sb.String()
}

func (v Value) appendTo(sb *strings.Builder) {
	switch v.typ {
	case NotSet:
		sb.WriteString("not set")
	case Bool:
		sb.WriteString(strconv.FormatBool(v.b))
	case Integer:
		sb.WriteString(strconv.FormatInt(v.i, 10))
	case Double:
		sb.WriteString(formatDouble(v.d))
	case String:
		sb.WriteString(formatString(v.s))
	default:
		sb.WriteByte('[')
		n := v.Len()
		for k := 0; k < n; k++ {
			if k > 0 {
				sb.WriteString(", ")
			}
			switch a := v.arr.(type) {
			case []byte:
				sb.WriteString(strconv.Itoa(int(a[k])))
			case []bool:
				sb.WriteString(strconv.FormatBool(a[k]))
			case []int64:
				sb.WriteString(strconv.FormatInt(a[k], 10))
			case []float64:
				sb.WriteString(formatDouble(a[k]))
			case []string:
				sb.WriteString(formatString(a[k]))
			}
		}
		sb.WriteByte(']')
	}
}

// formatDouble writes d so that the YAML inference of rcl reads a double
// back: always with a '.', an exponent, or the YAML .inf/.nan spellings.
func formatDouble(d float64) string {
	switch {
	case math.IsNaN(d):
		return ".nan"
	case math.IsInf(d, 1):
		return ".inf"
	case math.IsInf(d, -1):
		return "-.inf"
	}
	s := strconv.FormatFloat(d, 'g', -1, 64)
	if !strings.ContainsAny(s, ".e") {
		s += ".0"
	}
	return s
}

// formatString returns s plain when rcl would read it back as the same
// string, double-quoted otherwise.
func formatString(s string) string {
	if s != "" && inferScalar(s).typ == String && plainSafe(s) {
		return s
	}
	return strconv.Quote(s)
}

// plainSafe reports whether s can be written as a plain YAML scalar inside
// a flow sequence and read back unchanged.
func plainSafe(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		ok := c == '_' || c == '/' || c == '.' || c == '-' || c == '+' ||
			('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') || ('0' <= c && c <= '9')
		if !ok {
			return false
		}
	}
	c := s[0]
	return c != '-' && c != '.' && c != '+' // "-x", ".x" may read as other YAML
}

// Parameter is a named value, as rcl_interfaces/msg/Parameter.
type Parameter struct {
	Name  string
	Value Value
}

// String formats the parameter as "name: value".
func (p Parameter) String() string { return p.Name + ": " + p.Value.String() }

// ValueMsg mirrors rcl_interfaces/msg/ParameterValue field for field, so the
// ROS adapter copies it to and from the generated message.
type ValueMsg struct {
	Type              uint8
	BoolValue         bool
	IntegerValue      int64
	DoubleValue       float64
	StringValue       string
	ByteArrayValue    []byte
	BoolArrayValue    []bool
	IntegerArrayValue []int64
	DoubleArrayValue  []float64
	StringArrayValue  []string
}

// Msg returns the value as a ParameterValue message: the field of its type
// set, the others zero.
func (v Value) Msg() ValueMsg {
	m := ValueMsg{Type: uint8(v.typ)}
	switch v.typ {
	case Bool:
		m.BoolValue = v.b
	case Integer:
		m.IntegerValue = v.i
	case Double:
		m.DoubleValue = v.d
	case String:
		m.StringValue = v.s
	case ByteArray:
		m.ByteArrayValue = v.Bytes()
	case BoolArray:
		m.BoolArrayValue = v.Bools()
	case IntegerArray:
		m.IntegerArrayValue = v.Ints()
	case DoubleArray:
		m.DoubleArrayValue = v.Doubles()
	case StringArray:
		m.StringArrayValue = v.Strings()
	}
	return m
}

// FromMsg returns the value of a ParameterValue message: the field its Type
// selects (the others are ignored, as rclcpp does). An unknown type code is
// an error wrapping [ErrInvalidValue].
func FromMsg(m ValueMsg) (Value, error) {
	switch Type(m.Type) {
	case NotSet:
		return Value{}, nil
	case Bool:
		return BoolValue(m.BoolValue), nil
	case Integer:
		return IntValue(m.IntegerValue), nil
	case Double:
		return DoubleValue(m.DoubleValue), nil
	case String:
		return StringValue(m.StringValue), nil
	case ByteArray:
		return BytesValue(m.ByteArrayValue), nil
	case BoolArray:
		return BoolsValue(m.BoolArrayValue), nil
	case IntegerArray:
		return IntsValue(m.IntegerArrayValue), nil
	case DoubleArray:
		return DoublesValue(m.DoubleArrayValue), nil
	case StringArray:
		return StringsValue(m.StringArrayValue), nil
	}
	return Value{}, fmt.Errorf("%w: unknown parameter type %d", ErrInvalidValue, m.Type)
}
