package clocksync

import (
	"fmt"

	"github.com/timealign/timealign/nodes/internal/clocksync/config"
	"github.com/timealign/timealign/nodes/internal/nodekit"
	"github.com/timealign/timealign/pkg/stamp"
)

// Report is what the node reports at Now (a nodekit.Report): the core's
// Status against the previous report's (Prev), and the runtime's.
type Report struct {
	Now          stamp.Time
	Status, Prev Status
	Runtime      nodekit.RuntimeStatus
}

// AppendStatusMsg serializes the report as a timealign/msg/ClockSyncStatus
// (field for field as msg/ClockSyncStatus.msg).
func (r Report) AppendStatusMsg(b []byte) []byte {
	s := r.Status
	p := s.PLL
	c := nodekit.NewCDR(b)
	c.Header(r.Now, "")
	c.String(p.Mode.String())
	c.Bool(p.Valid)
	c.Uint32(uint32(p.Fill))
	c.Uint32(uint32(s.Config.PLL.FIFOSize))
	c.Float64(p.SlopePPM)
	c.Duration(p.Offset)
	c.Duration(p.Spread)
	for _, v := range []uint64{uint64(p.Invalid), uint64(p.Resets), p.FirstTick, p.LastTick, uint64(p.Duplicates),
		uint64(p.Stale + p.TimeBack), uint64(p.Reboots), uint64(p.Relocks), uint64(p.Outliers), uint64(p.OutOfRange), s.MessagesIn, s.MessagesOut, s.DroppedInvalid, s.DroppedMalformed, r.Runtime.DroppedQueue, r.Runtime.TimeJumps} {
		c.Uint64(v)
	}
	return c.B
}

// Diagnose returns the node's health: OK while the estimate is valid, WARN
// before the first message, while warming up or re-locking and when
// malformed messages arrived since the previous report (Prev), ERROR once
// the fit had to start over. A counter lower than in Prev counts as no
// change. The values end with the writable parameters the Core runs with.
func (r Report) Diagnose() nodekit.Diagnostic {
	s, prev := r.Status, r.Prev
	var d nodekit.Diagnostic
	switch {
	case s.MessagesIn == 0:
		d.Raise(nodekit.Warn, "no input yet")
	case s.PLL.Valid:
		d.Raise(nodekit.OK, "locked")
	case s.PLL.Resets > prev.PLL.Resets:
		d.Raise(nodekit.Error, fmt.Sprintf("lost lock: %d inconsistent samples in a row, fit restarted", s.PLL.Invalid))
	default:
		d.Raise(nodekit.Warn, fmt.Sprintf("no valid estimate yet (%d/%d samples agree)", s.PLL.Fill, s.PLL.Updates))
	}
	if n := nodekit.Since(s.DroppedMalformed, prev.DroppedMalformed); n > 0 {
		d.Raise(nodekit.Warn, fmt.Sprintf("%d malformed messages dropped (%s)", n, s.LastError))
	}
	d.Add("mode", s.PLL.Mode.String())
	d.Add("valid", s.PLL.Valid)
	d.Add("skew_ppm", s.PLL.SlopePPM)
	d.Add("offset", s.PLL.Offset)
	d.Add("residual_spread", s.PLL.Spread)
	d.Add("fifo_fill", s.PLL.Fill)
	d.Add("resets", s.PLL.Resets)
	d.Add("relocks", s.PLL.Relocks)
	d.Add("reboots", s.PLL.Reboots)
	d.Add("reverts", s.PLL.Reverts)
	d.Add("messages_in", s.MessagesIn)
	d.Add("messages_out", s.MessagesOut)
	d.Add("dropped_invalid", s.DroppedInvalid)
	d.Add("dropped_malformed", s.DroppedMalformed)
	for _, p := range config.Settings(s.Config) {
		if p.Name != "mode" && p.Name != "when_invalid" { // above
			d.Add(p.Name, p.Value.String())
		}
	}
	d.Add("when_invalid", s.WhenInvalid.String())
	return d
}
