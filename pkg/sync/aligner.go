package sync

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/timealign/timealign/pkg/cfgerr"
	"github.com/timealign/timealign/pkg/stamp"
)

// StreamAligner replays samples of several streams in time order with the
// semantics of Rock's aggregator::StreamAligner (drivers-aggregator).
//
// The caller pushes samples as they arrive ([StreamAligner.Push]) and asks
// for playback ([StreamAligner.Step] plays at most one sample,
// [StreamAligner.Drain] every ready one). A step looks at the next sample
// of every stream: the stamp of its oldest buffered sample or, for a stream
// without data, the stamp of its last sample plus its period (the
// lookahead: the soonest its next sample can be stamped). The oldest
// buffered sample S is played unless an enabled stream without data is due
// before S; then playback waits for that stream, but at most Timeout: once
// the newest stamp pushed is Timeout or more ahead of the last played stamp
// (before anything was played: of the oldest buffered stamp), silent
// streams are skipped. Equal stamps play in the order of Priority (lower
// first), then of the stream index; a stream due at the stamp of a buffered
// sample does not hold that sample back.
//
// Drops: a sample older than the last played one is late; a sample older
// than the previous one of its stream goes backward; a push onto a full
// buffer pushes out the buffer's oldest sample (full); a push onto an index
// that is not a stream is counted as bad_stream. Push returns the dropped
// sample, so the caller can release its payload.
//
// The zero time is special, as in Rock: playback starts at stamp 0, so
// samples with negative stamps are late, and while the last played stamp
// is 0 the timeout is measured from the oldest buffered non-zero stamp.
//
// Cost: Push O(1), Step O(S) for S streams (one pass); neither allocates once the
// buffers have their size (a growing buffer doubles when full). Memory is
// bounded by the buffer sizes and, for growing buffers, MaxBufferSize. A
// StreamAligner is not safe for concurrent use: one goroutine owns it.
type StreamAligner[T any] struct {
	timeout time.Duration
	maxBuf  int
	streams []*alignerStream[T]
	latest  stamp.Time // newest stamp pushed (Rock's latest_ts)
	current stamp.Time // last stamp played (Rock's current_ts)
	late    uint64
	bad     uint64
	played  uint64
}

// AlignerConfig configures a StreamAligner.
type AlignerConfig struct {
	// Timeout is the longest playback waits for a stream without data,
	// measured in stamps: the most the newest pushed stamp may be ahead of
	// the last played one while a stream is waited for (Rock's timeout,
	// the maximum latency). It also sizes automatic buffers. It defaults to
	// 1 s (Rock's default).
	Timeout time.Duration
	// Streams are the streams, indexed in order. It defaults to none;
	// streams can also be added with Register.
	Streams []StreamConfig
	// MaxBufferSize bounds every buffer: explicit and automatic sizes
	// above it are errors, and a growing buffer stops growing there (it
	// then drops its oldest sample as full). It defaults to 1<<20.
	MaxBufferSize int
}

// StreamConfig configures one stream of a StreamAligner.
type StreamConfig struct {
	// Period is the time between the stream's samples, its lookahead:
	// after a sample at t, nothing is waited for on this stream before
	// t+Period. 0 means not periodic (the stream is waited for as soon as
	// it has no data). A negative period, as in Rock, only sizes an
	// automatic buffer (from |Period|) and sets no lookahead; it needs
	// BufferSize < 0. It defaults to 0.
	Period time.Duration
	// BufferSize is how many samples the stream buffers: negative for
	// automatic (2·⌈Timeout/|Period|⌉, computed as Rock does, which needs
	// a period; 0 when Timeout is 0, that is a growing buffer), 0 for a
	// buffer that starts at 20 and doubles when full, up to MaxBufferSize.
	// It defaults to -1 (automatic).
	BufferSize int
	// Priority orders streams for equal stamps: the lower value plays
	// first. It defaults to -1 (Rock's default).
	Priority int
	// Name labels the stream in Status. It defaults to "".
	Name string
}

// DefaultAlignerConfig returns a configuration with Rock's defaults and no
// streams.
func DefaultAlignerConfig() AlignerConfig {
	return AlignerConfig{Timeout: time.Second, MaxBufferSize: 1 << 20}
}

