//go:build ros2

package rosnode

// The data path: messages are waited for, taken and published through rcl
// directly, beside rclgo, which still creates the subscriptions and
// publishers (names, QoS, type support) and serves the parameters. rclgo's
// own path costs what a node at 1 kHz notices: a wait set rebuilt (its
// arrays freed and allocated again) at every wake-up, each taken message
// copied from a fresh rcl buffer, an error with a stack trace built for
// every take that finds the queue empty, and each published message copied
// into a fresh rcl buffer. Here one wait set and one take buffer live as
// long as the node, a take that finds nothing is a return code, and a
// published message goes to rcl from the Go slice it is in (the
// middleware copies it before rcl_publish_serialized_message returns).

/*
#cgo LDFLAGS: -lrcl -lrmw -lrcutils
#include <string.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <rcl/rcl.h>
#include <rcl/wait.h>
#include <rcl/guard_condition.h>
#include <rcutils/error_handling.h>
#include <rmw/rmw.h>
#include <rmw/serialized_message.h>

typedef struct {
	rcl_wait_set_t ws;
	rcl_guard_condition_t gc;
	rcl_serialized_message_t buf;
	int ws_ok, gc_ok, buf_ok;
} ta_data;

// ta_error copies rcl's error string into b and resets it.
static void ta_error(char *b, size_t n) {
	const char *s = rcutils_get_error_string().str;
	strncpy(b, s, n - 1);
	b[n - 1] = 0;
	rcutils_reset_error();
}

static rcl_ret_t ta_init(ta_data *d, rcl_context_t *ctx) {
	memset(d, 0, sizeof *d);
	d->ws = rcl_get_zero_initialized_wait_set();
	d->gc = rcl_get_zero_initialized_guard_condition();
	d->buf = rmw_get_zero_initialized_serialized_message();
	rcl_allocator_t a = rcl_get_default_allocator();
	rcl_ret_t rc = rcl_guard_condition_init(&d->gc, ctx, rcl_guard_condition_get_default_options());
	if (rc != RCL_RET_OK) return rc;
	d->gc_ok = 1;
	rc = rcl_wait_set_init(&d->ws, 0, 1, 0, 0, 0, 0, ctx, a);
	if (rc != RCL_RET_OK) return rc;
	d->ws_ok = 1;
	rc = rmw_serialized_message_init(&d->buf, 0, &a);
	if (rc != RMW_RET_OK) return rc;
	d->buf_ok = 1;
	return RCL_RET_OK;
}

// ta_fini frees what ta_init made; its errors are left out (the node is
// shutting down), and reset.
static void ta_fini(ta_data *d) {
	rcl_ret_t rc = RCL_RET_OK;
	if (d->ws_ok) rc |= rcl_wait_set_fini(&d->ws);
	if (d->gc_ok) rc |= rcl_guard_condition_fini(&d->gc);
	if (d->buf_ok) rc |= rmw_serialized_message_fini(&d->buf);
	d->ws_ok = d->gc_ok = d->buf_ok = 0;
	if (rc != RCL_RET_OK) rcutils_reset_error();
}

// ta_wait waits until one of the n subscriptions has messages or the guard
// condition is triggered; ready[i] tells which. The wait set is resized
// only when n changes.
static rcl_ret_t ta_wait(ta_data *d, rcl_subscription_t **subs, size_t n, uint8_t *ready) {
	rcl_ret_t rc;
	if (d->ws.size_of_subscriptions != n) {
		rc = rcl_wait_set_resize(&d->ws, n, 1, 0, 0, 0, 0);
	} else {
		rc = rcl_wait_set_clear(&d->ws);
	}
	if (rc != RCL_RET_OK) return rc;
	for (size_t i = 0; i < n; i++) {
		rc = rcl_wait_set_add_subscription(&d->ws, subs[i], NULL);
		if (rc != RCL_RET_OK) return rc;
	}
	rc = rcl_wait_set_add_guard_condition(&d->ws, &d->gc, NULL);
	if (rc != RCL_RET_OK) return rc;
	rc = rcl_wait(&d->ws, -1);
	if (rc != RCL_RET_OK) return rc;
	for (size_t i = 0; i < n; i++) ready[i] = d->ws.subscriptions[i] != NULL;
	return RCL_RET_OK;
}

// ta_take takes one serialized message of s into d->buf (which grows to
// the largest message taken, see ta_shrink), with its reception time, its
// publisher's sequence number (RMW_MESSAGE_INFO_SEQUENCE_NUMBER_UNSUPPORTED
// where the RMW does not number messages), the time its writer stamped it
// with (0 where the RMW does not say) and a hash of its publisher's GID
// (FNV-1a).
static rcl_ret_t ta_take(ta_data *d, rcl_subscription_t *s, size_t *len, int64_t *received, uint64_t *seq, int64_t *sent, uint64_t *pub) {
	rmw_message_info_t info = rmw_get_zero_initialized_message_info();
	rcl_ret_t rc = rcl_take_serialized_message(s, &d->buf, &info, NULL);
	if (rc == RCL_RET_OK) {
		*len = d->buf.buffer_length;
		*received = info.received_timestamp;
		*seq = info.publication_sequence_number;
		*sent = info.source_timestamp;
		uint64_t h = 14695981039346656037ULL;
		for (size_t i = 0; i < RMW_GID_STORAGE_SIZE; i++) {
			h = (h ^ info.publisher_gid.data[i]) * 1099511628211ULL;
		}
		*pub = h;
	}
	return rc;
}

// ta_shrink gives back the take buffer's memory above n bytes.
static rcl_ret_t ta_shrink(ta_data *d, size_t n) {
	if (d->buf.buffer_capacity <= n) return RCL_RET_OK;
	return rmw_serialized_message_resize(&d->buf, n);
}

// ta_trim gives the C heap's free memory back to the system (glibc keeps
// what the middleware freed, reassembly and receive buffers after a flood
// of big messages, in its arenas: a synchronizer held 145–500 MB after
// 4K image floods, 27–47 MB once trimmed).
static void ta_trim(void) {
#ifdef __GLIBC__
	malloc_trim(0);
#endif
}

// ta_publish publishes the n bytes at data, a serialized message, on p.
static rcl_ret_t ta_publish(rcl_publisher_t *p, uint8_t *data, size_t n) {
	static uint8_t empty[1];
	rcl_serialized_message_t m = rmw_get_zero_initialized_serialized_message();
	m.buffer = n > 0 ? data : empty;
	m.buffer_length = n;
	m.buffer_capacity = n;
	m.allocator = rcutils_get_default_allocator();
	return rcl_publish_serialized_message(p, &m, NULL);
}
*/
import "C"

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"sync"
	"time"
	"unsafe"

	"github.com/tiiuae/rclgo/pkg/rclgo"

	"github.com/timealign/timealign/nodes/internal/nodekit"
	"github.com/timealign/timealign/pkg/qos"
	"github.com/timealign/timealign/pkg/stamp"
)

