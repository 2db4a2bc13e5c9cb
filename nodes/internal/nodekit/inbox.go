package nodekit

import (
	"sync"

	"github.com/timealign/timealign/nodes/internal/runtimeparams"
	"github.com/timealign/timealign/pkg/stamp"
)

// Msg is a serialized message waiting for the owner goroutine.
type Msg struct {
	// Input is the index of the subscription it came from.
	Input int
	// Data is the serialized message (CDR with its encapsulation header),
	// as the transport took it: the receiver owns it and may keep it.
	Data []byte
	// Receive is the receive stamp: the DDS reception time from the
	// message info, or the node clock where the middleware gives none.
	Receive stamp.Time
}

// Drops counts the messages of one input an Inbox dropped.
type Drops struct {
	// Count is the number of messages dropped.
	Count uint64
	// Bytes is their total size.
	Bytes uint64
	// LastSize is the size of the last one dropped.
	LastSize int
	// TooBig counts those of Count larger than its MessageBytes limit (the
	// others found the inbox full).
	TooBig uint64
}

// Inbox is the bounded queue between the transport's callbacks (any
// goroutine) and the node's owner goroutine. Messages are handed over, not
// copied: the slice the transport took is the one the owner gets. A message
// that would take the inbox past its Limits is dropped and counted per
// input; nothing blocks the transport and memory stays bounded.
type Inbox struct {
	mu      sync.Mutex
	ring    []Msg // FIFO of n messages from head, len(ring) a power of two
	head, n int
	bytes   int64
	lim     runtimeparams.Limits
	drops   []Drops
	dropped uint64
	ready   chan struct{}
}

// NewInbox returns an empty inbox bounded by l (zero fields take the
// defaults).
func NewInbox(l runtimeparams.Limits) *Inbox {
	b := &Inbox{ready: make(chan struct{}, 1)}
	b.SetLimits(l)
	return b
}

// SetLimits changes the bounds; messages already queued stay.
func (b *Inbox) SetLimits(l runtimeparams.Limits) {
	d := runtimeparams.DefaultLimits()
	if l.Messages <= 0 {
		l.Messages = d.Messages
	}
	if l.Bytes <= 0 {
		l.Bytes = d.Bytes
	}
	l.MessageBytes = max(l.MessageBytes, 0)
	b.mu.Lock()
	b.lim = l
	b.mu.Unlock()
}

// Limits returns the bounds.
func (b *Inbox) Limits() runtimeparams.Limits {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.lim
}

// Offer queues data, received on input at receive, without blocking; the
// inbox owns data from then on. It reports false, and counts a drop of
// input, when the message would take the inbox past its limits or is
// larger than its MessageBytes limit.
func (b *Inbox) Offer(input int, data []byte, receive stamp.Time) bool {
	size := int64(len(data))
	b.mu.Lock()
	tooBig := b.lim.MessageBytes > 0 && size > b.lim.MessageBytes
	if tooBig || b.n >= b.lim.Messages || (b.n > 0 && b.bytes+size > b.lim.Bytes) {
		for len(b.drops) <= input {
			b.drops = append(b.drops, Drops{})
		}
		d := &b.drops[input]
		d.Count++
		if tooBig {
			d.TooBig++
		}
		d.Bytes += uint64(size)
		d.LastSize = len(data)
		b.dropped++
		b.mu.Unlock()
		return false
	}
	if b.n == len(b.ring) {
		b.grow()
	}
	b.ring[(b.head+b.n)&(len(b.ring)-1)] = Msg{Input: input, Data: data, Receive: receive}
	b.n++
	b.bytes += size
	b.mu.Unlock()
	select {
	case b.ready <- struct{}{}:
	default:
	}
	return true
}

func (b *Inbox) grow() {
	ring := make([]Msg, max(16, 2*len(b.ring)))
	for i := range b.n {
		ring[i] = b.ring[(b.head+i)&(len(b.ring)-1)]
	}
	b.ring, b.head = ring, 0
}

// Ready is signalled when messages are waiting; the owner goroutine
// selects on it and then calls Drain.
func (b *Inbox) Ready() <-chan struct{} { return b.ready }

// Drain takes at most max messages in arrival order and calls f with each
// (without holding the inbox locked), and returns how many it took. If
// messages remain, Ready is signalled again, so an owner that drains in
// batches between its other work still sees them.
func (b *Inbox) Drain(max int, f func(Msg)) int {
	k := 0
	for ; k < max; k++ {
		b.mu.Lock()
		if b.n == 0 {
			b.mu.Unlock()
			return k
		}
		m := b.ring[b.head]
		b.ring[b.head] = Msg{} // the inbox keeps no reference
		b.head = (b.head + 1) & (len(b.ring) - 1)
		b.n--
		b.bytes -= int64(len(m.Data))
		b.mu.Unlock()
		f(m)
	}
	b.mu.Lock()
	more := b.n > 0
	b.mu.Unlock()
	if more {
		select {
		case b.ready <- struct{}{}:
		default:
		}
	}
	return k
}

// Len returns the number of queued messages and their bytes.
func (b *Inbox) Len() (messages int, bytes int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.n, b.bytes
}

// Dropped returns the number of messages dropped, all inputs.
func (b *Inbox) Dropped() uint64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.dropped
}

// Drops returns the drops of every input that has had one, indexed by
// input (appended to dst, reused).
func (b *Inbox) Drops(dst []Drops) []Drops {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append(dst[:0], b.drops...)
}
