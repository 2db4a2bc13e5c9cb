package sync

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strings"
	"time"

	"github.com/timealign/timealign/pkg/cfgerr"
	"github.com/timealign/timealign/pkg/stamp"
)

// Message is a message of one topic.
type Message[T any] struct {
	Topic   int
	Stamp   stamp.Time // header.stamp: what the policies match on
	Arrival stamp.Time // when it arrived (for latency figures and LatestTime)
	Value   T
}

// DropReason says why a policy dropped a message.
type DropReason int

const (
	// QueueFull: the topic's queue held QueueSize messages.
	QueueFull DropReason = iota
	// NotMatched: a better set was found without it; it can be in none.
	NotMatched
	// MaxInterval: no set with it would fit within MaxInterval.
	MaxInterval
	// AfterDrop: ApproximateTime drops the oldest message while the topic
	// holding the newest has just lost a message to a full queue.
	AfterDrop
	// Replaced: ExactTime got a second message with the same stamp on the
	// same topic, or LatestTime a newer message before any set used the
	// previous one; the earlier message is dropped.
	Replaced
	// BadTopic: the topic index is out of range.
	BadTopic
	numReasons
)

var reasonNames = [numReasons]string{"queue_full", "not_matched", "max_interval", "after_drop", "replaced", "bad_topic"}

func (r DropReason) String() string {
	if r >= 0 && r < numReasons {
		return reasonNames[r]
	}
	return fmt.Sprintf("DropReason(%d)", int(r))
}

// Reasons lists every drop reason, in order.
func Reasons() []DropReason {
	rs := make([]DropReason, numReasons)
	for i := range rs {
		rs[i] = DropReason(i)
	}
	return rs
}

// Policy selects a synchronization policy.
type Policy int

const (
	Approximate Policy = iota
	Exact
	Epsilon
	Latest
)

var policyNames = []string{"approximate", "exact", "epsilon", "latest"}

// PolicyNames returns the names of the policies, indexed by Policy: what
// [ParsePolicy] reads and [Policy.String] writes. The slice is a copy.
func PolicyNames() []string { return slices.Clone(policyNames) }

func (p Policy) String() string {
	if p >= 0 && int(p) < len(policyNames) {
		return policyNames[p]
	}
	return fmt.Sprintf("Policy(%d)", int(p))
}

// ErrConfig is wrapped by every error of Config.Validate.
var ErrConfig = errors.New("sync: invalid config")

// ParsePolicy returns the policy named s.
func ParsePolicy(s string) (Policy, error) {
	for i, n := range policyNames {
		if n == s {
			return Policy(i), nil
		}
	}
	return 0, cfgerr.New(ErrConfig, "Policy", "%q is unknown (want %s or %s)", s,
		strings.Join(policyNames[:len(policyNames)-1], ", "), policyNames[len(policyNames)-1])
}

// Config configures a synchronizer. Start from DefaultConfig.
type Config struct {
	// Policy selects the policy. It defaults to Approximate.
	Policy Policy
	// Topics is the number of input topics, at least 2. It defaults to 2.
	Topics int
	// QueueSize is the number of messages a topic may queue (Approximate:
	// queued plus tentatively used; Exact: pending sets; Epsilon: per
	// topic). It defaults to 10, as message_filters' examples.
	QueueSize int
	// AgePenalty (Approximate) weighs publishing early against waiting for
	// a set of smaller spread. It defaults to 0.1, message_filters' value.
	AgePenalty float64
	// MaxInterval (Approximate) is the largest spread of a set; 0 means no
	// limit. It defaults to 0.
	MaxInterval time.Duration
	// LowerBounds (Approximate) are the least intervals between two
	// messages of each topic, which let a set be published before the next
	// message of a slow topic arrives. Empty means all 0; otherwise one per
	// topic.
	LowerBounds []time.Duration
	// Epsilon (Epsilon policy) is the largest distance of a set's stamps
	// from its oldest. It defaults to 0.
	Epsilon time.Duration
	// RateAlpha, ErrorAlpha and MarginFactor (Latest) configure the rate
	// estimate of each topic: exponential moving averages of the rate and
	// of its error, and how many errors a rate change must exceed to count
	// as a step. They default to message_filters' 0.9, 0.3 and 10.
	RateAlpha, ErrorAlpha, MarginFactor float64
}