// rclError is the error of rcl return code rc, with rcl's message (which
// it then resets).
func rclError(what string, rc C.rcl_ret_t) error {
	var b [512]C.char
	C.ta_error(&b[0], C.size_t(len(b)))
	return fmt.Errorf("%s: %s (rcl %d)", what, C.GoString(&b[0]), int(rc))
}

// handle returns the rcl handle that rclgo keeps in the unexported pointer
// field of v (a *rclgo.Subscription, *rclgo.Publisher or *rclgo.Context),
// or nil if it has none by that name. rclgo is pinned in go.mod; the
// integration tests run every path through these handles.
func handle(v any, field string) unsafe.Pointer {
	f := reflect.ValueOf(v).Elem().FieldByName(field)
	if !f.IsValid() || f.Kind() != reflect.Pointer {
		return nil
	}
	return f.UnsafePointer()
}

// dataLoop waits for and takes the messages of every subscription of a
// node, on the goroutine that runs it, and hands each to its subscriber's
// deliver.
type dataLoop struct {
	d     *C.ta_data // C memory: rcl keeps pointers into it
	pool  *nodekit.BufPool
	epoch time.Time // the monotonic clock's origin for Waits

	mu      sync.Mutex
	subs    []dataSub // every subscription, in order of subscribing
	changed bool      // subs changed since the loop last read it
	closed  bool
}

