package sync

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/timealign/timealign/pkg/stamp"
)

// StreamAligner is Rock's aggregator::StreamAligner: samples pushed on
// several streams are played back (through a callback) in time order. A
// stream with a period tells when its next sample is due, so playback need
// not wait for it before then (the lookahead); a stream without data
// delays playback until the newest sample is Timeout ahead of the last
// played one, after which it is skipped. Samples older than the last
// played one are dropped (late), as are samples going back on their stream
// (backward) and, when a stream's buffer is full, its oldest sample (full).
// Push and Step are driven by the caller; nothing reads a clock.
//
// Streams are sorted for playback by the stamp of their next sample (or,
// without data, the last stamp plus the period); equal stamps play streams
// with data first, then the lower Priority, then the lower index.
//
// Cost: Push O(1); Step O(S log S) for S streams (S is small). Memory:
// every buffer is bounded except a growing one (BufferSize 0).
type StreamAligner[T any] struct {
	timeout time.Duration
	streams []*alignerStream[T]
	order   []int
	latest  stamp.Time // newest sample pushed
	current stamp.Time // last sample played
	late    uint64
	bad     uint64
	play    func(stream int, t stamp.Time, v T)
	onDrop  func(stream int, t stamp.Time, v T, why AlignerDrop)
}

// AlignerDrop says why the aligner dropped a sample.
type AlignerDrop int

const (
	// AlignerLate: older than the last played sample.
	AlignerLate AlignerDrop = iota
	// AlignerBackward: older than the previous sample of its stream.
	AlignerBackward
	// AlignerFull: the oldest sample of a full buffer, pushed out.
	AlignerFull
	// AlignerBadStream: the stream index is not registered.
	AlignerBadStream
)

var alignerDropNames = []string{"late", "backward", "full", "bad_stream"}

func (d AlignerDrop) String() string {
	if d >= 0 && int(d) < len(alignerDropNames) {
		return alignerDropNames[d]
	}
	return fmt.Sprintf("AlignerDrop(%d)", int(d))
}

// StreamConfig configures one stream of a StreamAligner.
type StreamConfig struct {
	// Period is the time between the stream's samples: the lookahead. 0
	// means not periodic (no lookahead); a negative period sizes an
	// automatic buffer from |Period| without a lookahead, as Rock does.
	Period time.Duration
	// BufferSize is the number of samples the stream buffers: negative for
	// automatic (2·⌈timeout/|period|⌉, which needs a period), 0 for a
	// buffer that grows as needed.
	BufferSize int
	// Priority orders streams with equal stamps: lower plays first. Rock's
	// default is −1.
	Priority int
	// Name is for status only.
	Name string
}

// ErrAlignerConfig is wrapped by the errors of the aligner's configuration.
var ErrAlignerConfig = errors.New("sync: invalid stream aligner config")

// StreamStatus is the status of one stream.
type StreamStatus struct {
	Name       string     `json:"name"`
	Active     bool       `json:"active"`
	Removed    bool       `json:"removed"`
	Priority   int        `json:"priority"`
	BufferFill int        `json:"buffer_fill"`
	BufferSize int        `json:"buffer_size"`
	Received   uint64     `json:"samples_received"`
	Processed  uint64     `json:"samples_processed"`
	Late       uint64     `json:"samples_dropped_late_arriving"`
	Backward   uint64     `json:"samples_backward_in_time"`
	Full       uint64     `json:"samples_dropped_buffer_full"`
	LatestTime stamp.Time `json:"latest_sample_time_ns"`
	// LatestData is the stamp of the newest sample the stream buffered;
	// EarliestData that of its next sample (0 without data).
	LatestData   stamp.Time `json:"latest_data_time_ns"`
	EarliestData stamp.Time `json:"earliest_data_time_ns"`
}

// AlignerStatus is a snapshot of a StreamAligner.
type AlignerStatus struct {
	Timeout time.Duration `json:"timeout_ns"`
	// Current is the stamp of the last played sample, Latest of the newest
	// pushed; Latency their difference.
	Current   stamp.Time     `json:"current_time_ns"`
	Latest    stamp.Time     `json:"latest_time_ns"`
	Latency   time.Duration  `json:"latency_ns"`
	Late      uint64         `json:"samples_dropped_late_arriving"`
	BadStream uint64         `json:"bad_stream"`
	Streams   []StreamStatus `json:"streams"`
}

