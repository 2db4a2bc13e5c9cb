//go:build ros2

package test

import (
	"os"

	"github.com/timealign/timealign/test/loopback"
)

// rosDistro is the sourced distribution (ROS_DISTRO, set by setup.bash).
func rosDistro() string { return os.Getenv("ROS_DISTRO") }

// discoveryRangeDistro tells whether the sourced distribution reads
// ROS_AUTOMATIC_DISCOVERY_RANGE (Iron, Jazzy and later) rather than
// ROS_LOCALHOST_ONLY (Humble and before).
func discoveryRangeDistro() bool { return loopback.DiscoveryRange(rosDistro()) }

// loopbackEnv writes the configuration files into dir and returns the
// variables (KEY=VALUE) that keep the processes of a test on loopback in
// a random domain, whichever RMW the environment selects (package
// loopback): the tests never set the RMW themselves.
func loopbackEnv(dir string) ([]string, error) { return loopback.Env(dir, rosDistro()) }

// rmwName is the RMW the tests run on, for their messages.
func rmwName() string {
	if r := os.Getenv("RMW_IMPLEMENTATION"); r != "" {
		return r
	}
	return "the default RMW"
}
