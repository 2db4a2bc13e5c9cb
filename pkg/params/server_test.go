package params

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func newTestServer(t *testing.T, ov map[string]Override) *Server {
	t.Helper()
	s := NewServer(Options{Node: "/ns/node", Overrides: ov})
	_, err := s.Declare("rate", IntValue(10), Descriptor{Description: "Hz", IntRange: Ints(1, 100, 1)})
	require.NoError(t, err)
	_, err = s.Declare("gain", DoubleValue(0.5), Descriptor{FloatRange: Floats(0, 1, 0.1)})
	require.NoError(t, err)
	_, err = s.Declare("frame", StringValue("base"), Descriptor{ReadOnly: true})
	require.NoError(t, err)
	_, err = s.Declare("any", IntValue(1), Descriptor{DynamicTyping: true})
	require.NoError(t, err)
	_, err = s.Declare("qos.in.depth", IntValue(5), Descriptor{})
	require.NoError(t, err)
	_, err = s.Declare("qos.in.reliability", StringValue("best_effort"), Descriptor{})
	require.NoError(t, err)
	_, err = s.Declare("qos.out.depth", IntValue(10), Descriptor{})
	require.NoError(t, err)
	return s
}

// setCases feed TestSet and BenchmarkSet: one parameter set on the server
// of newTestServer, and the reason rclcpp gives ("" if accepted).
var setCases = []struct {
	name   string
	p      Parameter
	reason string
	err    error
}{
	{"int in range", Parameter{"rate", IntValue(50)}, "", nil},
	{"int at bound", Parameter{"rate", IntValue(100)}, "", nil},
	{"int out of range", Parameter{"rate", IntValue(101)}, "Parameter {rate} doesn't comply with integer range: 101 is not in [1, 100].", ErrOutOfRange},
	{"int wrong type", Parameter{"rate", DoubleValue(5)}, "Wrong parameter type, parameter {rate} is of type {integer}, setting it to {double} is not allowed.", ErrWrongType},
	{"double on step", Parameter{"gain", DoubleValue(0.1 + 0.2)}, "", nil},
	{"double off step", Parameter{"gain", DoubleValue(0.25)}, "Parameter {gain} doesn't comply with floating point range: 0.25 is not in [0.0, 1.0] in steps of 0.1.", ErrOutOfRange},
	{"double NaN", Parameter{"gain", DoubleValue(math.NaN())}, "Parameter {gain} doesn't comply with floating point range: .nan is not in [0.0, 1.0] in steps of 0.1.", ErrOutOfRange},
	{"double given an int", Parameter{"gain", IntValue(1)}, "Wrong parameter type, parameter {gain} is of type {double}, setting it to {integer} is not allowed. (Write 1.0 for a double.)", ErrWrongType},
	{"read only", Parameter{"frame", StringValue("odom")}, "parameter 'frame' cannot be set because it is read-only", ErrReadOnly},
	{"not declared", Parameter{"nope", IntValue(1)}, "parameter 'nope' cannot be set because it was not declared", ErrNotDeclared},
	{"unset static", Parameter{"rate", Value{}}, "cannot undeclare an statically typed parameter", ErrStaticUndeclare},
	{"dynamic changes type", Parameter{"any", StringValue("x")}, "", nil},
	{"empty name", Parameter{"", IntValue(1)}, "parameter name must not be empty", ErrInvalidName},
}

func TestSet(t *testing.T) {
	for _, c := range setCases {
		t.Run(c.name, func(t *testing.T) {
			s := newTestServer(t, nil)
			s.TakeEvents()
			before, _ := s.Get(c.p.Name)
			errs := s.Set(c.p)
			require.Len(t, errs, 1)
			after, _ := s.Get(c.p.Name)
			if c.err == nil {
				require.NoError(t, errs[0])
				assert.True(t, c.p.Value.Equal(after))
				ev := s.TakeEvents()
				require.Len(t, ev, 1)
				assert.Equal(t, Event{Node: "/ns/node", Changed: []Parameter{c.p}}, ev[0])
				assert.Equal(t, uint64(1), s.Status().SetsAccepted)
				return
			}
			require.Error(t, errs[0])
			assert.ErrorIs(t, errs[0], c.err)
			assert.Equal(t, c.reason, errs[0].Error())
			assert.True(t, before.Equal(after), "a rejected set changes nothing")
			assert.Empty(t, s.TakeEvents())
			assert.Equal(t, uint64(1), s.Status().SetsRejected)
		})
	}
}

