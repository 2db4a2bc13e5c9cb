// Package timestampestimator is the ROS-free logic of the timestamp_estimator node:
// the stamps of a periodic topic, of any message type whose first field is
// a std_msgs/Header, are replaced by pkg/tsest's estimates.
//
// For each serialized message the Core takes the time the sample was
// received (header.stamp as the driver wrote it, or the DDS receive time,
// as Config.Source says), feeds the estimator, and rewrites header.stamp in
// place with the estimate; every other byte is left as it was. Messages on
// the optional reference topic carry hardware reference stamps (a sync
// pulse): the time_ref of a sensor_msgs/msg/TimeReference, or the
// header.stamp of another Header-first type (Config.ReferenceTimeRef).
// Cost per message: one estimator update and two 8-byte reads and writes;
// no allocation.
//
// Reconfigure applies a new Config to a running Core: the estimator starts
// over with it, and every counter goes on from where it was.
package timestampestimator

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/timealign/timealign/nodes/internal/nodekit"
	"github.com/timealign/timealign/pkg/cfgerr"
	"github.com/timealign/timealign/pkg/stamp"
	"github.com/timealign/timealign/pkg/tsest"
)

// What names the node's function in its diagnostics ("<node>: timestamp estimator").
const What = "timestamp estimator"

// Source says which time of a message is its receive time.
type Source int

const (
	// HeaderStamp: the driver's header.stamp (it stamped on arrival).
	HeaderStamp Source = iota
	// ReceiveTime: the time the message reached this node (DDS receive
	// time, or the node clock).
	ReceiveTime
)

var sourceNames = []string{"header", "receive_time"}

// SourceNames returns the names of the sources, indexed by Source (a copy).
func SourceNames() []string { return slices.Clone(sourceNames) }

func (s Source) String() string {
	if s >= 0 && int(s) < len(sourceNames) {
		return sourceNames[s]
	}
	return fmt.Sprintf("Source(%d)", int(s))
}

// ErrConfig is wrapped by every error of Config.Validate.
var ErrConfig = errors.New("timestamp_estimator: invalid config")

// ParseSource returns the Source named s.
func ParseSource(s string) (Source, error) {
	for i, n := range sourceNames {
		if n == s {
			return Source(i), nil
		}
	}
	return 0, fmt.Errorf("%w: stamp_source is %q, want one of %s", ErrConfig, s, strings.Join(sourceNames, ", "))
}

// Config configures a Core.
type Config struct {
	// Estimator configures pkg/tsest. It defaults to tsest.DefaultConfig.
	Estimator tsest.Config
	// Source is the receive time fed to the estimator. It defaults to
	// HeaderStamp.
	Source Source
	// ReferenceTimeRef says that reference messages are
	// sensor_msgs/msg/TimeReference and their time_ref is the reference
	// stamp; false: the header.stamp of any Header-first message is. It
	// defaults to true.
	ReferenceTimeRef bool
}

// DefaultConfig returns the node's defaults.
func DefaultConfig() Config { return Config{Estimator: tsest.DefaultConfig(), ReferenceTimeRef: true} }

// Validate reports the first bad field, as a *cfgerr.Error naming the
// field of Config ("Estimator.Window").
func (c Config) Validate() error {
	if err := c.Estimator.Validate(); err != nil {
		if ce, ok := cfgerr.As(err); ok {
			ce.Nest("Estimator.")
		}
		return err
	}
	if c.Source < HeaderStamp || c.Source > ReceiveTime {
		return cfgerr.New(ErrConfig, "Source", "is %v, want one of %s", c.Source, strings.Join(sourceNames, ", "))
	}
	return nil
}

// Status is a snapshot of a Core.
type Status struct {
	Estimator        tsest.Status `json:"estimator"`
	MessagesIn       uint64       `json:"messages_in"`
	MessagesOut      uint64       `json:"messages_out"`
	References       uint64       `json:"references"`
	DroppedRejected  uint64       `json:"dropped_rejected"`
	DroppedMalformed uint64       `json:"dropped_malformed"`
	LastError        string       `json:"last_error,omitempty"`
	// Config is the configuration the Core runs with.
	Config Config `json:"-"`
}

// Core is the node's logic. One goroutine owns it.
type Core struct {
	cfg     Config
	est     *tsest.Estimator
	base    tsest.Status // counters of the estimators Reconfigure replaced
	st      Status
	lastErr error
}

// New returns a Core for cfg, or the error of cfg.Validate.
func New(cfg Config) (*Core, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	est, err := tsest.New(cfg.Estimator)
	if err != nil {
		return nil, err
	}
	return &Core{cfg: cfg, est: est}, nil
}