// DefaultConfig returns message_filters' defaults for two topics.
func DefaultConfig() Config {
	return Config{Policy: Approximate, Topics: 2, QueueSize: 10, AgePenalty: 0.1,
		RateAlpha: 0.9, ErrorAlpha: 0.3, MarginFactor: 10}
}

// MaxTopics and MaxQueueSize bound the memory a synchronizer may use.
const (
	MaxTopics    = 1024
	MaxQueueSize = 1 << 20
)

// Validate reports the first bad field.
func (c Config) Validate() error {
	bad := func(field, format string, args ...any) error {
		return cfgerr.New(ErrConfig, field, format, args...)
	}
	switch {
	case c.Policy < Approximate || c.Policy > Latest:
		return bad("Policy", "is %v", c.Policy)
	case c.Topics < 2 || c.Topics > MaxTopics:
		return bad("Topics", "is %d, want 2..%d", c.Topics, MaxTopics)
	case c.QueueSize < 1 || c.QueueSize > MaxQueueSize:
		return bad("QueueSize", "is %d, want 1..%d", c.QueueSize, MaxQueueSize)
	case !(c.AgePenalty >= 0) || math.IsInf(c.AgePenalty, 0):
		return bad("AgePenalty", "is %v, want ≥ 0", c.AgePenalty)
	case c.MaxInterval < 0:
		return bad("MaxInterval", "is %v, want ≥ 0 (0: no limit)", c.MaxInterval)
	case len(c.LowerBounds) != 0 && len(c.LowerBounds) != c.Topics:
		return bad("LowerBounds", "has %d entries, want one per topic ({Topics} %d) or none", len(c.LowerBounds), c.Topics)
	case c.Epsilon < 0:
		return bad("Epsilon", "is %v, want ≥ 0", c.Epsilon)
	case c.Policy == Latest && !(c.RateAlpha > 0 && c.RateAlpha <= 1):
		return bad("RateAlpha", "is %v, want (0, 1]", c.RateAlpha)
	case c.Policy == Latest && !(c.ErrorAlpha > 0 && c.ErrorAlpha <= 1):
		return bad("ErrorAlpha", "is %v, want (0, 1]", c.ErrorAlpha)
	case c.Policy == Latest && !(c.MarginFactor > 0) || math.IsInf(c.MarginFactor, 0):
		return bad("MarginFactor", "is %v, want > 0", c.MarginFactor)
	}
	for i, b := range c.LowerBounds {
		if b < 0 {
			return bad(fmt.Sprintf("LowerBounds[%d]", i), "is %v, want ≥ 0", b)
		}
	}
	return nil
}

// Synchronizer is the interface every policy implements.
type Synchronizer[T any] interface {
	// Add offers a message. Sets and drops are reported through the
	// callbacks given to the constructor, before Add returns.
	Add(m Message[T])
	// Status returns a snapshot.
	Status() Status
	// Reset forgets every queued message (without reporting them as
	// dropped); counters are kept.
	Reset()
}

// SetFunc receives a matched set, one message per topic in topic order.
// The slice is reused after the call returns.
type SetFunc[T any] func(set []Message[T])

// DropFunc receives a dropped message and the reason.
type DropFunc[T any] func(m Message[T], why DropReason)

// New returns the synchronizer cfg.Policy selects. onDrop may be nil.
func New[T any](cfg Config, onSet SetFunc[T], onDrop DropFunc[T]) (Synchronizer[T], error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if onSet == nil {
		return nil, fmt.Errorf("%w: a set callback is required", ErrConfig)
	}
	switch cfg.Policy {
	case Exact:
		return newExact(cfg, onSet, onDrop), nil
	case Epsilon:
		return newEpsilon(cfg, onSet, onDrop), nil
	case Latest:
		return newLatest(cfg, onSet, onDrop), nil
	}
	return newApproximate(cfg, onSet, onDrop), nil
}

