package mavcmd

import (
	"sync/atomic"

	"github.com/timealign/timealign/pkg/mav"
)

// asyncWriter writes elements in a goroutine of its own while their
// producer goes on (the merged stream while the merge goes on): write is
// called for each, in order, until one fails; done is called with every
// run of elements handed over, written or not, once the writer is through
// with them (the merge releases their batches). The producer hands them
// over in runs of writeBatch (add, finish).
type asyncWriter[E any] struct {
	cur    []E
	ch     chan []E
	free   chan []E
	end    chan struct{}
	err    error
	failed atomic.Bool
	closed bool
}

const writeBatch = 1024

func newAsyncWriter[E any](write func(E) error, done func([]E)) *asyncWriter[E] {
	a := &asyncWriter[E]{ch: make(chan []E, 1), free: make(chan []E, 3), end: make(chan struct{})}
	go func() {
		defer close(a.end)
		// In locals: the producer writes a.cur, in the same cache line,
		// as often as this loop would read a.err.
		var err error
		defer func() { a.err = err }()
		for run := range a.ch {
			for _, e := range run {
				if err == nil {
					if err = write(e); err != nil {
						a.failed.Store(true)
					}
				}
			}
			done(run)
			clear(run)
			select {
			case a.free <- run[:0]:
			default:
			}
		}
	}()
	return a
}

// add queues an element; it fails once a write has failed.
func (a *asyncWriter[E]) add(e E) error {
	if a.failed.Load() {
		return a.finish()
	}
	if a.cur == nil {
		select {
		case a.cur = <-a.free:
		default:
			a.cur = make([]E, 0, writeBatch)
		}
	}
	a.cur = append(a.cur, e)
	if len(a.cur) == writeBatch {
		a.ch <- a.cur
		a.cur = nil
	}
	return nil
}

// finish writes what is queued, waits for the writer, and returns the
// error of the write that failed.
func (a *asyncWriter[E]) finish() error {
	if !a.closed {
		if len(a.cur) > 0 {
			a.ch <- a.cur
			a.cur = nil
		}
		a.closed = true
		close(a.ch)
	}
	<-a.end
	return a.err
}

// abort ends the writer goroutine (after an error elsewhere).
func (a *asyncWriter[E]) abort() { _ = a.finish() }

// outItem is an item of the merged stream as the writer gets it: with
// the id of the channel of its position as a foxglove.LocationFix (GPS
// records and position messages; MCAP only), 0 if none.
type outItem struct {
	it  *mergeItem
	fix uint16
}

// releaseItems releases the batches of items written: items of a batch
// mostly come together, and are released in runs.
func releaseItems(run []outItem) {
	var b *mav.Batch[*chanRef]
	n := 0
	for _, o := range run {
		if o.it.Batch() != b {
			if b != nil {
				b.Release(n)
			}
			b, n = o.it.Batch(), 0
		}
		n++
	}
	if b != nil {
		b.Release(n)
	}
}

// mergeWriter writes the merged stream.
type mergeWriter interface {
	write(o outItem) error
	close() error
	// abort ends the writer's goroutines without finishing the output
	// (after a failure; a no-op after close).
	abort()
}