type alignerStream[T any] struct {
	StreamStatus
	period time.Duration
	fixed  bool // the buffer does not grow
	buf    ring[alignerItem[T]]
	last   stamp.Time
}

type alignerItem[T any] struct {
	t stamp.Time
	v T
}

// NewStreamAligner returns an aligner with the given timeout (the most
// playback waits for a stream without data) and streams, indexed in order.
// play receives each played sample; onDrop (optional) each dropped one.
func NewStreamAligner[T any](timeout time.Duration, streams []StreamConfig,
	play func(stream int, t stamp.Time, v T), onDrop func(stream int, t stamp.Time, v T, why AlignerDrop)) (*StreamAligner[T], error) {
	if timeout < 0 {
		return nil, fmt.Errorf("%w: Timeout is %v, want ≥ 0", ErrAlignerConfig, timeout)
	}
	if play == nil {
		return nil, fmt.Errorf("%w: a play callback is required", ErrAlignerConfig)
	}
	a := &StreamAligner[T]{timeout: timeout, play: play, onDrop: onDrop}
	for i, c := range streams {
		if _, err := a.Register(c); err != nil {
			return nil, fmt.Errorf("stream %d: %w", i, err)
		}
	}
	return a, nil
}

// Register adds a stream, reusing the first removed slot, and returns its
// index.
func (a *StreamAligner[T]) Register(c StreamConfig) (int, error) {
	size, period := c.BufferSize, c.Period
	if size < 0 {
		if period == 0 {
			return 0, fmt.Errorf("%w: BufferSize is automatic (%d) but Period is 0", ErrAlignerConfig, size)
		}
		p := period
		if p < 0 {
			p, period = -p, 0
		}
		size = 2 * int(math.Ceil(a.timeout.Seconds()/p.Seconds()))
	}
	if size > MaxQueueSize {
		return 0, fmt.Errorf("%w: BufferSize %d is over %d", ErrAlignerConfig, size, MaxQueueSize)
	}
	s := &alignerStream[T]{period: period, fixed: size > 0}
	capacity := size
	if size == 0 {
		capacity = 20
	}
	s.buf = newRing[alignerItem[T]](capacity)
	s.StreamStatus = StreamStatus{Name: c.Name, Active: true, Priority: c.Priority, BufferSize: capacity}
	for i, old := range a.streams {
		if old == nil {
			a.streams[i] = s
			return i, nil
		}
	}
	a.streams = append(a.streams, s)
	a.order = append(a.order, 0)
	return len(a.streams) - 1, nil
}

func (a *StreamAligner[T]) stream(i int) *alignerStream[T] {
	if i < 0 || i >= len(a.streams) {
		return nil
	}
	return a.streams[i]
}

// Push adds a sample to stream i and makes the stream active.
func (a *StreamAligner[T]) Push(i int, t stamp.Time, v T) {
	s := a.stream(i)
	if s == nil {
		a.bad++
		if a.onDrop != nil {
			a.onDrop(i, t, v, AlignerBadStream)
		}
		return
	}
	s.Received++
	s.LatestTime = t
	s.Active = true
	if t < a.current {
		a.late++
		s.Late++
		a.dropped(i, t, v, AlignerLate)
		return
	}
	if t > a.latest {
		a.latest = t
	}
	if t < s.last {
		s.Backward++
		a.dropped(i, t, v, AlignerBackward)
		return
	}
	s.last = t
	if s.buf.len() == len(s.buf.buf) {
		if s.fixed {
			s.Full++
			old := s.buf.popFront()
			a.dropped(i, old.t, old.v, AlignerFull)
		} else {
			s.buf.grow()
			s.BufferSize = len(s.buf.buf)
		}
	}
	s.buf.pushBack(alignerItem[T]{t, v})
}

func (a *StreamAligner[T]) dropped(i int, t stamp.Time, v T, why AlignerDrop) {
	if a.onDrop != nil {
		a.onDrop(i, t, v, why)
	}
}

// next is the stamp a stream plays next: its front, or its last stamp plus
// its period.
func (s *alignerStream[T]) next() stamp.Time {
	if s.buf.len() > 0 {
		return s.buf.front().t
	}
	return s.last.Add(s.period)
}