type dataSub struct {
	rcl     *C.rcl_subscription_t
	deliver func([]byte, stamp.Time)
	gaps    *nodekit.SeqGaps // the messages its publishers numbered that never came
	waits   *nodekit.Waits   // how long its messages waited in the middleware
	limit   int              // a take of this many found the queue full (min(depth, maxTake) keeping last)
}

// shrinkAfter is how long the take buffer keeps memory above what the
// messages taken since needed (a stream of big messages that stopped),
// and how often the C heap's free memory goes back to the system
// (ta_trim).
const shrinkAfter = 10 * time.Second

// yieldEvery is how often the data loop passes through the scheduler (see
// dataLoop.run): well within sysmon's 10 ms.
const yieldEvery = 2 * time.Millisecond

// minTakeBuffer is what the take buffer keeps in any case.
const minTakeBuffer = 64 << 10

func newDataLoop(ctx *rclgo.Context, pool *nodekit.BufPool) (*dataLoop, error) {
	rctx := handle(ctx, "rcl_context_t")
	if rctx == nil {
		return nil, errors.New("rclgo: no rcl context handle (rclgo changed: see rosnode/datapath.go)")
	}
	l := &dataLoop{d: (*C.ta_data)(C.calloc(1, C.sizeof_ta_data)), pool: pool, epoch: time.Now()}
	if rc := C.ta_init(l.d, (*C.rcl_context_t)(rctx)); rc != C.RCL_RET_OK {
		err := rclError("data wait set", rc)
		l.close()
		return nil, err
	}
	return l, nil
}

// add adds a subscription that rclgo made (and no rclgo wait set waits on).
func (l *dataLoop) add(sub *rclgo.Subscription, q qos.Profile, deliver func([]byte, stamp.Time), gaps *nodekit.SeqGaps, waits *nodekit.Waits) error {
	h := handle(sub, "rcl_subscription_t")
	if h == nil {
		return errors.New("rclgo: no rcl subscription handle (rclgo changed: see rosnode/datapath.go)")
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return errors.New("the node is shutting down")
	}
	l.subs = append(l.subs, dataSub{rcl: (*C.rcl_subscription_t)(h), deliver: deliver, gaps: gaps, waits: waits, limit: takeLimit(q)})
	l.changed = true
	C.rcl_trigger_guard_condition(&l.d.gc)
	return nil
}

// wake makes the loop's current wait return.
func (l *dataLoop) wake() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.closed {
		C.rcl_trigger_guard_condition(&l.d.gc)
	}
}

