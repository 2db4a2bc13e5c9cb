package clocksync

import (
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/timealign/timealign/internal/testutil/cdrtest"
	"github.com/timealign/timealign/nodes/internal/clocksync/config"
	"github.com/timealign/timealign/nodes/internal/nodetest"
	"github.com/timealign/timealign/pkg/params"
	"github.com/timealign/timealign/pkg/pll"
	"github.com/timealign/timealign/pkg/stamp"
)

// TestEveryWritableParameterIsLive: each writable parameter, set at run
// time, is what the running node then works with; the read-only ones say
// why in their descriptions.
func TestEveryWritableParameterIsLive(t *testing.T) {
	// In this order each set is valid on its own (window ≥ fifo_size).
	node := nodetest.Live(t, Spec(),
		params.Parameter{Name: "mode", Value: params.StringValue("offset")},
		params.Parameter{Name: "when_invalid", Value: params.StringValue("passthrough")},
		params.Parameter{Name: "fifo_size", Value: params.IntValue(11)},
		params.Parameter{Name: "max_deviation_sec", Value: params.DoubleValue(0.02)},
		params.Parameter{Name: "max_invalid", Value: params.IntValue(7)},
		params.Parameter{Name: "tick_bits", Value: params.IntValue(32)},
		params.Parameter{Name: "tick_period_sec", Value: params.DoubleValue(1e-6)},
		params.Parameter{Name: "window", Value: params.IntValue(64)},
		params.Parameter{Name: "max_skew_ppm", Value: params.DoubleValue(200.0)},
		params.Parameter{Name: "track_skew", Value: params.BoolValue(true)},
	).(*Node)
	require.Equal(t, pll.Offset, node.core.Status().PLL.Mode)
}

// TestReconfigure: a new fit configuration restarts the fit (invalid until
// it has locked again), when_invalid applies at once without a restart,
// counters go on, a bad Config is refused.
func TestReconfigure(t *testing.T) {
	core, err := New(config.DefaultConfig())
	require.NoError(t, err)
	samples := lidar(t, 200)
	feed := func(from, to int) (last Result) {
		for _, s := range samples[from:to] {
			last, err = core.Process(cdrtest.Message(stamp.Time(s.Device), "laser", 4), s.Receive)
			require.NoError(t, err)
		}
		return last
	}
	_, err = core.Process(nil, 0)
	require.Error(t, err)
	require.Equal(t, Published, feed(0, 100))
	require.True(t, core.Status().PLL.Valid)
	before := core.Status()

	cfg := config.DefaultConfig()
	cfg.WhenInvalid = config.Passthrough
	require.NoError(t, core.Reconfigure(cfg))
	require.True(t, core.Status().PLL.Valid, "when_invalid alone: the fit goes on")

	cfg.PLL.FIFOSize = 20
	require.NoError(t, core.Reconfigure(cfg))
	st := core.Status()
	require.False(t, st.PLL.Valid, "a new fit configuration starts the fit over")
	msg := cdrtest.Message(stamp.Time(samples[100].Device), "laser", 4)
	res, err := core.Process(msg, samples[100].Receive)
	require.NoError(t, err)
	require.Equal(t, Published, res)
	got, _ := stamp.HeaderStamp(msg)
	require.Equal(t, stamp.Time(samples[100].Device), got, "passthrough while invalid: the device time as it was")
	feed(101, 200)
	st = core.Status()
	require.True(t, st.PLL.Valid)
	require.Equal(t, 20, st.PLL.Fill)
	require.Equal(t, uint64(201), st.MessagesIn, "counters go on")
	require.Equal(t, uint64(1), st.DroppedMalformed)
	require.Equal(t, 200, st.PLL.Updates, "the PLL's counters too")
	require.Equal(t, before.PLL.Resets, st.PLL.Resets, "a reconfiguration is no loss of lock")

	bad := cfg
	bad.PLL.Window = 5 // < fifo_size in envelope mode
	require.Error(t, core.Reconfigure(bad))
	require.Equal(t, cfg, core.Status().Config, "refused: nothing changed")
}

