// Package configtest checks the parameter files the package installs
// (config/<node>.yaml) against the nodes' declared parameters, without ROS:
// every file loads without an issue, names no parameter the node lacks, and
// documents every parameter the node declares (its own and the runtime's,
// but use_sim_time).
package configtest

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/timealign/timealign/nodes/internal/clocksync"
	"github.com/timealign/timealign/nodes/internal/runtimeparams"
	"github.com/timealign/timealign/nodes/internal/sensorsim"
	"github.com/timealign/timealign/nodes/internal/stampmonitor"
	"github.com/timealign/timealign/nodes/internal/streamaligner"
	"github.com/timealign/timealign/nodes/internal/synchronizer"
	"github.com/timealign/timealign/nodes/internal/timestampestimator"
	"github.com/timealign/timealign/pkg/params"
)

// binding is what rosnode.Setup takes from a node: its validate and bind.
type binding struct {
	validate func() error
	bind     func(*params.Binder)
}

func nodes() map[string]binding {
	ts, cs, sy, al := timestampestimator.DefaultParams(), clocksync.DefaultParams(), synchronizer.DefaultParams(), streamaligner.DefaultParams()
	ss, sm := sensorsim.DefaultParams(), stampmonitor.DefaultParams()
	return map[string]binding{
		"sensor_sim":          {ss.Validate, ss.Bind},
		"stamp_monitor":       {sm.Validate, sm.Bind},
		"timestamp_estimator": {ts.Validate, ts.Bind},
		"clock_sync":          {cs.Validate, cs.Bind},
		"synchronizer":        {sy.Validate, sy.Bind},
		"stream_aligner":      {al.Validate, al.Bind},
	}
}

func TestConfigFiles(t *testing.T) {
	files, err := filepath.Glob("../../../config/*.yaml")
	require.NoError(t, err)
	require.Len(t, files, len(nodes())+1, "one config/<node>.yaml per node, and demo.yaml (nodes/demo checks it)")
	for node, b := range nodes() {
		t.Run(node, func(t *testing.T) {
			path := filepath.Join("../../../config", node+".yaml")
			data, err := os.ReadFile(path)
			require.NoError(t, err)
			f, err := params.ParseFile(path, data)
			require.NoError(t, err)
			overrides := params.ResolveOverrides("/"+node, []*params.File{f}, nil)
			srv := params.NewServer(params.Options{Node: "/" + node, Overrides: overrides})
			binder := params.NewBinder(srv, b.validate)
			b.bind(binder)
			require.NoError(t, binder.Declare())
			rp := runtimeparams.DefaultParams()
			runtime := params.NewBinder(srv, nil)
			rp.Bind(runtime)
			require.NoError(t, runtime.Declare())
			require.Empty(t, srv.Issues(), "%s loads cleanly", path)
			declared := srv.Names()
			var unknown, missing []string
			for name := range overrides {
				if !slices.Contains(declared, name) {
					unknown = append(unknown, name)
				}
			}
			for _, name := range declared {
				// use_sim_time is ROS's own, set by launch files: a
				// parameter file that set it would override them.
				if _, ok := overrides[name]; !ok && name != "use_sim_time" {
					missing = append(missing, name)
				}
			}
			require.Empty(t, unknown, "%s sets parameters %s does not have", path, node)
			require.Empty(t, missing, "%s must document every parameter of %s", path, node)
		})
	}
}
