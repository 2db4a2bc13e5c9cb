// Package clocksync is the ROS-free logic of the clock_sync node: messages
// whose header.stamp carries a device clock (tick-derived, time since boot,
// or an unsynchronised device epoch) get a host-time stamp from pkg/pll.
//
// For each serialized message the Core reads header.stamp, turns it into
// device ticks (stamp / TickPeriod, wrapped at TickBits), feeds the PLL with
// the message's receive stamp, and rewrites header.stamp in place with the
// corrected time; every other byte is left as it was. While the PLL has no
// valid estimate the message is dropped and counted, or passed on with its
// receive stamp or unchanged, as Config.WhenInvalid says. Cost per message:
// one PLL update (O(FIFOSize)) plus two 8-byte reads and writes; no
// allocation.
//
// Reconfigure applies a new Config to a running Core: a new PLL
// configuration restarts the fit, a new WhenInvalid applies to the next
// message; every counter goes on from where it was.
package clocksync

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/timealign/timealign/nodes/internal/nodekit"
	"github.com/timealign/timealign/pkg/cfgerr"
	"github.com/timealign/timealign/pkg/pll"
	"github.com/timealign/timealign/pkg/stamp"
)

// What names the node's function in its diagnostics ("<node>: clock sync").
const What = "clock sync"

// InvalidPolicy says what happens to a message while the estimate is invalid.
type InvalidPolicy int

const (
	// Drop drops the message and counts it.
	Drop InvalidPolicy = iota
	// ReceiveTime publishes it stamped with its receive time.
	ReceiveTime
	// Passthrough publishes it unchanged (device time in header.stamp).
	Passthrough
)

var policyNames = []string{"drop", "receive_time", "passthrough"}

// InvalidPolicyNames returns the names of the policies, indexed by
// InvalidPolicy (a copy).
func InvalidPolicyNames() []string { return slices.Clone(policyNames) }

func (p InvalidPolicy) String() string {
	if p >= 0 && int(p) < len(policyNames) {
		return policyNames[p]
	}
	return fmt.Sprintf("InvalidPolicy(%d)", int(p))
}

// ParseInvalidPolicy returns the policy named s.
func ParseInvalidPolicy(s string) (InvalidPolicy, error) {
	for i, n := range policyNames {
		if n == s {
			return InvalidPolicy(i), nil
		}
	}
	return 0, fmt.Errorf("%w: when_invalid is %q, want one of %s", ErrConfig, s, strings.Join(policyNames, ", "))
}

// ErrConfig is wrapped by every error of Config.Validate.
var ErrConfig = errors.New("clock_sync: invalid config")

// Config configures a Core.
type Config struct {
	// PLL configures the clock fit. Its TickPeriod is the duration of one
	// device tick in header.stamp's device time and TickBits the width the
	// device's counter wraps at. It defaults to the envelope mode with 1 ns
	// ticks and 64 bits (header.stamp holds device time in nanoseconds).
	PLL pll.Config
	// WhenInvalid says what happens to messages while the estimate is
	// invalid. It defaults to Drop.
	WhenInvalid InvalidPolicy
}

// DefaultConfig returns the node's defaults.
func DefaultConfig() Config {
	c := pll.DefaultConfig()
	c.Mode = pll.Envelope
	c.TickPeriod = time.Nanosecond
	c.TickBits = 64
	return Config{PLL: c}
}

// Validate reports the first bad field, as a *cfgerr.Error naming the
// field of Config ("PLL.FIFOSize").
func (c Config) Validate() error {
	if err := c.PLL.Validate(); err != nil {
		if ce, ok := cfgerr.As(err); ok {
			ce.Nest("PLL.")
		}
		return err
	}
	if c.WhenInvalid < Drop || c.WhenInvalid > Passthrough {
		return cfgerr.New(ErrConfig, "WhenInvalid", "is %v, want one of %s", c.WhenInvalid, strings.Join(policyNames, ", "))
	}
	return nil
}

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
	PLL              pll.Status    `json:"pll"`
	WhenInvalid      InvalidPolicy `json:"-"`
	MessagesIn       uint64        `json:"messages_in"`
	MessagesOut      uint64        `json:"messages_out"`
	DroppedInvalid   uint64        `json:"dropped_invalid"`
	DroppedMalformed uint64        `json:"dropped_malformed"`
	// LastError describes the last malformed message.
	LastError string `json:"last_error,omitempty"`
	// Config is the configuration the Core runs with.
	Config Config `json:"-"`
}

// Core is the clock_sync node's logic. One goroutine owns it.
type Core struct {
	cfg     Config
	pll     *pll.PLL
	base    pll.Status // counters of the PLLs Reconfigure replaced
	tickDiv int64
	mask    uint64
	st      Status
	lastErr error
}

// New returns a Core for cfg, or the error of cfg.Validate.
func New(cfg Config) (*Core, error) {
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

func (c *Core) setPLL(cfg Config, p *pll.PLL) {
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
func (c *Core) Reconfigure(cfg Config) error {
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
		{&s.Resets, &base.Resets}, {&s.Relocks, &base.Relocks}, {&s.Reboots, &base.Reboots},
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
		case Drop:
			c.st.DroppedInvalid++
			return DroppedInvalid, nil
		case ReceiveTime:
			t = receive
		case Passthrough:
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

// Diagnose returns the node's health: OK while the estimate is valid, WARN
// before the first message, while warming up or re-locking and when
// malformed messages arrived since the previous call (prev is the status
// then), ERROR once the fit had to start over. A counter lower than in prev
// counts as no change. The values end with the writable parameters the
// Core runs with.
func Diagnose(name string, s, prev Status) nodekit.Diagnostic {
	d := nodekit.Diagnostic{Name: name + ": " + What}
	switch {
	case s.MessagesIn == 0:
		d.Raise(nodekit.Warn, "no input yet")
	case s.PLL.Valid:
		d.Raise(nodekit.OK, "locked")
	case s.PLL.Resets > prev.PLL.Resets:
		d.Raise(nodekit.Error, fmt.Sprintf("lost lock: %d inconsistent samples in a row, fit restarted", s.PLL.Invalid))
	default:
		d.Raise(nodekit.Warn, fmt.Sprintf("no valid estimate yet (%d/%d samples agree)", s.PLL.Fill, s.PLL.Updates))
	}
	if n := nodekit.Since(s.DroppedMalformed, prev.DroppedMalformed); n > 0 {
		d.Raise(nodekit.Warn, fmt.Sprintf("%d malformed messages dropped (%s)", n, s.LastError))
	}
	d.Add("mode", s.PLL.Mode.String())
	d.Add("valid", s.PLL.Valid)
	d.Add("skew_ppm", s.PLL.SlopePPM)
	d.Add("offset", s.PLL.Offset)
	d.Add("residual_spread", s.PLL.Spread)
	d.Add("fifo_fill", s.PLL.Fill)
	d.Add("resets", s.PLL.Resets)
	d.Add("relocks", s.PLL.Relocks)
	d.Add("reboots", s.PLL.Reboots)
	d.Add("messages_in", s.MessagesIn)
	d.Add("messages_out", s.MessagesOut)
	d.Add("dropped_invalid", s.DroppedInvalid)
	d.Add("dropped_malformed", s.DroppedMalformed)
	for _, p := range Settings(s.Config) {
		if p.Name != "mode" && p.Name != "when_invalid" { // above
			d.Add(p.Name, p.Value.String())
		}
	}
	d.Add("when_invalid", s.WhenInvalid.String())
	return d
}
