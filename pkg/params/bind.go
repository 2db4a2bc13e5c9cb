package params

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// Binder declares parameters bound to Go variables (the fields of a node's
// Config) and keeps them in sync: at declaration each variable's current
// value is the default and the override, if valid, is written into it; on
// every accepted set the new value is written into it. A set is accepted
// only if the config, with the new values written in, passes the binder's
// validate function (e.g. Config.Validate), which is how a node rejects bad
// values with the algorithm's own reason.
//
// Register every parameter, then call Declare once:
//
//	cfg := tsest.DefaultConfig()
//	b := params.NewBinder(srv, cfg.Validate)
//	b.Duration("window_sec", &cfg.Window, params.Descriptor{Description: "...", FloatRange: params.Floats(0, 60, 0)})
//	b.Int("loss_threshold", &cfg.LossThreshold, params.Descriptor{IntRange: params.Ints(1, 100, 0)})
//	if err := b.Declare(); err != nil { ... } // programming errors only
//	for _, is := range srv.Issues() { log(is) } // rejected or unknown overrides
//
// Like the Server, a Binder belongs to the node's owner goroutine: the
// variables are written from Server calls.
//
// Durations are DOUBLE parameters in seconds, named with a "_sec" suffix by
// convention (ROS has no duration parameter type; seconds are what ROS
// users write, e.g. `window_sec: 0.25`). They convert to time.Duration
// rounded to the nanosecond, which is exact for every duration of a whole
// number of nanoseconds below 2^50 ns (13 days) in both directions.
type Binder struct {
	srv      *Server
	validate func() error
	fields   []*field
	byName   map[string]*field
	checks   []func() error
	err      error
	declared bool
}

type field struct {
	name  string
	desc  Descriptor
	read  func() Value
	write func(Value) error
}

// NewBinder returns a binder declaring on srv; validate (may be nil) checks
// the bound variables as a whole.
func NewBinder(srv *Server, validate func() error) *Binder {
	return &Binder{srv: srv, validate: validate, byName: map[string]*field{}}
}

// Func binds a parameter through custom read and write functions: read
// returns the variable as a Value (its type is the parameter's type), write
// stores a value of that type or returns an error (the set's reason).
func (b *Binder) Func(name string, d Descriptor, read func() Value, write func(Value) error) {
	if b.err != nil {
		return
	}
	if b.declared {
		b.err = fmt.Errorf("%w: parameter %q bound after Declare", ErrInvalidDescriptor, name)
		return
	}
	if _, dup := b.byName[name]; dup {
		b.err = paramErr(name, ErrAlreadyDeclared, fmt.Sprintf("parameter '%s' has already been declared", name))
		return
	}
	f := &field{name: name, desc: d, read: read, write: write}
	b.fields = append(b.fields, f)
	b.byName[name] = f
}

// Check adds a check run with validate (e.g. a cross-field rule of a part
// of the config that has no Validate of its own).
func (b *Binder) Check(c func() error) { b.checks = append(b.checks, c) }

// Bool binds a BOOL parameter to *p.
func (b *Binder) Bool(name string, p *bool, d Descriptor) {
	b.Func(name, d, func() Value { return BoolValue(*p) }, func(v Value) error { *p = v.Bool(); return nil })
}

// Int64 binds an INTEGER parameter to *p.
func (b *Binder) Int64(name string, p *int64, d Descriptor) {
	b.Func(name, d, func() Value { return IntValue(*p) }, func(v Value) error { *p = v.Int(); return nil })
}

// Int binds an INTEGER parameter to *p.
func (b *Binder) Int(name string, p *int, d Descriptor) {
	b.Func(name, d, func() Value { return IntValue(int64(*p)) }, func(v Value) error {
		if int64(int(v.Int())) != v.Int() {
			return fmt.Errorf("%w: %d does not fit an int", ErrInvalidValue, v.Int())
		}
		*p = int(v.Int())
		return nil
	})
}

// Float64 binds a DOUBLE parameter to *p.
func (b *Binder) Float64(name string, p *float64, d Descriptor) {
	b.Func(name, d, func() Value { return DoubleValue(*p) }, func(v Value) error { *p = v.Double(); return nil })
}

// String binds a STRING parameter to *p.
func (b *Binder) String(name string, p *string, d Descriptor) {
	b.Func(name, d, func() Value { return StringValue(*p) }, func(v Value) error { *p = v.Str(); return nil })
}

