// Package rosnode is the thin rclgo layer of the timealign nodes: Connect
// makes a nodekit.Transport on rclgo (an rcl context and node from the
// process arguments, serialized subscriptions and publishers of any message
// type, the six parameter services, /parameter_events, graph queries, ROS
// logging) and Main runs a node on it. Messages are waited for, taken and
// published on a data path of its own beside rclgo, in cgo on rcl
// (datapath.go): what rclgo's path costs per message is what a node at
// 1 kHz pays most. Everything with logic is in package
// nodekit, tested without ROS. Every file but this one carries the build
// constraint ros2.
package rosnode
