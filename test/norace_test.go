//go:build ros2 && timealign_interfaces && !race

package test

import "time"

const raceNodes = false

// startingAfter is when TestSignalDuringDiscovery signals a node that is
// still starting: its Go runtime up, rcl starting or just started.
const startingAfter = 150 * time.Millisecond