// Enum binds a STRING parameter to *p that must be one of allowed; the
// choices are added to the descriptor's additional constraints.
func (b *Binder) Enum(name string, p *string, allowed []string, d Descriptor) {
	d.AdditionalConstraints = joinConstraint(d.AdditionalConstraints, "one of: "+strings.Join(allowed, ", "))
	b.Func(name, d, func() Value { return StringValue(*p) }, func(v Value) error {
		if !slices.Contains(allowed, v.Str()) {
			return fmt.Errorf("%w: %q is not one of %s", ErrInvalidValue, v.Str(), strings.Join(allowed, ", "))
		}
		*p = v.Str()
		return nil
	})
}

// Choice binds a STRING parameter to *p, an enumeration whose value i is
// called names[i]: the algorithm's own name table (pll.ModeNames()), so
// the parameter's choices are the names the algorithm parses and prints.
// The choices are added to the descriptor's additional constraints.
func Choice[T ~int](b *Binder, name string, p *T, names []string, d Descriptor) {
	names = slices.Clone(names)
	d.AdditionalConstraints = joinConstraint(d.AdditionalConstraints, "one of: "+strings.Join(names, ", "))
	b.Func(name, d, func() Value {
		if i := int(*p); i >= 0 && i < len(names) {
			return StringValue(names[i])
		}
		return StringValue(fmt.Sprint(int(*p)))
	}, func(v Value) error {
		i := slices.Index(names, v.Str())
		if i < 0 {
			return fmt.Errorf("%w: %q is not one of %s", ErrInvalidValue, v.Str(), strings.Join(names, ", "))
		}
		*p = T(i)
		return nil
	})
}

// Duration binds a DOUBLE parameter in seconds to *p (see the Binder doc
// for the convention). The descriptor's range is in seconds.
func (b *Binder) Duration(name string, p *time.Duration, d Descriptor) {
	b.Func(name, d, func() Value { return DoubleValue(DurationSeconds(*p)) }, func(v Value) error {
		x, err := SecondsDuration(v.Double())
		if err != nil {
			return err
		}
		*p = x
		return nil
	})
}

// Int64s binds an INTEGER_ARRAY parameter to *p.
func (b *Binder) Int64s(name string, p *[]int64, d Descriptor) {
	b.Func(name, d, func() Value { return IntsValue(*p) }, func(v Value) error { *p = v.Ints(); return nil })
}

// Float64s binds a DOUBLE_ARRAY parameter to *p.
func (b *Binder) Float64s(name string, p *[]float64, d Descriptor) {
	b.Func(name, d, func() Value { return DoublesValue(*p) }, func(v Value) error { *p = v.Doubles(); return nil })
}

// Strings binds a STRING_ARRAY parameter to *p.
func (b *Binder) Strings(name string, p *[]string, d Descriptor) {
	b.Func(name, d, func() Value { return StringsValue(*p) }, func(v Value) error { *p = v.Strings(); return nil })
}

// Durations binds a DOUBLE_ARRAY parameter in seconds to *p.
func (b *Binder) Durations(name string, p *[]time.Duration, d Descriptor) {
	b.Func(name, d, func() Value {
		s := make([]float64, len(*p))
		for i, x := range *p {
			s[i] = DurationSeconds(x)
		}
		return DoublesValue(s)
	}, func(v Value) error {
		s := v.Doubles()
		out := make([]time.Duration, len(s))
		for i, x := range s {
			var err error
			if out[i], err = SecondsDuration(x); err != nil {
				return fmt.Errorf("element %d: %w", i, err)
			}
		}
		*p = out
		return nil
	})
}

// Writable returns the current values of the bound variables whose
// parameters are not read-only, in the order bound. It needs no server: a
// node binds a scratch copy of its parameters (NewBinder(nil, nil)) to its
// core's configuration in effect, and reports the values under their
// parameter names.
func (b *Binder) Writable() []Parameter {
	var out []Parameter
	for _, f := range b.fields {
		if !f.desc.ReadOnly {
			out = append(out, Parameter{f.name, f.read()})
		}
	}
	return out
}