// run waits, takes and delivers until ctx is done.
func (l *dataLoop) run(ctx context.Context) error {
	stop := context.AfterFunc(ctx, l.wake)
	defer stop()
	var (
		subs    []dataSub
		handles []*C.rcl_subscription_t // Go memory holding C pointers only
		ready   []uint8
		need    int // the largest message taken since shrunk
		shrunk  = time.Now()
		yielded time.Time // the last runtime.Gosched
	)
	for ctx.Err() == nil {
		l.mu.Lock()
		if l.changed || handles == nil {
			subs = append(subs[:0], l.subs...)
			handles, ready = handles[:0], make([]uint8, len(subs)+1)
			for _, s := range subs {
				handles = append(handles, s.rcl)
			}
			handles = append(handles, nil) // never empty: &handles[0] is valid
			l.changed = false
		}
		l.mu.Unlock()
		// Through the scheduler every few milliseconds: a goroutine that
		// only ever enters and leaves cgo looks to Go's sysmon like one
		// that runs for good, and is "preempted" every 10 ms, its P taken
		// away in the wait; each time sysmon then polls at its fastest
		// (20 µs) for a while, which at 1 kHz cost more CPU than the
		// node's work. (Not at every wake-up: Gosched wakes another
		// thread to look for work.)
		if now := time.Now(); now.Sub(yielded) > yieldEvery {
			runtime.Gosched()
			yielded = now
		}
		if rc := C.ta_wait(l.d, &handles[0], C.size_t(len(subs)), (*C.uint8_t)(&ready[0])); rc != C.RCL_RET_OK {
			if ctx.Err() != nil {
				return nil
			}
			return rclError("rcl_wait", rc)
		}
		for i, s := range subs {
			if ready[i] != 0 {
				need = max(need, l.take(s))
			}
		}
		if now := time.Now(); now.Sub(shrunk) > shrinkAfter {
			C.ta_shrink(l.d, C.size_t(max(need, minTakeBuffer)))
			C.ta_trim()
			l.pool.Trim()
			shrunk, need = now, 0
		}
	}
	return nil
}

// take takes the messages waiting on s (at most 64: one wake-up may stand
// for several, and a shallow keep-last queue must not overflow meanwhile)
// and returns the size of the largest. Each is copied from the take buffer
// into a slice of its own (a big one reused from the pool: see
// publisher.PublishOwned), which deliver then owns.
func (l *dataLoop) take(s dataSub) int {
	largest, taken := 0, 0
	defer func() { s.waits.Batch(taken, s.limit) }()
	for range maxTake {
		var n C.size_t
		var received C.int64_t
		var seq, pub C.uint64_t
		var sent C.int64_t
		rc := C.ta_take(l.d, s.rcl, &n, &received, &seq, &sent, &pub)
		if rc != C.RCL_RET_OK {
			if rc != C.RCL_RET_SUBSCRIPTION_TAKE_FAILED {
				C.rcutils_reset_error() // a broken take is a lost message: the inbox's counts do not see it
			}
			return largest
		}
		b := l.pool.Get(int(n))
		copy(b, unsafe.Slice((*byte)(unsafe.Pointer(l.d.buf.buffer)), int(n)))
		largest = max(largest, int(n))
		s.gaps.Take(uint64(pub), uint64(seq))
		now := time.Now()
		s.waits.Take(uint64(pub), stamp.Time(sent), stamp.Time(now.UnixNano()), now.Sub(l.epoch))
		// Humble's Cyclone RMW leaves the reception time at 0 (1970):
		// then the node's clock stands in.
		s.deliver(b, stamp.Time(received))
		taken++
	}
	return largest
}

// takeLimit is the number of messages a take of a subscription of QoS q
// finds when its queue is full: a keep-last queue's depth, or maxTake.
func takeLimit(q qos.Profile) int {
	if q.History != qos.KeepAll && q.Depth > 0 && q.Depth < maxTake {
		return q.Depth
	}
	return maxTake
}

// maxTake is the most messages one take handles.
const maxTake = 64

// close frees the wait set, the guard condition and the take buffer; the
// loop must not run.
func (l *dataLoop) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return
	}
	l.closed = true
	C.ta_fini(l.d)
	C.free(unsafe.Pointer(l.d))
}

// publishSerialized publishes msg on rclgo's publisher p without a copy of
// its own: the middleware copies it before rcl returns.
func publishSerialized(p unsafe.Pointer, msg []byte) error {
	var data *C.uint8_t
	if len(msg) > 0 {
		data = (*C.uint8_t)(unsafe.Pointer(&msg[0]))
	}
	if rc := C.ta_publish((*C.rcl_publisher_t)(p), data, C.size_t(len(msg))); rc != C.RCL_RET_OK {
		return rclError("publish", rc)
	}
	return nil
}
