package params

import (
	"fmt"
	"math"
	"strconv"
)

// Descriptor describes a parameter as rcl_interfaces/msg/ParameterDescriptor.
type Descriptor struct {
	// Name is the parameter's name; Declare fills it in.
	Name string
	// Type is the parameter's type. Declare takes it from the default value
	// when it is NotSet and the parameter is statically typed; with
	// DynamicTyping it is the type of the current value.
	Type Type
	// Description is shown by `ros2 param describe`.
	Description string
	// AdditionalConstraints is a plain-English note on constraints the
	// ranges cannot express ("must exceed period_sec").
	AdditionalConstraints string
	// ReadOnly parameters take their value at declaration (default or
	// override) and reject every later set.
	ReadOnly bool
	// DynamicTyping lets the parameter change type on set.
	DynamicTyping bool
	// FloatRange, if not nil, constrains a DOUBLE parameter.
	FloatRange *FloatRange
	// IntRange, if not nil, constrains an INTEGER parameter.
	IntRange *IntRange
}

// FloatRange is rcl_interfaces/msg/FloatingPointRange: valid values are
// From, To, and From + k·|Step| in between (a zero Step allows every value in
// [From, To]). Comparisons use rclcpp's tolerance of 100 ULP relative to the
// values compared, so 0.1 + 0.2 is on a step of 0.1.
type FloatRange struct{ From, To, Step float64 }

// IntRange is rcl_interfaces/msg/IntegerRange: valid values are From, To, and
// From + k·Step in between (a zero Step allows every value in [From, To]).
type IntRange struct {
	From, To int64
	Step     uint64
}

// Floats returns a FloatRange for a Descriptor: Floats(0, 10, 0).
func Floats(from, to, step float64) *FloatRange { return &FloatRange{from, to, step} }

// Ints returns an IntRange for a Descriptor: Ints(1, 1000, 1).
func Ints(from, to int64, step uint64) *IntRange { return &IntRange{from, to, step} }

// DescriptorMsg mirrors rcl_interfaces/msg/ParameterDescriptor field for
// field (the ranges are the message's bounded sequences of at most one).
type DescriptorMsg struct {
	Name                  string
	Type                  uint8
	Description           string
	AdditionalConstraints string
	ReadOnly              bool
	DynamicTyping         bool
	FloatingPointRange    []FloatRange
	IntegerRange          []IntRange
}

// Msg returns the descriptor as a ParameterDescriptor message.
func (d Descriptor) Msg() DescriptorMsg {
	m := DescriptorMsg{Name: d.Name, Type: uint8(d.Type), Description: d.Description,
		AdditionalConstraints: d.AdditionalConstraints, ReadOnly: d.ReadOnly, DynamicTyping: d.DynamicTyping}
	if d.FloatRange != nil {
		m.FloatingPointRange = []FloatRange{*d.FloatRange}
	}
	if d.IntRange != nil {
		m.IntegerRange = []IntRange{*d.IntRange}
	}
	return m
}

// validate checks the descriptor itself (a programming error if it fails).
func (d Descriptor) validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: parameter %q: %s", ErrInvalidDescriptor, d.Name, fmt.Sprintf(format, args...))
	}
	if !d.Type.Valid() {
		return bad("unknown type %d", d.Type)
	}
	if d.FloatRange != nil && d.IntRange != nil {
		return bad("floating point and integer ranges are mutually exclusive")
	}
	if r := d.FloatRange; r != nil {
		if !d.DynamicTyping && d.Type != Double {
			return bad("floating point range on a %s parameter", d.Type)
		}
		if math.IsNaN(r.From) || math.IsNaN(r.To) || math.IsNaN(r.Step) || math.IsInf(r.Step, 0) {
			return bad("range bounds and step must be numbers")
		}
		if r.From > r.To {
			return bad("range from %g exceeds to %g", r.From, r.To)
		}
	}
	if r := d.IntRange; r != nil {
		if !d.DynamicTyping && d.Type != Integer {
			return bad("integer range on a %s parameter", d.Type)
		}
		if r.From > r.To {
			return bad("range from %d exceeds to %d", r.From, r.To)
		}
	}
	return nil
}

