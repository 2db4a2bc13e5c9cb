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
// while looking back one to two windows, without deleting from a hull. The
// period (the line's slope) comes from two more hulls switched every 3.5
// windows, once they span more than the window's: a lower envelope of n
// points over a span S fixes a slope to about J/(n·S), so 3.5 to 7
// windows give it nine to thirty times more precisely, and the estimates
// reach the limit of an estimator that knew the true period (the least
// delay over the window); a period drifting a few ppm a second bends that
// chord little, and one that changes faster is caught by the change test.
//
// # Never worse than the raw stamp
//
// Where the model cannot vouch for a sample, its estimate is the receive
// stamp minus the least latency (MinLatency, or the references'), and
// Status.Uncorrected says so: the first samples of a fit (until it covers
// a quarter window; at once after a restart whose period was measured),
// the samples of an unsettled stream (below), and a suspect (a sample a
// period or more late) that the next samples must decide, on a stream that
// has not shown which its suspects are. A young fit's estimate is held to
// the heights its samples have shown.
//
// # Periods that change
//
// The line is a lower envelope: samples lie on and above it, the lowest of
// any run close to it. A run of a quarter window (at least 32 samples) all
// above it by more than half the fit's mean height (the period grew) or
// all below it (it shrank), four records in a row (each higher above the
// line than any sample of the fit: a ramp), or eight samples in a row each
// the same multiple (2 or more) of the period after the one before (a rate
// halved) restart the fit at that sample, its period unknown (or that
// multiple), counted in Status.PeriodChanges. A period measured before a
// restart weighs against the new fit's by precision. A change within four
// windows of the previous one leaves the estimator unsettled: estimates
// are the receive stamps until a fit has held for a window.
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
// suspect keeps its receive stamp (uncorrected), unless the stream has
// shown which its suspects are: where they have mostly been losses a loss
// is assumed at once, where mostly delays (or, before any was decided, the
// fit's samples have been half as high) it is placed as late. The samples
// after it are placed by the decided count, so a loss costs them nothing.
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
// An update pushes a point on four hulls (O(1) amortized) and moves the
// line along the hull from the previous answer (O(1) amortized; the fitted
// slope is smoothed, every fourth update, with a gain of about 3/fits while
// the fit is young and one window's worth after); no allocation once the
// hulls have grown to a window's samples. The warm-up settling is O(32)
// once per restart. Memory is bounded by the
// number of samples in seven windows (each hull at most MaxWindowSamples), and of
// references in two windows. With references, the line under them is
// refitted when the samples' slope changes (every fourth update).
package tsest
