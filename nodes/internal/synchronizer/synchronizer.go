// Package synchronizer is the ROS-free logic of the synchronizer node: messages
// of N input topics (any types whose first field is a std_msgs/Header) are
// matched by a pkg/sync policy on their header stamps; each matched set is
// republished member by member, unchanged, and summarized in a
// timealign/msg/MatchedSet.
//
// The Core keeps the messages it is given (Add takes ownership: no copy,
// whatever their size) until their set is published or the policy drops
// them, so memory is bounded by the queue sizes times the messages' sizes.
//
// Reconfigure changes SilentAfter and MaxDropShare of a running Core; the
// policy's configuration is fixed when the Core is made.
//
// Spec is the node that nodes/synchronizer runs; Report is what it
// reports once a second (~/status, /diagnostics). Its parameters are
// declared in the package config beneath, which the offline tools read
// without the node runtime.
package synchronizer

import (
	"encoding/binary"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"time"

	"github.com/timealign/timealign/nodes/internal/synchronizer/config"
	"github.com/timealign/timealign/pkg/stamp"
	tsync "github.com/timealign/timealign/pkg/sync"
)

// ErrFixed: Reconfigure was asked to change the policy's configuration,
// which is fixed when the Core is made.
var ErrFixed = errors.New("synchronizer: the policy's configuration cannot change while running")

// Output receives a matched set: the members (input order: the messages
// given to Add, which Output may keep; the members slice itself is reused)
// and matched, which builds the set's serialized MatchedSet (new at each
// call) if Output wants it: a node builds none while nobody subscribes to
// ~/matched. Call matched before Output returns.
type Output func(members [][]byte, matched func() []byte)

// Status is a snapshot of a Core.
type Status struct {
	Sync             tsync.Status
	DroppedMalformed []uint64
	LastArrival      []stamp.Time
	LastError        string
	// Config is the configuration the Core runs with.
	Config config.Config
}

// Core is the node's logic. One goroutine owns it.
type Core struct {
	cfg       config.Config
	s         tsync.Synchronizer[[]byte]
	out       Output
	members   [][]byte
	seq       uint64
	malformed []uint64
	arrival   []stamp.Time
	lastErr   error
	frameID   string

	set     []tsync.Message[[]byte] // the set being output, for matched
	lo, hi  stamp.Time
	matched func() []byte // c.buildMatched, bound once (no allocation per set)
}

// buildMatched returns the MatchedSet of the set being output.
func (c *Core) buildMatched() []byte {
	return AppendMatchedSet(nil, c.hi, c.frameID, c.seq, c.set, c.hi.Sub(c.lo))
}

// New returns a Core for cfg that reports sets to out.
func New(cfg config.Config, out Output) (*Core, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	c := &Core{cfg: cfg, out: out, members: make([][]byte, cfg.Sync.Topics),
		malformed: make([]uint64, cfg.Sync.Topics), arrival: make([]stamp.Time, cfg.Sync.Topics)}
	s, err := tsync.New(cfg.Sync, c.onSet, c.onDrop)
	if err != nil {
		return nil, err
	}
	c.s = s
	c.matched = c.buildMatched
	return c, nil
}

// Add offers a serialized message of input i, received at arrival; msg
// belongs to the Core from then on (it is published as it is). err
// describes a message without a readable std_msgs/Header (dropped and
// counted).
func (c *Core) Add(i int, msg []byte, arrival stamp.Time) error {
	if i < 0 || i >= len(c.members) {
		return fmt.Errorf("synchronizer: input %d out of range", i)
	}
	t, _, err := stamp.Header(msg) // frame_id checked too: evidence of a leading Header
	if err != nil {
		c.malformed[i]++
		c.lastErr = err
		return err
	}
	c.arrival[i] = arrival
	c.s.Add(tsync.Message[[]byte]{Topic: i, Stamp: t, Arrival: arrival, Value: msg})
	return nil
}

func (c *Core) onSet(set []tsync.Message[[]byte]) {
	lo, hi := set[0].Stamp, set[0].Stamp
	for i, m := range set {
		c.members[i] = m.Value
		lo, hi = min(lo, m.Stamp), max(hi, m.Stamp)
	}
	c.set, c.lo, c.hi = set, lo, hi
	c.out(c.members, c.matched)
	c.set = nil
	c.seq++
	for i := range set {
		c.members[i] = nil // the Core keeps no reference
	}
}

func (c *Core) onDrop(tsync.Message[[]byte], tsync.DropReason) {}

// Reconfigure runs the Core with cfg from now on (a parameter changed):
// SilentAfter and MaxDropShare apply to the next diagnostics. cfg.Sync must
// be the Core's (ErrFixed); an invalid cfg is refused. Either way nothing
// changes on an error.
func (c *Core) Reconfigure(cfg config.Config) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	a, b := cfg.Sync, c.cfg.Sync
	if !slices.Equal(a.LowerBounds, b.LowerBounds) {
		return ErrFixed
	}
	a.LowerBounds, b.LowerBounds = nil, nil
	if !reflect.DeepEqual(a, b) { // no NaN: both are valid
		return ErrFixed
	}
	c.cfg.SilentAfter, c.cfg.MaxDropShare = cfg.SilentAfter, cfg.MaxDropShare
	return nil
}

// Config returns the configuration the Core runs with.
func (c *Core) Config() config.Config { return c.cfg }

// Status returns a snapshot.
func (c *Core) Status() Status {
	s := Status{Sync: c.s.Status(), DroppedMalformed: append([]uint64(nil), c.malformed...),
		LastArrival: append([]stamp.Time(nil), c.arrival...), Config: c.cfg}
	if c.lastErr != nil {
		s.LastError = c.lastErr.Error()
	}
	return s
}

// AppendMatchedSet appends a serialized timealign/msg/MatchedSet (CDR,
// little endian): header (stamp, frame_id), sequence, the members' stamps
// and the set's spread.
func AppendMatchedSet[T any](b []byte, headerStamp stamp.Time, frameID string, seq uint64, set []tsync.Message[T], spread time.Duration) []byte {
	le := binary.LittleEndian
	start := len(b)
	b = append(b, 0x00, 0x01, 0x00, 0x00)
	align := func(n int) {
		for (len(b)-start-4)%n != 0 {
			b = append(b, 0)
		}
	}
	putTime := func(t stamp.Time) {
		sec, ns, err := t.ROS()
		if err != nil {
			sec, ns = 0, 0
		}
		align(4)
		b = le.AppendUint32(b, uint32(sec))
		b = le.AppendUint32(b, ns)
	}
	putTime(headerStamp)
	b = le.AppendUint32(b, uint32(len(frameID)+1))
	b = append(b, frameID...)
	b = append(b, 0)
	align(8)
	b = le.AppendUint64(b, seq)
	b = le.AppendUint32(b, uint32(len(set)))
	for _, m := range set {
		putTime(m.Stamp)
	}
	putTime(stamp.Time(spread))
	return b
}

// Reset forgets every queued message (a jump of time made them of another
// timeline); counters and the set sequence go on.
func (c *Core) Reset() {
	c.s.Reset()
	clear(c.members)
}