// checkType is rclcpp's type check: a statically typed parameter keeps its
// type.
func (d Descriptor) checkType(name string, v Value) error {
	if d.DynamicTyping || d.Type == v.Type() {
		return nil
	}
	reason := fmt.Sprintf("Wrong parameter type, parameter {%s} is of type {%s}, setting it to {%s} is not allowed.",
		name, d.Type, v.Type())
	if d.Type == Double && v.Type() == Integer {
		reason += " (Write " + strconv.FormatInt(v.Int(), 10) + ".0 for a double.)"
	}
	return paramErr(name, ErrWrongType, reason)
}

// checkRange is rclcpp's range check (__check_parameter_value_in_range),
// with two deliberate differences: a NaN never satisfies a floating point
// range (rclcpp lets NaN through a range without a step), and the reason
// goes on to say the value and the range after rclcpp's words
// ("Parameter {rate} doesn't comply with integer range: 101 is not in
// [1, 100].").
func (d Descriptor) checkRange(name string, v Value) error {
	if r := d.IntRange; r != nil && v.Type() == Integer {
		if !r.Contains(v.Int()) {
			return paramErr(name, ErrOutOfRange, fmt.Sprintf("Parameter {%s} doesn't comply with integer range: %d is not in %s.", name, v.Int(), r))
		}
	}
	if r := d.FloatRange; r != nil && v.Type() == Double {
		if !r.Contains(v.Double()) {
			return paramErr(name, ErrOutOfRange, fmt.Sprintf("Parameter {%s} doesn't comply with floating point range: %s is not in %s.", name, formatDouble(v.Double()), r))
		}
	}
	return nil
}

// check runs the type and range checks.
func (d Descriptor) check(name string, v Value) error {
	if err := d.checkType(name, v); err != nil {
		return err
	}
	return d.checkRange(name, v)
}

// String writes the range as its reasons do: "[1, 100]", "[0, 100] in
// steps of 5".
func (r IntRange) String() string {
	s := fmt.Sprintf("[%d, %d]", r.From, r.To)
	if r.Step > 1 {
		s += fmt.Sprintf(" in steps of %d", r.Step)
	}
	return s
}

// String writes the range as its reasons do: "[0.001, 3600.0]", "[0.0,
// 1.0] in steps of 0.5".
func (r FloatRange) String() string {
	s := "[" + formatDouble(r.From) + ", " + formatDouble(r.To) + "]"
	if r.Step != 0 {
		s += " in steps of " + formatDouble(math.Abs(r.Step))
	}
	return s
}

// Contains reports whether v is a valid value of the range (rclcpp's step
// semantics: the bounds are always valid, then From + k·Step).
func (r IntRange) Contains(v int64) bool {
	if v == r.From || v == r.To {
		return true
	}
	if v < r.From || v > r.To {
		return false
	}
	if r.Step == 0 {
		return true
	}
	return (uint64(v)-uint64(r.From))%r.Step == 0 // v > From: the unsigned difference is exact
}

// Contains reports whether v is a valid value of the range (rclcpp's step
// semantics and its 100-ULP tolerance; NaN is never valid).
func (r FloatRange) Contains(v float64) bool {
	if math.IsNaN(v) {
		return false
	}
	if nearlyEqual(v, r.From) || nearlyEqual(v, r.To) {
		return true
	}
	if v < r.From || v > r.To {
		return false
	}
	step := math.Abs(r.Step)
	if step == 0 {
		return true
	}
	k := math.Round((v - r.From) / step)
	return nearlyEqual(v, r.From+k*step)
}

// nearlyEqual is rclcpp's __are_doubles_equal with ulp = 100.
func nearlyEqual(x, y float64) bool {
	return math.Abs(x-y) <= epsilon*math.Abs(x+y)*100
}

const epsilon = 2.220446049250313e-16 // std::numeric_limits<double>::epsilon()
