// Package config declares the synchronizer node's parameters: the Config of its
// core (package synchronizer) and Params, which binds the Config and the
// node's wiring (message types, QoS) to ROS parameters with their ranges
// and checks. It needs no node runtime: the node and the offline tools
// (nodes/nodeparams) bind the same declarations.
package config