// before orders streams for playback (Rock's compareStreams); removed
// streams sort last.
func (a *StreamAligner[T]) before(i, j int) bool {
	s1, s2 := a.streams[i], a.streams[j]
	if s1 == nil {
		return false
	}
	if s2 == nil {
		return true
	}
	t1, t2 := s1.next(), s2.next()
	if t1 == t2 {
		d1, d2 := s1.buf.len() > 0, s2.buf.len() > 0
		if d1 != d2 {
			return d1
		}
		return s1.Priority < s2.Priority
	}
	return t1 < t2
}

// Step plays at most one sample and reports whether it did (more may be
// ready).
func (a *StreamAligner[T]) Step() bool {
	if len(a.streams) == 0 {
		return false
	}
	o := a.order
	for i := range o {
		o[i] = i
	}
	for i := 1; i < len(o); i++ { // stable insertion sort: streams are few
		for j := i; j > 0 && a.before(o[j], o[j-1]); j-- {
			o[j], o[j-1] = o[j-1], o[j]
		}
	}
	for _, i := range o {
		s := a.streams[i]
		if s == nil {
			return false
		}
		if s.buf.len() > 0 {
			it := s.buf.popFront()
			s.Processed++
			a.current = it.t
			a.play(i, it.t, it.v)
			return true
		}
		if !s.Active {
			continue
		}
		var newest, first stamp.Time
		if a.current == 0 {
			for _, s2 := range a.streams {
				if s2 != nil && s2.buf.len() > 0 {
					newest = max(newest, s2.last)
					if first == 0 || first > s2.buf.front().t {
						first = s2.buf.front().t
					}
				}
			}
		} else {
			newest, first = a.latest, a.current
		}
		if newest.Sub(first) < a.timeout {
			return false // wait for this stream
		}
	}
	return false
}

// Drain plays every sample that is ready and returns how many.
func (a *StreamAligner[T]) Drain() int {
	n := 0
	for a.Step() {
		n++
	}
	return n
}

// SetTimeout changes the timeout (automatic buffer sizes keep the size
// they were given at registration).
func (a *StreamAligner[T]) SetTimeout(d time.Duration) error {
	if d < 0 {
		return fmt.Errorf("%w: Timeout is %v, want ≥ 0", ErrAlignerConfig, d)
	}
	a.timeout = d
	return nil
}

// ErrNoStream is returned for a stream index that is not registered.
var ErrNoStream = errors.New("sync: no such stream")

// SetActive enables or disables stream i. A disabled stream still plays
// its data but is not waited for; pushing to it enables it again.
func (a *StreamAligner[T]) SetActive(i int, active bool) error {
	s := a.stream(i)
	if s == nil {
		return fmt.Errorf("%w: %d", ErrNoStream, i)
	}
	s.Active = active
	return nil
}

// Remove unregisters stream i, discarding its data; its index may be
// reused by Register.
func (a *StreamAligner[T]) Remove(i int) error {
	if a.stream(i) == nil {
		return fmt.Errorf("%w: %d", ErrNoStream, i)
	}
	a.streams[i] = nil
	return nil
}

// Clear discards every buffered sample and resets the playback times and
// the drop counters, keeping the streams.
func (a *StreamAligner[T]) Clear() {
	for _, s := range a.streams {
		if s != nil {
			s.buf.clear()
			s.last = 0
			s.LatestTime, s.Full, s.Late, s.Active = 0, 0, 0, true
		}
	}
	a.latest, a.current, a.late = 0, 0, 0
}

// Latency returns the newest pushed stamp minus the last played one.
func (a *StreamAligner[T]) Latency() time.Duration { return a.latest.Sub(a.current) }

// Status returns a snapshot.
func (a *StreamAligner[T]) Status() AlignerStatus {
	st := AlignerStatus{Timeout: a.timeout, Current: a.current, Latest: a.latest, Latency: a.Latency(),
		Late: a.late, BadStream: a.bad, Streams: make([]StreamStatus, len(a.streams))}
	for i, s := range a.streams {
		if s == nil {
			st.Streams[i] = StreamStatus{Removed: true}
			continue
		}
		ss := s.StreamStatus
		ss.BufferFill = s.buf.len()
		ss.LatestData = s.last
		if s.buf.len() > 0 {
			ss.EarliestData = s.buf.front().t
		}
		st.Streams[i] = ss
	}
	return st
}
