//go:build ros2

// Command clock_sync republishes a topic whose header.stamp carries a
// device clock (ticks, time since boot, a device epoch) with the stamp
// mapped to host time by pkg/pll, from the DDS receive time of each message
// (nodes/internal/clocksync).
//
//	ros2 run timealign clock_sync --ros-args -r in:=/scan_raw -r out:=/scan \
//	    -p message_type:=sensor_msgs/msg/LaserScan -p mode:=envelope
package main

import (
	"github.com/timealign/timealign/nodes/internal/clocksync"
	"github.com/timealign/timealign/nodes/internal/rosnode"
)

func main() { rosnode.Main(clocksync.Spec()) }
