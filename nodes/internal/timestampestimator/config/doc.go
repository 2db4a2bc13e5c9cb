// Package config declares the timestamp_estimator node's parameters: the
// Config of its core (package timestampestimator) and Params, which binds
// the Config and the node's wiring (message types, QoS) to ROS parameters
// with their ranges and checks. It needs no node runtime: the node and
// the offline tools (nodes/nodeparams: timealign bag fix) bind the same
// declarations.
package config
