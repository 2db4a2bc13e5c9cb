//go:build ros2

// Command synchronizer matches messages of N inputs in0 … in{N-1} with a
// message_filters policy (nodes/internal/synchronizer): each matched set is
// republished member by member, unchanged, on out0 … out{N-1}, and
// summarized on ~/matched (timealign/msg/MatchedSet).
//
//	ros2 run timealign synchronizer --ros-args -p inputs:=2 \
//	    -p "message_types:=[sensor_msgs/msg/Image, sensor_msgs/msg/Imu]" \
//	    -r in0:=/camera/image -r in1:=/imu/data
package main

import (
	"github.com/timealign/timealign/nodes/internal/rosnode"
	"github.com/timealign/timealign/nodes/internal/synchronizer"
)

func main() { rosnode.Main(synchronizer.Spec()) }