// DefaultStreamConfig returns a stream with an automatic buffer and Rock's
// default priority for the given period.
func DefaultStreamConfig(period time.Duration) StreamConfig {
	return StreamConfig{Period: period, BufferSize: -1, Priority: -1}
}

// ErrAlignerConfig is wrapped by every configuration error of the aligner;
// the error is an *AlignerConfigError naming the field.
var ErrAlignerConfig = errors.New("sync: invalid stream aligner config")

// ErrNoStream is returned for a stream index that is not a registered
// stream.
var ErrNoStream = errors.New("sync: no such stream")

func alignerBad(field, format string, args ...any) error {
	return cfgerr.New(ErrAlignerConfig, field, format, args...)
}

// Validate checks the configuration and names the first bad field.
func (c AlignerConfig) Validate() error {
	if c.Timeout < 0 {
		return alignerBad("Timeout", "is %v, want ≥ 0", c.Timeout)
	}
	if c.MaxBufferSize < 1 {
		return alignerBad("MaxBufferSize", "is %d, want ≥ 1", c.MaxBufferSize)
	}
	for i, s := range c.Streams {
		if _, _, err := alignerSize(s, c.Timeout, c.MaxBufferSize); err != nil {
			if ce, ok := cfgerr.As(err); ok {
				ce.Nest(fmt.Sprintf("Streams[%d].", i))
			}
			return err
		}
	}
	return nil
}

// alignerSize returns a stream's buffer size (0: growing) and lookahead,
// as Rock's registerStream computes them.
func alignerSize(s StreamConfig, timeout time.Duration, maxBuf int) (size int, period time.Duration, err error) {
	size, period = s.BufferSize, s.Period
	if size < 0 {
		if period == 0 {
			return 0, 0, alignerBad("BufferSize", "is automatic (%d) but {Period} is 0: give a size, or 0 for a growing buffer", size)
		}
		if period < 0 {
			period = 0
		}
		// Rock: buffer_size_factor * ceil(timeout.toSeconds() / period.toSeconds()),
		// in doubles. ns/1e9 is the same double as Rock's µs/1e6 for whole µs.
		// |Period| in float64: −MinInt64 wraps to MinInt64 in int64.
		p := math.Abs(float64(s.Period))
		f := 2 * math.Ceil((float64(timeout)/1e9)/(p/1e9))
		if f > float64(maxBuf) {
			return 0, 0, alignerBad("BufferSize", "is automatic: 2·⌈%v/|%v|⌉ = %.0f is over {MaxBufferSize} %d", timeout, s.Period, f, maxBuf)
		}
		size = int(f)
	} else if period < 0 {
		return 0, 0, alignerBad("Period", "is %v: a negative period needs an automatic {BufferSize} (< 0)", period)
	}
	if size > maxBuf {
		return 0, 0, alignerBad("BufferSize", "is %d, over {MaxBufferSize} %d", size, maxBuf)
	}
	return size, period, nil
}

// AlignerDrop says why the aligner dropped a sample.
type AlignerDrop uint8

const (
	// AlignerNoDrop: nothing was dropped.
	AlignerNoDrop AlignerDrop = iota
	// AlignerLate: older than the last played sample.
	AlignerLate
	// AlignerBackward: older than the previous sample of its stream.
	AlignerBackward
	// AlignerFull: the oldest sample of a full buffer, pushed out by a new one.
	AlignerFull
	// AlignerBadStream: the stream index is not a registered stream.
	AlignerBadStream
	alignerNumDrops
)

var alignerDropNames = [alignerNumDrops]string{"none", "late", "backward", "full", "bad_stream"}

// String returns the reason as the CLI writes it: late, backward, full,
// bad_stream.
func (d AlignerDrop) String() string {
	if d < alignerNumDrops {
		return alignerDropNames[d]
	}
	return fmt.Sprintf("AlignerDrop(%d)", int(d))
}

// StreamSample is a sample of one stream: played by Step, or dropped.
type StreamSample[T any] struct {
	Stream int
	Stamp  stamp.Time
	Value  T
}

