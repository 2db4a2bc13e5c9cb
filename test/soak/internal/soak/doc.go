// Package soak is the ROS-free part of the soak test (test/soak): the
// seeded fault schedule, what /proc says of a node, the per-second
// samples and their CSV, the stamp errors against the ground truth, and
// the summary that holds a run to its bounds.
//
// The soak runs the demo pipeline for a given time and injects faults at
// random moments of a schedule that a seed makes reproducible ([Plan]).
// Every second it takes one [Sample] per node (RSS, CPU, the counters of
// the node's ~/status and /diagnostics, the rate and the stamp error of
// its output as the soak receives it). [Summarize] turns the samples and
// the faults as injected into a [Summary]: per node the RSS slope after
// warm-up (a least-squares fit), the RSS change since warm-up, the peak
// RSS, the drops outside every fault's window; per fault the time the
// pipeline took to return to its level before the fault; for each SIGTERM
// whether the node exited with status 0 within its bound. Each broken
// bound is a violation, and the soak exits non-zero when there is one.
//
// Nothing here reads a clock: times are durations since the soak started,
// given by the caller.
package soak