func TestDeclare(t *testing.T) {
	s := NewServer(Options{Node: "/n", Overrides: map[string]Override{
		"rate":    {IntValue(20), "f.yaml:3"},
		"gain":    {IntValue(1), "f.yaml:4"}, // wrong type: rejected, default kept
		"limit":   {IntValue(500), "-p"},     // out of range
		"unknown": {BoolValue(true), "f.yaml:9"},
	}})
	v, err := s.Declare("rate", IntValue(10), Descriptor{})
	require.NoError(t, err)
	assert.Equal(t, IntValue(20), v, "the override wins")
	v, err = s.Declare("gain", DoubleValue(0.5), Descriptor{})
	require.NoError(t, err)
	assert.Equal(t, DoubleValue(0.5), v)
	v, err = s.Declare("limit", IntValue(5), Descriptor{IntRange: Ints(0, 10, 0)})
	require.NoError(t, err)
	assert.Equal(t, IntValue(5), v)
	v, err = s.Declare("uninit", Value{}, Descriptor{Type: Integer})
	require.NoError(t, err)
	assert.False(t, v.IsSet())
	d, ok := s.Describe("uninit")
	require.True(t, ok)
	assert.Equal(t, Integer, d.Type)

	issues := s.Issues()
	require.Len(t, issues, 3)
	assert.Equal(t, `error: parameter "gain" (f.yaml:4): value 1 rejected, keeping 0.5: Wrong parameter type, parameter {gain} is of type {double}, setting it to {integer} is not allowed. (Write 1.0 for a double.)`, issues[0].String())
	assert.ErrorIs(t, issues[0].Err, ErrWrongType)
	assert.ErrorIs(t, issues[1].Err, ErrOutOfRange)
	assert.Equal(t, Issue{Severity: Warning, Name: "unknown", Source: "f.yaml:9", Reason: "not a parameter of this node; ignored"}, issues[2])

	// Programming errors.
	_, err = s.Declare("rate", IntValue(1), Descriptor{})
	assert.ErrorIs(t, err, ErrAlreadyDeclared)
	_, err = s.Declare("", IntValue(1), Descriptor{})
	assert.ErrorIs(t, err, ErrInvalidName)
	_, err = s.Declare("x", Value{}, Descriptor{})
	assert.ErrorIs(t, err, ErrWrongType)
	_, err = s.Declare("y", IntValue(20), Descriptor{IntRange: Ints(0, 10, 0)})
	assert.ErrorIs(t, err, ErrOutOfRange)
	_, err = s.Declare("z", IntValue(1), Descriptor{FloatRange: Floats(0, 1, 0)})
	assert.ErrorIs(t, err, ErrInvalidDescriptor)
	_, err = s.Declare("w", DoubleValue(1), Descriptor{FloatRange: Floats(2, 1, 0)})
	assert.ErrorIs(t, err, ErrInvalidDescriptor)

	ev := s.TakeEvents()
	require.Len(t, ev, 3, "one event per initialized declaration")
	assert.Equal(t, Event{Node: "/n", New: []Parameter{{"rate", IntValue(20)}}}, ev[0])
}

func TestSetAtomically(t *testing.T) {
	s := newTestServer(t, nil)
	s.TakeEvents()
	_, err := s.SetAtomically(Parameter{"rate", IntValue(20)}, Parameter{"gain", DoubleValue(2)})
	require.ErrorIs(t, err, ErrOutOfRange)
	v, _ := s.Get("rate")
	assert.Equal(t, IntValue(10), v, "all or nothing")

	_, err = s.SetAtomically(Parameter{"rate", IntValue(20)}, Parameter{"nope", IntValue(2)})
	require.ErrorIs(t, err, ErrNotDeclared)
	assert.Equal(t, "One or more parameters were not declared before setting", err.Error())

	ev, err := s.SetAtomically(Parameter{"rate", IntValue(20)}, Parameter{"gain", DoubleValue(0.7)}, Parameter{"any", Value{}})
	require.NoError(t, err)
	assert.Equal(t, Event{Node: "/ns/node",
		Changed: []Parameter{{"rate", IntValue(20)}, {"gain", DoubleValue(0.7)}},
		Deleted: []Parameter{{"any", IntValue(1)}}}, ev)
	assert.False(t, s.Has("any"), "NOT_SET undeclares a dynamically typed parameter")
	assert.Equal(t, []Event{ev}, s.TakeEvents())
}

