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
// # Identity with message_filters
//
// The policies follow ros2/message_filters (rolling 361e42c7 = humble
// fc93cd99) to the bit: ApproximateTime scales intervals by 1+AgePenalty as
// rclcpp's Duration×double does (an 80-bit long double product truncated
// toward zero), breaks ties between equal stamps as the original (the newest
// front goes to the last topic, the oldest to the first), and keeps a
// message that is out of order or duplicated on its own topic in its queue,
// as the original does (it only warns); Status counts both. The tests
// replay vectors made by the unmodified C++ headers for all four policies.
// Where the original has undefined behaviour (LatestTime indexes its rate
// estimates in the order topics first arrive, out of bounds when a topic
// has not arrived yet) each topic here has its own estimate; both agree
// whenever the first messages arrive in topic order.
//
// # Stamps at the int64 limits
//
// Where the original's stamp arithmetic leaves the int64 range (rclcpp
// throws std::overflow_error), sums and differences here saturate at the
// limits, as time.Time.Sub does: a stamp plus Epsilon or a lower bound past
// MaxInt64 is MaxInt64, and every stamp is within it; a spread from MinInt64
// to 0 is larger than any MaxInterval. So every Add ends in bounded work,
// whatever the stamps and parameters (each loop provably takes a message
// off a queue per pass), and the results for in-range arithmetic are the
// original's, bit for bit.
//
// # Drops
//
// Every message leaves a policy either in a published set or through the
// drop callback with a reason: QueueFull, NotMatched (a better set was
// found without it, or ExactTime/ApproximateEpsilonTime passed it by),
// MaxInterval, AfterDrop (ApproximateTime will not take a pivot from a
// topic that has just overflowed), Replaced (ExactTime: a second message
// with the same stamp; LatestTime: a newer message before any set used it)
// and BadTopic (an index out of range). Status gives the counts per topic
// and reason, each topic's last stamp (a silent topic that blocks every set
// shows as a stale or zero stamp while the others overflow), queue fill,
// set spread and the latency from a set's last member's arrival to its
// publication.
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
