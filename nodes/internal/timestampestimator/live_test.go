package timestampestimator

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timealign/timealign/internal/testutil/cdrtest"
	"github.com/timealign/timealign/nodes/internal/nodetest"
	"github.com/timealign/timealign/nodes/internal/timestampestimator/config"
	"github.com/timealign/timealign/pkg/params"
	"github.com/timealign/timealign/pkg/stamp"
	"github.com/timealign/timealign/pkg/tsest"
)

// TestEveryWritableParameterIsLive: each writable parameter, set at run
// time, is what the running node then works with (a change restarts the
// estimator, the counters go on); the read-only ones say why in their
// descriptions.
func TestEveryWritableParameterIsLive(t *testing.T) {
	changes := []params.Parameter{
		{Name: "stamp_source", Value: params.StringValue("receive_time")},
		{Name: "window_sec", Value: params.DoubleValue(0.75)},
		{Name: "period_sec", Value: params.DoubleValue(0.01)},
		{Name: "min_latency_sec", Value: params.DoubleValue(0.002)},
		{Name: "loss_threshold", Value: params.IntValue(5)},
		{Name: "never_infer_loss", Value: params.BoolValue(true)},
	}
	node := nodetest.Live(t, Spec(), changes...).(*Node)
	require.Equal(t, uint64(len(changes)), node.core.Status().Estimator.Resets, "each change restarted the estimator")
}

// TestReconfigure: the estimator starts over with the new Config (here a
// minimum latency, which moves every estimate), the counters go on, a bad
// Config is refused and changes nothing.
func TestReconfigure(t *testing.T) {
	core, err := New(config.DefaultConfig())
	require.NoError(t, err)
	samples := imu(t, 600)
	feed := func(from, to int) (last stamp.Time, lastRecv stamp.Time) {
		for _, s := range samples[from:to] {
			msg := cdrtest.Message(s.Receive, "imu", 4)
			_, err := core.Process(msg, 0)
			require.NoError(t, err)
			last, _ = stamp.HeaderStamp(msg)
			lastRecv = s.Receive
		}
		return last, lastRecv
	}
	_, err = core.Process([]byte{1}, 0) // malformed: counted
	require.Error(t, err)
	feed(0, 300)
	before := core.Status()
	cfg := config.DefaultConfig()
	cfg.Estimator.MinLatency = 50 * time.Millisecond
	require.NoError(t, core.Reconfigure(cfg))
	est, recv := feed(300, 600)
	require.LessOrEqual(t, est, recv.Add(-50*time.Millisecond), "estimates now lie the minimum latency before the fit")
	st := core.Status()
	require.Equal(t, cfg, st.Config)
	require.Equal(t, uint64(601), st.MessagesIn, "counters go on")
	require.Equal(t, uint64(1), st.DroppedMalformed)
	require.Equal(t, uint64(600), st.Estimator.Samples, "the estimator's counters too")
	require.Equal(t, before.Estimator.Resets+1, st.Estimator.Resets, "the restart counted as a reset")

	bad := cfg
	bad.Estimator.Period = time.Hour
	require.Error(t, core.Reconfigure(bad))
	require.Equal(t, cfg, core.Status().Config, "refused: nothing changed")
	require.NoError(t, core.Reconfigure(cfg))
	require.Equal(t, st.Estimator.Resets, core.Status().Estimator.Resets, "the same Config: no restart")
}

// TestAddCountersCoversEveryCounter: every counter of tsest.Status (a
// uint64 that is not a state) is carried over a Reconfigure.
func TestAddCountersCoversEveryCounter(t *testing.T) {
	notCounters := map[string]bool{"ExpectedLosses": true} // losses announced and not yet seen: state
	var s, base tsest.Status
	sv, bv := reflect.ValueOf(&s).Elem(), reflect.ValueOf(&base).Elem()
	for i := range sv.NumField() {
		if sv.Field(i).Kind() == reflect.Uint64 {
			sv.Field(i).SetUint(1)
			bv.Field(i).SetUint(2)
		}
	}
	sum := reflect.ValueOf(addCounters(s, base))
	for i := range sum.NumField() {
		f := sum.Type().Field(i)
		if f.Type.Kind() != reflect.Uint64 {
			continue
		}
		want := uint64(3)
		if notCounters[f.Name] {
			want = 1
		}
		require.Equal(t, want, sum.Field(i).Uint(), f.Name)
	}
}

