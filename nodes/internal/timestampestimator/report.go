package timestampestimator

import (
	"fmt"

	"github.com/timealign/timealign/nodes/internal/nodekit"
	"github.com/timealign/timealign/nodes/internal/timestampestimator/config"
	"github.com/timealign/timealign/pkg/stamp"
)

// Report is what the node reports at Now (a nodekit.Report): the core's
// Status against the previous report's (Prev), and the runtime's.
type Report struct {
	Now          stamp.Time
	Status, Prev Status
	Runtime      nodekit.RuntimeStatus
}

// AppendStatusMsg serializes the report as a
// timealign/msg/TimestampEstimatorStatus (field for field as
// msg/TimestampEstimatorStatus.msg).
func (r Report) AppendStatusMsg(b []byte) []byte {
	s := r.Status
	e := s.Estimator
	c := nodekit.NewCDR(b)
	c.Header(r.Now, "")
	c.Bool(e.HaveEstimate)
	c.Time(e.Stamp)
	c.Duration(e.Period)
	c.Duration(e.Latency)
	c.Duration(e.LatencyRaw)
	c.Duration(e.MaxJitter)
	c.Duration(e.LastCorrection)
	c.Uint32(uint32(e.WindowSize))
	c.Uint32(uint32(e.WindowCapacity))
	for _, v := range []uint64{e.Samples, e.LostSamplesTotal, e.ExpectedLosses, e.RejectedExpectedLosses, e.BaseTimeResets} {
		c.Uint64(v)
	}
	c.Duration(e.BaseTimeResetOffset)
	for _, v := range []uint64{e.Resets, e.Backward, e.DupIndexes, e.Duplicates, e.Gaps, e.ClockSteps, e.IndexResets, e.Recounts, s.References, e.RejectedReferences} {
		c.Uint64(v)
	}
	c.Bool(e.Ambiguous)
	for _, v := range []uint64{e.Ambiguities, s.MessagesIn, s.MessagesOut, s.DroppedRejected, s.DroppedMalformed, r.Runtime.DroppedQueue} {
		c.Uint64(v)
	}
	c.Bool(e.Uncorrected)
	c.Uint64(e.UncorrectedSamples)
	c.Uint64(e.PeriodChanges)
	c.Uint64(r.Runtime.TimeJumps)
	return c.B
}

// Diagnose returns the node's health against the previous report: WARN
// before the first message and while the estimator has no period yet, or
// when messages were malformed or rejected since Prev; OK otherwise. A
// counter lower than in Prev counts as no change. The values end with the
// writable parameters the Core runs with.
func (r Report) Diagnose() nodekit.Diagnostic {
	s, prev := r.Status, r.Prev
	var d nodekit.Diagnostic
	switch {
	case s.MessagesIn == 0:
		d.Raise(nodekit.Warn, "no input yet")
	case !s.Estimator.HaveEstimate:
		d.Raise(nodekit.Warn, "no period estimate yet")
	default:
		d.Raise(nodekit.OK, "estimating")
	}
	if n := nodekit.Since(s.DroppedMalformed, prev.DroppedMalformed); n > 0 {
		d.Raise(nodekit.Warn, fmt.Sprintf("%d malformed messages dropped (%s)", n, s.LastError))
	}
	if n := nodekit.Since(s.DroppedRejected, prev.DroppedRejected); n > 0 {
		d.Raise(nodekit.Warn, fmt.Sprintf("%d samples rejected (repeated indexes)", n))
	}
	if n := nodekit.Since(s.Estimator.Backward, prev.Estimator.Backward); n > 0 {
		d.Raise(nodekit.Warn, fmt.Sprintf("%d stamps went back (stamped from the fit)", n))
	}
	if n := nodekit.Since(s.Estimator.RejectedReferences, prev.Estimator.RejectedReferences); n > 0 {
		d.Raise(nodekit.Warn, fmt.Sprintf("%d references rejected (no sample of the current fit)", n))
	}
	if n, of := nodekit.Since(s.Estimator.Duplicates, prev.Estimator.Duplicates), nodekit.Since(s.Estimator.Samples, prev.Estimator.Samples); n > 0 && 2*n >= of {
		// Bursts repeat a stamp now and then; most samples repeating one
		// is an input that is not stamped (header.stamp left 0) or a
		// stuck device clock.
		d.Raise(nodekit.Warn, fmt.Sprintf("%d of %d stamps repeat the previous one: is header.stamp set? (stamp_source receive_time stamps on arrival)", n, of))
	}
	if s.Estimator.Ambiguous {
		d.Raise(nodekit.Warn, "jitter near a period: late samples cannot be told from lost ones (none inferred); set period_sec")
	}
	if n := nodekit.Since(s.Estimator.Gaps, prev.Estimator.Gaps); n > 0 {
		d.Raise(nodekit.Warn, fmt.Sprintf("%d gaps longer than the window", n))
	}
	if p, w := s.Estimator.Period, s.Config.Estimator.Window; p > 0 && w < 8*p {
		// The fit needs a quarter window of samples (and 8 at least) to
		// be trusted: with fewer, every stamp stays as received.
		d.Raise(nodekit.Warn, fmt.Sprintf("window_sec %v holds fewer than 8 periods of %v: the fit seldom matures and most stamps stay uncorrected; raise window_sec", w, p))
	}
	if n := nodekit.Since(s.Estimator.PeriodChanges, prev.Estimator.PeriodChanges); n > 0 {
		d.Raise(nodekit.Warn, fmt.Sprintf("the period changed %d times (now %v): the fit restarted on the recent samples", n, s.Estimator.Period))
	}
	if n, of := nodekit.Since(s.Estimator.UncorrectedSamples, prev.Estimator.UncorrectedSamples), nodekit.Since(s.Estimator.Samples, prev.Estimator.Samples); n > 0 && 2*n >= of && s.Estimator.HaveEstimate {
		// A few after a loss or a restart are normal; most of them is a
		// stream the model does not hold for (a period that keeps moving).
		d.Raise(nodekit.Warn, fmt.Sprintf("%d of %d stamps left uncorrected (receive stamp minus the least delay): the fit does not hold", n, of))
	}
	e := s.Estimator
	d.Add("period", e.Period)
	d.Add("latency", e.Latency)
	d.Add("max_jitter", e.MaxJitter)
	d.Add("last_correction", e.LastCorrection)
	d.Add("lost_samples", e.LostSamplesTotal)
	d.Add("duplicate_stamps", e.Duplicates)
	d.Add("backward_stamps", e.Backward)
	d.Add("rejected_references", e.RejectedReferences)
	d.Add("window_size", e.WindowSize)
	d.Add("uncorrected", e.Uncorrected)
	d.Add("uncorrected_samples", e.UncorrectedSamples)
	d.Add("period_changes", e.PeriodChanges)
	d.Add("messages_in", s.MessagesIn)
	d.Add("messages_out", s.MessagesOut)
	d.Add("dropped_rejected", s.DroppedRejected)
	d.Add("dropped_malformed", s.DroppedMalformed)
	for _, p := range config.Settings(s.Config) {
		d.Add(p.Name, p.Value.String())
	}
	return d
}
