// Package report analyses the timing of recorded streams. Each topic is
// first classified from its own stamps (Classify: periodic, bursty or
// one-off); a topic that is not periodic gets its count, span and rate of
// occurrence only. Per periodic topic: the
// rate and estimated period, the jitter of the header stamps before and
// after pkg/tsest's estimation, gaps and estimated losses, duplicate stamps
// and stamps going back, the latency from header stamp to log time, and the
// skew and offset of a device clock (pkg/pll's lower-envelope fit of the
// log times against the stamps); across topics, the offsets between the
// streams and what message_filters' ApproximateTime (pkg/sync) would match
// on them, with suggested parameters. Each topic ends with a Verdict: keep
// the stamps, correct them with the timestamp_estimator, or map a device
// clock with clock_sync, and where an estimate is worse than the stamps,
// where and why (Worse). It renders the result as a terminal table, JSON,
// and a self-contained HTML page with SVG plots that opens with the
// verdicts.
//
// # Definitions
//
// A topic's interval jitter is Δ − k·P for consecutive header stamps Δ
// apart, P the estimator's period at the time and k = round(Δ/P) ≥ 1: it
// needs no ground truth, and for independent jitter its standard deviation
// is √2 times that of the stamps. "Before" is measured on the header
// stamps, "after" on tsest's estimates of the same samples. The correction
// is header stamp − estimate: what `timealign bag fix` with the
// timestamp_estimator would change. A gap is where the estimator finds
// samples missing (a stamp late by a heavy-tailed jitter, or one repeated,
// is no gap). The latency is log time − header stamp; a topic
// whose median latency exceeds Config.DeviceOffset in either direction is
// stamped by a device clock, and its clock offset and skew are reported
// instead.
//
// # Cost
//
// An Analyzer holds, per topic, an estimator (its window of samples), a
// PLL (its window), a few histograms (one map entry per bucket used, a
// 3 % resolution) and plot series of at most Config.PlotPoints points:
// memory does not grow with the recording's length. Add costs one
// estimator and one PLL update plus O(1) bookkeeping. Like every package
// under pkg/, it reads no clock, starts no goroutine and does not log.
package report

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"time"

	"github.com/timealign/timealign/pkg/cfgerr"
	"github.com/timealign/timealign/pkg/pll"
	"github.com/timealign/timealign/pkg/stamp"
	tsync "github.com/timealign/timealign/pkg/sync"
	"github.com/timealign/timealign/pkg/tsest"
)

// ErrConfig is wrapped by every error of Config.Validate.
var ErrConfig = errors.New("report: invalid config")

// Config configures an Analyzer. Start from DefaultConfig.
type Config struct {
	// Estimator configures the tsest estimator run on each topic's header
	// stamps. It defaults to tsest.DefaultConfig().
	Estimator tsest.Config
	// Sync configures the ApproximateTime analysis (Topics is set from
	// SyncTopics). It defaults to tsync.DefaultConfig().
	Sync tsync.Config
	// SyncTopics names the topics to match; empty means every topic whose
	// messages carry a host-clock header stamp, when there are 2 to
	// MaxAutoSync of them. It defaults to empty.
	SyncTopics []string
	// DeviceOffset is the median |log time − header stamp| beyond which a
	// topic is taken as stamped by a device clock. It defaults to 1 s.
	DeviceOffset time.Duration
	// PlotPoints bounds each plot series. It defaults to 1500.
	PlotPoints int
	// TopGaps is how many of the longest gaps a topic lists. It defaults
	// to 5.
	TopGaps int
	// PerTopicOnly leaves the analysis across topics out (Report.Offsets
	// and Report.Sync stay empty): for recordings whose streams are not
	// matched with each other, or have too many topics for pairs. It
	// defaults to false.
	PerTopicOnly bool
}

// MaxAutoSync bounds the topics matched when Config.SyncTopics is empty.
const MaxAutoSync = 6

// DefaultConfig returns the defaults.
func DefaultConfig() Config {
	return Config{Estimator: tsest.DefaultConfig(), Sync: tsync.DefaultConfig(), DeviceOffset: time.Second,
		PlotPoints: 1500, TopGaps: 5}
}