// StreamStatus is the status of one stream (Rock's StreamStatus).
// Received = Processed + Late + Backward + Full + BufferFill, except that
// Clear discards buffered samples and resets Late and Full.
type StreamStatus struct {
	Name     string `json:"name"`
	Active   bool   `json:"active"`
	Removed  bool   `json:"removed"`
	Priority int    `json:"priority"`
	// Period is the lookahead (0 for a negative configured period).
	Period     time.Duration `json:"period_ns"`
	BufferFill int           `json:"buffer_fill"`
	// BufferSize is the buffer's capacity (a growing buffer's current one).
	BufferSize int    `json:"buffer_size"`
	Growing    bool   `json:"growing"`
	Received   uint64 `json:"samples_received"`
	Processed  uint64 `json:"samples_processed"`
	Late       uint64 `json:"samples_dropped_late_arriving"`
	Backward   uint64 `json:"samples_backward_in_time"`
	Full       uint64 `json:"samples_dropped_buffer_full"`
	// LatestTime is the stamp of the last sample pushed, dropped or not:
	// a stream whose LatestTime stays behind is the one playback waits for.
	LatestTime stamp.Time `json:"latest_sample_time_ns"`
	// LatestData is the stamp of the newest sample the stream accepted;
	// EarliestData that of its next sample to play (0 without data).
	LatestData   stamp.Time `json:"latest_data_time_ns"`
	EarliestData stamp.Time `json:"earliest_data_time_ns"`
}

// AlignerStatus is a snapshot of a StreamAligner.
type AlignerStatus struct {
	Timeout time.Duration `json:"timeout_ns"`
	// Current is the stamp of the last played sample, Latest that of the
	// newest pushed; Latency = Latest − Current.
	Current stamp.Time    `json:"current_time_ns"`
	Latest  stamp.Time    `json:"latest_time_ns"`
	Latency time.Duration `json:"latency_ns"`
	Played  uint64        `json:"played"`
	// Late counts late samples of all streams since the last Clear;
	// BadStream pushes onto an index that is not a stream.
	Late      uint64 `json:"samples_dropped_late_arriving"`
	BadStream uint64 `json:"bad_stream"`
	// Waiting is the index of the stream playback is waiting for, or -1.
	Waiting int            `json:"waiting"`
	Streams []StreamStatus `json:"streams"`
}

type alignerStream[T any] struct {
	st      StreamStatus
	period  time.Duration
	growing bool
	cap     int // logical capacity
	buf     []StreamSample[T]
	head, n int
	last    stamp.Time // Rock's lastTime
	due     stamp.Time // last + period: when the next sample is due
	front   stamp.Time // stamp of the oldest buffered sample, if n > 0
	prio    int
}

// NewStreamAligner returns an aligner for cfg, or an error naming the bad
// field.
func NewStreamAligner[T any](cfg AlignerConfig) (*StreamAligner[T], error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	a := &StreamAligner[T]{timeout: cfg.Timeout, maxBuf: cfg.MaxBufferSize}
	for _, s := range cfg.Streams {
		if _, err := a.Register(s); err != nil {
			return nil, err
		}
	}
	return a, nil
}

// Register adds a stream, reusing the lowest removed index as Rock does,
// and returns its index. An automatic buffer is sized for the current
// timeout.
func (a *StreamAligner[T]) Register(c StreamConfig) (int, error) {
	size, period, err := alignerSize(c, a.timeout, a.maxBuf)
	if err != nil {
		return 0, err
	}
	s := &alignerStream[T]{period: period, growing: size == 0, cap: size, due: stamp.Time(0).Add(period), prio: c.Priority}
	if s.growing {
		s.cap = min(20, a.maxBuf)
	}
	s.buf = make([]StreamSample[T], min(s.cap, 64))
	s.st = StreamStatus{Name: c.Name, Active: true, Priority: c.Priority, Period: period, Growing: s.growing}
	for i, old := range a.streams {
		if old == nil {
			a.streams[i] = s
			return i, nil
		}
	}
	a.streams = append(a.streams, s)
	return len(a.streams) - 1, nil
}

func (a *StreamAligner[T]) stream(i int) *alignerStream[T] {
	if i < 0 || i >= len(a.streams) {
		return nil
	}
	return a.streams[i]
}

