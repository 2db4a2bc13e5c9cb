// Package clocksync is the ROS-free logic of the clock_sync node: messages
// whose header.stamp carries a device clock (tick-derived, time since boot,
// or an unsynchronised device epoch) get a host-time stamp from pkg/pll.
//
// For each serialized message the Core reads header.stamp, turns it into
// device ticks (stamp / TickPeriod, wrapped at TickBits), feeds the PLL with
// the message's receive stamp, and rewrites header.stamp in place with the
// corrected time; every other byte is left as it was. While the PLL has no
// valid estimate the message is dropped and counted, or passed on with its
// receive stamp or unchanged, as config.Config.WhenInvalid says. Cost per message:
// one PLL update (O(FIFOSize)) plus two 8-byte reads and writes; no
// allocation.
//
// Reconfigure applies a new Config to a running Core: a new PLL
// configuration restarts the fit, a new WhenInvalid applies to the next
// message; every counter goes on from where it was.
//
// Spec is the node that nodes/clock_sync runs; Report is what it
// reports once a second (~/status, /diagnostics). Its parameters are
// declared in the package config beneath, which the offline tools read
// without the node runtime.
package clocksync

import (
	"errors"

	"github.com/timealign/timealign/nodes/internal/clocksync/config"
	"github.com/timealign/timealign/pkg/pll"
	"github.com/timealign/timealign/pkg/stamp"
)

// Result says what Process did with a message.
type Result int

const (
	// Published: the message's stamp was rewritten (or kept, by policy) and
	// it should be published.
	Published Result = iota
	// DroppedInvalid: the estimate is invalid and the policy drops.
	DroppedInvalid
	// DroppedMalformed: the message is not a CDR message with a leading
	// std_msgs/Header, or its device stamp is negative.
	DroppedMalformed
)

// Status is a snapshot of a Core.
type Status struct {
	PLL              pll.Status           `json:"pll"`
	WhenInvalid      config.InvalidPolicy `json:"-"`
	MessagesIn       uint64               `json:"messages_in"`
	MessagesOut      uint64               `json:"messages_out"`
	DroppedInvalid   uint64               `json:"dropped_invalid"`
	DroppedMalformed uint64               `json:"dropped_malformed"`
	// LastError describes the last malformed message.
	LastError string `json:"last_error,omitempty"`
	// Config is the configuration the Core runs with.
	Config config.Config `json:"-"`
}

// Core is the clock_sync node's logic. One goroutine owns it.
type Core struct {
	cfg     config.Config
	pll     *pll.PLL
	base    pll.Status // counters of the PLLs Reconfigure replaced
	tickDiv int64
	mask    uint64
	st      Status
	lastErr error
}

// New returns a Core for cfg, or the error of cfg.Validate.
func New(cfg config.Config) (*Core, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	p, err := pll.New(cfg.PLL)
	if err != nil {
		return nil, err
	}
	c := &Core{}
	c.setPLL(cfg, p)
	return c, nil
}

func (c *Core) setPLL(cfg config.Config, p *pll.PLL) {
	c.mask = ^uint64(0)
	if cfg.PLL.TickBits < 64 {
		c.mask = 1<<uint(cfg.PLL.TickBits) - 1
	}
	c.cfg, c.pll, c.tickDiv = cfg, p, int64(cfg.PLL.TickPeriod)
}

// Reconfigure runs the Core with cfg from now on (a parameter changed): a
// changed PLL configuration restarts the fit with it (not counted in the
// PLL's resets, which are losses of lock), a changed WhenInvalid applies from the next message;
// every counter of the status goes on from its value. An invalid cfg is
// refused and changes nothing.
func (c *Core) Reconfigure(cfg config.Config) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	if cfg.PLL == c.cfg.PLL {
		c.cfg.WhenInvalid = cfg.WhenInvalid
		return nil
	}
	p, err := pll.New(cfg.PLL)
	if err != nil {
		return err
	}
	c.base = addCounters(c.base, c.pll.Status())
	c.setPLL(cfg, p)
	return nil
}

// addCounters returns s with the counters of base added: the totals of a
// PLL that replaced others. The other fields are s's.
func addCounters(s, base pll.Status) pll.Status {
	for _, f := range []struct{ to, from *int }{
		{&s.Resets, &base.Resets}, {&s.Relocks, &base.Relocks}, {&s.Reboots, &base.Reboots}, {&s.Reverts, &base.Reverts},
		{&s.Updates, &base.Updates}, {&s.Accepted, &base.Accepted}, {&s.Rejected, &base.Rejected},
		{&s.Duplicates, &base.Duplicates}, {&s.Outliers, &base.Outliers}, {&s.Stale, &base.Stale},
		{&s.OutOfRange, &base.OutOfRange}, {&s.TimeBack, &base.TimeBack},
	} {
		*f.to += *f.from
	}
	return s
}

// ErrNegativeDeviceTime: the device stamp is before its epoch.
var ErrNegativeDeviceTime = errors.New("clock_sync: header.stamp (device time) is negative")

// Process handles one serialized message received at receive, rewriting
// its header.stamp in place. err describes a malformed message.
func (c *Core) Process(msg []byte, receive stamp.Time) (Result, error) {
	c.st.MessagesIn++
	dev, _, err := stamp.Header(msg) // frame_id checked too: evidence of a leading Header
	if err == nil && dev < 0 {
		err = ErrNegativeDeviceTime
	}
	if err != nil {
		c.st.DroppedMalformed++
		c.lastErr = err
		return DroppedMalformed, err
	}
	ticks := uint64(int64(dev)/c.tickDiv) & c.mask
	c.pll.Update(receive, ticks)
	t, ok := c.pll.Corrected(ticks)
	if !ok {
		switch c.cfg.WhenInvalid {
		case config.Drop:
			c.st.DroppedInvalid++
			return DroppedInvalid, nil
		case config.ReceiveTime:
			t = receive
		case config.Passthrough:
			c.st.MessagesOut++
			return Published, nil
		}
	}
	if err := stamp.SetHeaderStamp(msg, t); err != nil {
		c.st.DroppedMalformed++
		c.lastErr = err
		return DroppedMalformed, err
	}
	c.st.MessagesOut++
	return Published, nil
}

// Status returns a snapshot.
func (c *Core) Status() Status {
	s := c.st
	s.PLL = addCounters(c.pll.Status(), c.base)
	s.WhenInvalid = c.cfg.WhenInvalid
	s.Config = c.cfg
	if c.lastErr != nil {
		s.LastError = c.lastErr.Error()
	}
	return s
}

// Reset restarts the fit (the host clock or /clock jumped: the pairs of
// device and host time before it are of another timeline); the counters
// of the status go on, and the restart counts in the PLL's resets.
func (c *Core) Reset() {
	c.base = addCounters(c.base, c.pll.Status())
	c.pll.Reset()
	c.base.Resets++
}