// Validate reports the first bad field.
func (c Config) Validate() error {
	if err := c.Estimator.Validate(); err != nil {
		return err
	}
	s := c.Sync
	s.Topics = max(2, len(c.SyncTopics))
	if len(s.LowerBounds) != 0 && len(s.LowerBounds) != s.Topics {
		s.LowerBounds = nil
	}
	if err := s.Validate(); err != nil {
		return err
	}
	switch {
	case c.DeviceOffset <= 0:
		return cfgerr.New(ErrConfig, "DeviceOffset", "is %v, want > 0", c.DeviceOffset)
	case c.PlotPoints < 10 || c.PlotPoints > 1_000_000:
		return cfgerr.New(ErrConfig, "PlotPoints", "is %d, want 10..1000000", c.PlotPoints)
	case c.TopGaps < 0 || c.TopGaps > 1000:
		return cfgerr.New(ErrConfig, "TopGaps", "is %d, want 0..1000", c.TopGaps)
	}
	if len(c.SyncTopics) == 1 {
		return cfgerr.New(ErrConfig, "SyncTopics", "names one topic; matching needs 2 or more")
	}
	seen := map[string]bool{}
	for _, t := range c.SyncTopics {
		if seen[t] {
			return cfgerr.New(ErrConfig, "SyncTopics", "names %s twice", t)
		}
		seen[t] = true
	}
	return nil
}

// Gap is a long interval between two consecutive stamps of a topic.
type Gap struct {
	// At is the log time of the message after the gap.
	At stamp.Time `json:"at_ns"`
	// Length is the interval between the two header stamps.
	Length time.Duration `json:"length_ns"`
	// Missing is the number of periods missing in it.
	Missing int64 `json:"missing"`
}

// TopicReport is the analysis of one topic.
type TopicReport struct {
	Name string `json:"name"`
	Type string `json:"type"`
	// HeaderFirst: the type starts with a std_msgs/Header; DefSource says
	// how that was decided (schema, installed, builtin, unknown).
	HeaderFirst bool   `json:"header_first"`
	DefSource   string `json:"definition_source"`
	Count       uint64 `json:"count"`
	Bytes       uint64 `json:"bytes"`
	// First and Last are the log times of the first and last message.
	First stamp.Time `json:"first_log_ns"`
	Last  stamp.Time `json:"last_log_ns"`
	// RateHz is (Count − 1) / (Last − First): for a stream that is not
	// periodic, its rate of occurrence; Span is Last − First.
	RateHz float64       `json:"rate_hz"`
	Span   time.Duration `json:"span_ns"`
	// Class is what the stream's own timing says it is (Classify: from
	// its header stamps, or its log times where it has none), ClassWhy
	// why. Only a periodic stream has a period, jitter, gaps, missing
	// counts and an estimate: for the others they are zero.
	Class    Class  `json:"class"`
	ClassWhy string `json:"class_why"`
	// MedianInterval is the median positive interval between the
	// stamps the class was decided on.
	MedianInterval time.Duration `json:"median_interval_ns"`
	// Verdict is what to do with the topic's stamps.
	Verdict Verdict `json:"verdict"`

	// Stamped counts the messages whose header stamp was read; Malformed
	// those of a Header-first type whose bytes did not parse.
	Stamped   uint64 `json:"stamped"`
	Malformed uint64 `json:"malformed"`
	// Period is the estimator's final period.
	Period time.Duration `json:"period_ns"`
	// JitterBefore and JitterAfter are the interval jitter of the header
	// stamps and of the estimates; Correction is header stamp − estimate;
	// Latency is log time − header stamp; Arrival the interval between
	// consecutive log times.
	JitterBefore Summary `json:"jitter_before"`
	JitterAfter  Summary `json:"jitter_after"`
	// Uncorrected counts the stamps the estimator left as received (minus
	// the least delay): the fit's warm-up, a sample after a loss it had
	// not yet decided, a fit that did not hold. The jitter before and
	// after leaves out the intervals that touch them.
	Uncorrected uint64 `json:"uncorrected"`
	// PeriodChanges counts the times the estimator found that the
	// stream's period changed (its line stopped fitting) and fitted the
	// recent samples again (tsest.Status.PeriodChanges).
	PeriodChanges uint64  `json:"period_changes"`
	Correction    Summary `json:"correction"`
	Latency       Summary `json:"latency"`
	Arrival       Summary `json:"arrival_interval"`
	// Worse counts the samples whose estimate lies further from the
	// period's grid than their stamp (by more than a hundredth of the
	// period), and says where. It compares intervals the estimator
	// corrected at both ends and over which its count of periods is the
	// rounded stamps' (where the counts differ, the estimator has decided
	// that a long interval was a delay or a short one followed a loss:
	// the stamps do not measure that).
	Worse Worse `json:"worse"`
	// Gaps counts the places where the estimator found samples missing,
	// Missing (= EstimatedLosses, the estimator's count) how many;
	// LongestGaps the longest.
	Gaps            uint64 `json:"gaps"`
	Missing         uint64 `json:"missing"`
	EstimatedLosses uint64 `json:"estimated_losses"`
	LongestGaps     []Gap  `json:"longest_gaps"`
	// Duplicates repeat the previous stamp; Backward go back from it.
	Duplicates uint64 `json:"duplicates"`
	Backward   uint64 `json:"backward"`
	// DeviceClock: the stamps are a device clock's (see the package doc).
	// ClockValid: the PLL locked; SkewPPM is how fast the stamps' clock
	// runs against the log times' (ppm), ClockOffset log time − stamp at
	// the end (for a host-stamped topic, the latency floor).
	DeviceClock bool          `json:"device_clock"`
	ClockValid  bool          `json:"clock_valid"`
	SkewPPM     float64       `json:"skew_ppm"`
	ClockOffset time.Duration `json:"clock_offset_ns"`

	// Plot data (HTML only).
	plots *topicPlots
}