func joinConstraint(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// DurationSeconds converts a duration to the seconds of a parameter.
func DurationSeconds(d time.Duration) float64 { return d.Seconds() }

// SecondsDuration converts a parameter's seconds to a duration, rounded to
// the nearest nanosecond; NaN and values beyond ±292 years are errors
// wrapping ErrInvalidValue.
func SecondsDuration(s float64) (time.Duration, error) {
	if math.IsNaN(s) || math.Abs(s) >= 9.223372036e9 {
		return 0, fmt.Errorf("%w: %g s is not a duration", ErrInvalidValue, s)
	}
	whole, frac := math.Modf(s)
	return time.Duration(whole)*time.Second + time.Duration(math.Round(frac*1e9)), nil
}

func (b *Binder) validateAll() error {
	for _, c := range b.checks {
		if err := c(); err != nil {
			return err
		}
	}
	if b.validate != nil {
		return b.validate()
	}
	return nil
}

// Declare declares every bound parameter on the server, taking overrides
// that pass the descriptor checks, the conversion and, together, the
// validate function; rejected overrides are recorded as Issues (when the
// overrides together fail validate, each is kept if the config validates
// with it and the others kept, so that only the ones at fault are
// dropped) and the defaults kept. It then registers the
// binder with the server so sets are validated and applied to the
// variables. Errors are programming errors: invalid names or descriptors,
// defaults that fail their own checks or validate.
func (b *Binder) Declare() error {
	if b.err != nil {
		return b.err
	}
	if b.declared {
		return fmt.Errorf("%w: Declare called twice", ErrInvalidDescriptor)
	}
	s := b.srv
	defaults := make([]Value, len(b.fields))
	for i, f := range b.fields {
		defaults[i] = f.read()
		if err := s.prepare(f.name, &f.desc, defaults[i]); err != nil {
			return err
		}
	}
	if err := b.validateAll(); err != nil {
		return fmt.Errorf("parameters: the defaults are invalid: %w", err)
	}
	var applied []int
	for i, f := range b.fields {
		ov, ok := s.opts.Overrides[f.name]
		if !ok {
			continue
		}
		s.used[f.name] = true
		err := f.desc.check(f.name, ov.Value)
		if err == nil {
			if err = f.write(ov.Value); err != nil {
				err = &ParamError{Name: f.name, Reason: err.Error(), Err: err}
				_ = f.write(defaults[i])
			}
		}
		if err == nil {
			err = s.validate([]Parameter{{f.name, ov.Value}})
		}
		if err != nil {
			b.reject(f.name, ov, defaults[i], err)
			_ = f.write(defaults[i])
			continue
		}
		applied = append(applied, i)
	}
	if err := b.validateAll(); err != nil && len(applied) > 0 {
		// Together they fail: take them again one at a time, each kept
		// if the config with it validates, in passes until none more is
		// kept (an override valid only with another one, a longer
		// window_sec for a longer period_sec, comes in a later pass). The
		// rejected ones are those that break validation whatever else
		// is kept, each with its own reason: no valid override is
		// dropped for another's fault.
		for _, i := range applied {
			_ = b.fields[i].write(defaults[i])
		}
		reasons := map[int]error{}
		pending := applied
		for kept := true; kept && len(pending) > 0; {
			kept = false
			var rest []int
			for _, i := range pending {
				f := b.fields[i]
				_ = f.write(s.opts.Overrides[f.name].Value) // written once before: cannot fail
				if err := b.validateAll(); err != nil {
					_ = f.write(defaults[i])
					reasons[i] = err
					rest = append(rest, i)
					continue
				}
				kept = true
			}
			pending = rest
		}
		for _, i := range pending {
			f := b.fields[i]
			b.reject(f.name, s.opts.Overrides[f.name], defaults[i],
				&ParamError{Name: f.name, Reason: reasons[i].Error(), Err: fmt.Errorf("%w: %w", ErrRejected, reasons[i])})
		}
	}
	for _, f := range b.fields {
		s.insert(f.name, f.desc, f.read())
	}
	s.AddValidator(b.check)
	s.AddApplier(b.apply)
	b.declared = true
	return nil
}

func (b *Binder) reject(name string, ov Override, def Value, err error) {
	b.srv.issue(Error, name, ov.Source, rejectErr(ov.Value, def, err))
}

// rejectErr words a rejected override.
func rejectErr(v, def Value, err error) error {
	return fmt.Errorf("value %s rejected, keeping %s: %w", v, def, err)
}

// check is the binder's Validator: write the new values, validate,
// restore.
func (b *Binder) check(ps []Parameter) (err error) {
	saved := map[*field]Value{}
	defer func() {
		for f, v := range saved {
			_ = f.write(v)
		}
	}()
	for _, p := range ps {
		f := b.byName[p.Name]
		if f == nil {
			continue
		}
		if _, ok := saved[f]; !ok {
			saved[f] = f.read()
		}
		if err := f.write(p.Value); err != nil {
			return fmt.Errorf("parameter '%s': %w", p.Name, err)
		}
	}
	if len(saved) == 0 {
		return nil
	}
	return b.validateAll()
}

// apply is the binder's Applier.
func (b *Binder) apply(ps []Parameter) {
	for _, p := range ps {
		if f := b.byName[p.Name]; f != nil {
			if err := f.write(p.Value); err != nil {
				// check accepted the same value a moment ago: only a Func
				// binding whose write is not deterministic gets here.
				b.srv.issue(Error, p.Name, "set", err)
			}
		}
	}
}