// Status is a snapshot of a synchronizer.
type Status struct {
	Policy Policy `json:"-"`
	// Sets is the number of sets published.
	Sets uint64 `json:"sets"`
	// Received counts messages per topic.
	Received []uint64 `json:"received"`
	// Drops counts drops per topic and reason: Drops[topic][reason].
	// Drops of a bad topic index are counted in BadTopic.
	Drops    [][numReasons]uint64 `json:"-"`
	BadTopic uint64               `json:"bad_topic"`
	// OutOfOrder counts messages older than the previous one of their topic
	// (handled as the original does, which warns once).
	OutOfOrder []uint64 `json:"out_of_order"`
	// Duplicate counts messages with the same stamp as the previous one of
	// their topic. They are handled as the original does: ApproximateTime,
	// ApproximateEpsilonTime and LatestTime queue them like any message;
	// ExactTime replaces the pending one (a Replaced drop).
	Duplicate []uint64 `json:"duplicate"`
	// QueueFill is the number of messages held per topic.
	QueueFill []int `json:"queue_fill"`
	// LastStamp is the stamp of each topic's newest message (0: none yet):
	// a topic far behind the others blocks every set.
	LastStamp []stamp.Time `json:"last_stamp_ns"`
	// MeanSpread and MaxSpread: newest minus oldest stamp of the sets.
	MeanSpread time.Duration `json:"mean_spread_ns"`
	MaxSpread  time.Duration `json:"max_spread_ns"`
	// MeanLatency and MaxLatency: from the arrival of a set's last member
	// to its publication (the arrival of the message that completed it).
	MeanLatency time.Duration `json:"mean_latency_ns"`
	MaxLatency  time.Duration `json:"max_latency_ns"`
}

// DropsByReason sums the drops of each reason over topics.
func (s Status) DropsByReason() [numReasons]uint64 {
	var out [numReasons]uint64
	for _, d := range s.Drops {
		for r, n := range d {
			out[r] += n
		}
	}
	return out
}

// DroppedPerTopic sums the drops of each topic over reasons.
func (s Status) DroppedPerTopic() []uint64 {
	out := make([]uint64, len(s.Drops))
	for t, d := range s.Drops {
		for _, n := range d {
			out[t] += n
		}
	}
	return out
}

// stats is the bookkeeping every policy shares.
type stats[T any] struct {
	st        Status
	sumSpread float64
	sumLat    float64
	onSet     SetFunc[T]
	onDrop    DropFunc[T]
}

func newStats[T any](cfg Config, onSet SetFunc[T], onDrop DropFunc[T]) stats[T] {
	n := cfg.Topics
	return stats[T]{onSet: onSet, onDrop: onDrop, st: Status{
		Policy: cfg.Policy, Received: make([]uint64, n), Drops: make([][numReasons]uint64, n),
		OutOfOrder: make([]uint64, n), Duplicate: make([]uint64, n), QueueFill: make([]int, n), LastStamp: make([]stamp.Time, n),
	}}
}

// receive counts a message; it reports false (and counts a drop) for a bad
// topic index.
func (s *stats[T]) receive(m Message[T]) bool {
	if m.Topic < 0 || m.Topic >= len(s.st.Received) {
		s.st.BadTopic++
		if s.onDrop != nil {
			s.onDrop(m, BadTopic)
		}
		return false
	}
	s.st.Received[m.Topic]++
	if s.st.Received[m.Topic] > 1 {
		switch {
		case m.Stamp < s.st.LastStamp[m.Topic]:
			s.st.OutOfOrder[m.Topic]++
		case m.Stamp == s.st.LastStamp[m.Topic]:
			s.st.Duplicate[m.Topic]++
		}
	}
	s.st.LastStamp[m.Topic] = m.Stamp
	return true
}

func (s *stats[T]) drop(m Message[T], why DropReason) {
	s.st.Drops[m.Topic][why]++
	if s.onDrop != nil {
		s.onDrop(m, why)
	}
}

// publish reports a set published on the arrival of a message at now.
func (s *stats[T]) publish(set []Message[T], now stamp.Time) {
	lo, hi, last := set[0].Stamp, set[0].Stamp, set[0].Arrival
	for _, m := range set[1:] {
		lo, hi, last = min(lo, m.Stamp), max(hi, m.Stamp), max(last, m.Arrival)
	}
	spread := hi.Sub(lo)
	lat := max(now.Sub(last), 0)
	s.st.Sets++
	s.sumSpread += float64(spread)
	s.sumLat += float64(lat)
	s.st.MaxSpread = max(s.st.MaxSpread, spread)
	s.st.MaxLatency = max(s.st.MaxLatency, lat)
	s.onSet(set)
}

func (s *stats[T]) snapshot() Status {
	st := s.st
	if st.Sets > 0 {
		st.MeanSpread = time.Duration(s.sumSpread / float64(st.Sets))
		st.MeanLatency = time.Duration(s.sumLat / float64(st.Sets))
	}
	st.Received = append([]uint64(nil), st.Received...)
	st.Drops = append([][numReasons]uint64(nil), st.Drops...)
	st.OutOfOrder = append([]uint64(nil), st.OutOfOrder...)
	st.Duplicate = append([]uint64(nil), st.Duplicate...)
	st.QueueFill = append([]int(nil), st.QueueFill...)
	st.LastStamp = append([]stamp.Time(nil), st.LastStamp...)
	return st
}