// Worse counts the samples an estimate makes worse than their stamp:
// just after a gap (AtGaps: where the stream's own timing had to tell a
// lost sample from a late one), in the estimator's
// warm-up (WarmUp: its first WarmUpSamples samples) and elsewhere
// (Elsewhere: stamps early as well as late against the fitted line, which
// the estimator takes for lateness). Max is the most an estimate's
// interval jitter exceeded its stamp's.
type Worse struct {
	Samples   uint64        `json:"samples"`
	AtGaps    uint64        `json:"at_gaps"`
	WarmUp    uint64        `json:"warm_up"`
	Elsewhere uint64        `json:"elsewhere"`
	Max       time.Duration `json:"max_ns"`
}

// WarmUpSamples is the estimator's warm-up that Worse counts apart.
const WarmUpSamples = 32

// topicPlots are the series and histograms the HTML report draws.
type topicPlots struct {
	correction, arrival, stampInterval Series
	jitBefore, jitAfter, latency       Hist
	// device stamp against log time, and the clock fit's residual
	clockStamp, clockResidual Series
	clockFirst                stamp.Time // the first device stamp
	fitLine                   [2][2]float64
	haveFit                   bool
	// intervalTop is where the intervals' plot is cut (IntervalClip
	// times their 99th percentile; 0: not cut), intervalMax the longest.
	intervalTop, intervalMax time.Duration
}

// IntervalClip: the plot of the intervals between messages shows up to this
// many times their 99th percentile, and says so when a longer one (a pause,
// a start-up) is cut, so that one long interval does not flatten the rest.
const IntervalClip = 3

// Offset is the offset between two host-stamped streams: how much later
// B's stamps are than A's for simultaneous events, from the medians of
// their latencies (the stamps of a stream with more latency are earlier
// against its log times).
type Offset struct {
	A      string        `json:"a"`
	B      string        `json:"b"`
	Offset time.Duration `json:"offset_ns"`
}

// SyncReport is what ApproximateTime would match on the chosen topics.
type SyncReport struct {
	Topics []string `json:"topics"`
	// Sets is the number of sets; Spread the newest minus oldest stamp of
	// each set.
	Sets   uint64  `json:"sets"`
	Spread Summary `json:"spread"`
	// Drops counts dropped messages per topic and reason.
	Drops map[string]map[string]uint64 `json:"drops"`
	// Messages counts each topic's messages given to the synchronizer:
	// each is in a set, dropped or (Unmatched) still queued at the end.
	// Before counts those that came before the matching started (it
	// waits for every chosen topic's first message, or a second), and
	// NoStamp those without a header stamp: with Messages, every message
	// of the topic.
	Messages  []uint64 `json:"messages"`
	Unmatched []uint64 `json:"unmatched"`
	Before    []uint64 `json:"before_start"`
	NoStamp   []uint64 `json:"without_stamp"`
	// Suggested are parameters for the synchronizer node (its names).
	Suggested SyncSuggestion `json:"suggested"`
	// Skipped says why no analysis was made (fewer than 2 topics, …).
	Skipped string `json:"skipped,omitempty"`
	// Notes warn of matched topics that are not periodic (chosen before
	// their class was known): their sets say little.
	Notes []string `json:"notes,omitempty"`

	spread Hist
}

// SyncSuggestion are suggested synchronizer parameters, with the reason.
type SyncSuggestion struct {
	QueueSize   int             `json:"queue_size"`
	MaxInterval time.Duration   `json:"max_interval_ns"`
	LowerBounds []time.Duration `json:"lower_bounds_ns"`
	AgePenalty  float64         `json:"age_penalty"`
	Why         []string        `json:"why"`
}

