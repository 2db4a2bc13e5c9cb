// Package sync matches messages of several streams in time (import it as
// tsync beside the standard library's sync).
//
// It offers the synchronization policies of ROS message_filters with their
// exact semantics, for any number of topics (≥ 2) and any payload type:
//
//   - [ApproximateTime]: message_filters' ApproximateTime algorithm. Each
//     published set holds one message per topic; sets never share or cross
//     messages, and among the sets the algorithm could form it picks the one
//     of least spread (newest minus oldest stamp), with an age penalty that
//     prefers publishing earlier over waiting for a slightly better set. It
//     reproduces the C++ original set for set, including which messages it
//     drops and when (queue overflow, a better candidate, max interval),
//     reported through a drop callback with the reason.
//   - [ExactTime]: sets of messages with identical stamps.
//   - [ApproximateEpsilonTime]: sets whose stamps lie within epsilon of the
//     oldest.
//   - [LatestTime]: the newest message of every topic, published at the rate
//     of the fastest topic (zero-order hold), from arrival times and
//     per-topic rate estimates.
//
// and Rock's stream aligner ([StreamAligner]): samples of several streams
// played back in time order, each stream waiting at most its period for
// later samples and the whole at most a timeout.
//
// Everything is pure: callers pass stamps and arrival times as values and
// receive sets through callbacks; nothing reads a clock, sleeps, logs or
// starts a goroutine. A policy is not safe for concurrent use: one
// goroutine owns it. Memory is bounded by the queue sizes.
//
// Cost per message: ApproximateTime O(N) amortized for N topics (each
// message enters and leaves each queue a bounded number of times), ExactTime
// O(log Q), ApproximateEpsilonTime O(N), LatestTime O(N log N), and no
// allocation once the queues have grown.
package sync
