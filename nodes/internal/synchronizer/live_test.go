package synchronizer

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timealign/timealign/internal/testutil/cdrtest"
	"github.com/timealign/timealign/nodes/internal/nodekit"
	"github.com/timealign/timealign/nodes/internal/nodetest"
	"github.com/timealign/timealign/nodes/internal/synchronizer/config"
	"github.com/timealign/timealign/pkg/params"
	"github.com/timealign/timealign/pkg/stamp"
)

// TestEveryWritableParameterIsLive: each writable parameter, set at run
// time, is what the running node then works with (before, silent_after_sec
// reported success and changed nothing); the read-only ones say why in
// their descriptions.
func TestEveryWritableParameterIsLive(t *testing.T) {
	node := nodetest.Live(t, Spec(),
		params.Parameter{Name: "silent_after_sec", Value: params.DoubleValue(10.0)},
		params.Parameter{Name: "max_drop_share", Value: params.DoubleValue(0.25)},
	).(*Node)
	require.Equal(t, 10*time.Second, node.core.Config().SilentAfter)
	require.Equal(t, 0.25, node.core.Config().MaxDropShare)
	p := config.DefaultParams()
	d, _ := nodetest.Declare(t, &p, nil).Describe("policy")
	require.Equal(t, "one of: approximate, exact, epsilon, latest", d.AdditionalConstraints, "from pkg/sync's name table")
}

// TestSilentAfterLive: the silence that makes an input blocking follows a
// change of silent_after_sec at once.
func TestSilentAfterLive(t *testing.T) {
	core, err := New(config.DefaultConfig(), func([][]byte, func() []byte) {})
	require.NoError(t, err)
	sec := stamp.Time(time.Second)
	require.NoError(t, core.Add(1, cdrtest.Message(1, "", 0), 1)) // then /imu stops
	for k := stamp.Time(0); k < 50; k++ {
		require.NoError(t, core.Add(0, cdrtest.Message(k*sec/10, "", 0), k*sec/10))
	}
	inputs := []string{"/camera", "/imu"}
	require.Equal(t, "/imu", core.Status().Blocking(inputs, 5*sec), "silent for 5 s, over 2 s (the default)")
	cfg := config.DefaultConfig()
	cfg.SilentAfter = 10 * time.Second
	require.NoError(t, core.Reconfigure(cfg))
	require.Empty(t, core.Status().Blocking(inputs, 5*sec), "not yet silent for 10 s")
	d := Report{Now: 5 * sec, Status: core.Status(), Prev: core.Status(), Runtime: nodekit.RuntimeStatus{Inputs: inputs}}.Diagnose()
	require.Equal(t, nodekit.OK, d.Level, d.Message)

	fixed := cfg
	fixed.Sync.QueueSize = 3
	require.ErrorIs(t, core.Reconfigure(fixed), ErrFixed)
	fixed = cfg
	fixed.Sync.LowerBounds = []time.Duration{0, 0}
	require.ErrorIs(t, core.Reconfigure(fixed), ErrFixed)
	bad := cfg
	bad.MaxDropShare = 2
	require.ErrorIs(t, core.Reconfigure(bad), config.ErrConfig)
	require.Equal(t, cfg, core.Config(), "refused: nothing changed")
}

// TestDiagnoseAcrossCores: a status against one with larger counters
// (another core's) counts no change, never a wrapped-around difference.
func TestDiagnoseAcrossCores(t *testing.T) {
	old, err := New(config.DefaultConfig(), func([][]byte, func() []byte) {})
	require.NoError(t, err)
	for k := stamp.Time(1); k <= 40; k++ {
		require.NoError(t, old.Add(0, cdrtest.Message(k*1e8, "", 0), k*1e8)) // input 1 silent: queue drops
	}
	_ = old.Add(1, []byte{1}, 0)
	core, err := New(config.DefaultConfig(), func([][]byte, func() []byte) {})
	require.NoError(t, err)
	require.NoError(t, core.Add(0, cdrtest.Message(5e9, "", 0), 5e9))
	require.NoError(t, core.Add(1, cdrtest.Message(5e9, "", 0), 5e9))
	inputs := []string{"/a", "/b"}
	d := Report{Now: 5e9, Status: core.Status(), Prev: old.Status(), Runtime: nodekit.RuntimeStatus{Inputs: inputs}}.Diagnose()
	require.Equal(t, nodekit.OK, d.Level, d.Message)
	d = Report{Now: 4e9, Status: old.Status(), Prev: core.Status(), Runtime: nodekit.RuntimeStatus{Inputs: inputs}}.Diagnose()
	require.Contains(t, d.Message, "input /a: the policy drops more than max_drop_share of its messages")
	require.Contains(t, d.Message, "input /b: malformed")
}

// TestParameterErrors: rejected values name the parameters.
func TestParameterErrors(t *testing.T) {
	p := config.DefaultParams()
	srv := nodetest.Declare(t, &p, map[string]params.Override{
		"lower_bounds_sec": {Value: params.DoublesValue([]float64{0.01, 0.02, 0.03}), Source: "-p"},
		"epsilon_sec":      {Value: params.DoubleValue(-1), Source: "-p"},
	})
	var issues []string
	for _, is := range srv.Issues() {
		issues = append(issues, is.String())
	}
	require.Equal(t, []string{
		`error: parameter "epsilon_sec" (-p): value -1.0 rejected, keeping 0.0: Parameter {epsilon_sec} doesn't comply with floating point range: -1.0 is not in [0.0, 1e+06].`,
		`error: parameter "lower_bounds_sec" (-p): value [0.01, 0.02, 0.03] rejected, keeping []: lower_bounds_sec has 3 entries, want one per topic (inputs 2) or none`,
	}, issues)
	p = config.DefaultParams()
	srv = nodetest.Declare(t, &p, map[string]params.Override{"lower_bounds_sec": {Value: params.DoublesValue([]float64{0.01, -0.002}), Source: "f.yaml:2"}})
	require.Len(t, srv.Issues(), 1)
	require.Contains(t, srv.Issues()[0].Reason, "value 2 of lower_bounds_sec is -0.002, want ≥ 0")
	require.EqualError(t, srv.Set(params.Parameter{Name: "max_drop_share", Value: params.DoubleValue(1.5)})[0],
		"Parameter {max_drop_share} doesn't comply with floating point range: 1.5 is not in [0.0, 1.0].")
}
