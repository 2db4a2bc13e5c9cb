// Package stampmonitor is the ROS-free logic of the stamp_monitor node: it
// measures, against ground truth, how far a topic's stamps are from the
// true acquisition times, before and after correction.
//
// The ground truth comes from sensor_sim on `truth` (timealign/msg/
// GroundTruth): for every sample it published, its topic, number, true
// acquisition time, the stamp it was published with, and its
// stamp.Fingerprint (the message's bytes without its stamp). The monitor's
// inputs in0 … in{N-1} are corrected topics (a timestamp_estimator's or
// clock_sync's output, or any topic a node republished with only its stamp
// changed): a message there is matched to its ground truth by its
// fingerprint, whatever its stamp became, in whichever order the two
// arrive; each side waits at most MatchTimeout for the other. A match gives
// the sample's error before correction (stamp published − true) and after
// (stamp on the input − true); per input, over a sliding window of Window
// (and at most MaxSamples samples), the Core summarizes both: mean,
// standard deviation, extremes and percentiles of |error| ([Errors]). A
// sensor_sim topic that no input has matched gets a row of its raw errors.
//
// Memory is bounded whatever the inputs do: the windows by MaxSamples and
// Window (a topic that stops empties its window and gives its memory back),
// the samples waiting for their other half by MaxPending and MatchTimeout,
// the ground-truth topics by MaxTruthTopics. Cost per message: a
// fingerprint (its size) and O(1) map work; per summary O(n log n) for the
// n samples of a window.
//
// Spec is the node that nodes/stamp_monitor runs; Report is what it
// reports once a second (~/status, /diagnostics). Its parameters are
// declared in the package config beneath, which the offline tools read
// without the node runtime.
package stampmonitor

import (
	"fmt"
	"math"
	"slices"

	"github.com/timealign/timealign/nodes/internal/stampmonitor/config"
	"github.com/timealign/timealign/pkg/stamp"
)

// MaxTruthTopics bounds the sensor_sim topics a Core keeps rows for;
// ground truth of further topics is counted and dropped.
const MaxTruthTopics = 64

// row is one line of the status: an input (its samples paired with their
// ground truth) or a sensor_sim topic no input matched (raw errors only).
type row struct {
	name, topic string // topic: the input's; "" for a truth row
	truthTopic  string
	win         window
	received    uint64
	matched     uint64
	unmatched   uint64
	last        stamp.Time // the last message (node time); 0: none yet
}

// truthTopic is a topic sensor_sim publishes samples on.
type truthTopic struct {
	row    *row // its raw errors
	linked bool // an input has matched one of its samples
}

// pendingTruth is a ground truth kept for the inputs that may still
// deliver its sample.
type pendingTruth struct {
	id          uint64
	topic       *truthTopic
	true, stamp stamp.Time
	at          stamp.Time
	matched     uint64 // bit i: input i matched it
}

// corrKey is a corrected message waiting for its ground truth.
type corrKey struct {
	fp uint64
	in int
}

type pendingCorr struct {
	id    uint64
	stamp stamp.Time
	at    stamp.Time
}

// fifoItem orders pending samples by arrival, for their expiry.
type fifoItem struct {
	id uint64
	at stamp.Time
	fp uint64
	in int // -1: a ground truth
}

// Core matches corrected messages to their ground truth. One goroutine
// owns it.
type Core struct {
	cfg     config.Config
	rows    []*row // the inputs'
	topics  map[string]*truthTopic
	order   []*truthTopic // by first appearance
	truths  map[uint64]*pendingTruth
	corrs   map[corrKey]pendingCorr
	fifo    []fifoItem // ring of pending samples by arrival
	fhead   int
	fn      int
	peak    int // the most pending samples since the maps were made
	nextID  uint64
	scratch scratch
	st      Status
	lastErr error
}

// Status counts what a Core saw.
type Status struct {
	Truths           uint64 // ground-truth messages
	TruthsUnmatched  uint64 // of topics some input matched, never matched
	LastTruth        stamp.Time
	DroppedPending   uint64 // samples dropped unmatched because MaxPending waited
	DroppedMalformed uint64 // messages that did not parse
	DroppedTopics    uint64 // ground truth of topics beyond MaxTruthTopics
	Pending          int
	LastError        string
	// Config is the configuration the Core runs with.
	Config config.Config
}

