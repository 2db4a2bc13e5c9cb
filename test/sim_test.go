//go:build ros2 && timealign_interfaces

package test

import (
	"strings"
	"testing"
	"time"

	diagmsg "github.com/timealign/timealign/msgs/diagnostic_msgs/msg"
)

// TestSimAndMonitorBadInput: sensor_sim refuses out-of-range parameters
// with the parameter, its range or the reason, and runs with its defaults
// for them (and the valid overrides given with them);
// a stamp_monitor without ground truth and with a silent input says which
// topic it lacks, on /diagnostics and in its log.
func TestSimAndMonitorBadInput(t *testing.T) {
	sim := start(t, "sensor_sim", "--ros-args", "-r", "__ns:=/ta_bad", "-p", "imu.rate_hz:=-400.0", "-p", "camera.loss:=1.5",
		"-p", "lidar.loss:=1.0", "-p", "reference.every:=0", "-p", "camera.enabled:=false")
	mon := start(t, "stamp_monitor", "--ros-args", "-r", "__ns:=/ta_bad", "-p", "inputs:=1",
		"-p", "message_types:=[sensor_msgs/msg/Imu]", "-r", "in0:=/ta_bad/nothing", "-r", "truth:=/ta_bad/no_truth")
	diag := newPeer(t, "/ta_test/unused_diag2", "/diagnostics", "diagnostic_msgs/msg/DiagnosticArray")
	// The node's output is read as it comes: wait for whole lines, not a
	// part of one.
	wants := []string{
		"value -400.0 rejected, keeping 400.0", "-400.0 is not in [0.001, 100000.0]",
		"value 1.5 rejected, keeping 0.01", "1.5 is not in [0.0, 1.0]",
		"lidar.loss is 1, want 0 ≤ loss < 1",
	}
	waitFor(t, 10*time.Second, "sensor_sim's warnings", func() bool {
		o := sim.output.String()
		for _, want := range wants {
			if !strings.Contains(o, want) {
				return false
			}
		}
		return true
	})
	// Only the overrides at fault are refused: camera.enabled and
	// reference.every are valid, whatever lidar.loss is.
	for _, ok := range []string{`parameter "camera.enabled"`, `parameter "reference.every"`} {
		if strings.Contains(sim.output.String(), ok) {
			t.Errorf("sensor_sim refused a valid override (%s):\n%s", ok, sim.output.String())
		}
	}
	waitFor(t, 10*time.Second, "the monitor's diagnostics naming what it lacks", func() bool {
		for _, b := range diag.received() {
			a := decode[*diagmsg.DiagnosticArray](t, b, diagmsg.DiagnosticArrayTypeSupport)
			for _, s := range a.Status {
				if s.HardwareId == "/ta_bad/stamp_monitor" && s.Level == diagmsg.DiagnosticStatus_WARN &&
					strings.Contains(s.Message, "no ground truth on /ta_bad/no_truth yet") &&
					strings.Contains(s.Message, "no messages on /ta_bad/nothing (in0) yet") {
					return true
				}
			}
		}
		return false
	})
	// The log line comes with the diagnostics, through a pipe of its own.
	waitFor(t, 5*time.Second, "the monitor's log saying it lacks ground truth", func() bool {
		return strings.Contains(mon.output.String(), "no ground truth on /ta_bad/no_truth yet")
	})
	sim.terminate(t)
	mon.stop(t)
}
