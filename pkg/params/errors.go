package params

import (
	"errors"

	"github.com/timealign/timealign/pkg/rosname"
)

// Sentinel errors. Errors returned by this package wrap one of them (test
// with errors.Is); the rejection reasons sent back to ROS tools are the
// errors' messages, worded as rclcpp words them.
var (
	// ErrNotDeclared: the parameter has not been declared (and the server
	// does not allow undeclared parameters).
	ErrNotDeclared = errors.New("parameter not declared")
	// ErrAlreadyDeclared: Declare of a name that is already declared.
	ErrAlreadyDeclared = errors.New("parameter already declared")
	// ErrReadOnly: a set of a read-only parameter.
	ErrReadOnly = errors.New("parameter is read-only")
	// ErrWrongType: a value whose type differs from a statically typed
	// parameter's type.
	ErrWrongType = errors.New("wrong parameter type")
	// ErrOutOfRange: a value outside the descriptor's range or off its step.
	ErrOutOfRange = errors.New("parameter out of range")
	// ErrRejected: a validator (e.g. the node's Config.Validate) rejected
	// the change.
	ErrRejected = errors.New("parameter change rejected")
	// ErrInvalidName: an empty parameter name, or a malformed node name
	// pattern in a parameter file (the sentinel of package rosname).
	ErrInvalidName = rosname.ErrInvalidName
	// ErrInvalidValue: a value that cannot be represented (unknown type
	// code, NaN where a number is needed, a duration out of range, an
	// unknown enumeration name).
	ErrInvalidValue = errors.New("invalid parameter value")
	// ErrInvalidDescriptor: a descriptor that contradicts itself (both
	// ranges, a range for a non-numeric type, from > to, NaN bounds).
	ErrInvalidDescriptor = errors.New("invalid parameter descriptor")
	// ErrStaticUndeclare: an attempt to unset (undeclare) a statically
	// typed parameter.
	ErrStaticUndeclare = errors.New("cannot undeclare a statically typed parameter")
	// ErrSyntax: a malformed YAML parameter file or parameter value.
	ErrSyntax = errors.New("syntax error")
)

// ParamError is a rejected parameter operation: which parameter, and the
// reason in rclcpp's words (Error returns Reason). It unwraps to one of the
// sentinels above.
type ParamError struct {
	Name   string
	Reason string
	Err    error
}

func (e *ParamError) Error() string { return e.Reason }
func (e *ParamError) Unwrap() error { return e.Err }

func paramErr(name string, err error, reason string) *ParamError {
	return &ParamError{Name: name, Reason: reason, Err: err}
}
