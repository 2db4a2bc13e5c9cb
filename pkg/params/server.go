package params

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Options configure a [Server].
type Options struct {
	// Node is the node's fully qualified name ("/ns/node"), copied into
	// parameter events. It defaults to "".
	Node string
	// AllowUndeclared lets Set declare unknown parameters implicitly (with
	// dynamic typing), as rclcpp's allow_undeclared_parameters. It defaults
	// to false: sets of undeclared names are rejected.
	AllowUndeclared bool
	// Overrides are the initial values from parameter files and -p (see
	// [ResolveOverrides]); Declare takes a parameter's value from here when
	// present and valid. It defaults to none.
	Overrides map[string]Override
	// MaxEvents bounds the parameter events kept until [Server.TakeEvents];
	// older events are dropped and counted beyond it. It defaults to 64.
	MaxEvents int
}

// Override is an initial value for a parameter and where it came from.
type Override struct {
	Value Value
	// Source names the origin for messages: "file.yaml:12" or "-p".
	Source string
}

// Severity grades an [Issue].
type Severity uint8

const (
	// Warning: the node runs as configured, but something was ignored
	// (e.g. an override for a parameter the node does not have).
	Warning Severity = iota
	// Error: a value was rejected and the default used instead.
	Error
)

func (s Severity) String() string {
	if s == Error {
		return "error"
	}
	return "warning"
}

// Issue is a problem with the node's parameter overrides that the node logs
// and survives: an unknown name (Warning), a rejected value (Error).
type Issue struct {
	Severity Severity
	Name     string
	Source   string
	Reason   string
	Err      error // the sentinel-wrapping cause; nil for unknown names
}

func (i Issue) String() string {
	src := ""
	if i.Source != "" {
		src = " (" + i.Source + ")"
	}
	return fmt.Sprintf("%s: parameter %q%s: %s", i.Severity, i.Name, src, i.Reason)
}

// Event is the content of an rcl_interfaces/msg/ParameterEvent (the adapter
// adds the stamp).
type Event struct {
	Node    string
	New     []Parameter
	Changed []Parameter
	Deleted []Parameter
}

// Validator is asked before parameters change (at declaration, and on every
// set) with the parameters about to be set; a non-nil error rejects the
// whole change and its message is the reason returned to the caller.
type Validator func(changes []Parameter) error

// Applier is told after parameters changed through Set or SetAtomically,
// with the parameters as set; it applies them to the running node.
type Applier func(changes []Parameter)

// Status is a snapshot of a Server's counters.
type Status struct {
	Declared      int    // parameters declared now
	SetsAccepted  uint64 // parameters changed by Set/SetAtomically
	SetsRejected  uint64 // parameters whose set was rejected
	EventsPending int    // events waiting for TakeEvents
	EventsDropped uint64 // events dropped because nobody took them
	Issues        int    // len(Issues())
}

// Server holds a node's parameters: the store behind the six parameter
// services and /parameter_events. It is synchronous and not safe for
// concurrent use: the node's owner goroutine makes every call.
type Server struct {
	opts       Options
	params     map[string]*entry
	validators []Validator
	appliers   []Applier
	events     []Event
	issues     []Issue
	used       map[string]bool // overrides consumed by a declaration
	st         Status
}

type entry struct {
	desc  Descriptor
	value Value
}

// NewServer returns an empty server.
func NewServer(opts Options) *Server {
	if opts.MaxEvents <= 0 {
		opts.MaxEvents = 64
	}
	return &Server{opts: opts, params: map[string]*entry{}, used: map[string]bool{}}
}

// Node returns the node name given in Options.
func (s *Server) Node() string { return s.opts.Node }

// AddValidator adds a validator; validators run in the order added.
func (s *Server) AddValidator(v Validator) { s.validators = append(s.validators, v) }

// AddApplier adds an applier; appliers run in the order added.
func (s *Server) AddApplier(a Applier) { s.appliers = append(s.appliers, a) }

