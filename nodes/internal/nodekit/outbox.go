package nodekit

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/timealign/timealign/nodes/internal/runtimeparams"
	"github.com/timealign/timealign/pkg/qos"
)

// outbox publishes the messages of one output. A small message (at most
// inlineBytes) on a keep-last output is published at once by the
// goroutine that hands it over, when nothing of the output is queued or
// being published: a keep-last writer holds at most its depth of such
// messages, so the middleware never makes it wait for its readers, and the
// message costs no wake-up of another goroutine. Everything else (a big
// message, which a reliable writer may hold back until its readers
// acknowledge, a keep-all output, a message behind others) goes to the
// output's own goroutine, so a writer that waits never holds up the owner:
// parameter requests, other outputs, ~/status and /diagnostics go on. Its
// queue is an Inbox bounded by inbox.max_bytes (Node.outboxLimits): what
// does not fit is dropped and counted, and memory stays bounded. Messages
// of an output are published in the order they were handed over.
//
// A volatile output that no subscription is matched to is not published
// to: its messages would reach nobody (a late joiner of a volatile topic
// gets nothing older), and handing a big message to the middleware costs
// copies. They are counted in unheard. A transient-local output is always
// published (late joiners get its history).
type outbox struct {
	q      *Inbox
	pub    Publisher
	stop   chan struct{}
	lazy   bool // volatile: skip publishing while nobody subscribes
	inline bool // keep-last: small messages may be published by the caller

	sending sync.Mutex // held while a message is published (by run or inline)

	slowUntil atomic.Int64 // no inline publish before (Unix ns): one took long

	unheard atomic.Uint64 // messages not published: no subscriber
	failed  atomic.Uint64 // Publish errors
	mu      sync.Mutex
	lastErr error
}

// inlineBytes is the size up to which a message is published by the
// goroutine that hands it over (see outbox).
const inlineBytes = 64 << 10

// slowFor is how long an output whose inline publish took longer than
// inlineSlow publishes on its own goroutine only.
const slowFor = time.Second

func newOutbox(pub Publisher, q qos.Profile, l runtimeparams.Limits) *outbox {
	return &outbox{q: NewInbox(l), pub: pub, stop: make(chan struct{}),
		lazy: q.Durability != qos.TransientLocal, inline: q.History != qos.KeepAll}
}

// publish publishes msg at once if it may (see outbox), or queues it for
// run; it never waits for a publish of another goroutine. An inline
// publish that takes longer than inlineSlow (a writer that waits after
// all) sends the output's next messages, for slowFor, to its goroutine.
func (o *outbox) publish(msg []byte) {
	if o.inline && len(msg) <= inlineBytes && o.sending.TryLock() {
		began := time.Now()
		if n, _ := o.q.Len(); n == 0 && began.UnixNano() >= o.slowUntil.Load() {
			o.send(Msg{Data: msg})
			if took := time.Since(began); took > inlineSlow {
				o.slowUntil.Store(began.Add(took + slowFor).UnixNano())
			}
			o.sending.Unlock()
			return
		}
		o.sending.Unlock()
	}
	o.q.Offer(0, msg, 0)
}

// run publishes what is queued until stop is closed; what is still queued
// then is dropped (shutting down must not wait for readers).
func (o *outbox) run() {
	for {
		select {
		case <-o.stop:
			return
		case <-o.q.Ready():
		}
		o.sending.Lock()
		o.q.Drain(1, o.send)
		o.sending.Unlock()
	}
}

// send publishes one message, under o.sending.
func (o *outbox) send(m Msg) {
	if o.lazy && !o.heard() {
		o.unheard.Add(1)
		return
	}
	publish := o.pub.Publish
	if op, ok := o.pub.(OwnedPublisher); ok {
		publish = op.PublishOwned
	}
	if err := publish(m.Data); err != nil {
		o.failed.Add(1)
		o.mu.Lock()
		o.lastErr = err
		o.mu.Unlock()
	}
}

// heard says whether a subscription is matched to the output, or the
// output is transient-local (late joiners get its history); any goroutine
// may ask.
func (o *outbox) heard() bool {
	return !o.lazy || o.pub.Subscribers() != 0 // -1: the middleware cannot tell
}

// errors returns the number of failed publishes and the last error.
func (o *outbox) errors() (uint64, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.failed.Load(), o.lastErr
}
