//go:build ros2 && timealign_interfaces && race

package test

// raceNodes: under the race detector the tests build the nodes with it
// too, so a data race in a node's runtime fails the test that runs it.
const raceNodes = true
