//go:build ros2 && timealign_interfaces && race

package test

import "time"

// raceNodes: under the race detector the tests build the nodes with it
// too, so a data race in a node's runtime fails the test that runs it.
const raceNodes = true

// startingAfter is when TestSignalDuringDiscovery signals a node that is
// still starting: its Go runtime up, rcl starting or just started.
const startingAfter = 500 * time.Millisecond