// Push adds a sample at stamp t to stream i and enables the stream. It
// returns the sample it dropped and why, or AlignerNoDrop: the pushed
// sample itself (late, backward, bad_stream) or the oldest of a full
// buffer (full).
func (a *StreamAligner[T]) Push(i int, t stamp.Time, v T) (StreamSample[T], AlignerDrop) {
	s := a.stream(i)
	if s == nil {
		a.bad++
		return StreamSample[T]{i, t, v}, AlignerBadStream
	}
	s.st.Received++
	s.st.LatestTime = t
	s.st.Active = true
	if t < a.current {
		a.late++
		s.st.Late++
		return StreamSample[T]{i, t, v}, AlignerLate
	}
	if t > a.latest {
		a.latest = t
	}
	if t < s.last {
		s.st.Backward++
		return StreamSample[T]{i, t, v}, AlignerBackward
	}
	s.last, s.due = t, t.Add(s.period)
	var old StreamSample[T]
	why := AlignerNoDrop
	if s.n == s.cap {
		if s.growing && s.cap <= a.maxBuf/2 { // s.cap*2 could overflow int
			s.cap *= 2
		} else {
			s.st.Full++
			old, why = s.pop(), AlignerFull
		}
	}
	if s.n == len(s.buf) {
		s.grow()
	}
	j := s.head + s.n
	if j >= len(s.buf) {
		j -= len(s.buf)
	}
	s.buf[j] = StreamSample[T]{i, t, v}
	if s.n == 0 {
		s.front = t
	}
	s.n++
	return old, why
}

// grow doubles the storage, up to the logical capacity.
func (s *alignerStream[T]) grow() {
	nb := make([]StreamSample[T], min(max(2*len(s.buf), 1), s.cap))
	for k := 0; k < s.n; k++ {
		nb[k] = s.at(k)
	}
	s.buf, s.head = nb, 0
}

func (s *alignerStream[T]) at(k int) StreamSample[T] {
	j := s.head + k
	if j >= len(s.buf) {
		j -= len(s.buf)
	}
	return s.buf[j]
}

func (s *alignerStream[T]) pop() StreamSample[T] {
	x := s.buf[s.head]
	s.buf[s.head] = StreamSample[T]{} // release the payload
	s.head++
	if s.head == len(s.buf) {
		s.head = 0
	}
	s.n--
	if s.n > 0 {
		s.front = s.buf[s.head].Stamp
	}
	return x
}

func (s *alignerStream[T]) clear() {
	for s.n > 0 {
		s.pop()
	}
	s.head = 0
}

// next returns the stream whose sample plays next (Rock's stream order:
// oldest front, then lower priority, then lower index), or -1, and the
// enabled stream without data due soonest before it, or -1: the stream
// playback waits for until the timeout.
func (a *StreamAligner[T]) next() (best int, blocked int) {
	best, blocked = -1, -1
	var bt, due stamp.Time
	bp := 0
	for i, s := range a.streams {
		switch {
		case s == nil:
		case s.n > 0:
			if best < 0 || s.front < bt || (s.front == bt && s.prio < bp) {
				best, bt, bp = i, s.front, s.prio
			}
		case s.st.Active:
			if blocked < 0 || s.due < due {
				blocked, due = i, s.due
			}
		}
	}
	if best < 0 || blocked < 0 || due >= bt {
		return best, -1
	}
	return best, blocked
}

// timedOut reports whether playback no longer waits for silent streams:
// the newest stamp is at least Timeout ahead of the last played one (before
// anything played, of the oldest buffered non-zero stamp).
func (a *StreamAligner[T]) timedOut() bool {
	newest, first := a.latest, a.current
	if a.current == 0 {
		newest, first = 0, 0
		for _, s := range a.streams {
			if s == nil || s.n == 0 {
				continue
			}
			newest = max(newest, s.last)
			if f := s.front; f != 0 && (first == 0 || f < first) {
				first = f
			}
		}
	}
	return newest.Sub(first) >= a.timeout
}

