//go:build ros2 && timealign_interfaces && !race

package test

const raceNodes = false