// Report is the analysis of a recording.
type Report struct {
	Start    stamp.Time     `json:"start_ns"`
	End      stamp.Time     `json:"end_ns"`
	Messages uint64         `json:"messages"`
	Bytes    uint64         `json:"bytes"`
	Topics   []*TopicReport `json:"topics"`
	Offsets  []Offset       `json:"offsets"`
	Sync     *SyncReport    `json:"sync,omitempty"`
	// FixCommand applies every recommended correction at once
	// (SetFixCommand; empty where there is none or no command).
	FixCommand string `json:"fix_command,omitempty"`
}

// topicState is an Analyzer's state for one topic.
type topicState struct {
	r        *TopicReport
	plots    topicPlots
	est      *tsest.Estimator
	pll      *pll.PLL
	prevHdr  stamp.Time
	prevEst  stamp.Time
	prevLog  stamp.Time
	have     bool
	haveLog  bool
	jb, ja   Hist
	corr     Hist
	lat      Hist
	arr      Hist
	gaps     []Gap
	syncIdx  int // index among the sync topics, -1
	firstLat time.Duration
	decided  bool
	timing   TimingCounter
	prevGap  bool // the sample before followed a gap in the stamps
	firstHdr stamp.Time
	lastHdr  stamp.Time
	// prevUncorrected: the estimator left the previous stamp as received.
	prevUncorrected bool
}

// Analyzer accumulates the analysis of a stream of messages, fed in log
// time order. It is not safe for concurrent use.
type Analyzer struct {
	cfg    Config
	topics []*topicState
	rep    Report
	sync   tsync.Synchronizer[struct{}]
	sr     *SyncReport
	syncT  []*topicState
	msgs   []tsync.Message[struct{}]
	ended  bool
	auto   bool
}

// New returns an Analyzer, or the error of cfg.Validate.
func New(cfg Config) (*Analyzer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	a := &Analyzer{cfg: cfg, auto: len(cfg.SyncTopics) == 0}
	return a, nil
}

// AddTopic registers topic id (0, 1, … in order) with its name, type,
// whether its type starts with a Header and how that was decided.
func (a *Analyzer) AddTopic(id int, name, typ string, headerFirst bool, defSource string) error {
	if id != len(a.topics) {
		return fmt.Errorf("%w: topic id %d, want %d", ErrConfig, id, len(a.topics))
	}
	ts := &topicState{r: &TopicReport{Name: name, Type: typ, HeaderFirst: headerFirst, DefSource: defSource}, syncIdx: -1}
	ts.plots.correction.Cap = a.cfg.PlotPoints
	ts.plots.arrival.Cap = a.cfg.PlotPoints
	ts.plots.stampInterval.Cap = a.cfg.PlotPoints
	ts.plots.clockStamp.Cap = a.cfg.PlotPoints
	ts.plots.clockResidual.Cap = a.cfg.PlotPoints
	ts.r.plots = &ts.plots
	if headerFirst {
		est, err := tsest.New(a.cfg.Estimator)
		if err != nil {
			return err
		}
		pc := pll.DefaultConfig()
		pc.Mode, pc.TickPeriod, pc.TickBits, pc.MaxDeviation = pll.Envelope, time.Nanosecond, 64, time.Second
		p, err := pll.New(pc)
		if err != nil {
			return err
		}
		ts.est, ts.pll = est, p
	}
	a.topics = append(a.topics, ts)
	a.rep.Topics = append(a.rep.Topics, ts.r)
	return nil
}

// startSync starts the ApproximateTime analysis once its topics are known:
// the named ones, or (automatic) the host-stamped Header topics seen by
// the first message of each.
func (a *Analyzer) startSync() {
	if a.sync != nil || a.sr != nil || a.cfg.PerTopicOnly {
		return
	}
	var chosen []*topicState
	if a.auto {
		for _, ts := range a.topics {
			if ts.r.HeaderFirst && ts.decided && !ts.r.DeviceClock {
				chosen = append(chosen, ts)
			}
		}
	} else {
		for _, name := range a.cfg.SyncTopics {
			for _, ts := range a.topics {
				if ts.r.Name == name {
					chosen = append(chosen, ts)
				}
			}
		}
	}
	a.sr = &SyncReport{Drops: map[string]map[string]uint64{}}
	for _, ts := range chosen {
		a.sr.Topics = append(a.sr.Topics, ts.r.Name)
	}
	switch {
	case len(chosen) < 2:
		a.sr.Skipped = "fewer than 2 topics with host-clock header stamps"
		return
	case a.auto && len(chosen) > MaxAutoSync:
		a.sr.Skipped = fmt.Sprintf("%d topics with header stamps: name the ones to match (at most %d are chosen automatically)", len(chosen), MaxAutoSync)
		return
	}
	cfg := a.cfg.Sync
	cfg.Topics = len(chosen)
	if len(cfg.LowerBounds) != cfg.Topics {
		cfg.LowerBounds = nil
	}
	cfg.Policy = tsync.Approximate
	a.sr.Messages = make([]uint64, len(chosen))
	a.sr.Unmatched = make([]uint64, len(chosen))
	s, err := tsync.New[struct{}](cfg, a.onSet, a.onDrop)
	if err != nil {
		a.sr.Skipped = err.Error()
		return
	}
	a.sync, a.syncT = s, chosen
	for i, ts := range chosen {
		ts.syncIdx = i
	}
}