// New returns a Core for cfg whose inputs are named by names (labels, or
// topics) and topics (their resolved topics), or the error of
// cfg.Validate.
func New(cfg config.Config, names, topics []string) (*Core, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if len(names) != len(topics) || len(topics) > config.MaxInputs {
		return nil, fmt.Errorf("%w: %d names for %d inputs (at most %d)", config.ErrConfig, len(names), len(topics), config.MaxInputs)
	}
	c := &Core{cfg: cfg, topics: map[string]*truthTopic{}, truths: map[uint64]*pendingTruth{}, corrs: map[corrKey]pendingCorr{}}
	for i := range topics {
		c.rows = append(c.rows, c.newRow(names[i], topics[i]))
	}
	return c, nil
}

func (c *Core) newRow(name, topic string) *row {
	r := &row{name: name, topic: topic}
	r.win.setLimits(c.cfg.Window, c.cfg.MaxSamples)
	return r
}

// Truth takes a message of `truth` received at now (node time). A message
// that is not a GroundTruth is counted and its error returned.
func (c *Core) Truth(msg []byte, now stamp.Time) error {
	t, err := ParseTruth(msg)
	if err != nil {
		c.malformed(err)
		return err
	}
	c.expire(now)
	c.st.Truths++
	c.st.LastTruth = now
	tt := c.topics[t.Topic]
	if tt == nil {
		if len(c.topics) >= MaxTruthTopics {
			c.st.DroppedTopics++
			return nil
		}
		tt = &truthTopic{row: c.newRow(t.Topic, "")}
		tt.row.truthTopic = t.Topic
		c.topics[t.Topic] = tt
		c.order = append(c.order, tt)
	}
	raw := float64(t.Stamp.Sub(t.True))
	tt.row.received++
	tt.row.last = now
	tt.row.win.push(entry{at: now, raw: raw})
	p := &pendingTruth{topic: tt, true: t.True, stamp: t.Stamp, at: now}
	for i := range c.rows {
		k := corrKey{t.Fingerprint, i}
		if pc, ok := c.corrs[k]; ok {
			delete(c.corrs, k)
			c.match(i, p, pc.stamp, now)
		}
	}
	if len(c.rows) > 0 {
		c.nextID++
		p.id = c.nextID
		c.truths[t.Fingerprint] = p
		c.queue(fifoItem{id: p.id, at: now, fp: t.Fingerprint, in: -1})
	}
	return nil
}

// Input takes message msg of input i received at now. A message without
// a leading std_msgs/Header is counted and its error returned.
func (c *Core) Input(i int, msg []byte, now stamp.Time) error {
	r := c.rows[i]
	r.received++
	r.last = now
	st, _, err := stamp.Header(msg)
	if err != nil {
		c.malformed(err)
		return err
	}
	fp, _ := stamp.Fingerprint(msg) // Header checked what it needs
	c.expire(now)
	if p, ok := c.truths[fp]; ok {
		if p.matched&(1<<i) == 0 { // else the same sample again: counted as received only
			c.match(i, p, st, now)
		}
		return nil
	}
	c.nextID++
	c.corrs[corrKey{fp, i}] = pendingCorr{id: c.nextID, stamp: st, at: now}
	c.queue(fifoItem{id: c.nextID, at: now, fp: fp, in: i})
	return nil
}

func (c *Core) match(i int, p *pendingTruth, corrected, now stamp.Time) {
	r := c.rows[i]
	p.matched |= 1 << i
	p.topic.linked = true
	r.truthTopic = p.topic.row.truthTopic
	r.matched++
	r.win.push(entry{at: now, raw: float64(p.stamp.Sub(p.true)), fixed: float64(corrected.Sub(p.true))})
}

func (c *Core) malformed(err error) {
	c.st.DroppedMalformed++
	c.lastErr = err
}

// queue adds a pending sample to the expiry ring; a full ring (MaxPending)
// drops its oldest.
func (c *Core) queue(it fifoItem) {
	if c.fn == c.cfg.MaxPending {
		c.st.DroppedPending++
		c.drop(c.pop(), false)
	}
	if c.fn == len(c.fifo) {
		nb := make([]fifoItem, min(max(2*len(c.fifo), 256), c.cfg.MaxPending))
		for k := range c.fn {
			nb[k] = c.fifo[(c.fhead+k)%len(c.fifo)]
		}
		c.fifo, c.fhead = nb, 0
	}
	c.fifo[(c.fhead+c.fn)%len(c.fifo)] = it
	c.fn++
	c.peak = max(c.peak, c.fn)
}

func (c *Core) pop() fifoItem {
	it := c.fifo[c.fhead]
	c.fhead = (c.fhead + 1) % len(c.fifo)
	c.fn--
	return it
}

// expire ends the wait of the samples that arrived more than MatchTimeout
// before now.
func (c *Core) expire(now stamp.Time) {
	for c.fn > 0 && now.Sub(c.fifo[c.fhead].at) > c.cfg.MatchTimeout {
		c.drop(c.pop(), true)
	}
	c.shrink()
}

