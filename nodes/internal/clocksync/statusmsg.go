package clocksync

import (
	"github.com/timealign/timealign/nodes/internal/nodekit"
	"github.com/timealign/timealign/pkg/stamp"
)

// AppendStatusMsg serializes s as a timealign/msg/ClockSyncStatus (field
// for field as msg/ClockSyncStatus.msg) stamped now; fifoSize is the
// configured FIFO and droppedQueue the node's inbox overflow count.
func AppendStatusMsg(b []byte, now stamp.Time, s Status, fifoSize int, droppedQueue uint64) []byte {
	p := s.PLL
	c := nodekit.NewCDR(b)
	c.Header(now, "")
	c.String(p.Mode.String())
	c.Bool(p.Valid)
	c.Uint32(uint32(p.Fill))
	c.Uint32(uint32(fifoSize))
	c.Float64(p.SlopePPM)
	c.Duration(p.Offset)
	c.Duration(p.Spread)
	for _, v := range []uint64{uint64(p.Invalid), uint64(p.Resets), p.FirstTick, p.LastTick, uint64(p.Duplicates),
		uint64(p.Stale + p.TimeBack), uint64(p.Reboots), uint64(p.Relocks), uint64(p.Outliers), uint64(p.OutOfRange), s.MessagesIn, s.MessagesOut, s.DroppedInvalid, s.DroppedMalformed, droppedQueue} {
		c.Uint64(v)
	}
	return c.B
}
