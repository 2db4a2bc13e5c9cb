// Package tsest removes the jitter from the stamps of a periodic stream
// with zero latency: given the time each sample was received, it returns
// the best estimate of when it was acquired. It offers everything Rock's
// aggregator::TimestampEstimator offers (drivers-aggregator), with a more
// accurate method.
//
// # Method
//
// Sample k of a periodic sensor is acquired at a₀ + k·P and received at
// a₀ + k·P + L + jₖ: a latency L and a jitter jₖ that is never negative (a
// sample is never received before it was acquired). The points (k, receiveₖ)
// therefore lie on or above the line a₀ + L + k·P, and the best line under
// them is the one the Estimator fits: the lower convex hull of the points of
// the last one to two windows, and of its edges the one above the points'
// mean index, the line under all points with the least total distance to
// them (Zhang, Liu & Xia, INFOCOM 2002). Late samples cannot pull it: they
// lie above. The estimate for the newest sample is that line at its index,
// minus the latency (see below), so an update never waits for later samples.
// Rock instead takes the period from the window's two end samples and
// follows the earliest arrivals one period at a time; the hull uses every
// sample of the window for both, which halves the error (see the
// differential tests against testdata/reference/tsest).
//
// Two hulls receive every sample; the older answers and is replaced by the
// younger once that covers a window, so the fit follows a drifting period
// while looking back one to two windows, without deleting from a hull.
//
// # Losses, bursts and indexes
//
// A lost sample shifts every later sample one period up. A sample that
// arrives at least 0.9 period after the line's prediction is suspect: it
// may be late (jitter, a burst), or the first after a loss. A loss is
// inferred once LossThreshold suspects in a row, each following the previous
// by at least half a period, agree; the number lost is the least any of them
// shows. Samples of a burst (delivered together) follow each other closely,
// so a burst never counts as a loss. Until the next sample tells, the
// suspect is stamped between "late" and "after a loss", weighted by how
// often the stream's suspects have been losses (a stream that never lost a
// sample stamps it as late); a stream that never delayed a sample by a
// period takes all but one period of a long silence as lost, so a run of m
// losses costs at most one period on the next sample, not m. Where the
// suspects have mostly been losses, a loss is assumed at once.
//
// Without an expected Period, the first 32 samples infer no loss from the
// line (its slope is not yet known well enough: a jitter of half a period
// would lock it on two thirds of the period). Their losses are settled
// afterwards from their intervals against the mean interval (a long
// interval made up by a short one is a delay), and the fit is rebuilt with
// the samples at their indexes.
// The warm-up keeps those losses only if they bring the samples closer
// above their lower envelope, and none if even then the samples lie half a
// period above it. Where half the samples lie 0.45 period above the line (a
// jitter of about 90 % of the period) a late sample cannot be told from a
// lost one: Status.Ambiguous says so, no loss is inferred from timing, and
// a fit that had inferred some starts again without its period.
//
// With UpdateIndex the sensor's own counter (wrapping at IndexBits) gives
// the losses exactly; a counter that jumps back or far ahead of what the
// time elapsed allows is taken as a counter reset and resynchronised.
// UpdateLoss announces a loss, which is applied to the next sample that is
// late enough for it, by the line or by its interval (within 10 updates,
// else the announcement is counted as rejected); before a period is known,
// announcements are trusted as they are.
//
// # Latency and references
//
// Without references the estimate is the line minus MinLatency: never later
// than the receive time minus MinLatency. A hardware reference stamp (a
// sync pulse at acquisition, UpdateReference) is observed late by a jitter
// that is never negative, like the receive times: each is placed at the
// sample it belongs to (modulo one period: nearest the current latency, or
// the first time the earliest at least MinLatency), and the estimates
// become the line under the current fit's references, so late references
// cannot pull them. Its slope weighs the references' own fitted slope
// against the samples' by their precision (n points over a span S with
// jitter J above them fix a slope to about J/(n·S)): dense references give
// the slope too, sparse ones only the offset. References are used from the
// first one on: while the fit is younger than a quarter window (its line
// may still lie periods above the lower envelope) they are kept, the
// newest giving the latency, and placed once it is mature. A restart
// forgets them and keeps the last latency until new ones are placed.
//
// # Bad input
//
// Every sample gets an estimate; only a repeated index (the same sample
// again) is rejected and counted. A receive stamp earlier than the
// previous one is counted: on or above the line (the previous stamp was
// late) it is fitted like any other; early against the line, its stamp is
// wrong and it gets the fit's prediction for its index without touching
// the fit; three in a row that stay behind are a host clock step back and
// restart the fit. Duplicate stamps are counted and treated as a burst. A
// gap longer than the window restarts the fit, keeping the period. None of
// these corrupt the period, and estimates never go back (except across a
// restart for a clock step back).
//
// # Cost
//
// An update pushes a point on two hulls (O(1) amortized) and moves the
// line along the hull from the previous answer (O(1) amortized; the fitted
// slope is smoothed, every fourth update, with a gain of about 3/fits while
// the fit is young and one window's worth after); no allocation once the
// hulls have grown to a window's samples. The warm-up settling is O(32)
// once per restart. Memory is bounded by the
// number of samples in two windows (at most MaxWindowSamples), and of
// references in two windows. With references, the line under them is
// refitted when the samples' slope changes (every fourth update).
package tsest