// TestDiagnoseAcrossCores: diagnostics of a status against one of a core
// with larger counters (before a rebuild) count no change, never a
// wrapped-around difference.
func TestDiagnoseAcrossCores(t *testing.T) {
	old, err := New(config.DefaultConfig())
	require.NoError(t, err)
	for _, s := range imu(t, 50) {
		_, _ = old.Process(cdrtest.Message(s.Receive, "imu", 4), 0)
		_, _ = old.Process([]byte{1, 2, 3}, 0)
	}
	_, _ = old.Process(cdrtest.Message(1e9, "imu", 4), 0) // back
	core, err := New(config.DefaultConfig())
	require.NoError(t, err)
	_, _ = core.Process(cdrtest.Message(5e9, "imu", 4), 0)
	d := Report{Status: core.Status(), Prev: old.Status()}.Diagnose()
	require.NotContains(t, d.Message, "malformed")
	require.NotContains(t, d.Message, "went back")
	require.NotContains(t, d.Message, "18446744073709551")
	d = Report{Status: old.Status(), Prev: core.Status()}.Diagnose()
	require.Contains(t, d.Message, "50 malformed messages dropped")
}

// TestParameterErrors: rejected sets and overrides name the parameters and
// their values in seconds, and the allowed range.
func TestParameterErrors(t *testing.T) {
	p := config.DefaultParams()
	srv := nodetest.Declare(t, &p, nil)
	for _, tc := range []struct {
		sets []params.Parameter
		want string
	}{
		{[]params.Parameter{{Name: "window_sec", Value: params.DoubleValue(0.5)}, {Name: "period_sec", Value: params.DoubleValue(3.0)}},
			"period_sec (3.0) must be shorter than window_sec (0.5)"},
		{[]params.Parameter{{Name: "period_sec", Value: params.DoubleValue(0.02)}, {Name: "window_sec", Value: params.DoubleValue(0.01)}},
			"period_sec (0.02) must be shorter than window_sec (0.01)"},
		{[]params.Parameter{{Name: "window_sec", Value: params.DoubleValue(7200.0)}},
			"Parameter {window_sec} doesn't comply with floating point range: 7200.0 is not in [0.001, 3600.0]."},
		{[]params.Parameter{{Name: "loss_threshold", Value: params.IntValue(-1)}},
			"Parameter {loss_threshold} doesn't comply with integer range: -1 is not in [0, 1000]."},
		{[]params.Parameter{{Name: "stamp_source", Value: params.StringValue("gps")}},
			`parameter 'stamp_source': invalid parameter value: "gps" is not one of header, receive_time`},
	} {
		last := len(tc.sets) - 1
		for _, s := range tc.sets[:last] {
			require.NoError(t, srv.Set(s)[0])
		}
		require.EqualError(t, srv.Set(tc.sets[last])[0], tc.want)
	}
	// The same reasons for parameter files and -p.
	p = config.DefaultParams()
	srv = nodetest.Declare(t, &p, map[string]params.Override{
		"window_sec": {Value: params.DoubleValue(0.5), Source: "ts.yaml:3"},
		"period_sec": {Value: params.DoubleValue(3.0), Source: "-p"},
	})
	var issues []string
	for _, is := range srv.Issues() {
		issues = append(issues, is.String())
	}
	require.Equal(t, []string{`error: parameter "period_sec" (-p): value 3.0 rejected, keeping 0.0: period_sec (3.0) must be shorter than window_sec (0.5)`}, issues)
	require.Equal(t, 500*time.Millisecond, p.Config.Estimator.Window)
	for _, is := range srv.Issues() {
		require.NotRegexp(t, `\b(Window|Period|Estimator)\b`, is.Reason, "no Go field")
		require.False(t, strings.Contains(is.Reason, "ms)"), "seconds, not Go durations")
	}
}
