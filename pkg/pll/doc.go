// Package pll maps a device clock (a tick counter, or time since boot) to
// host time, from pairs of (host receive stamp, device tick).
//
// A [PLL] is fed with [PLL.Update] (or [PLL.UpdateScan] when the tick to
// stamp, the scan tick, differs from the tick the sample was sent with) and
// answers [PLL.Corrected]: the host time of a device tick, and whether it
// is valid. [PLL.Status] reports the fit. Everything is pure: values in,
// values out; no clocks, no I/O, no goroutines, no allocation after [New].
//
// # Ticks and precision
//
// Ticks wrap at 2^TickBits (1..64). Each tick is unwrapped to the 64-bit
// value nearest to the previous tick (within half the counter's range), so
// a late tick from before a wrap lands just before its neighbours instead
// of a whole period later. Stamps are int64 nanoseconds; fits run in
// float64 on offsets from a base sample (ticks and nanoseconds, exact below
// 2^53), so stamps near 1.7e18 ns lose nothing. Corrected never returns a
// negative stamp: such a result, or an overflow, is reported as not valid.
//
// # Modes
//
// Sick reproduces SICK's SoftwarePLL (sick_scan_xd driver/src/softwarePLL.cpp)
// decision for decision: a FIFO of FIFOSize samples (7); a least-squares
// slope on offsets from the oldest sample, accepted only if every FIFO
// sample lies within MaxDeviation (100 ms) of the line through the oldest
// sample; once valid, a sample is pushed only if it lies within
// MaxDeviation of the prediction, and after MaxInvalid (20) consecutive
// misses the PLL is invalid until the FIFO (which keeps its samples) fits
// again; repeated ticks are ignored; the stamp is slope·(scan − scan₀) +
// receive₀ of the oldest FIFO sample. The slope is computed, as SICK does,
// on receive times held as float64 seconds, so it and every decision are
// bit-for-bit SICK's; the stamp itself is exact. Differential tests compare
// it with the original's output row for row (testdata/reference/pll and the
// vectors in testdata/sick). Where SICK is wrong we differ: (1) SICK's
// unwrapping takes a tick from before a 32-bit wrap that arrives after it
// as 2^32 ticks later, and every later stamp is then about +4300 s off but
// valid; we unwrap to the nearest value (the stale tick is 40 ms back and
// is handled as SICK handles any reordered tick). (2) SICK clamps negative
// stamps to 0 and calls them valid; we report them invalid. (3) Ticks
// that do not fit in TickBits are dropped (SICK passes 64-bit ticks raw).
// Everything else, including SICK's weak spots (the jitter of the anchor
// sample passes straight into every stamp; after a host clock step the
// stamps stay on the old time base until 20 misses), is reproduced.
//
// Regression, Envelope and Offset share a frame that fixes those weak
// spots. They lock when FIFOSize consecutive samples with increasing ticks
// agree within MaxDeviation with their own line. A new sample is gated
// against the current fit: Regression accepts residuals within
// ±MaxDeviation, Envelope and Offset within [−MaxEarly, MaxDeviation) of
// the lower line. Rejected samples (outliers, stale or repeated ticks, a
// host clock step, a device reboot) make the estimate invalid until a
// sample is accepted again, so a stamp seconds off is never reported valid;
// they also collect as candidates, and FIFOSize consistent candidates
// replace the fit: a clock step or a reboot re-locks within one FIFO.
// After MaxInvalid rejections in a row the fit starts over. A stamp is
// valid only while every FIFO sample lies within MaxDeviation of the fit.
//
// Envelope and Offset trust the lowest samples, so receive times that come
// early for a while (a host clock stepped back and forward again, a ROS
// clock under use_sim_time lagging behind /clock on a loaded machine) pull
// their line down, or make them re-lock below it, and would keep it there
// until the excursion leaves the window, stamps early by the excursion for
// 1 to 2 windows. They keep checkpoints of a mature fit and restore the
// one from before the excursion when the samples come back to it
// (Status.Reverts; see excursionGuard in excursion.go for the rule, which a
// lasting step never meets): the stamps are back at their accuracy within
// about one FIFO of the excursion's end. An excursion shorter than
// MaxEarly does not move the line by much at once, but an early sample
// that became a vertex of the hull tilts it, and its extrapolation errs by
// more and more (0.15–0.4 ms a second, up to 5–11 ms, for 10–20 s after
// floods in the soak): the held fit is also restored once a run of samples
// on it has stayed so far above the current line that a right line would
// see it less often than once in a million, by the stream's own latency.
// Every fitted slope is held within MaxSkewPPM of TickPeriod, so a few
// noisy samples can never tilt the line far.
//
// Regression is least squares with its own intercept (not anchored at one
// sample): the intercept is the least-squares one over the FIFO (the line
// passes through the FIFO's mean), the slope comes from exponentially
// forgotten least squares over about Window accepted samples. Fitting the
// slope over the 7-sample FIFO alone would leave 0.68σ of the latency
// jitter at the newest sample; with the longer slope memory it is σ/√7 =
// 0.38σ (σ: the latency's standard deviation). Least squares has no
// breakdown point, so a delay below MaxDeviation would still pull the
// intercept by delay/FIFOSize; an outlier filter keeps such samples out:
// a sample whose modified z-score (Iglewicz & Hoaglin) exceeds OutlierZ
// (3.5) — its residual lies more than 3.5·1.4826·MAD from the median
// residual of the last 4·FIFOSize (at least 32) samples within
// MaxDeviation, and at least OutlierMin (1 ms) from it — does not enter the
// fit (Status.Outliers, Outcome Outlier). Outliers count as consistent for
// validity; FIFOSize of them in a row that agree re-lock, so a host step
// smaller than MaxDeviation is followed. The scale comes from all samples
// within MaxDeviation, outliers included, so it cannot shrink by rejecting.
//
// Envelope is the convex-hull one-way estimation of Zhang, Liu & Xia
// (INFOCOM 2002) over sliding windows as in ethz-asl/cuckoo_time_translator:
// since delivery delay is never negative, the true line lies under the
// points; of the lines under all points of the window, the one with the
// least total distance to them is the lower convex hull's edge above the
// window's mean tick. Two hulls switch: both receive every sample, the
// older answers, and when the younger holds Window samples it replaces the
// older; the fit so follows drift while looking back Window..2·Window
// samples, without ever deleting from a hull. Late samples and outliers
// cannot pull the line (they lie above it); its error is the smallest
// latency of the window (a constant bias no estimator can see) plus a small
// jitter. Being under the newest point, the stamp is never later than its
// receive time (Olson, IROS 2010). We built this rather than Olson's
// min-filter with a fixed rate because it also fits the rate, and rather
// than a full sliding-window hull because the switching hulls cost O(1)
// amortized per sample with no deletions.
//
// Offset is the ArduPilot log practice (clydemcqueen/ardusub_log_tools) for
// boot clocks of known rate (TickPeriod: µs or ms since boot): the offset is
// the minimum of receive − device time over the last Window samples
// (monotone deque), the stamp device time + offset. With TrackSkew it fits
// the rate too, which makes it the Envelope fit. A reboot (device time
// jumping back) is rejected as stale ticks and re-locks within one FIFO
// (Status.Reboots counts it).
//
// # Cost
//
// Per update: Sick is SICK's fit, one pass over the FIFO (sums oldest first, as SICK rounds
// them) plus the validity check, O(FIFOSize); Regression, Envelope and
// Offset are O(1) amortized: running sums over the FIFO (exact int64
// offsets), validity from a bound on the FIFO's spread around a reference
// line (exact O(FIFOSize) pass only when the bound nears MaxDeviation),
// Envelope two monotone-chain hull pushes and an edge search that walks
// from the last answer (internal/hull, shared with pkg/tsest),
// Offset a monotone deque, the Regression outlier filter two selections
// over the last 4·FIFOSize (at least 32) residuals every 4 turns of that
// ring. The excursion checkpoints of Envelope and Offset copy the hull's
// vertices (a few dozen; at most 2·Window+1) or the Offset minima (Window)
// every FIFOSize accepted samples. Status computes the exact spread,
// O(FIFOSize). Memory: O(FIFOSize + Window), allocated by New; nothing
// after. With the defaults BenchmarkUpdate (one UpdateScan and one
// Corrected, 0 allocations) measures 60–175 ns per update in every mode on
// a loaded 2-core Xeon VM (the checkpoints add 15–40 % to Envelope and
// Offset): go test -run XXX -bench Update -benchmem ./pkg/pll.
package pll
