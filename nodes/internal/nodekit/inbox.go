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
	// Epoch is the number of the node clock's jumps back when the message
	// was received (Clock.Jumps): a message received before a jump is
	// handled before the core is reset for it.
	Epoch uint64
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
// copied: the slice the transport took is the one the owner gets, in
// arrival order across inputs. Nothing blocks the transport and memory
// stays bounded: a message that would take the inbox past its Limits makes
// room by dropping the oldest queued message of the input that holds the
// most (messages when the count is the bound, bytes when the size is), the
// offered one included. A flooding input thus pays for its own flood (its
// backlog is shed oldest first, so what the node handles stays recent),
// and the messages of the other inputs keep their place. Every drop is
// counted for the input it belonged to.
type Inbox struct {
	mu      sync.Mutex
	queues  []fifo // per input
	seq     uint64 // arrival number of the next message
	n       int    // messages queued, all inputs
	bytes   int64
	lim     runtimeparams.Limits
	drops   []Drops
	dropped uint64
	ready   chan struct{}
}

// fifo is one input's queue: a ring of n entries from head, len(ring) a
// power of two (or zero).
type fifo struct {
	ring    []entry
	head, n int
	bytes   int64
}

// entry is a queued message and its arrival number, which orders the
// inputs' queues into one arrival order.
type entry struct {
	Msg
	seq uint64
}

func (q *fifo) push(e entry) {
	if q.n == len(q.ring) {
		ring := make([]entry, max(16, 2*len(q.ring)))
		for i := range q.n {
			ring[i] = q.ring[(q.head+i)&(len(q.ring)-1)]
		}
		q.ring, q.head = ring, 0
	}
	q.ring[(q.head+q.n)&(len(q.ring)-1)] = e
	q.n++
	q.bytes += int64(len(e.Data))
}

func (q *fifo) pop() entry {
	e := q.ring[q.head]
	q.ring[q.head] = entry{} // the inbox keeps no reference
	q.head = (q.head + 1) & (len(q.ring) - 1)
	q.n--
	q.bytes -= int64(len(e.Data))
	return e
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
// inbox owns data from then on. To stay within its limits it drops the
// oldest messages of the input that holds the most (see Inbox), which may
// be data's own input; it reports false, and counts a drop of input, when
// data itself is not queued: it is larger than its MessageBytes limit, larger
// than its Bytes limit while other messages wait, or its input's share is the
// largest and it has nothing older to shed.
func (b *Inbox) Offer(input int, data []byte, receive stamp.Time) bool {
	return b.OfferMsg(Msg{Input: input, Data: data, Receive: receive})
}

// OfferMsg is Offer for a Msg (with its Epoch).
func (b *Inbox) OfferMsg(m Msg) bool {
	queued, _ := b.put(m)
	if queued {
		b.Signal()
	}
	return queued
}

// put is OfferMsg without signalling Ready: it also returns how many
// messages wait once m is queued.
func (b *Inbox) put(m Msg) (queued bool, waiting int) {
	input, data := m.Input, m.Data
	size := int64(len(data))
	b.mu.Lock()
	for len(b.queues) <= input {
		b.queues = append(b.queues, fifo{})
	}
	tooBig := b.lim.MessageBytes > 0 && size > b.lim.MessageBytes
	if tooBig || (b.n > 0 && size > b.lim.Bytes) {
		b.drop(input, size, tooBig)
		b.mu.Unlock()
		return false, 0
	}
	for b.n >= b.lim.Messages || (b.n > 0 && b.bytes+size > b.lim.Bytes) {
		v := b.victim(input, size, b.n >= b.lim.Messages)
		q := &b.queues[v]
		if q.n == 0 { // data's own input is the heaviest, with nothing older
			b.drop(input, size, false)
			b.mu.Unlock()
			return false, 0
		}
		e := q.pop()
		b.n--
		b.bytes -= int64(len(e.Data))
		b.drop(v, int64(len(e.Data)), false)
	}
	b.queues[input].push(entry{Msg: m, seq: b.seq})
	b.seq++
	b.n++
	b.bytes += size
	waiting = b.n
	b.mu.Unlock()
	return true, waiting
}

// Signal signals Ready (which holds one signal at most).
func (b *Inbox) Signal() {
	select {
	case b.ready <- struct{}{}:
	default:
	}
}

// victim returns the input holding the most messages (byCount) or bytes,
// counting the message of size offered on input; ties go to the offering
// input, then to the lower index.
func (b *Inbox) victim(input int, size int64, byCount bool) int {
	weight := func(i int) int64 {
		q := &b.queues[i]
		w := q.bytes
		if byCount {
			w = int64(q.n)
		}
		if i == input {
			w += size
			if byCount {
				w += 1 - size
			}
		}
		return w
	}
	v, best := input, weight(input)
	for i := range b.queues {
		if w := weight(i); w > best {
			v, best = i, w
		}
	}
	return v
}

// drop counts a message of size dropped from input.
func (b *Inbox) drop(input int, size int64, tooBig bool) {
	for len(b.drops) <= input {
		b.drops = append(b.drops, Drops{})
	}
	d := &b.drops[input]
	d.Count++
	if tooBig {
		d.TooBig++
	}
	d.Bytes += uint64(size)
	d.LastSize = int(size)
	b.dropped++
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
		first := -1
		for i := range b.queues { // the oldest head
			if q := &b.queues[i]; q.n > 0 && (first < 0 || q.ring[q.head].seq < b.queues[first].ring[b.queues[first].head].seq) {
				first = i
			}
		}
		e := b.queues[first].pop()
		b.n--
		b.bytes -= int64(len(e.Data))
		b.mu.Unlock()
		f(e.Msg)
	}
	b.mu.Lock()
	more := b.n > 0
	b.mu.Unlock()
	if more {
		b.Signal()
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