// ring is a double-ended queue with a fixed capacity.
type ring[T any] struct {
	buf  []T
	head int
	n    int
}

func newRing[T any](capacity int) ring[T] { return ring[T]{buf: make([]T, capacity)} }

func (r *ring[T]) len() int { return r.n }

func (r *ring[T]) at(i int) *T {
	j := r.head + i
	if j >= len(r.buf) {
		j -= len(r.buf)
	}
	return &r.buf[j]
}

func (r *ring[T]) front() *T { return r.at(0) }
func (r *ring[T]) back() *T  { return r.at(r.n - 1) }

func (r *ring[T]) pushBack(x T) {
	if r.n == len(r.buf) {
		r.grow()
	}
	r.n++
	*r.at(r.n - 1) = x
}

func (r *ring[T]) pushFront(x T) {
	if r.n == len(r.buf) {
		r.grow()
	}
	r.head--
	if r.head < 0 {
		r.head += len(r.buf)
	}
	r.n++
	r.buf[r.head] = x
}

func (r *ring[T]) popFront() T {
	var zero T
	x := r.buf[r.head]
	r.buf[r.head] = zero
	r.head++
	if r.head == len(r.buf) {
		r.head = 0
	}
	r.n--
	return x
}

func (r *ring[T]) popBack() T {
	var zero T
	p := r.at(r.n - 1)
	x := *p
	*p = zero
	r.n--
	return x
}

func (r *ring[T]) clear() {
	var zero T
	for i := 0; i < r.n; i++ {
		*r.at(i) = zero
	}
	r.head, r.n = 0, 0
}

// grow doubles the capacity (only while queues warm up: capacities are
// sized from QueueSize).
func (r *ring[T]) grow() {
	nb := make([]T, max(4, 2*len(r.buf)))
	for i := 0; i < r.n; i++ {
		nb[i] = *r.at(i)
	}
	r.buf, r.head = nb, 0
}

// scale returns d·f as rclcpp's Duration·double computes it on x86-64: the
// product in 80-bit long double (a 64-bit significand, rounded to nearest
// even), truncated toward zero. The result is bit-exact for every int64 d
// and finite f (saturating where rclcpp would throw on overflow), so the age
// penalty compares exactly as in the original even for durations near the
// int64 range.
func scale(d int64, f float64) int64 { return newScaler(f).apply(d) }

// scaler multiplies durations by one factor f = ±m·2^e (m the 53-bit
// significand), decomposed once.
type scaler struct {
	m   uint64
	e   int
	neg bool
}

func newScaler(f float64) scaler {
	if f == 0 || math.IsNaN(f) || math.IsInf(f, 0) {
		return scaler{}
	}
	fr, e := math.Frexp(math.Abs(f)) // |f| = fr·2^e, fr in [0.5, 1)
	return scaler{m: uint64(fr * (1 << 53)), e: e - 53, neg: f < 0}
}

func (s scaler) apply(d int64) int64 {
	if d == 0 || s.m == 0 {
		return 0
	}
	neg := (d < 0) != s.neg
	a := uint64(d)
	if d < 0 {
		a = -a
	}
	e := s.e
	hi, lo := bits.Mul64(a, s.m) // the exact product, 128 bits
	keep := lo
	if hi != 0 {
		// Round to a 64-bit significand, to nearest even.
		shift := 64 - bits.LeadingZeros64(hi)
		keep = hi<<(64-shift) | lo>>shift
		rest := lo << (64 - shift) // the bits rounded off, left-aligned
		const half = 1 << 63
		if rest > half || rest == half && keep&1 == 1 {
			keep++
			if keep == 0 { // carried out: 2^64
				keep, shift = half, shift+1
			}
		}
		e += shift
	}
	var r uint64
	switch {
	case e >= 64 || e >= 0 && keep > math.MaxUint64>>e:
		r = math.MaxUint64
	case e >= 0:
		r = keep << e
	case e > -64:
		r = keep >> -e // truncation toward zero
	}
	if neg {
		if r >= 1<<63 {
			return math.MinInt64
		}
		return -int64(r)
	}
	if r > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(r)
}
