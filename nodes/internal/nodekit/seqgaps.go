package nodekit

import (
	"math"
	"sync/atomic"
)

// SeqGaps counts the messages of a subscription that its publishers sent
// but that never reached it, from the sequence number each DDS writer
// gives its samples (rmw_message_info_t's publication_sequence_number):
// a gap between two numbers of one publisher is that many messages lost
// on the way, in the network, in the middleware's queues (a keep-last
// queue overwritten while the node falls behind) or while the match was
// down. The inbox's drops, which come after, are not among them.
//
// Fast DDS numbers the messages it hands over; Cyclone DDS's RMW does not
// (it gives [NotNumbered]), and then the losses cannot be known. A
// publisher is told from another by its GID: one that restarts is a new
// publisher, its first message no loss. At most maxPublishers are
// followed; beyond, the one seen first is forgotten.
//
// Take is called by one goroutine (the transport's); Lost by any.
type SeqGaps struct {
	last  map[uint64]uint64 // publisher (its GID's hash) → its last number
	order []uint64          // the publishers in last, in the order first seen
	lost  atomic.Uint64
	// numbered: 0 until a message is taken, then 1 when the middleware
	// numbers them, -1 when it does not.
	numbered atomic.Int32
}

// NotNumbered is the sequence number of a message the middleware does not
// number (RMW_MESSAGE_INFO_SEQUENCE_NUMBER_UNSUPPORTED).
const NotNumbered = math.MaxUint64

// maxPublishers bounds the publishers a SeqGaps follows.
const maxPublishers = 256

// Take counts message seq of publisher pub (a hash of its GID).
func (g *SeqGaps) Take(pub, seq uint64) {
	if seq == NotNumbered {
		g.numbered.Store(-1)
		return
	}
	g.numbered.Store(1)
	if g.last == nil {
		g.last = map[uint64]uint64{}
	}
	last, ok := g.last[pub]
	switch {
	case !ok:
		if len(g.order) >= maxPublishers {
			delete(g.last, g.order[0])
			g.order = append(g.order[:0], g.order[1:]...)
		}
		g.order = append(g.order, pub)
	case seq > last+1:
		g.lost.Add(seq - last - 1)
	case seq <= last:
		// A number again or an earlier one: DDS hands a writer's samples
		// over in order, once; a writer that starts over (another process
		// with the same GID) counts from here.
	}
	g.last[pub] = seq
}

// Lost returns how many messages were lost before the subscription, or -1
// when the middleware does not number its messages (or none was taken
// yet).
func (g *SeqGaps) Lost() int64 {
	if g.numbered.Load() <= 0 {
		return -1
	}
	return int64(min(g.lost.Load(), math.MaxInt64))
}
