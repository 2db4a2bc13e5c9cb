// Package nodeparams resolves the parameters of timealign's nodes from ROS 2
// parameter files exactly as the running nodes do, for the offline tools
// (timealign bag fix, the demo's offline replay in nodes/demo): the same
// declarations (each node's nodes/internal/<node>/config, and the
// runtime's inbox.* and use_sim_time in nodes/internal/runtimeparams), so
// the same ranges, checks and messages, with node-name sections and
// wildcards resolved for the node's fully qualified name. The
// declarations need no node runtime: a tool that imports nodeparams does
// not link nodekit.
//
// A value the node would reject (and keep its default for) is an error
// here; a name the node does not declare is a warning.
package nodeparams

import (
	"errors"
	"fmt"

	clocksynccfg "github.com/timealign/timealign/nodes/internal/clocksync/config"
	"github.com/timealign/timealign/nodes/internal/runtimeparams"
	sensorsimcfg "github.com/timealign/timealign/nodes/internal/sensorsim/config"
	stampmonitorcfg "github.com/timealign/timealign/nodes/internal/stampmonitor/config"
	synchronizercfg "github.com/timealign/timealign/nodes/internal/synchronizer/config"
	timestampestimatorcfg "github.com/timealign/timealign/nodes/internal/timestampestimator/config"
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
	p := timestampestimatorcfg.DefaultParams()
	_, warnings, err := Resolve(files, node, p.Bind, p.Validate)
	return Estimator{Config: p.Config.Estimator, ReceiveTime: p.Config.Source == timestampestimatorcfg.ReceiveTime,
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
	p := clocksynccfg.DefaultParams()
	_, warnings, err := Resolve(files, node, p.Bind, p.Validate)
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
	p := synchronizercfg.DefaultParams()
	p.Config.Sync.Topics = inputs
	_, warnings, err := Resolve(files, node, p.Bind, p.Validate)
	return Sync{Config: p.Config.Sync, MessageTypes: p.MessageTypes}, warnings, err
}

// SensorSim resolves the parameters of the sensor_sim node named node.
func SensorSim(files []*params.File, node string) (sensorsimcfg.Config, []string, error) {
	p := sensorsimcfg.DefaultParams()
	_, warnings, err := Resolve(files, node, p.Bind, p.Validate)
	return p.Config, warnings, err
}

// Monitor is what a stamp_monitor node's parameters say.
type Monitor struct {
	Config stampmonitorcfg.Config
	Inputs int
	Labels []string
}

// StampMonitor resolves the parameters of the stamp_monitor node named
// node.
func StampMonitor(files []*params.File, node string) (Monitor, []string, error) {
	p := stampmonitorcfg.DefaultParams()
	_, warnings, err := Resolve(files, node, p.Bind, p.Validate)
	return Monitor{Config: p.Config, Inputs: p.Inputs, Labels: p.Labels}, warnings, err
}

// Resolve declares the parameters of the node named node ("/ns/name")
// with the overrides files give it, on a new parameter server that it
// returns: the node's own parameters, which bind declares and validate
// checks (a node's config.Params' Bind and Validate, or its
// nodekit.Spec's), and the runtime's. It fails on any value the node would
// reject; the warnings name the parameters the files set that the node
// does not declare.
func Resolve(files []*params.File, node string, bind func(*params.Binder), validate func() error) (srv *params.Server, warnings []string, err error) {
	srv = params.NewServer(params.Options{Node: node, Overrides: params.ResolveOverrides(node, files, nil)})
	b := params.NewBinder(srv, validate)
	bind(b)
	if err := b.Declare(); err != nil {
		return nil, nil, fmt.Errorf("node %s: %w", node, err)
	}
	runtime := runtimeparams.DefaultParams()
	rt := params.NewBinder(srv, nil)
	runtime.Bind(rt)
	if err := rt.Declare(); err != nil {
		return nil, nil, fmt.Errorf("node %s: %w", node, err)
	}
	var errs []error
	for _, is := range srv.Issues() {
		if is.Severity == params.Error {
			errs = append(errs, fmt.Errorf("node %s: %s", node, is))
		} else {
			warnings = append(warnings, fmt.Sprintf("node %s: %s", node, is))
		}
	}
	return srv, warnings, errors.Join(errs...)
}
