// Package demo is the live demo (launch/demo.launch.py with
// config/demo.yaml) replayed offline: sensor_sim's sensors, the IMU through
// timestamp_estimator with the reference pulses, the lidar through
// clock_sync, and stamp_monitor's figures, computed by the nodes' own
// cores without ROS, each message received when it is published (no
// middleware delay). The integration test of the launch file holds the
// live figures to these; docs/nodes.md quotes them.
package demo

import (
	"fmt"
	"time"

	"github.com/timealign/timealign/nodes/internal/clocksync"
	clocksynccfg "github.com/timealign/timealign/nodes/internal/clocksync/config"
	"github.com/timealign/timealign/nodes/internal/sensorsim"
	sensorsimcfg "github.com/timealign/timealign/nodes/internal/sensorsim/config"
	"github.com/timealign/timealign/nodes/internal/stampmonitor"
	stampmonitorcfg "github.com/timealign/timealign/nodes/internal/stampmonitor/config"
	"github.com/timealign/timealign/nodes/internal/timestampestimator"
	timestampestimatorcfg "github.com/timealign/timealign/nodes/internal/timestampestimator/config"
	"github.com/timealign/timealign/nodes/nodeparams"
	"github.com/timealign/timealign/pkg/params"
	"github.com/timealign/timealign/pkg/rosname"
	"github.com/timealign/timealign/pkg/stamp"
)

// Node names the launch file gives the demo's nodes, in its namespace.
const (
	SensorSim    = "sensor_sim"
	IMUStamps    = "imu_stamps"
	ScanClock    = "scan_clock"
	Synchronizer = "sync"
	Monitor      = "stamp_monitor"
)

// Scenario is what the parameter files say of the demo's nodes.
type Scenario struct {
	Sim       sensorsimcfg.Config
	Estimator timestampestimatorcfg.Config
	Clock     clocksynccfg.Config
	Monitor   stampmonitorcfg.Config
}

// Load resolves the demo nodes' parameters in namespace ns ("/demo") from
// files, as the running nodes resolve them. A value a node would reject
// is an error; warnings name parameters a node does not declare.
func Load(files []*params.File, ns string) (Scenario, []string, error) {
	var sc Scenario
	var warnings []string
	fqn := func(node string) string { return rosname.FQN(ns, node) }
	sim, w, err := nodeparams.SensorSim(files, fqn(SensorSim))
	warnings = append(warnings, w...)
	if err != nil {
		return sc, warnings, err
	}
	est, w, err := nodeparams.TimestampEstimator(files, fqn(IMUStamps))
	warnings = append(warnings, w...)
	if err != nil {
		return sc, warnings, err
	}
	clk, w, err := nodeparams.ClockSync(files, fqn(ScanClock))
	warnings = append(warnings, w...)
	if err != nil {
		return sc, warnings, err
	}
	mon, w, err := nodeparams.StampMonitor(files, fqn(Monitor))
	warnings = append(warnings, w...)
	if err != nil {
		return sc, warnings, err
	}
	policy, err := clocksynccfg.ParseInvalidPolicy(clk.WhenInvalid)
	if err != nil {
		return sc, warnings, err
	}
	sc.Sim, sc.Monitor = sim, mon.Config
	sc.Estimator = timestampestimatorcfg.DefaultConfig()
	sc.Estimator.Estimator = est.Config
	if est.ReceiveTime {
		sc.Estimator.Source = timestampestimatorcfg.ReceiveTime
	}
	sc.Clock = clocksynccfg.Config{PLL: clk.PLL, WhenInvalid: policy}
	return sc, warnings, nil
}

// Rows of Replay's result.
const (
	RowIMU = iota
	RowLidar
)

// Replay runs the scenario for d of node time from start, as the demo's
// nodes run it: sensor_sim's core ticked every sensorsim.TickEvery, the IMU
// and its pulses through timestamp_estimator's core, the lidar through
// clock_sync's, both outputs and the ground truth through stamp_monitor's,
// every message received when published. It returns the monitor's rows at
// the end, over its window: the IMU (RowIMU), the lidar (RowLidar), then
// the topics not corrected (the camera, the pulses).
//
// The camera's images are drawn 8x8 (mono8): their size changes the time a
// replay takes, not its figures.
func Replay(sc Scenario, start stamp.Time, d time.Duration) ([]stampmonitor.TopicErrors, error) {
	sc.Sim.Image = sensorsimcfg.Image{Width: 8, Height: 8, Encoding: "mono8"}
	est, err := timestampestimator.New(sc.Estimator)
	if err != nil {
		return nil, err
	}
	clk, err := clocksync.New(sc.Clock)
	if err != nil {
		return nil, err
	}
	mon, err := stampmonitor.New(sc.Monitor, []string{"imu", "lidar"}, []string{"imu", "scan"})
	if err != nil {
		return nil, err
	}
	topics := []string{"imu/data_raw", "scan_raw", "camera/image_raw", "imu/reference"}
	var failed error
	emit := func(s sensorsim.Sample) {
		failed = cmpErr(failed, mon.Truth(sensorsim.AppendGroundTruth(nil, s.At, topics[s.Output], s), s.At))
		switch s.Output {
		case sensorsim.OutIMU:
			if ok, err := est.Process(s.Msg, s.At); ok && err == nil {
				failed = cmpErr(failed, mon.Input(0, s.Msg, s.At))
			}
		case sensorsim.OutReference:
			_ = est.Reference(s.Msg) // a rejected reference is counted, as in the node
		case sensorsim.OutScan:
			if res, err := clk.Process(s.Msg, s.At); res == clocksync.Published && err == nil {
				failed = cmpErr(failed, mon.Input(1, s.Msg, s.At))
			}
		}
	}
	sim, err := sensorsim.New(sc.Sim, emit)
	if err != nil {
		return nil, err
	}
	end := start.Add(d)
	for t := start; t <= end; { // as the node ticks: at each arrival, at most TickEvery apart
		sim.Tick(t)
		next := t.Add(sensorsim.TickEvery)
		if a, ok := sim.Next(); ok && a < next {
			next = a
		}
		t = max(next, t+1)
	}
	if failed != nil {
		return nil, fmt.Errorf("demo: %w", failed)
	}
	return mon.Summary(end), nil
}

// cmpErr returns the first error.
func cmpErr(first, err error) error {
	if first != nil {
		return first
	}
	return err
}