// Process handles one message of the input topic received at receive and
// rewrites its header.stamp. It reports whether to publish the message:
// every message whose header parses is published (a stamp that went back
// gets the fit's estimate too, counted in the estimator's status); err
// says why for malformed messages, which are dropped and counted.
func (c *Core) Process(msg []byte, receive stamp.Time) (publish bool, err error) {
	c.st.MessagesIn++
	t, _, err := stamp.Header(msg) // frame_id checked too: evidence of a leading Header
	if err != nil {
		c.malformed(err)
		return false, err
	}
	if c.cfg.Source == ReceiveTime {
		t = receive
	}
	est, err := c.est.Update(t)
	if err != nil {
		// Only a repeated sample index is rejected, and this node gives
		// none; counted all the same should that change.
		c.st.DroppedRejected++
		return false, nil
	}
	if err := stamp.SetHeaderStamp(msg, est); err != nil {
		c.malformed(err)
		return false, err
	}
	c.st.MessagesOut++
	return true, nil
}

// Reference takes a message of the reference topic: its time_ref (a
// sensor_msgs/msg/TimeReference) or its header.stamp (any other
// Header-first type), as Config.ReferenceTimeRef says, is a hardware
// reference stamp. A malformed message is dropped and counted; a reference
// the estimator rejects (it belongs to no sample of the current fit) is
// counted in its status. The error says why.
func (c *Core) Reference(msg []byte) error {
	var t stamp.Time
	var err error
	if c.cfg.ReferenceTimeRef {
		t, err = stamp.TimeRef(msg)
	} else {
		t, _, err = stamp.Header(msg) // frame_id checked too: evidence of a leading Header
	}
	if err != nil {
		c.malformed(err)
		return err
	}
	c.st.References++
	return c.est.UpdateReference(t)
}

func (c *Core) malformed(err error) {
	c.st.DroppedMalformed++
	c.lastErr = err
}

// Reset restarts the estimator (a driver restarted).
func (c *Core) Reset() { c.est.Reset() }

// Reconfigure runs the Core with cfg from now on (a parameter changed): the
// estimator starts over with it, counted as a reset; every counter of the
// status goes on from its value. An invalid cfg is refused and changes
// nothing; an unchanged one does nothing.
func (c *Core) Reconfigure(cfg Config) error {
	if cfg == c.cfg {
		return nil
	}
	if err := cfg.Validate(); err != nil {
		return err
	}
	est, err := tsest.New(cfg.Estimator)
	if err != nil {
		return err
	}
	c.base = addCounters(c.base, c.est.Status())
	c.base.Resets++
	c.est, c.cfg = est, cfg
	return nil
}

// addCounters returns s with the counters of base added: the totals of an
// estimator that replaced others. The other fields are s's.
func addCounters(s, base tsest.Status) tsest.Status {
	for _, f := range []struct{ to, from *uint64 }{
		{&s.Samples, &base.Samples}, {&s.LostSamplesTotal, &base.LostSamplesTotal},
		{&s.RejectedExpectedLosses, &base.RejectedExpectedLosses}, {&s.BaseTimeResets, &base.BaseTimeResets},
		{&s.References, &base.References}, {&s.RejectedReferences, &base.RejectedReferences},
		{&s.Backward, &base.Backward}, {&s.Duplicates, &base.Duplicates}, {&s.DupIndexes, &base.DupIndexes},
		{&s.Gaps, &base.Gaps}, {&s.ClockSteps, &base.ClockSteps}, {&s.IndexResets, &base.IndexResets},
		{&s.Recounts, &base.Recounts}, {&s.Resets, &base.Resets}, {&s.Ambiguities, &base.Ambiguities},
		{&s.UncorrectedSamples, &base.UncorrectedSamples}, {&s.PeriodChanges, &base.PeriodChanges},
	} {
		*f.to += *f.from
	}
	return s
}

// Status returns a snapshot.
func (c *Core) Status() Status {
	s := c.st
	s.Estimator = addCounters(c.est.Status(), c.base)
	s.Config = c.cfg
	if c.lastErr != nil {
		s.LastError = c.lastErr.Error()
	}
	return s
}