// Declare declares a parameter and returns its value: the override for
// name if there is one that passes the descriptor's checks and the
// validators, def otherwise. A rejected override does not fail the call: it
// is recorded in Issues, and def is used. Errors are programming errors: an
// empty name, a name already declared, a bad descriptor, a statically typed
// parameter without a type, or a def that fails its own checks.
//
// A statically typed parameter takes d.Type, or def's type when d.Type is
// NotSet. With d.Type set, def may be the zero Value: the parameter is
// declared uninitialized until an override or a set gives it a value.
func (s *Server) Declare(name string, def Value, d Descriptor) (Value, error) {
	if err := s.prepare(name, &d, def); err != nil {
		return Value{}, err
	}
	v := def
	if ov, ok := s.opts.Overrides[name]; ok {
		s.used[name] = true
		if err := s.admit(name, d, ov.Value); err != nil {
			s.issue(Error, name, ov.Source, rejectErr(ov.Value, def, err))
		} else {
			v = ov.Value
		}
	}
	if v.Equal(def) && def.IsSet() {
		if err := s.admit(name, d, def); err != nil {
			return Value{}, fmt.Errorf("parameter %q: default %s: %w", name, def, err)
		}
	}
	s.insert(name, d, v)
	return v, nil
}

// prepare validates a declaration and completes its descriptor.
func (s *Server) prepare(name string, d *Descriptor, def Value) error {
	if name == "" {
		return fmt.Errorf("%w: parameter name must not be empty", ErrInvalidName)
	}
	if _, ok := s.params[name]; ok {
		return paramErr(name, ErrAlreadyDeclared, fmt.Sprintf("parameter '%s' has already been declared", name))
	}
	d.Name = name
	if d.DynamicTyping {
		d.Type = def.Type()
	} else {
		if d.Type == NotSet {
			d.Type = def.Type()
		}
		if d.Type == NotSet {
			return fmt.Errorf("%w: parameter %q: cannot declare a statically typed parameter with an uninitialized value",
				ErrWrongType, name)
		}
	}
	if err := d.validate(); err != nil {
		return err
	}
	if def.IsSet() {
		if err := d.check(name, def); err != nil {
			return fmt.Errorf("parameter %q: default %s: %w", name, def, err)
		}
	}
	return nil
}

// admit runs the descriptor checks and the validators on one value.
func (s *Server) admit(name string, d Descriptor, v Value) error {
	if !v.IsSet() {
		return nil
	}
	if err := d.check(name, v); err != nil {
		return err
	}
	return s.validate([]Parameter{{name, v}})
}

func (s *Server) validate(ps []Parameter) error {
	for _, val := range s.validators {
		if err := val(ps); err != nil {
			name := ""
			if len(ps) == 1 {
				name = ps[0].Name
			}
			return &ParamError{Name: name, Reason: err.Error(), Err: fmt.Errorf("%w: %w", ErrRejected, err)}
		}
	}
	return nil
}

// insert stores a declared parameter and queues its event.
func (s *Server) insert(name string, d Descriptor, v Value) {
	if d.DynamicTyping {
		d.Type = v.Type()
	}
	s.params[name] = &entry{desc: d, value: v}
	if v.IsSet() {
		s.event(Event{Node: s.opts.Node, New: []Parameter{{name, v}}})
	}
}

func (s *Server) issue(sev Severity, name, source string, err error) {
	reason := err.Error()
	s.issues = append(s.issues, Issue{Severity: sev, Name: name, Source: source, Reason: reason, Err: err})
}

func (s *Server) event(e Event) {
	if len(s.events) >= s.opts.MaxEvents {
		n := len(s.events) - s.opts.MaxEvents + 1
		s.events = append(s.events[:0], s.events[n:]...)
		s.st.EventsDropped += uint64(n)
	}
	s.events = append(s.events, e)
}