// shrinkFrom is the peak of pending samples below which shrink leaves
// their memory alone.
const shrinkFrom = 4096

// shrink lets go of a backlog's memory once it has cleared: Go's maps keep
// their buckets after deletes and the ring keeps its length, so the
// pending samples of a flood (up to MaxPending) would stay held for good.
// Once fewer than an eighth of their peak wait, the maps and the ring are
// made anew for those.
func (c *Core) shrink() {
	if c.peak < shrinkFrom || c.fn > c.peak/8 {
		return
	}
	corrs := make(map[corrKey]pendingCorr, len(c.corrs))
	for k, v := range c.corrs {
		corrs[k] = v
	}
	truths := make(map[uint64]*pendingTruth, len(c.truths))
	for k, v := range c.truths {
		truths[k] = v
	}
	var ring []fifoItem
	if c.fn > 0 {
		ring = make([]fifoItem, min(max(2*c.fn, 256), c.cfg.MaxPending))
		for k := range c.fn {
			ring[k] = c.fifo[(c.fhead+k)%len(c.fifo)]
		}
	}
	c.corrs, c.truths, c.fifo, c.fhead, c.peak = corrs, truths, ring, 0, c.fn
}

// drop forgets a pending sample if it is still the one it names, counting
// a sample nobody matched.
func (c *Core) drop(it fifoItem, count bool) {
	if it.in < 0 {
		p, ok := c.truths[it.fp]
		if !ok || p.id != it.id {
			return
		}
		delete(c.truths, it.fp)
		if count && p.matched == 0 && p.topic.linked {
			c.st.TruthsUnmatched++
		}
		return
	}
	k := corrKey{it.fp, it.in}
	if pc, ok := c.corrs[k]; ok && pc.id == it.id {
		delete(c.corrs, k)
		if count {
			c.rows[it.in].unmatched++
		}
	}
}

// Reconfigure runs the Core with cfg from now on: windows keep their
// newest samples within the new bounds. An invalid cfg is refused.
func (c *Core) Reconfigure(cfg config.Config) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	c.cfg = cfg
	for _, r := range c.allRows() {
		r.win.setLimits(cfg.Window, cfg.MaxSamples)
	}
	for c.fn > cfg.MaxPending {
		c.st.DroppedPending++
		c.drop(c.pop(), false)
	}
	return nil
}

func (c *Core) allRows() []*row {
	rows := slices.Clone(c.rows)
	for _, t := range c.order {
		rows = append(rows, t.row)
	}
	return rows
}

// TopicErrors is one row of a summary: an input's or a truth topic's.
type TopicErrors struct {
	Name, Topic, TruthTopic string
	Raw, Corrected          Errors
	Received, Matched       uint64
	Unmatched               uint64
	// Last is when the row's last message came (node time); 0: none.
	Last stamp.Time
}

// Summary returns the rows at now: the inputs', in order, then one per
// sensor_sim topic no input has matched (raw errors only).
func (c *Core) Summary(now stamp.Time) []TopicErrors {
	c.expire(now)
	var out []TopicErrors
	add := func(r *row) {
		raw, fixed := r.win.summarize(now, &c.scratch)
		if r.topic == "" {
			fixed = Errors{}
		}
		out = append(out, TopicErrors{Name: r.name, Topic: r.topic, TruthTopic: r.truthTopic, Raw: raw, Corrected: fixed,
			Received: r.received, Matched: r.matched, Unmatched: r.unmatched, Last: r.last})
	}
	for _, r := range c.rows {
		add(r)
	}
	for _, t := range c.order {
		if !t.linked {
			add(t.row)
		} else {
			t.row.win.evict(now) // linked: not shown, but bounded all the same
		}
	}
	return out
}

// Status returns a snapshot of the counters.
func (c *Core) Status() Status {
	s := c.st
	s.Pending = c.fn
	s.Config = c.cfg
	if c.lastErr != nil {
		s.LastError = c.lastErr.Error()
	}
	return s
}

// micros converts ns to µs for the status message.
func micros(ns float64) float64 {
	if math.IsInf(ns, 0) || math.IsNaN(ns) {
		return 0
	}
	return ns / 1e3
}

// Reset forgets the samples waiting for their match and empties the
// windows (a jump of time made them of another timeline: they would wait,
// and stay in the windows, until time caught up again); the counters go
// on, and nothing is counted as unmatched.
func (c *Core) Reset() {
	for c.fn > 0 {
		c.drop(c.pop(), false)
	}
	for _, r := range c.allRows() {
		r.win.reset()
	}
}