// Diagnose returns the node's health against the previous status: WARN
// before the first message and while the estimator has no period yet, or
// when messages were malformed or rejected since prev; OK otherwise. A
// counter lower than in prev counts as no change. The values end with the
// writable parameters the Core runs with.
func Diagnose(name string, s, prev Status) nodekit.Diagnostic {
	d := nodekit.Diagnostic{Name: name + ": " + What}
	switch {
	case s.MessagesIn == 0:
		d.Raise(nodekit.Warn, "no input yet")
	case !s.Estimator.HaveEstimate:
		d.Raise(nodekit.Warn, "no period estimate yet")
	default:
		d.Raise(nodekit.OK, "estimating")
	}
	if n := nodekit.Since(s.DroppedMalformed, prev.DroppedMalformed); n > 0 {
		d.Raise(nodekit.Warn, fmt.Sprintf("%d malformed messages dropped (%s)", n, s.LastError))
	}
	if n := nodekit.Since(s.DroppedRejected, prev.DroppedRejected); n > 0 {
		d.Raise(nodekit.Warn, fmt.Sprintf("%d samples rejected (repeated indexes)", n))
	}
	if n := nodekit.Since(s.Estimator.Backward, prev.Estimator.Backward); n > 0 {
		d.Raise(nodekit.Warn, fmt.Sprintf("%d stamps went back (stamped from the fit)", n))
	}
	if n := nodekit.Since(s.Estimator.RejectedReferences, prev.Estimator.RejectedReferences); n > 0 {
		d.Raise(nodekit.Warn, fmt.Sprintf("%d references rejected (no sample of the current fit)", n))
	}
	if n, of := nodekit.Since(s.Estimator.Duplicates, prev.Estimator.Duplicates), nodekit.Since(s.Estimator.Samples, prev.Estimator.Samples); n > 0 && 2*n >= of {
		// Bursts repeat a stamp now and then; most samples repeating one
		// is an input that is not stamped (header.stamp left 0) or a
		// stuck device clock.
		d.Raise(nodekit.Warn, fmt.Sprintf("%d of %d stamps repeat the previous one: is header.stamp set? (stamp_source receive_time stamps on arrival)", n, of))
	}
	if s.Estimator.Ambiguous {
		d.Raise(nodekit.Warn, "jitter near a period: late samples cannot be told from lost ones (none inferred); set period_sec")
	}
	if n := nodekit.Since(s.Estimator.Gaps, prev.Estimator.Gaps); n > 0 {
		d.Raise(nodekit.Warn, fmt.Sprintf("%d gaps longer than the window", n))
	}
	if p, w := s.Estimator.Period, s.Config.Estimator.Window; p > 0 && w < 8*p {
		// The fit needs a quarter window of samples (and 8 at least) to
		// be trusted: with fewer, every stamp stays as received.
		d.Raise(nodekit.Warn, fmt.Sprintf("window_sec %v holds fewer than 8 periods of %v: the fit seldom matures and most stamps stay uncorrected; raise window_sec", w, p))
	}
	if n := nodekit.Since(s.Estimator.PeriodChanges, prev.Estimator.PeriodChanges); n > 0 {
		d.Raise(nodekit.Warn, fmt.Sprintf("the period changed %d times (now %v): the fit restarted on the recent samples", n, s.Estimator.Period))
	}
	if n, of := nodekit.Since(s.Estimator.UncorrectedSamples, prev.Estimator.UncorrectedSamples), nodekit.Since(s.Estimator.Samples, prev.Estimator.Samples); n > 0 && 2*n >= of && s.Estimator.HaveEstimate {
		// A few after a loss or a restart are normal; most of them is a
		// stream the model does not hold for (a period that keeps moving).
		d.Raise(nodekit.Warn, fmt.Sprintf("%d of %d stamps left uncorrected (receive stamp minus the least delay): the fit does not hold", n, of))
	}
	e := s.Estimator
	d.Add("period", e.Period)
	d.Add("latency", e.Latency)
	d.Add("max_jitter", e.MaxJitter)
	d.Add("last_correction", e.LastCorrection)
	d.Add("lost_samples", e.LostSamplesTotal)
	d.Add("duplicate_stamps", e.Duplicates)
	d.Add("backward_stamps", e.Backward)
	d.Add("rejected_references", e.RejectedReferences)
	d.Add("window_size", e.WindowSize)
	d.Add("uncorrected", e.Uncorrected)
	d.Add("uncorrected_samples", e.UncorrectedSamples)
	d.Add("period_changes", e.PeriodChanges)
	d.Add("messages_in", s.MessagesIn)
	d.Add("messages_out", s.MessagesOut)
	d.Add("dropped_rejected", s.DroppedRejected)
	d.Add("dropped_malformed", s.DroppedMalformed)
	for _, p := range Settings(s.Config) {
		d.Add(p.Name, p.Value.String())
	}
	return d
}
