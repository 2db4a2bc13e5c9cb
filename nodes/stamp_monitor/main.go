//go:build ros2

// Command stamp_monitor measures corrected topics against sensor_sim's
// ground truth (nodes/internal/stampmonitor): per input in0 … in{N-1}, the
// stamp error before and after correction over a sliding window, on
// ~/status (timealign/msg/StampMonitorStatus) and as a table in the log.
//
//	ros2 run timealign stamp_monitor --ros-args -p inputs:=1 -r in0:=/imu/data -r truth:=/truth
package main

import (
	"github.com/timealign/timealign/nodes/internal/rosnode"
	"github.com/timealign/timealign/nodes/internal/stampmonitor"
)

func main() { rosnode.Main(stampmonitor.Spec()) }