func (a *Analyzer) onSet(set []tsync.Message[struct{}]) {
	lo, hi := set[0].Stamp, set[0].Stamp
	for _, m := range set[1:] {
		lo, hi = min(lo, m.Stamp), max(hi, m.Stamp)
	}
	a.sr.Sets++
	a.sr.spread.Add(hi.Sub(lo))
}

func (a *Analyzer) onDrop(m tsync.Message[struct{}], why tsync.DropReason) {
	if m.Topic < 0 || m.Topic >= len(a.syncT) {
		return
	}
	name := a.syncT[m.Topic].r.Name
	d := a.sr.Drops[name]
	if d == nil {
		d = map[string]uint64{}
		a.sr.Drops[name] = d
	}
	d[why.String()]++
}

// Message is one message of a recording, as Add analyses it.
type Message struct {
	// Topic is the id AddTopic gave the message's topic.
	Topic int
	// LogTime is when the recorder received the message.
	LogTime stamp.Time
	// Header is the message's header.stamp, if HasHeader: the topic's type
	// starts with a std_msgs/Header and the bytes parsed.
	Header    stamp.Time
	HasHeader bool
	// Malformed: the type starts with a Header but the bytes did not
	// parse.
	Malformed bool
	// Size is the message's length in bytes.
	Size int
}

// Add analyses one message: it counts it, and for a topic whose type
// starts with a Header, runs its stamp through the topic's estimator
// (tsest) and clock fit (pll) and compares the intervals of the stamps and
// of the estimates. A message of an unknown topic is ignored.
func (a *Analyzer) Add(m Message) {
	if m.Topic < 0 || m.Topic >= len(a.topics) {
		return
	}
	ts := a.topics[m.Topic]
	a.count(ts, &m)
	if !m.HasHeader || ts.est == nil {
		if !m.Malformed {
			ts.timing.Add(m.LogTime)
		}
		return
	}
	a.noteStamp(ts, &m)
	if m.Header >= 0 {
		ts.fitClock(m.LogTime, m.Header)
	}
	est, uncorrected := a.estimate(ts, &m)
	if ts.have {
		a.compareIntervals(ts, &m, est, uncorrected)
	}
	ts.prevHdr, ts.prevEst, ts.have = m.Header, est, true
	ts.prevUncorrected = uncorrected
	if ts.syncIdx >= 0 && a.sync != nil {
		a.sr.Messages[ts.syncIdx]++
		a.sync.Add(tsync.Message[struct{}]{Topic: ts.syncIdx, Stamp: m.Header, Arrival: m.LogTime})
	}
}

// count counts a message of topic ts into the topic's and the recording's
// totals and its interval since the topic's previous message.
func (a *Analyzer) count(ts *topicState, m *Message) {
	r, t, size := ts.r, m.LogTime, uint64(m.Size)
	if r.Count == 0 {
		r.First = t
	}
	r.Count++
	r.Bytes += size
	r.Last = max(r.Last, t)
	if a.rep.Messages == 0 || t < a.rep.Start {
		a.rep.Start = t
	}
	a.rep.End = max(a.rep.End, t)
	a.rep.Messages++
	a.rep.Bytes += size
	if ts.haveLog {
		d := t.Sub(ts.prevLog)
		ts.arr.Add(d)
		ts.plots.arrival.Add(int64(t), float64(d))
	}
	ts.prevLog, ts.haveLog = t, true
	if m.Malformed {
		r.Malformed++
	}
}

