// Package badinput holds tests, without ROS (nodekit/memros), of what
// every node does with bad input: messages of 0 bytes and of 100 MB, and
// an input that stops for an hour (a fake clock). Each must end in a
// clear log line, a counted drop or a message passed on, bounded memory,
// and a node that goes on and exits cleanly: never a crash or a hang.
package badinput
