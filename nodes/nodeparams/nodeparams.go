// Package nodeparams resolves the parameters of timealign's nodes from ROS 2
// parameter files exactly as the running nodes do, for the offline tools
// (timealign bag fix, the demo's offline replay in nodes/demo): the same declarations, ranges, checks and messages,
// the node's own and the runtime's (inbox.*, use_sim_time), with node-name
// sections and wildcards resolved for the node's fully qualified name.
//
// A value the node would reject (and keep its default for) is an error
// here; a name the node does not declare is a warning.
package nodeparams

import (
	"errors"
	"fmt"

	"github.com/timealign/timealign/nodes/internal/clocksync"
	"github.com/timealign/timealign/nodes/internal/runtimeparams"
	"github.com/timealign/timealign/nodes/internal/sensorsim"
	"github.com/timealign/timealign/nodes/internal/stampmonitor"
	"github.com/timealign/timealign/nodes/internal/synchronizer"
	"github.com/timealign/timealign/nodes/internal/timestampestimator"
	"github.com/timealign/timealign/pkg/params"
	"github.com/timealign/timealign/pkg/pll"
	tsync "github.com/timealign/timealign/pkg/sync"
	"github.com/timealign/timealign/pkg/tsest"
)

// Estimator is what a timestamp_estimator node's parameters say.
type Estimator struct {
	Config tsest.Config
	// ReceiveTime: stamp_source is receive_time (the node feeds the time
	// a message reached it, not header.stamp).
	ReceiveTime bool
	// MessageType is the node's message_type ("" when discovered).
	MessageType string
}

// TimestampEstimator resolves the parameters of the timestamp_estimator
// node named node ("/ns/name") from files.
func TimestampEstimator(files []*params.File, node string) (Estimator, []string, error) {
	p := timestampestimator.DefaultParams()
	warnings, err := declare(files, node, p.Bind, p.Validate)
	return Estimator{Config: p.Config.Estimator, ReceiveTime: p.Config.Source == timestampestimator.ReceiveTime,
		MessageType: p.MessageType}, warnings, err
}

// Clock is what a clock_sync node's parameters say.
type Clock struct {
	PLL pll.Config
	// WhenInvalid is when_invalid: "drop", "receive_time" or
	// "passthrough".
	WhenInvalid string
	MessageType string
}

// ClockSync resolves the parameters of the clock_sync node named node.
func ClockSync(files []*params.File, node string) (Clock, []string, error) {
	p := clocksync.DefaultParams()
	warnings, err := declare(files, node, p.Bind, p.Validate)
	return Clock{PLL: p.Config.PLL, WhenInvalid: p.Config.WhenInvalid.String(), MessageType: p.MessageType},
		warnings, err
}

// Sync is what a synchronizer node's parameters say.
type Sync struct {
	Config       tsync.Config
	MessageTypes []string
}

// Synchronizer resolves the parameters of the synchronizer node named
// node; inputs is the default of its inputs parameter (the number of
// topics the caller synchronizes).
func Synchronizer(files []*params.File, node string, inputs int) (Sync, []string, error) {
	p := synchronizer.DefaultParams()
	p.Config.Sync.Topics = inputs
	warnings, err := declare(files, node, p.Bind, p.Validate)
	return Sync{Config: p.Config.Sync, MessageTypes: p.MessageTypes}, warnings, err
}

// SensorSim resolves the parameters of the sensor_sim node named node.
func SensorSim(files []*params.File, node string) (sensorsim.Config, []string, error) {
	p := sensorsim.DefaultParams()
	warnings, err := declare(files, node, p.Bind, p.Validate)
	return p.Config, warnings, err
}

// Monitor is what a stamp_monitor node's parameters say.
type Monitor struct {
	Config stampmonitor.Config
	Inputs int
	Labels []string
}

// StampMonitor resolves the parameters of the stamp_monitor node named
// node.
func StampMonitor(files []*params.File, node string) (Monitor, []string, error) {
	p := stampmonitor.DefaultParams()
	warnings, err := declare(files, node, p.Bind, p.Validate)
	return Monitor{Config: p.Config, Inputs: p.Inputs, Labels: p.Labels}, warnings, err
}

// declare binds a node's parameters and the runtime's with the overrides
// files give node; it fails on any value the node would reject.
func declare(files []*params.File, node string, bind func(*params.Binder), validate func() error) (warnings []string, err error) {
	srv := params.NewServer(params.Options{Node: node, Overrides: params.ResolveOverrides(node, files, nil)})
	b := params.NewBinder(srv, validate)
	bind(b)
	if err := b.Declare(); err != nil {
		return nil, fmt.Errorf("node %s: %w", node, err)
	}
	runtime := runtimeparams.DefaultParams()
	rt := params.NewBinder(srv, nil)
	runtime.Bind(rt)
	if err := rt.Declare(); err != nil {
		return nil, fmt.Errorf("node %s: %w", node, err)
	}
	var errs []error
	for _, is := range srv.Issues() {
		if is.Severity == params.Error {
			errs = append(errs, fmt.Errorf("node %s: %s", node, is))
		} else {
			warnings = append(warnings, fmt.Sprintf("node %s: %s", node, is))
		}
	}
	return warnings, errors.Join(errs...)
}