// noteStamp takes a header stamp of topic ts: its timing, its latency
// (the first decides whether a device clock stamps the topic), and the
// start of the ApproximateTime analysis once the topics to match are
// known (automatic: every Header topic has shown a message, or a second
// of log time has passed).
func (a *Analyzer) noteStamp(ts *topicState, m *Message) {
	r, hdr, t := ts.r, m.Header, m.LogTime
	ts.timing.Add(hdr)
	if r.Stamped == 0 {
		ts.firstHdr, ts.plots.clockFirst = hdr, hdr
	}
	ts.lastHdr = hdr
	r.Stamped++
	lat := t.Sub(hdr)
	ts.lat.Add(lat)
	waiting := a.auto && a.sync == nil && a.sr == nil
	if !ts.decided {
		ts.decided = true
		r.DeviceClock = lat > a.cfg.DeviceOffset || lat < -a.cfg.DeviceOffset
		if waiting && (a.allDecided() || t.Sub(a.rep.Start) > time.Second) {
			a.startSync()
		}
	} else if waiting && t.Sub(a.rep.Start) > time.Second {
		a.startSync()
	}
	if !a.auto && a.sr == nil {
		a.startSync()
	}
}

// allDecided reports whether every topic with a Header has shown a
// stamp.
func (a *Analyzer) allDecided() bool {
	for _, o := range a.topics {
		if o.est != nil && !o.decided {
			return false
		}
	}
	return true
}

// fitClock feeds a stamp received at logTime to the topic's clock fit,
// the header stamp taken as a device clock's ticks (ns).
func (ts *topicState) fitClock(logTime, hdr stamp.Time) {
	ts.pll.Update(logTime, uint64(hdr))
	ts.plots.clockStamp.Add(int64(logTime), float64(hdr.Sub(ts.plots.clockFirst))/1e9)
	if c, ok := ts.pll.Corrected(uint64(hdr)); ok {
		ts.plots.clockResidual.Add(int64(logTime), float64(logTime.Sub(c)))
	}
}

// estimate runs a stamp through the topic's estimator and returns its
// estimate and whether the estimator left it as received. It notes the
// gap the estimator found before the sample, or takes back the last one
// when the estimator took a loss back, and the correction.
func (a *Analyzer) estimate(ts *topicState, m *Message) (est stamp.Time, uncorrected bool) {
	r, hdr := ts.r, m.Header
	lost0 := ts.est.LostSamples()
	est, err := ts.est.Update(hdr)
	if err != nil {
		est = hdr
	}
	uncorrected = err != nil || ts.est.Uncorrected()
	if uncorrected {
		r.Uncorrected++
	}
	switch lost := ts.est.LostSamples(); {
	case lost > lost0 && ts.have:
		// The estimator found samples missing before this one: a gap.
		r.Gaps++
		a.noteGap(ts, Gap{At: m.LogTime, Length: hdr.Sub(ts.prevHdr), Missing: int64(lost - lost0)})
	case lost < lost0 && r.Gaps > 0:
		// It took a loss back (a sample came a period early): the last
		// gap was none.
		r.Gaps--
		ts.dropLastGap()
	}
	corr := hdr.Sub(est)
	ts.corr.Add(corr)
	ts.plots.correction.Add(int64(m.LogTime), float64(corr))
	return est, uncorrected
}

// dropLastGap forgets the latest of the longest gaps kept.
func (ts *topicState) dropLastGap() {
	if len(ts.gaps) == 0 {
		return
	}
	last := 0
	for k := range ts.gaps {
		if ts.gaps[k].At > ts.gaps[last].At {
			last = k
		}
	}
	ts.gaps = append(ts.gaps[:last], ts.gaps[last+1:]...)
}

// compareIntervals compares the interval from the topic's previous stamp
// to this one with the interval of their estimates: stamps that repeat or
// go back, and each interval's deviation from whole periods (the jitter
// before and after correction).
func (a *Analyzer) compareIntervals(ts *topicState, m *Message, est stamp.Time, uncorrected bool) {
	r := ts.r
	d := m.Header.Sub(ts.prevHdr)
	switch {
	case d == 0:
		r.Duplicates++
	case d < 0:
		r.Backward++
	}
	ts.plots.stampInterval.Add(int64(m.LogTime), float64(d))
	gap := false
	// Before and after are measured on the same intervals: those
	// between two stamps the estimator corrected. One it left as
	// received (the fit's warm-up, whose period is still young; a
	// sample after a loss not yet decided) is counted apart, in
	// Uncorrected.
	if p := ts.est.Period(); p > 0 && d > 0 && !uncorrected && !ts.prevUncorrected {
		k := int64(math.Round(float64(d) / float64(p)))
		var devB, devA time.Duration
		haveB, haveA := false, false
		if k >= 1 {
			devB, haveB = d-time.Duration(k)*p, true
			ts.jb.Add(devB)
			ts.plots.jitBefore.Add(devB)
		}
		gap = k >= 2
		// Gaps are found on the estimates: a late stamp in a
		// heavy-tailed jitter is no gap.
		de := est.Sub(ts.prevEst)
		ke := int64(math.Round(float64(de) / float64(p)))
		if ke >= 1 {
			devA, haveA = de-time.Duration(ke)*p, true
			ts.ja.Add(devA)
			ts.plots.jitAfter.Add(devA)
		}
		if haveB && haveA && ke == k {
			// Where the estimates count other periods between the two
			// samples than the rounded stamps do, the estimator has
			// decided (a late sample is no gap; a sample after a loss
			// is not late): the stamps' count is no measure of it.
			a.noteWorse(ts, devB, devA, p, gap)
		}
	}
	ts.prevGap = gap
}

