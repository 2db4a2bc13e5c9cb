package nodekit

import (
	"sync"
	"sync/atomic"

	"github.com/timealign/timealign/nodes/internal/runtimeparams"
	"github.com/timealign/timealign/pkg/qos"
)

// outbox publishes the messages of one output on a goroutine of its own,
// so a publisher that waits for its readers (a reliable writer sending a
// big message, a keep-all history) never holds up the owner goroutine:
// parameter requests, other outputs, ~/status and /diagnostics go on. Its
// queue is an Inbox bounded by inbox.max_bytes (Node.outboxLimits): what
// does not fit is dropped and counted, and memory stays bounded.
//
// A volatile output that no subscription is matched to is not published
// to: its messages would reach nobody (a late joiner of a volatile topic
// gets nothing older), and handing a big message to the middleware costs
// copies (rclgo's, then the middleware's). They are counted in unheard.
// A transient-local output is always published (late joiners get its
// history).
type outbox struct {
	q    *Inbox
	pub  Publisher
	stop chan struct{}
	lazy bool // volatile: skip publishing while nobody subscribes

	unheard atomic.Uint64 // messages not published: no subscriber
	failed  atomic.Uint64 // Publish errors
	mu      sync.Mutex
	lastErr error
}

func newOutbox(pub Publisher, q qos.Profile, l runtimeparams.Limits) *outbox {
	return &outbox{q: NewInbox(l), pub: pub, stop: make(chan struct{}), lazy: q.Durability != qos.TransientLocal}
}

// run publishes until stop is closed; what is still queued then is
// dropped (shutting down must not wait for readers).
func (o *outbox) run() {
	for {
		select {
		case <-o.stop:
			return
		case <-o.q.Ready():
		}
		o.q.Drain(1, func(m Msg) {
			if o.lazy && o.pub.Subscribers() == 0 {
				o.unheard.Add(1)
				return
			}
			if err := o.pub.Publish(m.Data); err != nil {
				o.failed.Add(1)
				o.mu.Lock()
				o.lastErr = err
				o.mu.Unlock()
			}
		})
	}
}

// errors returns the number of failed publishes and the last error.
func (o *outbox) errors() (uint64, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.failed.Load(), o.lastErr
}