// TestAddCountersCoversEveryCounter: every counter of pll.Status (an int
// that is not a state) is carried over a Reconfigure.
func TestAddCountersCoversEveryCounter(t *testing.T) {
	notCounters := map[string]bool{"Fill": true, "Invalid": true} // samples in the FIFO, inconsistent in a row: state
	var s, base pll.Status
	sv, bv := reflect.ValueOf(&s).Elem(), reflect.ValueOf(&base).Elem()
	for i := range sv.NumField() {
		if sv.Field(i).Type() == reflect.TypeFor[int]() {
			sv.Field(i).SetInt(1)
			bv.Field(i).SetInt(2)
		}
	}
	sum := reflect.ValueOf(addCounters(s, base))
	for i := range sum.NumField() {
		f := sum.Type().Field(i)
		if f.Type != reflect.TypeFor[int]() {
			continue
		}
		want := int64(3)
		if notCounters[f.Name] {
			want = 1
		}
		require.Equal(t, want, sum.Field(i).Int(), f.Name)
	}
}

// TestDiagnoseAcrossCores: a status against one of a core with larger
// counters (before a rebuild) counts no change, never a wrapped-around
// difference.
func TestDiagnoseAcrossCores(t *testing.T) {
	old, err := New(config.DefaultConfig())
	require.NoError(t, err)
	for range 30 {
		_, _ = old.Process([]byte{1}, 0)
	}
	core, err := New(config.DefaultConfig())
	require.NoError(t, err)
	_, _ = core.Process(cdrtest.Message(5e9, "x", 0), 6e9)
	d := Report{Status: core.Status(), Prev: old.Status()}.Diagnose()
	require.NotContains(t, d.Message, "malformed")
	d = Report{Status: old.Status(), Prev: core.Status()}.Diagnose()
	require.Contains(t, d.Message, "30 malformed messages dropped")
}

// TestParameterErrors: rejected sets and overrides name the parameters,
// their values in seconds, and the allowed range.
func TestParameterErrors(t *testing.T) {
	p := config.DefaultParams()
	srv := nodetest.Declare(t, &p, nil)
	for _, tc := range []struct {
		set  params.Parameter
		want string
	}{
		{params.Parameter{Name: "window", Value: params.IntValue(5)}, "window (5) cannot be smaller than fifo_size (7) in envelope mode"},
		{params.Parameter{Name: "fifo_size", Value: params.IntValue(1)}, "Parameter {fifo_size} doesn't comply with integer range: 1 is not in [2, 65536]."},
		{params.Parameter{Name: "max_deviation_sec", Value: params.DoubleValue(0)}, "Parameter {max_deviation_sec} doesn't comply with floating point range: 0.0 is not in [1e-06, 3600.0]."},
		{params.Parameter{Name: "mode", Value: params.StringValue("psychic")}, `parameter 'mode': invalid parameter value: "psychic" is not one of sick, regression, envelope, offset`},
		{params.Parameter{Name: "when_invalid", Value: params.StringValue("guess")}, `parameter 'when_invalid': invalid parameter value: "guess" is not one of drop, receive_time, passthrough`},
	} {
		require.EqualError(t, srv.Set(tc.set)[0], tc.want)
	}
	d, _ := srv.Describe("mode")
	require.Equal(t, "one of: sick, regression, envelope, offset", d.AdditionalConstraints, "from pll's name table")
	p = config.DefaultParams()
	srv = nodetest.Declare(t, &p, map[string]params.Override{"window": {Value: params.IntValue(4), Source: "cs.yaml:9"}})
	require.Len(t, srv.Issues(), 1)
	require.Equal(t, `error: parameter "window" (cs.yaml:9): value 4 rejected, keeping 256: window (4) cannot be smaller than fifo_size (7) in envelope mode`, srv.Issues()[0].String())
}
