// Package rosnode is the thin rclgo layer of the timealign nodes: Connect
// makes a nodekit.Transport on rclgo (an rcl context and node from the
// process arguments, serialized subscriptions and publishers of any message
// type, the six parameter services, /parameter_events, graph queries, ROS
// logging) and Main runs a node on it. Everything with logic is in package
// nodekit, tested without ROS. Every file but this one carries the build
// constraint ros2.
package rosnode
