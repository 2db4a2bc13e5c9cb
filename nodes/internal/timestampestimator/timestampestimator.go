// Package timestampestimator is the ROS-free logic of the timestamp_estimator node:
// the stamps of a periodic topic, of any message type whose first field is
// a std_msgs/Header, are replaced by pkg/tsest's estimates.
//
// For each serialized message the Core takes the time the sample was
// received (header.stamp as the driver wrote it, or the DDS receive time,
// as config.Config.Source says), feeds the estimator, and rewrites header.stamp in
// place with the estimate; every other byte is left as it was. Messages on
// the optional reference topic carry hardware reference stamps (a sync
// pulse): the time_ref of a sensor_msgs/msg/TimeReference, or the
// header.stamp of another Header-first type (config.Config.ReferenceTimeRef).
// Cost per message: one estimator update and two 8-byte reads and writes;
// no allocation.
//
// Reconfigure applies a new Config to a running Core: the estimator starts
// over with it, and every counter goes on from where it was.
//
// Spec is the node that nodes/timestamp_estimator runs; Report is what it
// reports once a second (~/status, /diagnostics). Its parameters are
// declared in the package config beneath, which the offline tools read
// without the node runtime.
package timestampestimator

import (
	"github.com/timealign/timealign/nodes/internal/timestampestimator/config"
	"github.com/timealign/timealign/pkg/stamp"
	"github.com/timealign/timealign/pkg/tsest"
)

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
	Config config.Config `json:"-"`
}

// Core is the node's logic. One goroutine owns it.
type Core struct {
	cfg     config.Config
	est     *tsest.Estimator
	base    tsest.Status // counters of the estimators Reconfigure replaced
	st      Status
	lastErr error
}

// New returns a Core for cfg, or the error of cfg.Validate.
func New(cfg config.Config) (*Core, error) {
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
	if c.cfg.Source == config.ReceiveTime {
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
// Header-first type), as config.Config.ReferenceTimeRef says, is a hardware
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
func (c *Core) Reconfigure(cfg config.Config) error {
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
