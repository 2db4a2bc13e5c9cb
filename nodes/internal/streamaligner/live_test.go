package streamaligner

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timealign/timealign/internal/testutil/cdrtest"
	"github.com/timealign/timealign/nodes/internal/nodekit"
	"github.com/timealign/timealign/nodes/internal/nodetest"
	"github.com/timealign/timealign/nodes/internal/streamaligner/config"
	"github.com/timealign/timealign/pkg/params"
	"github.com/timealign/timealign/pkg/stamp"
)

// TestEveryWritableParameterIsLive: each writable parameter, set at run
// time, is what the running node then works with; the read-only ones say
// why in their descriptions.
func TestEveryWritableParameterIsLive(t *testing.T) {
	node := nodetest.Live(t, Spec(),
		params.Parameter{Name: "timeout_sec", Value: params.DoubleValue(0.25)},
		params.Parameter{Name: "silent_after_sec", Value: params.DoubleValue(0.0)},
	).(*Node)
	require.Equal(t, 250*time.Millisecond, node.core.Status().Aligner.Timeout)
}

// TestSilentAfterLive: a longer silent_after_sec waits again for an input
// marked silent that has not been silent that long; 0 waits by the
// timeout alone.
func TestSilentAfterLive(t *testing.T) {
	c, out := newCore(t, config.DefaultConfig()) // silent after 2 s
	base := 1_700_000_000 * stamp.Time(time.Second)
	sec := stamp.Time(time.Second)
	require.NoError(t, c.Add(1, cdrtest.Message(base, "b", 8), sec))
	c.Tick(4 * sec) // both silent for 3 s and more: not waited for
	require.Equal(t, []bool{true, true}, c.Status().Silent)
	cfg := config.DefaultConfig()
	cfg.SilentAfter = 10 * time.Second
	require.NoError(t, c.Reconfigure(cfg))
	require.Equal(t, []bool{false, false}, c.Status().Silent, "silent for less than 10 s: waited for again")
	require.NoError(t, c.Add(1, cdrtest.Message(base+sec/10, "b", 8), 4*sec))
	require.Len(t, *out, 1, "b's newer message waits for a")
	cfg.SilentAfter = time.Second
	require.NoError(t, c.Reconfigure(cfg))
	c.Tick(6 * sec)
	require.Equal(t, []bool{true, true}, c.Status().Silent)
	require.Len(t, *out, 2, "a silent for 1 s: not waited for")

	fixed := cfg
	fixed.Aligner.Streams = slices.Clone(cfg.Aligner.Streams)
	fixed.Aligner.Streams[1].Priority = 4
	require.ErrorIs(t, c.Reconfigure(fixed), ErrFixed)
	fixed = cfg
	fixed.Aligner.MaxBufferSize = 7
	require.ErrorIs(t, c.Reconfigure(fixed), ErrFixed)
	require.Equal(t, cfg, c.Status().Config, "refused: nothing changed")
}

// TestDiagnoseAcrossCores: a status against one with larger counters
// (another core's) counts no change, never a wrapped-around difference.
func TestDiagnoseAcrossCores(t *testing.T) {
	cfg := config.DefaultConfig()
	cfg.SilentAfter = 0
	old, _ := newCore(t, cfg)
	require.Error(t, old.Add(0, []byte{1}, 1))
	require.NoError(t, old.Add(0, cdrtest.Message(5*ms, "a", 8), 1))
	require.NoError(t, old.Add(0, cdrtest.Message(4*ms, "a", 8), 2)) // backward
	core, _ := newCore(t, cfg)
	in := []string{"/a", "/b"}
	require.NotContains(t, Report{Status: core.Status(), Prev: old.Status(), Runtime: nodekit.RuntimeStatus{Inputs: in}}.Diagnose().Message, "input /a")
	d := Report{Status: old.Status(), Prev: core.Status(), Runtime: nodekit.RuntimeStatus{Inputs: in}}.Diagnose()
	require.Contains(t, d.Message, "input /a: 0 late, 1 backward in time")
	require.Contains(t, d.Message, "input /a: 1 malformed messages dropped")
}

// TestParameterErrors: rejected values name the parameters, an entry of a
// per-input array by its place.
func TestParameterErrors(t *testing.T) {
	p := config.DefaultParams()
	srv := nodetest.Declare(t, &p, map[string]params.Override{
		"periods_sec":  {Value: params.DoublesValue([]float64{0.01, 0}), Source: "-p"},
		"buffer_sizes": {Value: params.IntsValue([]int64{-1, -1}), Source: "-p"},
	})
	require.Len(t, srv.Issues(), 1)
	require.Equal(t, `error: parameter "buffer_sizes" (-p): value [-1, -1] rejected, keeping []: `+
		`value 2 of buffer_sizes is automatic (-1) but value 2 of periods_sec is 0: give a size, or 0 for a growing buffer`,
		srv.Issues()[0].String())
	require.EqualError(t, srv.Set(params.Parameter{Name: "silent_after_sec", Value: params.DoubleValue(-1)})[0],
		"Parameter {silent_after_sec} doesn't comply with floating point range: -1.0 is not in [0.0, 1e+06].")
}
