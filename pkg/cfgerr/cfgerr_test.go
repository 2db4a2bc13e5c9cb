package cfgerr_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timealign/timealign/pkg/cfgerr"
)

var errKind = errors.New("x: invalid config")

func TestSay(t *testing.T) {
	flags := map[string]string{"FIFOSize": "--fifo-size", "Window": "--window", "LowerBounds": "--lower-bounds", "Streams.BufferSize": "--buffer-sizes"}
	name := func(f string) string { return flags[f] }
	for _, tc := range []struct {
		field, msg    string
		goName, named string
	}{
		{"FIFOSize", "is 1, want 2..9", "FIFOSize is 1, want 2..9", "--fifo-size is 1, want 2..9"},
		{"Period", "(3s) must be shorter than {Window} (500ms)", "Period (3s) must be shorter than Window (500ms)", "Period (3s) must be shorter than --window (500ms)"},
		{"LowerBounds[2]", "is -1ms, want ≥ 0", "LowerBounds[2] is -1ms, want ≥ 0", "value 3 of --lower-bounds is -1ms, want ≥ 0"},
		{"Streams[0].BufferSize", "is -5", "Streams[0].BufferSize is -5", "value 1 of --buffer-sizes is -5"},
		{"Topics", `is "{x}"`, `Topics is "{x}"`, `Topics is "{x}"`},
		{"Window", "is 0s, {FIFOSize} and {Nope} and {", "Window is 0s, FIFOSize and Nope and {", "--window is 0s, --fifo-size and Nope and {"},
	} {
		e := cfgerr.New(errKind, tc.field, "%s", tc.msg)
		require.Equal(t, "x: invalid config: "+tc.goName, e.Error())
		require.Equal(t, tc.named, e.Say(name))
		require.ErrorIs(t, e, errKind)
		wrapped := fmt.Errorf("ctx: %w", e)
		got, ok := cfgerr.As(wrapped)
		require.True(t, ok)
		require.Same(t, e, got)
	}
	_, ok := cfgerr.As(errKind)
	require.False(t, ok)
}

func TestNest(t *testing.T) {
	e := cfgerr.New(errKind, "BufferSize", "is automatic but {Period} is 0, {x}")
	e.Nest("Streams[1].")
	require.Equal(t, "Streams[1].BufferSize is automatic but Streams[1].Period is 0, {x}", e.Say(nil))
	flags := map[string]string{"Streams.BufferSize": "--buffer-sizes", "Streams.Period": "--periods"}
	require.Equal(t, "value 2 of --buffer-sizes is automatic but value 2 of --periods is 0, {x}", e.Say(func(f string) string { return flags[f] }))
}

func ExampleError_Say() {
	err := cfgerr.New(errKind, "FIFOSize", "is %d, want 2..%d", 1, 65536)
	fmt.Println(err)
	fmt.Println(err.Say(func(field string) string { return map[string]string{"FIFOSize": "--fifo-size"}[field] }))
	// Output:
	// x: invalid config: FIFOSize is 1, want 2..65536
	// --fifo-size is 1, want 2..65536
}

// seconds is a front end's unit for durations in a test.
type seconds float64

func (s seconds) String() string { return fmt.Sprintf("%gs!", float64(s)) }

func inSeconds(v any) any {
	if d, ok := v.(time.Duration); ok {
		return seconds(d.Seconds())
	}
	return v
}

func TestSayAs(t *testing.T) {
	names := map[string]string{"Period": "period_sec", "Window": "window_sec", "Streams.Period": "periods_sec"}
	name := func(f string) string { return names[f] }
	e := cfgerr.New(errKind, "Period", "(%v) must be shorter than {Window} (%v), %d tries", 3*time.Second, 500*time.Millisecond, 2)
	require.Equal(t, "period_sec (3s!) must be shorter than window_sec (0.5s!), 2 tries", e.SayAs(name, inSeconds))
	require.Equal(t, "period_sec (3s) must be shorter than window_sec (500ms), 2 tries", e.Say(name), "Say keeps Go's formatting")
	require.Equal(t, e.Say(name), e.SayAs(name, nil))
	require.Equal(t, []any{3 * time.Second, 500 * time.Millisecond, 2}, e.Values())
	require.Equal(t, "x: invalid config: Period (3s) must be shorter than Window (500ms), 2 tries", e.Error())

	// Nest renames the fields of the values' message too.
	n := cfgerr.New(errKind, "Period", "is %v: {Period} needs a size", -time.Millisecond)
	n.Nest("Streams[1].")
	require.Equal(t, "value 2 of periods_sec is -0.001s!: value 2 of periods_sec needs a size", n.SayAs(name, inSeconds))

	// An Error not made by New has no values: its Msg as it is.
	lit := &cfgerr.Error{Kind: errKind, Field: "Window", Msg: "is 1s"}
	require.Equal(t, "window_sec is 1s", lit.SayAs(name, inSeconds))
	require.Empty(t, lit.Values())
}