// Undeclare removes a parameter. As in rclcpp, read-only and statically
// typed parameters cannot be undeclared. Unlike rclcpp, a deleted-parameter
// event is queued.
func (s *Server) Undeclare(name string) error {
	e, ok := s.params[name]
	switch {
	case !ok:
		return paramErr(name, ErrNotDeclared, fmt.Sprintf("cannot undeclare parameter '%s' which has not yet been declared", name))
	case e.desc.ReadOnly:
		return paramErr(name, ErrReadOnly, fmt.Sprintf("cannot undeclare parameter '%s' because it is read-only", name))
	case !e.desc.DynamicTyping:
		return paramErr(name, ErrStaticUndeclare, "cannot undeclare an statically typed parameter")
	}
	delete(s.params, name)
	s.event(Event{Node: s.opts.Node, Deleted: []Parameter{{name, e.value}}})
	return nil
}

// Has reports whether name is declared.
func (s *Server) Has(name string) bool { _, ok := s.params[name]; return ok }

// Get returns a parameter's value and whether it is declared; an undeclared
// or uninitialized parameter has the NOT_SET value.
func (s *Server) Get(name string) (Value, bool) {
	e, ok := s.params[name]
	if !ok {
		return Value{}, false
	}
	return e.value, true
}

// Describe returns a parameter's descriptor and whether it is declared;
// an undeclared name gets a descriptor with only its name (type NOT_SET).
func (s *Server) Describe(name string) (Descriptor, bool) {
	e, ok := s.params[name]
	if !ok {
		return Descriptor{Name: name}, false
	}
	d := e.desc
	if d.DynamicTyping {
		d.Type = e.value.Type()
	}
	return d, true
}

