package timestampestimator

import (
	"github.com/timealign/timealign/nodes/internal/nodekit"
	"github.com/timealign/timealign/pkg/stamp"
)

// AppendStatusMsg serializes s as a timealign/msg/TimestampEstimatorStatus
// (field for field as msg/TimestampEstimatorStatus.msg) stamped now;
// droppedQueue is the node's inbox overflow count.
func AppendStatusMsg(b []byte, now stamp.Time, s Status, droppedQueue uint64) []byte {
	e := s.Estimator
	c := nodekit.NewCDR(b)
	c.Header(now, "")
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
	for _, v := range []uint64{e.Ambiguities, s.MessagesIn, s.MessagesOut, s.DroppedRejected, s.DroppedMalformed, droppedQueue} {
		c.Uint64(v)
	}
	c.Bool(e.Uncorrected)
	c.Uint64(e.UncorrectedSamples)
	c.Uint64(e.PeriodChanges)
	return c.B
}