func TestValidatorsAndAppliers(t *testing.T) {
	s := newTestServer(t, nil)
	var applied [][]Parameter
	s.AddValidator(func(ps []Parameter) error {
		for _, p := range ps {
			if p.Name == "rate" && p.Value.Int()%2 == 1 {
				return assert.AnError
			}
		}
		return nil
	})
	s.AddApplier(func(ps []Parameter) { applied = append(applied, ps) })
	errs := s.Set(Parameter{"rate", IntValue(3)}, Parameter{"rate", IntValue(4)})
	require.ErrorIs(t, errs[0], ErrRejected)
	assert.Equal(t, assert.AnError.Error(), errs[0].Error())
	require.NoError(t, errs[1])
	assert.Equal(t, [][]Parameter{{{"rate", IntValue(4)}}}, applied)
}

func TestAllowUndeclared(t *testing.T) {
	s := NewServer(Options{Node: "/n", AllowUndeclared: true})
	ev, err := s.SetAtomically(Parameter{"free", StringValue("x")})
	require.NoError(t, err)
	assert.Equal(t, []Parameter{{"free", StringValue("x")}}, ev.New)
	require.NoError(t, s.Set(Parameter{"free", IntValue(3)})[0], "implicitly declared parameters are dynamically typed")
	require.NoError(t, s.Undeclare("free"))
}

func TestUndeclare(t *testing.T) {
	s := newTestServer(t, nil)
	assert.ErrorIs(t, s.Undeclare("rate"), ErrStaticUndeclare)
	assert.ErrorIs(t, s.Undeclare("frame"), ErrReadOnly)
	assert.ErrorIs(t, s.Undeclare("nope"), ErrNotDeclared)
	require.NoError(t, s.Undeclare("any"))
	assert.False(t, s.Has("any"))
}

func TestList(t *testing.T) {
	s := newTestServer(t, nil)
	cases := []struct {
		prefixes []string
		depth    uint64
		names    []string
		pre      []string
	}{
		{nil, DepthRecursive, []string{"any", "frame", "gain", "qos.in.depth", "qos.in.reliability", "qos.out.depth", "rate"}, []string{"qos.in", "qos.out"}},
		{nil, 1, []string{"any", "frame", "gain", "rate"}, nil},
		{nil, 3, []string{"any", "frame", "gain", "qos.in.depth", "qos.in.reliability", "qos.out.depth", "rate"}, []string{"qos.in", "qos.out"}},
		{[]string{"qos"}, DepthRecursive, []string{"qos.in.depth", "qos.in.reliability", "qos.out.depth"}, []string{"qos.in", "qos.out"}},
		{[]string{"qos"}, 1, nil, nil},
		// rclcpp counts the separator after the prefix too: "qos" + ".in.depth" has depth 2.
		{[]string{"qos"}, 2, nil, nil},
		{[]string{"qos"}, 3, []string{"qos.in.depth", "qos.in.reliability", "qos.out.depth"}, []string{"qos.in", "qos.out"}},
		{[]string{"qos.in"}, 1, nil, nil},
		{[]string{"qos.in"}, 2, []string{"qos.in.depth", "qos.in.reliability"}, []string{"qos.in"}},
		{[]string{"rate", "qos.out"}, 0, []string{"qos.out.depth", "rate"}, []string{"qos.out"}},
		{[]string{"qo"}, 0, nil, nil},
	}
	for _, c := range cases {
		r := s.List(c.prefixes, c.depth)
		assert.Equal(t, c.names, r.Names, "%v depth %d", c.prefixes, c.depth)
		assert.Equal(t, c.pre, r.Prefixes, "%v depth %d", c.prefixes, c.depth)
	}
}

