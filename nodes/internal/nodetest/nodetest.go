// Package nodetest holds what the tests of the nodes share: a node's
// parameters declared as the node runtime declares them, and the check
// that every writable parameter set at run time is what the running node
// then works with.
package nodetest

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/timealign/timealign/nodes/internal/nodekit"
	"github.com/timealign/timealign/pkg/params"
)

// Params are a node's parameter declarations, as each node's
// *config.Params has them.
type Params interface {
	Bind(b *params.Binder)
	Validate() error
}

// Declare declares p's parameters on a new server, taking the overrides
// ov (rejected ones are the server's Issues), as the node runtime does.
func Declare(t testing.TB, p Params, ov map[string]params.Override) *params.Server {
	t.Helper()
	return declare(t, p.Bind, p.Validate, ov)
}

func declare(t testing.TB, bind func(*params.Binder), validate func() error, ov map[string]params.Override) *params.Server {
	t.Helper()
	srv := params.NewServer(params.Options{Node: "/test", Overrides: ov})
	b := params.NewBinder(srv, validate)
	bind(b)
	require.NoError(t, b.Declare())
	return srv
}

// Live declares the parameters of node s, makes its core (s.New) and
// checks that changes name every writable parameter (and that every
// read-only one says why in its description); then it sets each change in
// turn, as `ros2 param set` does, and checks that the node's diagnostics
// (Core.Report: Report.Diagnose), which list the settings its core runs with, show the new
// value. Changes are set in order: each must be valid on its own. Live
// returns the core, for checks of its own.
func Live(t testing.TB, s nodekit.Spec, changes ...params.Parameter) nodekit.Core {
	t.Helper()
	srv := declare(t, s.Bind, s.Validate, nil)
	node, err := s.New(func(int, []byte) {})
	require.NoError(t, err)
	srv.AddApplier(func(changed []params.Parameter) { require.NoError(t, node.Reconfigure(changed)) })
	var writable, changed []string
	for _, name := range srv.Names() {
		d, _ := srv.Describe(name)
		if d.ReadOnly {
			require.Contains(t, d.Description, params.ReadOnlyReason, "%s says why it is read-only", name)
			continue
		}
		writable = append(writable, name)
	}
	for _, c := range changes {
		changed = append(changed, c.Name)
	}
	require.ElementsMatch(t, writable, changed, "a change for every writable parameter")
	setting := func(name string) string {
		d := node.Report(0, nodekit.RuntimeStatus{Node: "/test"}).Diagnose()
		for _, kv := range d.Values {
			if kv.Key == name {
				return kv.Value
			}
		}
		t.Fatalf("%s is not in the diagnostics", name)
		return ""
	}
	for _, c := range changes {
		require.NotEqual(t, c.Value.String(), setting(c.Name), "%s: the test changes it", c.Name)
		require.NoError(t, srv.Set(c)[0], c.Name)
		require.Equal(t, c.Value.String(), setting(c.Name), "%s: the node runs with it", c.Name)
	}
	return node
}
