//go:build ros2

package rosnode

// The rcl the nodes are built against, told by its headers: Iron (rcl 7)
// added rcl/discovery_options.h with ROS_AUTOMATIC_DISCOVERY_RANGE, and
// Jazzy (rcl 9) is the first LTS with it; Humble (rcl 5) has neither it
// nor type hashes. Without the include paths of a sourced ROS 2 (go vet
// with no cgo flags) the header is not found, which reads as Humble.

/*
#if defined(__has_include) && __has_include(<rcl/discovery_options.h>)
#define TIMEALIGN_RCL_DISCOVERY_RANGE 1
#else
#define TIMEALIGN_RCL_DISCOVERY_RANGE 0
#endif
*/
import "C"

// rclReadsDiscoveryRange tells whether rcl reads ROS_AUTOMATIC_DISCOVERY_RANGE
// and ROS_STATIC_PEERS (Jazzy) or only ROS_LOCALHOST_ONLY (Humble).
const rclReadsDiscoveryRange = C.TIMEALIGN_RCL_DISCOVERY_RANGE == 1
