//go:build ros2

// Command timestamp_estimator republishes a periodic topic of any message
// type whose first field is a std_msgs/Header with header.stamp replaced by
// pkg/tsest's estimate of the acquisition time (nodes/internal/timestampestimator).
// Messages on the optional `reference` topic carry hardware reference
// stamps: sensor_msgs/msg/TimeReference (time_ref) by default, or the
// header.stamp of the Header-first type given as reference_type.
//
//	ros2 run timealign timestamp_estimator --ros-args -r in:=/imu/data_raw -r out:=/imu/data \
//	    -p message_type:=sensor_msgs/msg/Imu
package main

import (
	"github.com/timealign/timealign/nodes/internal/rosnode"
	"github.com/timealign/timealign/nodes/internal/timestampestimator"
)

func main() { rosnode.Main(timestampestimator.Spec()) }