func TestServices(t *testing.T) {
	s := newTestServer(t, nil)
	s.TakeEvents()
	g := s.GetParameters(GetParametersRequest{Names: []string{"rate", "nope"}})
	assert.Equal(t, []ValueMsg{{Type: 2, IntegerValue: 10}, {}}, g.Values)
	ty := s.GetParameterTypes(GetParameterTypesRequest{Names: []string{"gain", "nope"}})
	assert.Equal(t, []uint8{3, 0}, ty.Types)
	d := s.DescribeParameters(DescribeParametersRequest{Names: []string{"rate", "nope"}})
	assert.Equal(t, []DescriptorMsg{
		{Name: "rate", Type: 2, Description: "Hz", IntegerRange: []IntRange{{1, 100, 1}}},
		{Name: "nope"},
	}, d.Descriptors)
	set := s.SetParameters(SetParametersRequest{Parameters: []ParameterMsg{
		{Name: "rate", Value: ValueMsg{Type: 2, IntegerValue: 30}},
		{Name: "rate", Value: ValueMsg{Type: 3, DoubleValue: 30}},
		{Name: "rate", Value: ValueMsg{Type: 42}},
	}})
	assert.Equal(t, []SetResult{{Successful: true},
		{Reason: "Wrong parameter type, parameter {rate} is of type {integer}, setting it to {double} is not allowed."},
		{Reason: "invalid parameter value: unknown parameter type 42"}}, set.Results)
	at := s.SetParametersAtomically(SetParametersAtomicallyRequest{Parameters: []ParameterMsg{
		{Name: "rate", Value: ValueMsg{Type: 2, IntegerValue: 40}},
		{Name: "gain", Value: ValueMsg{Type: 3, DoubleValue: 0.9}},
	}})
	assert.Equal(t, SetResult{Successful: true}, at.Result)
	l := s.ListParameters(ListParametersRequest{Prefixes: []string{"qos.out"}})
	assert.Equal(t, []string{"qos.out.depth"}, l.Result.Names)
	ev := s.TakeEvents()
	require.Len(t, ev, 2)
	assert.Equal(t, EventMsg{Node: "/ns/node", NewParameters: []ParameterMsg{}, DeletedParameters: []ParameterMsg{},
		ChangedParameters: []ParameterMsg{{Name: "rate", Value: ValueMsg{Type: 2, IntegerValue: 30}}}}, ev[0].Msg())
	st := s.Status()
	assert.Equal(t, Status{Declared: 7, SetsAccepted: 3, SetsRejected: 2}, st)
}

func TestEventsBounded(t *testing.T) {
	s := NewServer(Options{MaxEvents: 4})
	_, err := s.Declare("x", IntValue(0), Descriptor{})
	require.NoError(t, err)
	for i := 1; i <= 10; i++ {
		require.NoError(t, s.Set(Parameter{"x", IntValue(int64(i))})[0])
	}
	ev := s.TakeEvents()
	require.Len(t, ev, 4)
	assert.Equal(t, IntValue(10), ev[3].Changed[0].Value)
	assert.Equal(t, uint64(7), s.Status().EventsDropped)
}

func BenchmarkSet(b *testing.B) {
	s := NewServer(Options{Node: "/n"})
	for _, c := range setCases {
		if c.p.Name != "" && !s.Has(c.p.Name) {
			_, _ = s.Declare(c.p.Name, IntValue(1), Descriptor{DynamicTyping: true})
		}
	}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		s.Set(setCases[i%len(setCases)].p)
		if i%64 == 0 {
			s.TakeEvents()
		}
	}
}

func BenchmarkGetParameters(b *testing.B) {
	s := NewServer(Options{Node: "/n"})
	names := []string{"a", "b", "c", "d"}
	for i, n := range names {
		_, _ = s.Declare(n, IntValue(int64(i)), Descriptor{})
	}
	req := GetParametersRequest{Names: names}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		s.GetParameters(req)
	}
}
