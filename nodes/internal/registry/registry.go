// Package registry is the list of timealign's nodes: the one place that
// names them all. Each node is a package nodes/internal/<executable
// without its underscores> (timestamp_estimator: timestampestimator) that
// exports its Spec, whose Name is the executable's and the node's default
// name; the executable, nodes/<executable>, runs that Spec and nothing
// else (its main is rosnode.Main(<package>.Spec())).
//
// The registry's tests hold the executables, CMakeLists.txt's list of
// nodes and the installed parameter files (config/<executable>.yaml) to
// this list, generate docs/parameters.md from the nodes' declarations and
// hold README.md's table of each node to them; the bad-input tests
// (nodes/internal/badinput) run its nodes.
package registry

import (
	"github.com/timealign/timealign/nodes/internal/clocksync"
	"github.com/timealign/timealign/nodes/internal/nodekit"
	"github.com/timealign/timealign/nodes/internal/sensorsim"
	"github.com/timealign/timealign/nodes/internal/stampmonitor"
	"github.com/timealign/timealign/nodes/internal/streamaligner"
	"github.com/timealign/timealign/nodes/internal/synchronizer"
	"github.com/timealign/timealign/nodes/internal/timestampestimator"
)

// Nodes returns the Spec of every node, each on its own default
// parameters: the correctors, the matchers, then the simulator and the
// monitor of the demo.
func Nodes() []nodekit.Spec {
	return []nodekit.Spec{
		timestampestimator.Spec(),
		clocksync.Spec(),
		synchronizer.Spec(),
		streamaligner.Spec(),
		sensorsim.Spec(),
		stampmonitor.Spec(),
	}
}

// Node returns the Spec of the node whose executable is name, on its
// default parameters.
func Node(name string) (nodekit.Spec, bool) {
	for _, s := range Nodes() {
		if s.Name == name {
			return s, true
		}
	}
	return nodekit.Spec{}, false
}
