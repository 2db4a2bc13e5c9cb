// Package nodekit is the ROS-free part of the timealign node runtime: what
// every node does besides calling rcl, kept here so CI tests it without
// ROS 2.
//
//   - [Inbox]: the bounded queue between the transport's callbacks and the
//     node's owner goroutine. Messages are copied into pooled buffers, so
//     the steady state allocates nothing, and a full inbox drops and counts
//     instead of growing: memory is bounded by the inbox capacity times the
//     largest message.
//   - [Group]: every goroutine a node starts, tracked, so Close waits for
//     all of them.
//   - [Diagnostic] and [Level]: the contents of diagnostic_msgs/
//     DiagnosticStatus, built from an algorithm's health, and the rules that
//     turn counters into OK / WARN / ERROR.
//
// Threading: an Inbox may be offered to from any goroutine; everything else
// belongs to the node's owner goroutine.
package nodekit
