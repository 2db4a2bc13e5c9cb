// Package configtest checks the parameter files the package installs
// (config/<node>.yaml) against the declared parameters of every node of
// the registry, without ROS: every file loads without an issue, names no
// parameter the node lacks, and documents every parameter the node
// declares (its own and the runtime's, but use_sim_time).
package configtest

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/timealign/timealign/nodes/internal/registry"
	"github.com/timealign/timealign/nodes/nodeparams"
	"github.com/timealign/timealign/pkg/params"
)

func TestConfigFiles(t *testing.T) {
	files, err := filepath.Glob("../../../config/*.yaml")
	require.NoError(t, err)
	nodes := registry.Nodes()
	require.Len(t, files, len(nodes)+1, "one config/<node>.yaml per node, and demo.yaml (nodes/demo checks it)")
	for _, s := range nodes {
		t.Run(s.Name, func(t *testing.T) {
			path := filepath.Join("../../../config", s.Name+".yaml")
			data, err := os.ReadFile(path)
			require.NoError(t, err)
			f, err := params.ParseFile(path, data)
			require.NoError(t, err)
			node := "/" + s.Name
			srv, warnings, err := nodeparams.Resolve([]*params.File{f}, node, s.Bind, s.Validate)
			require.NoError(t, err)
			require.Empty(t, warnings, "%s sets parameters %s does not have", path, s.Name)
			require.Empty(t, srv.Issues(), "%s loads cleanly", path)
			overrides := params.ResolveOverrides(node, []*params.File{f}, nil)
			var missing []string
			for _, name := range srv.Names() {
				// use_sim_time is ROS's own, set by launch files: a
				// parameter file that set it would override them.
				if _, ok := overrides[name]; !ok && name != "use_sim_time" {
					missing = append(missing, name)
				}
			}
			require.Empty(t, missing, "%s must document every parameter of %s", path, s.Name)
			require.True(t, slices.Contains(srv.Names(), "inbox.max_messages"), "the runtime's parameters are declared too")
		})
	}
}
