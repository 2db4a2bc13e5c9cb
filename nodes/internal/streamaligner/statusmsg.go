package streamaligner

import (
	"github.com/timealign/timealign/nodes/internal/nodekit"
	"github.com/timealign/timealign/pkg/stamp"
	tsync "github.com/timealign/timealign/pkg/sync"
)

// AppendStatusMsg serializes s as a timealign/msg/AlignerStatus (field for
// field as msg/AlignerStatus.msg) stamped now; inputs are the resolved
// input topics and droppedQueue the node's inbox overflow count.
func AppendStatusMsg(b []byte, now stamp.Time, s Status, inputs []string, droppedQueue uint64) []byte {
	a := s.Aligner
	c := nodekit.NewCDR(b)
	c.Header(now, "")
	c.Duration(a.Timeout)
	c.Duration(a.Latency)
	c.Time(a.Current)
	c.Uint64(a.Played)
	waiting := ""
	if a.Waiting >= 0 && a.Waiting < len(inputs) {
		waiting = inputs[a.Waiting]
	}
	c.String(waiting)
	c.Uint32(uint32(len(inputs)))
	for _, in := range inputs {
		c.String(in)
	}
	perStream := func(f func(tsync.StreamStatus) uint64) {
		c.Uint32(uint32(len(a.Streams)))
		for _, st := range a.Streams {
			c.Uint64(f(st))
		}
	}
	perStream32 := func(f func(tsync.StreamStatus) int) {
		c.Uint32(uint32(len(a.Streams)))
		for _, st := range a.Streams {
			c.Uint32(uint32(f(st)))
		}
	}
	perStream(func(st tsync.StreamStatus) uint64 { return st.Received })
	perStream32(func(st tsync.StreamStatus) int { return st.BufferFill })
	perStream32(func(st tsync.StreamStatus) int { return st.BufferSize })
	c.Uint32(uint32(len(s.Silent)))
	for _, v := range s.Silent {
		c.Bool(v)
	}
	perStream(func(st tsync.StreamStatus) uint64 { return st.Late })
	perStream(func(st tsync.StreamStatus) uint64 { return st.Backward })
	perStream(func(st tsync.StreamStatus) uint64 { return st.Full })
	c.Uint32(uint32(len(s.DroppedMalformed)))
	for _, v := range s.DroppedMalformed {
		c.Uint64(v)
	}
	c.Uint64(droppedQueue)
	return c.B
}