// noteWorse counts a sample whose estimate's interval jitter devA is
// worse than its stamp's devB by more than a hundredth of period p, and
// where (see Worse); gap: the stamps show samples missing before it.
func (a *Analyzer) noteWorse(ts *topicState, devB, devA, p time.Duration, gap bool) {
	by := abs(devA) - abs(devB)
	if by <= p/100 {
		return
	}
	w := &ts.r.Worse
	w.Samples++
	w.Max = max(w.Max, by)
	switch {
	case gap || ts.prevGap:
		w.AtGaps++
	case ts.r.Stamped <= WarmUpSamples:
		w.WarmUp++
	default:
		w.Elsewhere++
	}
}

func abs(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}

// noteGap keeps the TopGaps longest gaps.
func (a *Analyzer) noteGap(ts *topicState, g Gap) {
	n := a.cfg.TopGaps
	if n == 0 {
		return
	}
	if len(ts.gaps) < n {
		ts.gaps = append(ts.gaps, g)
		return
	}
	i := slices.IndexFunc(ts.gaps, func(x Gap) bool { return x.Length < g.Length })
	if i < 0 {
		return
	}
	// replace the shortest
	j := 0
	for k := range ts.gaps {
		if ts.gaps[k].Length < ts.gaps[j].Length {
			j = k
		}
	}
	ts.gaps[j] = g
}

// Report finishes the analysis and returns it. Call it once, after the
// last Add.
func (a *Analyzer) Report() *Report {
	if a.ended {
		return &a.rep
	}
	a.ended = true
	if a.sr == nil {
		a.startSync()
	}
	for _, ts := range a.topics {
		r := ts.r
		if r.Count > 1 && r.Last > r.First {
			r.RateHz = float64(r.Count-1) / r.Last.Sub(r.First).Seconds()
		}
		r.Arrival = ts.arr.Summarize()
		r.Span = r.Last.Sub(r.First)
		r.Class, r.ClassWhy = Classify(ts.timing.Timing())
		p99 := r.Arrival.P99
		if ts.timing.intervals.Count() > 0 {
			p99 = max(p99, ts.timing.intervals.Quantiles(0.99)[0])
		}
		if longest := max(r.Arrival.Max, ts.timing.intervals.Max()); p99 > 0 && longest > IntervalClip*p99 {
			ts.plots.intervalTop, ts.plots.intervalMax = IntervalClip*p99, longest
		}
		r.MedianInterval = ts.timing.Timing().Median
		if ts.est == nil {
			r.Verdict = verdict(r)
			continue
		}
		st := ts.est.Status()
		r.Period, r.EstimatedLosses, r.Missing = st.Period, st.LostSamplesTotal, st.LostSamplesTotal
		r.PeriodChanges = st.PeriodChanges
		r.JitterBefore, r.JitterAfter = ts.jb.Summarize(), ts.ja.Summarize()
		r.Correction, r.Latency = ts.corr.Summarize(), ts.lat.Summarize()
		ts.plots.latency = ts.lat
		sort.Slice(ts.gaps, func(i, j int) bool { return ts.gaps[i].Length > ts.gaps[j].Length })
		r.LongestGaps = ts.gaps
		ps := ts.pll.Status()
		r.ClockValid = ps.Valid
		if ps.Valid {
			r.SkewPPM, r.ClockOffset = -ps.SlopePPM/(1+ps.SlopePPM*1e-6), ps.Offset
		}
		if r.Stamped > 0 && !r.DeviceClock {
			med := r.Latency.P50
			r.DeviceClock = med > a.cfg.DeviceOffset || med < -a.cfg.DeviceOffset
		}
		if r.DeviceClock && ps.Valid && ts.lastHdr > ts.firstHdr {
			// the fitted line, at the first and last stamp
			pl := &ts.plots
			c0, ok0 := ts.pll.Corrected(uint64(ts.firstHdr))
			c1, ok1 := ts.pll.Corrected(uint64(ts.lastHdr))
			pl.haveFit = ok0 && ok1
			pl.fitLine = [2][2]float64{{float64(c0), 0}, {float64(c1), float64(ts.lastHdr.Sub(ts.firstHdr)) / 1e9}}
		}
		if r.Class != Periodic {
			// no period: no jitter, gaps or estimate to speak of
			r.Period, r.EstimatedLosses, r.Missing, r.Gaps, r.LongestGaps, r.PeriodChanges = 0, 0, 0, 0, nil, 0
			r.JitterBefore, r.JitterAfter, r.Correction, r.Worse = Summary{}, Summary{}, Summary{}, Worse{}
		}
		r.Verdict = verdict(r)
	}
	var host []*TopicReport
	for _, r := range a.rep.Topics {
		if r.Stamped > 0 && !r.DeviceClock {
			host = append(host, r)
		}
	}
	if a.cfg.PerTopicOnly {
		host = nil
	}
	for i := range host {
		for j := i + 1; j < len(host); j++ {
			a.rep.Offsets = append(a.rep.Offsets, Offset{A: host[i].Name, B: host[j].Name,
				Offset: host[i].Latency.P50 - host[j].Latency.P50})
		}
	}
	if a.sr != nil {
		a.finishSync()
		for _, ts := range a.syncT {
			if c := ts.r.Class; c != Periodic {
				a.sr.Notes = append(a.sr.Notes, fmt.Sprintf("%s is %s (%s): a topic without a period holds back or drops the sets of the others; name the topics to match to leave it out",
					ts.r.Name, c, ts.r.ClassWhy))
			}
		}
		a.rep.Sync = a.sr
	}
	return &a.rep
}

