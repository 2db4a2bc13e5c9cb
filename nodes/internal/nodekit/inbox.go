package nodekit

import (
	"sync"
	"sync/atomic"

	"github.com/timealign/timealign/pkg/stamp"
)

// Msg is a serialized message waiting for the owner goroutine.
type Msg struct {
	// Input is the index of the subscription it came from.
	Input int
	// Data is the serialized message (CDR with its encapsulation header).
	// It belongs to the Inbox's pool: hand it back with Release when done.
	Data []byte
	// Receive is the receive stamp: the DDS reception time from the
	// message info, or the node clock where the middleware gives none.
	Receive stamp.Time
	buf     *[]byte
}

// Inbox is a bounded, allocation-free queue of messages from transport
// callbacks to one consumer.
type Inbox struct {
	ch      chan Msg
	pool    sync.Pool
	maxSize int
	dropped atomic.Uint64
	tooBig  atomic.Uint64
}

// NewInbox returns an inbox that holds at most capacity messages, each at
// most maxSize bytes (larger ones are dropped and counted).
func NewInbox(capacity, maxSize int) *Inbox {
	b := &Inbox{ch: make(chan Msg, capacity), maxSize: maxSize}
	b.pool.New = func() any { s := make([]byte, 0, 512); return &s }
	return b
}

// Offer copies data into a pooled buffer and queues it without blocking.
// It reports false, and counts a drop, when the inbox is full or the
// message is larger than the inbox allows.
func (b *Inbox) Offer(input int, data []byte, receive stamp.Time) bool {
	if len(data) > b.maxSize {
		b.tooBig.Add(1)
		return false
	}
	buf := b.pool.Get().(*[]byte)
	*buf = append((*buf)[:0], data...)
	select {
	case b.ch <- Msg{Input: input, Data: *buf, Receive: receive, buf: buf}:
		return true
	default:
		b.pool.Put(buf)
		b.dropped.Add(1)
		return false
	}
}

// C is the channel the owner goroutine receives messages from.
func (b *Inbox) C() <-chan Msg { return b.ch }

// Release returns a message's buffer to the pool. m.Data must not be used
// afterwards.
func (b *Inbox) Release(m Msg) {
	if m.buf != nil {
		*m.buf = m.Data[:0]
		b.pool.Put(m.buf)
	}
}

// Len returns the number of queued messages.
func (b *Inbox) Len() int { return len(b.ch) }

// Cap returns the inbox's capacity.
func (b *Inbox) Cap() int { return cap(b.ch) }

// Dropped returns how many messages were dropped because the inbox was full.
func (b *Inbox) Dropped() uint64 { return b.dropped.Load() }

// TooBig returns how many messages were dropped for their size.
func (b *Inbox) TooBig() uint64 { return b.tooBig.Load() }