// Step plays at most one sample: it returns the sample and true, or false
// when nothing is ready (no data, or a stream is waited for).
func (a *StreamAligner[T]) Step() (StreamSample[T], bool) {
	best, blocked := a.next()
	if best < 0 || (blocked >= 0 && !a.timedOut()) {
		return StreamSample[T]{}, false
	}
	s := a.streams[best]
	x := s.pop()
	s.st.Processed++
	a.played++
	a.current = x.Stamp
	return x, true
}

// Drain plays every ready sample, in order, through play (which may be
// nil) and returns how many it played. Every Step that plays pops a
// buffered sample, so Drain ends after at most the buffered samples
// (and those play pushes).
func (a *StreamAligner[T]) Drain(play func(StreamSample[T])) int {
	n := 0
	for {
		x, ok := a.Step()
		if !ok {
			return n
		}
		n++
		if play != nil {
			play(x)
		}
	}
}

// SetTimeout changes the timeout (automatic buffers keep the size they
// were given at registration, as in Rock).
func (a *StreamAligner[T]) SetTimeout(d time.Duration) error {
	if d < 0 {
		return alignerBad("Timeout", "is %v, want ≥ 0", d)
	}
	a.timeout = d
	return nil
}

// SetActive enables or disables stream i. A disabled stream still plays
// its data but is not waited for; a push onto it enables it again.
func (a *StreamAligner[T]) SetActive(i int, active bool) error {
	s := a.stream(i)
	if s == nil {
		return fmt.Errorf("%w: %d", ErrNoStream, i)
	}
	s.st.Active = active
	return nil
}

// Remove unregisters stream i, discarding its data; Register may reuse the
// index. Later pushes onto it are bad_stream drops.
func (a *StreamAligner[T]) Remove(i int) error {
	if a.stream(i) == nil {
		return fmt.Errorf("%w: %d", ErrNoStream, i)
	}
	a.streams[i] = nil
	return nil
}

// Clear discards every buffered sample and resets the playback times and
// the late and full counters, keeping the streams, whether they are
// enabled, and the other counters (as Rock's clear does).
func (a *StreamAligner[T]) Clear() {
	for _, s := range a.streams {
		if s != nil {
			s.clear()
			s.last, s.due = 0, stamp.Time(0).Add(s.period)
			s.st.LatestTime, s.st.Full, s.st.Late = 0, 0, 0
		}
	}
	a.latest, a.current, a.late = 0, 0, 0
}

// Restart discards every buffered sample and the playback times, as Clear
// does, but keeps every counter: for time that jumped (a bag played
// again), where the samples are of another timeline and the counts go on.
// Discarded samples are not counted as drops.
func (a *StreamAligner[T]) Restart() {
	for _, s := range a.streams {
		if s != nil {
			s.clear()
			s.last, s.due = 0, stamp.Time(0).Add(s.period)
			s.st.LatestTime = 0
		}
	}
	a.latest, a.current = 0, 0
}

// Latency returns the newest pushed stamp minus the last played one.
func (a *StreamAligner[T]) Latency() time.Duration { return a.latest.Sub(a.current) }

// Timeout returns the current timeout.
func (a *StreamAligner[T]) Timeout() time.Duration { return a.timeout }

// Len returns the number of stream indexes (removed ones included).
func (a *StreamAligner[T]) Len() int { return len(a.streams) }

// Status returns a snapshot. It allocates the Streams slice.
func (a *StreamAligner[T]) Status() AlignerStatus {
	st := AlignerStatus{Timeout: a.timeout, Current: a.current, Latest: a.latest, Latency: a.Latency(),
		Played: a.played, Late: a.late, BadStream: a.bad, Waiting: -1, Streams: make([]StreamStatus, len(a.streams))}
	if best, blocked := a.next(); best >= 0 && blocked >= 0 && !a.timedOut() {
		st.Waiting = blocked
	}
	for i, s := range a.streams {
		if s == nil {
			st.Streams[i] = StreamStatus{Removed: true}
			continue
		}
		ss := s.st
		ss.BufferFill, ss.BufferSize = s.n, s.cap
		ss.LatestData = s.last
		if s.n > 0 {
			ss.EarliestData = s.buf[s.head].Stamp
		}
		st.Streams[i] = ss
	}
	return st
}
