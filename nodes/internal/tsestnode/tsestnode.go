// Package tsestnode is the ROS-free logic of the timestamp_estimator node:
// the stamps of a periodic topic, of any message type whose first field is
// a std_msgs/Header, are replaced by pkg/tsest's estimates.
//
// For each serialized message the Core takes the time the sample was
// received (header.stamp as the driver wrote it, or the DDS receive time,
// as Config.Source says), feeds the estimator, and rewrites header.stamp in
// place with the estimate; every other byte is left as it was. Messages on
// the optional reference topic carry hardware reference stamps (a sync
// pulse) in their header.stamp. Cost per message: one estimator update and
// two 8-byte reads and writes; no allocation.
package tsestnode

import (
	"errors"
	"fmt"

	"github.com/timealign/timealign/nodes/internal/nodekit"
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
	return 0, fmt.Errorf("%w: stamp_source is %q, want header or receive_time", ErrConfig, s)
}

// Config configures a Core.
type Config struct {
	// Estimator configures pkg/tsest. It defaults to tsest.DefaultConfig.
	Estimator tsest.Config
	// Source is the receive time fed to the estimator. It defaults to
	// HeaderStamp.
	Source Source
}

// DefaultConfig returns the node's defaults.
func DefaultConfig() Config { return Config{Estimator: tsest.DefaultConfig()} }

// Validate reports the first bad field.
func (c Config) Validate() error {
	if err := c.Estimator.Validate(); err != nil {
		return err
	}
	if c.Source < HeaderStamp || c.Source > ReceiveTime {
		return fmt.Errorf("%w: Source is %v", ErrConfig, c.Source)
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
}

// Core is the node's logic. One goroutine owns it.
type Core struct {
	cfg     Config
	est     *tsest.Estimator
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

// Reference takes a message of the reference topic: its header.stamp is a
// hardware reference stamp. A reference the estimator rejects (it belongs
// to no sample of the current fit) is counted in its status, and the error
// says why.
func (c *Core) Reference(msg []byte) error {
	t, _, err := stamp.Header(msg) // frame_id checked too: evidence of a leading Header
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

// Reset restarts the estimator (a parameter changed, a driver restarted).
func (c *Core) Reset() { c.est.Reset() }

// Status returns a snapshot.
func (c *Core) Status() Status {
	s := c.st
	s.Estimator = c.est.Status()
	if c.lastErr != nil {
		s.LastError = c.lastErr.Error()
	}
	return s
}

// Diagnose returns the node's health against the previous status: WARN
// before the first message and while the estimator has no period yet, or
// when messages were malformed or rejected since prev; OK otherwise.
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
	if n := s.DroppedMalformed - prev.DroppedMalformed; n > 0 {
		d.Raise(nodekit.Warn, fmt.Sprintf("%d malformed messages dropped (%s)", n, s.LastError))
	}
	if n := s.DroppedRejected - prev.DroppedRejected; n > 0 {
		d.Raise(nodekit.Warn, fmt.Sprintf("%d samples rejected (repeated indexes)", n))
	}
	if n := s.Estimator.Backward - prev.Estimator.Backward; n > 0 {
		d.Raise(nodekit.Warn, fmt.Sprintf("%d stamps went back (stamped from the fit)", n))
	}
	if n := s.Estimator.RejectedReferences - prev.Estimator.RejectedReferences; n > 0 {
		d.Raise(nodekit.Warn, fmt.Sprintf("%d references rejected (no sample of the current fit)", n))
	}
	if n, of := s.Estimator.Duplicates-prev.Estimator.Duplicates, s.Estimator.Samples-prev.Estimator.Samples; n > 0 && 2*n >= of {
		// Bursts repeat a stamp now and then; most samples repeating one
		// is an input that is not stamped (header.stamp left 0) or a
		// stuck device clock.
		d.Raise(nodekit.Warn, fmt.Sprintf("%d of %d stamps repeat the previous one: is header.stamp set? (stamp_source receive_time stamps on arrival)", n, of))
	}
	if n := s.Estimator.Gaps - prev.Estimator.Gaps; n > 0 {
		d.Raise(nodekit.Warn, fmt.Sprintf("%d gaps longer than the window", n))
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
	d.Add("messages_in", s.MessagesIn)
	d.Add("messages_out", s.MessagesOut)
	d.Add("dropped_rejected", s.DroppedRejected)
	d.Add("dropped_malformed", s.DroppedMalformed)
	return d
}
