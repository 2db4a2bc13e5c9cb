package params

import (
	"errors"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// testConfig stands for an algorithm's Config.
type testConfig struct {
	Window    time.Duration
	Period    time.Duration
	Threshold int
	Gain      float64
	Enabled   bool
	Mode      string
	Lags      []time.Duration
	Depth     int
}

func (c *testConfig) Validate() error {
	if c.Period <= 0 {
		return errors.New("Period must be positive")
	}
	if c.Window < 2*c.Period {
		return fmt.Errorf("Window (%s) must be at least twice Period (%s)", c.Window, c.Period)
	}
	return nil
}

func bindTest(t *testing.T, ov map[string]Override) (*Server, *testConfig) {
	t.Helper()
	cfg := &testConfig{Window: time.Second, Period: 10 * time.Millisecond, Threshold: 3, Gain: 0.5, Mode: "fast", Depth: 5}
	s := NewServer(Options{Node: "/est", Overrides: ov})
	b := NewBinder(s, cfg.Validate)
	b.Duration("window_sec", &cfg.Window, Descriptor{Description: "estimation window", FloatRange: Floats(0, 60, 0)})
	b.Duration("period_sec", &cfg.Period, Descriptor{})
	b.Int("threshold", &cfg.Threshold, Descriptor{IntRange: Ints(1, 10, 1)})
	b.Float64("gain", &cfg.Gain, Descriptor{})
	b.Bool("enabled", &cfg.Enabled, Descriptor{})
	b.Enum("mode", &cfg.Mode, []string{"fast", "slow"}, Descriptor{})
	b.Durations("lags_sec", &cfg.Lags, Descriptor{})
	b.Int("depth", &cfg.Depth, Descriptor{Description: "queue depth" + ReadOnlyReason + "the queue is made at start-up", ReadOnly: true})
	require.NoError(t, b.Declare())
	return s, cfg
}

func TestBinderDeclare(t *testing.T) {
	s, cfg := bindTest(t, map[string]Override{
		"window_sec": {DoubleValue(0.25), "f:1"},
		"threshold":  {IntValue(11), "f:2"},          // out of range
		"mode":       {StringValue("medium"), "f:3"}, // not an option
		"enabled":    {StringValue("yes"), "f:4"},    // wrong type
		"lags_sec":   {DoublesValue([]float64{0.001, 0.5}), "f:5"},
		"depth":      {IntValue(20), "f:6"}, // read-only: still taken at start-up
		"typo":       {IntValue(1), "f:9"},
	})
	assert.Equal(t, 250*time.Millisecond, cfg.Window)
	assert.Equal(t, 3, cfg.Threshold)
	assert.Equal(t, "fast", cfg.Mode)
	assert.False(t, cfg.Enabled)
	assert.Equal(t, []time.Duration{time.Millisecond, 500 * time.Millisecond}, cfg.Lags)
	assert.Equal(t, 20, cfg.Depth)
	v, _ := s.Get("window_sec")
	assert.Equal(t, DoubleValue(0.25), v, "the server holds what the config holds")
	d, _ := s.Describe("mode")
	assert.Equal(t, "one of: fast, slow", d.AdditionalConstraints)

	var got []string
	for _, is := range s.Issues() {
		got = append(got, is.String())
	}
	assert.Equal(t, []string{
		`error: parameter "threshold" (f:2): value 11 rejected, keeping 3: Parameter {threshold} doesn't comply with integer range: 11 is not in [1, 10].`,
		`error: parameter "enabled" (f:4): value "yes" rejected, keeping false: Wrong parameter type, parameter {enabled} is of type {bool}, setting it to {string} is not allowed.`,
		`error: parameter "mode" (f:3): value medium rejected, keeping fast: invalid parameter value: "medium" is not one of fast, slow`,
		`warning: parameter "typo" (f:9): not a parameter of this node; ignored`,
	}, got)
}

func TestBinderCrossFieldOverrides(t *testing.T) {
	// Window 0.05 s is valid only with the period override; both are kept.
	_, cfg := bindTest(t, map[string]Override{"window_sec": {DoubleValue(0.05), "f:1"}, "period_sec": {DoubleValue(0.02), "f:2"}})
	assert.Equal(t, 50*time.Millisecond, cfg.Window)
	assert.Equal(t, 20*time.Millisecond, cfg.Period)
	// Together invalid: period is at fault (window is valid with the
	// default period), so it alone is dropped.
	s, cfg := bindTest(t, map[string]Override{"window_sec": {DoubleValue(0.05), "f:1"}, "period_sec": {DoubleValue(0.1), "f:2"}})
	assert.Equal(t, 50*time.Millisecond, cfg.Window)
	assert.Equal(t, 10*time.Millisecond, cfg.Period)
	is := s.Issues()
	require.Len(t, is, 1)
	assert.Equal(t, "period_sec", is[0].Name)
	assert.ErrorIs(t, is[0].Err, ErrRejected)
}

// TestBinderOverridesAtFault: when the start-up overrides together fail
// validation, only the ones at fault are rejected, each with its own
// reason; an override valid only with a later-declared one is kept, and
// so is one that has nothing to do with the fault.
func TestBinderOverridesAtFault(t *testing.T) {
	var a, b, c, d int
	a, b = 1, 3
	s := NewServer(Options{Node: "/n", Overrides: map[string]Override{
		"a": {IntValue(5), "f:1"}, // valid only with b's override (a ≤ b)
		"b": {IntValue(6), "f:2"},
		"c": {IntValue(7), "f:3"}, // the fault
		"d": {IntValue(1), "f:4"}, // declared last, innocent
	}})
	bd := NewBinder(s, func() error {
		if a > b {
			return fmt.Errorf("a (%d) must not exceed b (%d)", a, b)
		}
		if c == 7 {
			return errors.New("c must not be 7")
		}
		return nil
	})
	for _, f := range []struct {
		name string
		v    *int
	}{{"a", &a}, {"b", &b}, {"c", &c}, {"d", &d}} {
		bd.Int(f.name, f.v, Descriptor{})
	}
	require.NoError(t, bd.Declare())
	assert.Equal(t, []int{5, 6, 0, 1}, []int{a, b, c, d})
	is := s.Issues()
	require.Len(t, is, 1)
	assert.Equal(t, "c", is[0].Name)
	assert.ErrorIs(t, is[0].Err, ErrRejected)
	assert.Contains(t, is[0].Err.Error(), "c must not be 7")
}

func TestBinderSet(t *testing.T) {
	s, cfg := bindTest(t, nil)
	errs := s.Set(Parameter{"window_sec", DoubleValue(0.01)})
	require.ErrorIs(t, errs[0], ErrRejected)
	assert.Equal(t, "Window (10ms) must be at least twice Period (10ms)", errs[0].Error())
	assert.Equal(t, time.Second, cfg.Window, "rejected: the config is untouched")

	require.NoError(t, s.Set(Parameter{"window_sec", DoubleValue(2.5)})[0])
	assert.Equal(t, 2500*time.Millisecond, cfg.Window, "applied live")

	_, err := s.SetAtomically(Parameter{"period_sec", DoubleValue(1)}, Parameter{"window_sec", DoubleValue(2)})
	require.NoError(t, err, "valid together")
	assert.Equal(t, time.Second, cfg.Period)

	errs = s.Set(Parameter{"mode", StringValue("x")}, Parameter{"depth", IntValue(3)}, Parameter{"window_sec", DoubleValue(math.NaN())})
	assert.Equal(t, `parameter 'mode': invalid parameter value: "x" is not one of fast, slow`, errs[0].Error())
	assert.ErrorIs(t, errs[1], ErrReadOnly, "read-only: fixed at start-up")
	assert.Equal(t, "parameter 'depth' cannot be set because it is read-only (the queue is made at start-up)",
		errs[1].Error(), "with the reason its description gives")
	assert.ErrorIs(t, errs[2], ErrOutOfRange)
	assert.Equal(t, "fast", cfg.Mode)
}

func TestBinderProgrammingErrors(t *testing.T) {
	s := NewServer(Options{})
	var x, y int64
	b := NewBinder(s, nil)
	b.Int64("x", &x, Descriptor{})
	b.Int64("x", &y, Descriptor{})
	assert.ErrorIs(t, b.Declare(), ErrAlreadyDeclared)

	b = NewBinder(s, func() error { return errors.New("never valid") })
	b.Int64("x", &x, Descriptor{})
	assert.Error(t, b.Declare())

	b = NewBinder(s, nil)
	b.Int64("x", &x, Descriptor{IntRange: Ints(5, 6, 0)})
	assert.ErrorIs(t, b.Declare(), ErrOutOfRange, "the default must be valid")
}

func TestSecondsDuration(t *testing.T) {
	cases := []struct {
		s    float64
		want time.Duration
		err  bool
	}{
		{0, 0, false}, {0.001, time.Millisecond, false}, {1e-9, 1, false}, {-2.5, -2500 * time.Millisecond, false},
		{0.1 + 0.2, 300 * time.Millisecond, false}, {1.7e9, 1_700_000_000 * time.Second, false},
		{math.NaN(), 0, true}, {math.Inf(1), 0, true}, {1e10, 0, true},
	}
	for _, c := range cases {
		got, err := SecondsDuration(c.s)
		if c.err {
			assert.ErrorIs(t, err, ErrInvalidValue, "%g", c.s)
			continue
		}
		require.NoError(t, err)
		assert.Equal(t, c.want, got, "%g", c.s)
	}
	rapid.Check(t, func(t *rapid.T) {
		d := time.Duration(rapid.Int64Range(-1<<50, 1<<50).Draw(t, "ns"))
		back, err := SecondsDuration(DurationSeconds(d))
		require.NoError(t, err)
		require.Equal(t, d, back, "round trip through seconds is exact below 2^50 ns")
	})
}

func TestValueRoundTrip(t *testing.T) {
	// Subnormal doubles do not read back as doubles: strtod reports ERANGE
	// for them and rcl keeps the text as a string (the scalar table checks
	// that); every other double round-trips.
	double := rapid.Float64().Filter(func(d float64) bool { return d == 0 || math.Abs(d) >= 0x1p-1022 })
	rapid.Check(t, func(t *rapid.T) {
		var v Value
		switch rapid.IntRange(0, 8).Draw(t, "type") {
		case 0:
			v = BoolValue(rapid.Bool().Draw(t, "b"))
		case 1:
			v = IntValue(rapid.Int64().Draw(t, "i"))
		case 2:
			v = DoubleValue(double.Draw(t, "d"))
		case 3:
			v = StringValue(rapid.StringMatching(`[ -~]{0,12}`).Draw(t, "s"))
		case 4:
			v = BoolsValue(rapid.SliceOfN(rapid.Bool(), 1, 4).Draw(t, "bs"))
		case 5:
			v = IntsValue(rapid.SliceOfN(rapid.Int64(), 1, 4).Draw(t, "is"))
		case 6:
			v = DoublesValue(rapid.SliceOfN(double, 1, 4).Draw(t, "ds"))
		case 7:
			v = StringsValue(rapid.SliceOfN(rapid.StringMatching(`[ -~]{0,8}`), 1, 4).Draw(t, "ss"))
		case 8:
			v = BytesValue(rapid.SliceOf(rapid.Byte()).Draw(t, "bytes"))
		}
		m, err := FromMsg(v.Msg())
		require.NoError(t, err)
		require.True(t, v.Equal(m), "message round trip of %s", v)
		if v.Type() == ByteArray {
			return
		}
		back, err := ParseValue(v.String())
		require.NoError(t, err, "%s", v)
		require.Truef(t, v.Equal(back), "%s read back as %s (%s)", v, back, back.Type())
	})
}

func TestRanges(t *testing.T) {
	// The examples of rcl_interfaces' IntegerRange.msg and FloatingPointRange.msg.
	ir := IntRange{From: 1, To: 2, Step: 5}
	assert.True(t, ir.Contains(1) && ir.Contains(2))
	ir = IntRange{From: 2, To: 5, Step: 2}
	for v, want := range map[int64]bool{1: false, 2: true, 3: false, 4: true, 5: true, 6: false} {
		assert.Equal(t, want, ir.Contains(v), "%d", v)
	}
	ir = IntRange{From: math.MinInt64, To: math.MaxInt64, Step: 1 << 63}
	assert.True(t, ir.Contains(0) && !ir.Contains(1))
	fr := FloatRange{From: 2, To: 5, Step: 2}
	for v, want := range map[float64]bool{2: true, 3: false, 4: true, 4.000000000000001: true, 5: true, 5.1: false} {
		assert.Equal(t, want, fr.Contains(v), "%g", v)
	}
	fr = FloatRange{From: 0, To: 1, Step: -0.1}
	assert.True(t, fr.Contains(0.7), "negative steps are magnitudes")
	assert.False(t, FloatRange{From: 0, To: 1}.Contains(math.NaN()))
}

type testMode int

func TestChoiceAndWritable(t *testing.T) {
	names := []string{"sick", "envelope", "offset"}
	var cfg struct {
		Mode   testMode
		Window time.Duration
		Depth  int
	}
	cfg.Mode, cfg.Window, cfg.Depth = 1, time.Second, 10
	s := NewServer(Options{Node: "/n", Overrides: map[string]Override{"mode": {StringValue("offset"), "-p"}}})
	b := NewBinder(s, nil)
	Choice(b, "mode", &cfg.Mode, names, Descriptor{Description: "fit"})
	b.Duration("window_sec", &cfg.Window, Descriptor{})
	b.Int("depth", &cfg.Depth, Descriptor{ReadOnly: true})
	require.NoError(t, b.Declare())
	require.Equal(t, testMode(2), cfg.Mode, "the override, as its index in the name table")
	d, _ := s.Describe("mode")
	require.Equal(t, "one of: sick, envelope, offset", d.AdditionalConstraints)

	errs := s.Set(Parameter{"mode", StringValue("sick")}, Parameter{"mode", StringValue("fast")})
	require.NoError(t, errs[0])
	require.ErrorIs(t, errs[1], ErrRejected)
	require.ErrorContains(t, errs[1], `parameter 'mode': invalid parameter value: "fast" is not one of sick, envelope, offset`)
	require.Equal(t, testMode(0), cfg.Mode)

	// Writable reads the variables, without a server too.
	cfg.Mode, cfg.Window = 1, 250*time.Millisecond
	require.Equal(t, []Parameter{{"mode", StringValue("envelope")}, {"window_sec", DoubleValue(0.25)}}, b.Writable())
	scratch := NewBinder(nil, nil)
	other := testMode(7)
	Choice(scratch, "mode", &other, names, Descriptor{})
	require.Equal(t, []Parameter{{"mode", StringValue("7")}}, scratch.Writable(), "a value outside the table as its number")
}

func TestRangeString(t *testing.T) {
	require.Equal(t, "[1, 100]", IntRange{1, 100, 1}.String())
	require.Equal(t, "[0, 100] in steps of 5", IntRange{0, 100, 5}.String())
	require.Equal(t, "[0.001, 3600.0]", FloatRange{0.001, 3600, 0}.String())
	require.Equal(t, "[0.0, 1.0] in steps of 0.5", FloatRange{0, 1, -0.5}.String())
}