// Names returns the declared names in sorted order.
func (s *Server) Names() []string {
	names := make([]string, 0, len(s.params))
	for n := range s.params {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Set sets parameters one at a time, each atomically on its own (as the
// set_parameters service does): it returns one error per parameter, nil
// where the set succeeded.
func (s *Server) Set(ps ...Parameter) []error {
	errs := make([]error, len(ps))
	for i, p := range ps {
		_, errs[i] = s.setAtomically([]Parameter{p}, false)
	}
	return errs
}

// SetAtomically sets every parameter or none, and returns the event
// describing the change (also queued for TakeEvents). The checks, in
// rclcpp's order: the name is declared (or undeclared parameters are
// allowed), not read-only, not a NOT_SET for a statically typed parameter;
// then each value's type and range; then the validators, once, with all
// the parameters. After the change the appliers run.
func (s *Server) SetAtomically(ps ...Parameter) (Event, error) {
	return s.setAtomically(ps, true)
}

func (s *Server) setAtomically(ps []Parameter, atomic bool) (ev Event, err error) {
	defer func() {
		if err != nil {
			s.st.SetsRejected += uint64(len(ps))
		} else {
			s.st.SetsAccepted += uint64(len(ps))
		}
	}()
	implicit := map[string]bool{}
	for _, p := range ps {
		if p.Name == "" {
			return Event{}, paramErr("", ErrInvalidName, "parameter name must not be empty")
		}
		e, ok := s.params[p.Name]
		if !ok {
			if s.opts.AllowUndeclared {
				implicit[p.Name] = true
				continue
			}
			if atomic && len(ps) > 1 {
				return Event{}, paramErr(p.Name, ErrNotDeclared, "One or more parameters were not declared before setting")
			}
			return Event{}, paramErr(p.Name, ErrNotDeclared, fmt.Sprintf("parameter '%s' cannot be set because it was not declared", p.Name))
		}
		if e.desc.ReadOnly {
			return Event{}, paramErr(p.Name, ErrReadOnly, fmt.Sprintf("parameter '%s' cannot be set because it is read-only", p.Name)+readOnlyWhy(e.desc))
		}
	}
	for _, p := range ps {
		if e, ok := s.params[p.Name]; ok && !p.Value.IsSet() && e.value.IsSet() && !e.desc.DynamicTyping {
			return Event{}, paramErr(p.Name, ErrStaticUndeclare, "cannot undeclare an statically typed parameter")
		}
	}
	for _, p := range ps {
		d := Descriptor{DynamicTyping: true}
		if e, ok := s.params[p.Name]; ok {
			d = e.desc
		}
		if err := d.check(p.Name, p.Value); err != nil {
			return Event{}, err
		}
	}
	if err := s.validate(ps); err != nil {
		return Event{}, err
	}
	ev = Event{Node: s.opts.Node}
	for _, p := range ps {
		e, ok := s.params[p.Name]
		switch {
		case !ok && implicit[p.Name]:
			s.params[p.Name] = &entry{desc: Descriptor{Name: p.Name, Type: p.Value.Type(), DynamicTyping: true}, value: p.Value}
			ev.New = append(ev.New, p)
		case !p.Value.IsSet() && e.value.IsSet():
			delete(s.params, p.Name)
			ev.Deleted = append(ev.Deleted, Parameter{p.Name, e.value})
		default:
			e.value = p.Value
			if e.desc.DynamicTyping {
				e.desc.Type = p.Value.Type()
			}
			ev.Changed = append(ev.Changed, p)
		}
	}
	s.event(ev)
	for _, a := range s.appliers {
		a(slices.Clone(ps))
	}
	return ev, nil
}

// ListResult is rcl_interfaces/msg/ListParametersResult.
type ListResult struct {
	Names    []string
	Prefixes []string
}

// DepthRecursive is ListParameters' DEPTH_RECURSIVE: no depth limit.
const DepthRecursive = 0

// List returns the names under the given prefixes, with rclcpp's
// semantics: names are '.'-separated; with no prefixes, every name with
// fewer than depth separators (all names for DepthRecursive); with
// prefixes, a name equal to a prefix, or under "prefix." with fewer than
// depth separators after the prefix. Prefixes of the result are the parts
// before the last '.' of the names listed, each once. Names come sorted.
func (s *Server) List(prefixes []string, depth uint64) ListResult {
	var r ListResult
	seen := map[string]bool{}
	for _, name := range s.Names() {
		all := len(prefixes) == 0 && (depth == DepthRecursive || uint64(strings.Count(name, ".")) < depth)
		match := false
		for _, p := range prefixes {
			if name == p {
				match = true
				break
			}
			if strings.HasPrefix(name, p+".") {
				rest := name[len(p):]
				if depth == DepthRecursive || uint64(strings.Count(rest, ".")) < depth {
					match = true
					break
				}
			}
		}
		if !all && !match {
			continue
		}
		r.Names = append(r.Names, name)
		if i := strings.LastIndexByte(name, '.'); i >= 0 && !seen[name[:i]] {
			seen[name[:i]] = true
			r.Prefixes = append(r.Prefixes, name[:i])
		}
	}
	return r
}

// TakeEvents returns the parameter events queued since the last call, for
// the adapter to publish on /parameter_events.
func (s *Server) TakeEvents() []Event {
	ev := s.events
	s.events = nil
	return ev
}

// Issues returns the problems with the overrides so far: rejected values
// (Error) in declaration order, then overrides for names never declared
// (Warning), sorted by name. Call it after declaring every parameter.
func (s *Server) Issues() []Issue {
	out := slices.Clone(s.issues)
	var unknown []string
	for name := range s.opts.Overrides {
		if !s.used[name] && !s.Has(name) {
			unknown = append(unknown, name)
		}
	}
	sort.Strings(unknown)
	for _, name := range unknown {
		out = append(out, Issue{Severity: Warning, Name: name, Source: s.opts.Overrides[name].Source,
			Reason: "not a parameter of this node; ignored"})
	}
	return out
}

// Status returns a snapshot of the counters.
func (s *Server) Status() Status {
	st := s.st
	st.Declared = len(s.params)
	st.EventsPending = len(s.events)
	st.Issues = len(s.Issues())
	return st
}

// ReadOnlyReason marks the reason a parameter is read-only in its
// description: "...; read-only: the subscription is created with it".
const ReadOnlyReason = "; read-only: "

// readOnlyWhy returns " (reason)" for a description that gives the reason
// a parameter is read-only after ReadOnlyReason, "" otherwise.
func readOnlyWhy(d Descriptor) string {
	_, why, ok := strings.Cut(d.Description, ReadOnlyReason)
	if !ok || why == "" {
		return ""
	}
	return " (" + why + ")"
}
