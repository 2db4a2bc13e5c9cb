//go:build ros2

// Command sensor_sim publishes simulated sensors with ground truth
// (nodes/internal/sensorsim): an IMU stamped on arrival (imu), a lidar
// stamped by its own drifting, wrapping clock (scan), a camera (image),
// hardware reference pulses (reference), and every sample's true
// acquisition time on truth (timealign/msg/GroundTruth).
//
//	ros2 run timealign sensor_sim --ros-args -r imu:=/imu/data_raw -r scan:=/scan_raw -p imu.jitter_sec:=0.002
package main

import (
	"github.com/timealign/timealign/nodes/internal/rosnode"
	"github.com/timealign/timealign/nodes/internal/sensorsim"
)

func main() { rosnode.Main(sensorsim.Spec()) }