// finishSync summarizes the sets and suggests parameters.
func (a *Analyzer) finishSync() {
	sr := a.sr
	if a.sync == nil {
		return
	}
	st := a.sync.Status()
	sr.Before, sr.NoStamp = make([]uint64, len(a.syncT)), make([]uint64, len(a.syncT))
	for i, ts := range a.syncT {
		if i < len(st.QueueFill) {
			sr.Unmatched[i] = uint64(st.QueueFill[i])
		}
		sr.Before[i] = ts.r.Stamped - sr.Messages[i]
		sr.NoStamp[i] = ts.r.Count - ts.r.Stamped
	}
	sr.Spread = sr.spread.Summarize()
	// Suggestions: a queue that holds the fastest topic's messages for
	// the slowest topic's period plus the spread of latencies between
	// them; a max interval just above the spread of the sets found (larger
	// spreads are mismatches); lower bounds at half each period.
	var fastest, slowest time.Duration
	var latLo, latHi time.Duration
	sg := SyncSuggestion{AgePenalty: a.cfg.Sync.AgePenalty}
	for i, ts := range a.syncT {
		p := ts.r.Period
		if p <= 0 && ts.r.RateHz > 0 {
			p = time.Duration(float64(time.Second) / ts.r.RateHz)
		}
		if i == 0 || p < fastest {
			fastest = p
		}
		if i == 0 || p > slowest {
			slowest = p
		}
		l := ts.r.Latency.P99
		if i == 0 || l < latLo {
			latLo = l
		}
		if i == 0 || l > latHi {
			latHi = l
		}
		sg.LowerBounds = append(sg.LowerBounds, (p / 2).Round(time.Microsecond))
	}
	if fastest > 0 {
		q := int(math.Ceil(float64(slowest+latHi-latLo)/float64(fastest))) + 2
		sg.QueueSize = max(q, 2)
		sg.Why = append(sg.Why, fmt.Sprintf("queue_size %d: the fastest topic's messages in one period of the slowest (%v) plus the spread of their latencies (%v), and 2 to spare",
			sg.QueueSize, slowest.Round(time.Microsecond), (latHi-latLo).Round(time.Microsecond)))
	}
	if sr.Sets > 0 {
		mi := time.Duration(float64(sr.Spread.P99) * 1.5)
		if slowest > 0 {
			mi = min(mi, slowest/2)
		}
		sg.MaxInterval = mi.Round(time.Microsecond)
		sg.Why = append(sg.Why, fmt.Sprintf("max_interval_sec %.6f: 1.5 × the 99th percentile of the set spread (%v), at most half the slowest period: wider sets are mismatches",
			sg.MaxInterval.Seconds(), sr.Spread.P99.Round(time.Microsecond)))
	}
	sg.Why = append(sg.Why, "lower_bounds_sec: half of each topic's period, so a set is published without waiting for the next message")
	sr.Suggested = sg
}

// Plots reports whether r holds plot data (an Analyzer's report does).
func (r *TopicReport) Plots() bool { return r.plots != nil }
