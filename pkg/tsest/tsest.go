package tsest

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/timealign/timealign/internal/hull"
	"github.com/timealign/timealign/pkg/cfgerr"
	"github.com/timealign/timealign/pkg/stamp"
)

// MaxWindowSamples bounds the samples a hull holds before it switches, so
// memory stays bounded whatever the input.
const MaxWindowSamples = 1 << 20

// longWindows is how many windows the long hulls switch after: their fit
// spans three to six windows. A fit's slope error, for a lower envelope of
// n points over a span S with jitter J, is about J/(n·S): three times the
// span is about a ninth of the error, which brings the estimates to the
// limit of a perfect period (the least delay over a window) on steady
// streams, while a period that drifts (a few ppm a second) still moves the
// chord little over six windows; a period that changes faster is caught by
// the change test (checkChange) and restarts the fit.
const longWindows = 3.5

// priorFits is how many fits a period measured before a restart weighs in
// the new fit's smoothed slope (see Estimator.restart).
const priorFits = 256

// fitEvery is how often (in updates) the smoothed period takes in the
// hull's fitted slope.
const fitEvery = 4

// maxStep bounds the samples one update may step over (by its index or
// its lateness), so indexes never overflow.
const maxStep = 1 << 40

// minPeriod is the shortest period the fit accepts (1 ns): a flatter
// slope means stamps that do not advance (an unstamped input repeating one
// stamp), which has no period.
const minPeriod = 1.0

// warmup is how many samples the fit needs, without a known period, before
// losses are inferred from timing.
const warmup = 32

// ns rounds f nanoseconds to a Duration, saturating at ±(2^63−1) ns (so it
// can be negated) and taking NaN as 0.
func ns(f float64) time.Duration {
	switch {
	case math.IsNaN(f):
		return 0
	case f >= math.MaxInt64:
		return math.MaxInt64
	case f <= -math.MaxInt64:
		return -math.MaxInt64
	}
	return time.Duration(math.Round(f))
}

// Config configures an Estimator. Start from DefaultConfig.
type Config struct {
	// Window is the span of receive time the line is fitted over: the fit
	// looks back between Window and 2·Window. It should be an order of
	// magnitude shorter than the time over which the period drifts, and
	// hold many samples. It defaults to 2 s.
	Window time.Duration
	// Period is the expected period, used until the window has enough
	// samples to fit one (slightly over-estimate it if unsure), and as the
	// period after a restart. 0 means unknown. It defaults to 0.
	Period time.Duration
	// MinLatency is the least latency between acquisition and reception:
	// without hardware references, estimates are the fitted line minus
	// MinLatency. It defaults to 0.
	MinLatency time.Duration
	// LossThreshold is how many suspect samples in a row (each arriving at
	// least 0.9 period after the line's prediction) make a loss: 0 or 1
	// infer it from the first suspect (use when the jitter is always below
	// a period); 2, the default, waits for the second, so a lost sample
	// costs at most one period of error on the next sample.
	LossThreshold int
	// NeverInferLoss disables loss inference from timing, for streams whose
	// losses are all announced (UpdateLoss) or indexed (UpdateIndex). It
	// defaults to false.
	NeverInferLoss bool
	// IndexBits is the width of the sensor's sample counter given to
	// UpdateIndex; it wraps at 2^IndexBits. 1..64; it defaults to 64.
	IndexBits int
}

// DefaultConfig returns a 2 s window, unknown period, loss threshold 2 and
// 64-bit indexes.
func DefaultConfig() Config {
	return Config{Window: 2 * time.Second, LossThreshold: 2, IndexBits: 64}
}

// ErrConfig is wrapped by every error of Config.Validate.
var ErrConfig = errors.New("tsest: invalid config")

// Validate reports the first bad field.
func (c Config) Validate() error {
	bad := func(field, format string, args ...any) error {
		return cfgerr.New(ErrConfig, field, format, args...)
	}
	switch {
	case c.Window <= 0:
		return bad("Window", "is %v, want > 0", c.Window)
	case c.Period < 0:
		return bad("Period", "is %v, want > 0 (or 0 for unknown)", c.Period)
	case c.Period > 0 && c.Period >= c.Window:
		return bad("Period", "(%v) must be shorter than {Window} (%v)", c.Period, c.Window)
	case c.MinLatency < 0:
		return bad("MinLatency", "is %v, want ≥ 0", c.MinLatency)
	case c.LossThreshold < 0:
		return bad("LossThreshold", "is %d, want ≥ 0", c.LossThreshold)
	case c.IndexBits < 1 || c.IndexBits > 64:
		return bad("IndexBits", "is %d, want 1..64", c.IndexBits)
	}
	return nil
}

// Errors of the updates. Each is also counted in Status.
var (
	// ErrDuplicateIndex: the sample repeats the previous sample's index.
	ErrDuplicateIndex = errors.New("tsest: duplicate sample index")
	// ErrReference: a reference stamp belongs to no sample of the current
	// fit.
	ErrReference = errors.New("tsest: reference outside the fit")
)

// Status is a snapshot of an Estimator, with the fields of Rock's
// TimestampEstimatorStatus and counters of every input it rejected or
// repaired.
type Status struct {
	Stamp   stamp.Time    `json:"stamp_ns"`   // the last estimate
	Period  time.Duration `json:"period_ns"`  // the estimated period (0: none yet)
	Latency time.Duration `json:"latency_ns"` // the latency subtracted from the line
	// LatencyRaw is the latency the last reference showed, unfiltered.
	LatencyRaw time.Duration `json:"latency_raw_ns"`
	// TimeRaw and ReferenceTimeRaw are the last inputs.
	TimeRaw          stamp.Time `json:"time_raw_ns"`
	ReferenceTimeRaw stamp.Time `json:"reference_time_raw_ns"`
	// MaxJitter is the largest receive time minus line seen since reset.
	MaxJitter time.Duration `json:"max_jitter_ns"`
	// LastCorrection is the last sample's receive time minus its estimate.
	LastCorrection time.Duration `json:"last_correction_ns"`

	Samples          uint64 `json:"samples"`            // samples estimated
	LostSamplesTotal uint64 `json:"lost_samples_total"` // inferred, indexed or announced
	// ExpectedLosses are announced losses not yet seen in the stream;
	// RejectedExpectedLosses those the stream never showed.
	ExpectedLosses         uint64 `json:"expected_losses"`
	RejectedExpectedLosses uint64 `json:"rejected_expected_losses"`
	// WindowSize is the number of samples the answering fit covers;
	// WindowCapacity the nominal number for two windows at the estimated
	// period (delayed deliveries can add a few; MaxWindowSamples is the
	// hard bound); WindowLost the lost samples between the answering
	// fit's first and last (Rock's lost_samples).
	WindowSize     int `json:"window_size"`
	WindowCapacity int `json:"window_capacity"`
	WindowLost     int `json:"lost_samples"`
	// BaseTime is the receive time the current fit started at; each restart
	// (gap, clock step, Reset) counts in BaseTimeResets, and
	// BaseTimeResetOffset is how far the line moved at the last one.
	BaseTime            stamp.Time    `json:"base_time_ns"`
	BaseTimeResets      uint64        `json:"base_time_resets"`
	BaseTimeResetOffset time.Duration `json:"base_time_reset_offset_ns"`

	References uint64 `json:"references"`
	// RejectedReferences belong to no sample of the current fit.
	RejectedReferences uint64 `json:"rejected_references"`
	// Backward counts receive stamps earlier than the previous sample's;
	// each still got an estimate (the JSON name is that of the status
	// message's field).
	Backward    uint64 `json:"rejected_backward"`
	Duplicates  uint64 `json:"duplicate_stamps"`    // same stamp as the previous (a burst)
	DupIndexes  uint64 `json:"rejected_duplicates"` // same index as the previous
	Gaps        uint64 `json:"gaps"`                // gaps longer than the window
	ClockSteps  uint64 `json:"clock_steps_back"`    // host clock steps back detected
	IndexResets uint64 `json:"index_resets"`        // counter resets or absurd jumps
	Recounts    uint64 `json:"loss_recounts"`       // inferred losses taken back (a sample came a period early)
	Resets      uint64 `json:"resets"`              // calls to Reset
	// Uncorrected: the last estimate is the receive stamp minus the least
	// delay, not the model's (warm-up, a suspect whose loss is undecided,
	// a line that does not hold there); UncorrectedSamples counts them.
	Uncorrected        bool   `json:"uncorrected"`
	UncorrectedSamples uint64 `json:"uncorrected_samples"`
	// PeriodChanges counts the times the line stopped fitting the
	// stream (the samples all above it or all below it for a quarter
	// window, or a steady multiple of the period) and the fit restarted
	// on the recent samples.
	PeriodChanges uint64 `json:"period_changes"`
	HaveEstimate  bool   `json:"have_estimate"`
	// Ambiguous: without a configured Period, the samples lie on average
	// more than 0.45 period above the fitted line (a jitter of about 90 %
	// of the period or more), so a late sample cannot be told from a
	// lost one. No loss is then inferred from timing (a stream that loses
	// samples undetected gets estimates that many periods early), and a
	// fit that had inferred losses is restarted without its period (they
	// may have locked it on a shorter one). Configure Period, or give
	// indexes (UpdateIndex), to be sure. Ambiguities counts the times it
	// was raised.
	Ambiguous   bool   `json:"jitter_ambiguous"`
	Ambiguities uint64 `json:"jitter_ambiguities"`
}

// Estimator estimates acquisition times. It is not safe for concurrent use:
// one goroutine owns it. The zero value is not usable: use New.
type Estimator struct {
	cfg     Config
	window  float64 // cfg.Window, ns
	idxMask uint64  // indexes wrap at idxMask + 1 (Config.IndexBits)

	// Where the stream is: the index of the last sample (k) and of the
	// sample received last (recvK), that receive time and the last
	// estimate.
	k        int64
	recvK    int64
	lastRecv stamp.Time
	lastEst  stamp.Time

	fit    fitState    // the line under the samples and the period
	input  inputState  // the samples' indexes, and stamps that go back or repeat
	change changeState // whether the line still fits the stream (checkChange)
	loss   lossState   // suspects, losses inferred and announced, ambiguity
	warmup warmupState // the first samples of a fit without a known period
	ref    refState    // the latency: hardware references, or MinLatency

	st Status
}

// fitState is the line the estimates come from. The samples are points
// (x: index − baseK, y: receive time − baseT), pushed into hulls switched
// every window; the line is fitted under them (fitLine), and the period is
// its slope.
type fitState struct {
	started   bool       // a first sample set the origin
	baseT     stamp.Time // y origin
	baseK     int64      // x origin
	hulls     hull.Switching
	youngFrom stamp.Time // receive time the younger hull started at
	line      hull.Line
	haveLine  bool
	period    float64 // ns
	prior     float64 // period to use while the fit is short, ns (0: none)
	smooth    float64 // smoothed fitted slope, ns per sample
	fits      int     // updates since the smoothing started (fitEvery)
	priorN    float64 // fits the prior period weighs (restart)
	// long: the same points in hulls switched every longWindows windows
	// (longFrom: when its younger one started), whose fitted slope
	// (longSlope, 0 for none) is the period once it spans more than the
	// window's hulls.
	long      hull.Switching
	longFrom  stamp.Time
	longSlope float64
	mature    bool // the fit covers enough samples to judge lateness
	// height: the largest height above the line of the current fit's
	// samples, which bounds how far an estimate may be from its receive
	// stamp; heightN: the samples it has seen.
	height  float64
	heightN int
}

// inputState follows the samples' own indexes (UpdateIndex), stamps that
// go back (a run of them is a host clock step) and stamps that repeat (a
// burst, or a clock that stalls).
type inputState struct {
	haveIndex bool
	lastIndex uint64
	backRun   int // samples in a row behind the previous receive time
	backLast  stamp.Time
	dupRun    int     // duplicates of the last stamp in a row
	dupPeriod float64 // the period when the run began
	advanced  bool    // the stamps have advanced since the fit started
	// known: the sample's step from the one before is given (an index,
	// or losses announced before it), not inferred from its lateness.
	known bool
}

// changeState is the change test's run (checkChange): its length (n),
// least and greatest height above the line, and the steady multiple of the
// period its samples came at (0: none); records in a row, above (> 0) or
// below (< 0) the line; samples in a row at the multiple.
type changeState struct {
	n               int
	lowest, highest float64
	mult            int64
	records         int
	multRun         int
	// gapRun: samples in a row each 1.75 periods or more after the one
	// before (any multiple).
	gapRun int
	// gapPeriods: the last sample's interval from the one before, in
	// periods of the fit.
	gapPeriods float64
	// last: when the last change was found; unsettled: the one before
	// was within unsettledWindows, so the estimates are the receive stamps
	// until a fit holds for a window.
	last      stamp.Time
	unsettled bool
}

// lossState decides which samples followed losses. A suspect sample (late
// by at least 0.9 period) is held out of the hulls until the next sample
// tells whether it followed a loss or was late; its estimate is given at
// once.
type lossState struct {
	pending   bool
	pendT     stamp.Time
	pendFrom  int64 // index before the suspect
	pendLost  int64 // whole periods late it showed
	pendGuess int64 // losses assumed when it was stamped
	pendSure  bool  // the guess is the stream's habit (its suspects have been losses)
	// How the stream's suspects turned out: losses, bursts, late samples.
	losses   uint64
	bursts   uint64
	lateOnly uint64
	inferred uint64 // losses inferred from timing since the fit started
	// ambiguous: the jitter is too large, against the fitted period, to
	// tell a late sample from a lost one (see Status.Ambiguous); refit:
	// it was raised on a fit that had inferred losses, which the next
	// update restarts without its period.
	ambiguous bool
	refit     bool
	highFrac  float64 // fraction of the samples high above the line (judgeJitter)
	highN     int     // samples it counts since the fit started
	// taint: the losses inferred from timing (net of recounts) since the
	// last refit; fits after a restart inherit the period they gave.
	taint uint64
	// announced: losses announced (UpdateLoss) and not yet seen; annTTL:
	// updates left before they are rejected.
	announced int64
	annTTL    int
}

// warmupState holds the first samples of a fit without a known period:
// their receive times (t), until settleWarmup finds their losses from
// their intervals and their indexes from the base (x).
type warmupState struct {
	on bool
	t  [warmup]stamp.Time
	n  int
	x  [warmup]int64
	// off: the intervals no longer show the losses (losses were
	// announced, or a sample with a wrong stamp took an index, during the
	// warm-up).
	off bool
}

// refState is the latency subtracted from the line: MinLatency, or what
// hardware references show.
type refState struct {
	latency float64 // ns
	// have: the latency comes from references. lat is the latency a
	// mature fit's references gave (haveLat), which places the next
	// ones; pending are references kept while the fit is too young to
	// place them.
	have    bool
	haveLat bool
	lat     float64
	// latPeriod is the fit's period when lat was measured: a reference is
	// placed on its sample only modulo a period, so lat tells which
	// sample a reference marks only on fits of that period or a shorter
	// one.
	latPeriod float64
	pending   [32]stamp.Time
	pendingN  int
	// The references (index, reference stamp) of the current fit, in hulls
	// switched with the samples' and the line under them: anchor is its
	// value at x = 0, anchorSlope its slope, computed for the samples'
	// slope anchorM.
	hulls       hull.Switching
	anchor      float64
	anchorSlope float64
	anchorM     float64
	anchorOK    bool
}

// New returns an Estimator for cfg, or the error of cfg.Validate.
func New(cfg Config) (*Estimator, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	e := &Estimator{cfg: cfg, window: float64(cfg.Window)}
	e.idxMask = ^uint64(0)
	if cfg.IndexBits < 64 {
		e.idxMask = 1<<uint(cfg.IndexBits) - 1
	}
	e.Reset()
	e.st.Resets = 0
	return e, nil
}

// Config returns the configuration.
func (e *Estimator) Config() Config { return e.cfg }

// Reset forgets every sample and reference, as a new Estimator; counters
// are kept and Resets counts the call.
func (e *Estimator) Reset() {
	st := e.st
	*e = Estimator{cfg: e.cfg, window: e.window, idxMask: e.idxMask, // the hulls keep their memory
		fit: fitState{hulls: e.fit.hulls, long: e.fit.long}, ref: refState{hulls: e.ref.hulls}}
	e.fit.hulls.Clear()
	e.fit.long.Clear()
	e.ref.hulls.Clear()
	e.fit.prior = float64(e.cfg.Period)
	e.fit.period = e.fit.prior
	e.ref.latency = float64(e.cfg.MinLatency)
	e.st = st
	e.st.Resets++
	e.st.Stamp, e.st.Period, e.st.Latency, e.st.HaveEstimate = 0, 0, e.cfg.MinLatency, false
	e.st.WindowSize, e.st.ExpectedLosses = 0, 0
}

// Update returns the estimated acquisition time of a sample received at t.
// Every sample gets one, and the error is always nil (it is there for
// UpdateIndex's sake). A t earlier than the previous sample's is counted
// (Status.Backward): if it lies on the line (the previous stamp was late)
// it is fitted like any other; if it is early against the line, its stamp
// is wrong and it gets the fit's prediction for its index, leaving the fit
// alone; three in a row that stay behind are a host clock step back and
// restart the fit. Estimates never go back.
func (e *Estimator) Update(t stamp.Time) (stamp.Time, error) {
	return e.update(t, 0, false)
}

// UpdateIndex is Update for a sample that carries the sensor's own sample
// counter, which gives the losses exactly. It wraps at 2^IndexBits. A
// repeated index (the same sample again) is the only sample rejected: it is
// counted (Status.DupIndexes) and returns ErrDuplicateIndex with the
// previous sample's estimate.
func (e *Estimator) UpdateIndex(t stamp.Time, index uint64) (stamp.Time, error) {
	return e.update(t, index&e.idxMask, true)
}

// UpdateLoss announces that one sample was lost.
func (e *Estimator) UpdateLoss() {
	e.loss.announced++
	e.loss.annTTL = 10
	e.st.ExpectedLosses = uint64(e.loss.announced)
}

// HaveEstimate reports whether a period is known.
func (e *Estimator) HaveEstimate() bool { return e.fit.period > 0 }

// Period returns the estimated period, 0 if none yet.
func (e *Estimator) Period() time.Duration { return ns(e.fit.period) }

// Latency returns the latency subtracted from the fitted line.
func (e *Estimator) Latency() time.Duration { return ns(e.ref.latency) }

// MaxJitter returns the largest receive time minus line seen since reset.
func (e *Estimator) MaxJitter() time.Duration { return e.st.MaxJitter }

// Uncorrected reports whether the last estimate was the receive stamp minus
// the least delay rather than the model's (see Status.Uncorrected).
func (e *Estimator) Uncorrected() bool { return e.st.Uncorrected }

// LostSamples returns the number of lost samples so far.
func (e *Estimator) LostSamples() uint64 { return e.st.LostSamplesTotal }

// Status returns a snapshot.
func (e *Estimator) Status() Status {
	s := e.st
	s.Period = e.Period()
	s.Latency = e.Latency()
	s.HaveEstimate = e.HaveEstimate()
	s.Ambiguous = e.loss.ambiguous
	h := e.fit.hulls.Answering()
	s.WindowSize = h.Count()
	if n := h.Count(); n > 0 {
		s.WindowLost = max(0, int(math.Round(h.Span()))-(n-1))
	}
	s.WindowCapacity = MaxWindowSamples
	if e.fit.period > 0 {
		s.WindowCapacity = int(min(MaxWindowSamples, 2*e.window/e.fit.period+1))
	}
	return s
}

// restart starts a new fit at the sample (t), keeping the period as prior.
func (e *Estimator) restart(t stamp.Time) {
	if e.fit.started && e.fit.haveLine {
		predicted := e.fit.baseT.Add(ns(e.fit.line.At(float64(e.k + 1 - e.fit.baseK))))
		e.st.BaseTimeResetOffset = t.Sub(predicted)
		e.st.BaseTimeResets++
	}
	// A period the previous fit measured (not one configured, nor a
	// young fit's) weighs in the new fit's smoothed slope as the fits of
	// the samples it was measured over (priorN): the new fit's first
	// slopes, over a few samples, are far less precise.
	e.fit.priorN = 0
	if e.fit.period > 0 && e.fit.mature && e.fit.started {
		n := e.fit.hulls.Answering().Count()
		if e.fit.longSlope > 0 {
			n = e.fit.long.Answering().Count()
		}
		e.fit.priorN = float64(n) / fitEvery
	}
	if e.fit.period > 0 {
		e.fit.prior = e.fit.period
	}
	e.fit.hulls.Clear()
	e.fit.hulls.Young().Clear()
	e.fit.long.Clear()
	e.fit.longSlope = 0
	e.fit.longFrom = t
	e.fit.started = true
	e.fit.baseT, e.fit.baseK = t, e.k
	e.fit.youngFrom = t
	e.fit.haveLine = false
	e.loss.pending = false
	e.loss.inferred = 0
	e.loss.highFrac, e.loss.highN = 0, 0
	e.fit.mature = false
	e.fit.fits = 0
	e.fit.height, e.fit.heightN = 0, 0
	e.change.n, e.change.records, e.change.multRun = 0, 0, 0
	e.input.dupRun, e.input.advanced = 0, false
	// The indexes may not follow on across a restart: the references are
	// forgotten, and the last latency stands in until the next one.
	e.ref.hulls.Clear()
	e.ref.anchorOK = false
	e.ref.pendingN = 0
	if e.ref.haveLat {
		e.ref.latency = e.ref.lat // not a young line's
	}
	e.st.BaseTime = t
	// Without a period, the first samples are kept to settle their losses
	// from their intervals once there are enough of them.
	e.warmup.on = e.fit.prior <= 0 && !e.cfg.NeverInferLoss
	e.warmup.t[0], e.warmup.n, e.warmup.off = t, 1, false
}

func (e *Estimator) update(t stamp.Time, index uint64, indexed bool) (stamp.Time, error) {
	step := int64(1) // indexes since the previous sample
	if indexed {
		var err error
		if step, indexed, err = e.takeIndex(t, index); err != nil {
			return e.lastEst, err
		}
	}
	e.st.TimeRaw = t
	e.input.known = indexed || e.loss.announced > 0
	if e.fit.started && t < e.lastRecv {
		var fitted bool
		if step, fitted = e.behind(t, step); !fitted {
			return e.predict(t, step), nil
		}
	}
	e.input.backRun = 0
	// The sample's index: after a raised ambiguity (loss.refit), a gap or
	// a stalled stamp the fit restarts at it; otherwise it follows the
	// previous one by step, or by more where losses place it later.
	hold := false
	switch stalled, startOnly := e.noteRepeat(t); {
	case e.loss.refit && e.fit.started && !stalled && t.Sub(e.lastRecv) <= e.cfg.Window:
		e.refitAt(t, step)
	case !e.fit.started || stalled || t.Sub(e.lastRecv) > e.cfg.Window:
		e.startOver(t, step, startOnly)
	default:
		step, hold = e.next(t, step, indexed)
		e.k += step
	}
	e.tickAnnounced()
	x, y, hold := e.addSample(t, hold)
	est, corrected := e.estimate(t, x, y, hold)
	return e.emit(t, est, corrected), nil
}

// takeIndex returns the step from the previous sample's index to index,
// the sample's own (UpdateIndex), and whether that index places the
// sample: after a counter reset or an implausible jump it is placed by
// timing, and the counter followed from it. A repeated index is the only
// sample rejected.
func (e *Estimator) takeIndex(t stamp.Time, index uint64) (step int64, indexed bool, err error) {
	step, indexed = 1, true
	if e.input.haveIndex {
		d := (index - e.input.lastIndex) & e.idxMask
		switch {
		case d == 0:
			e.st.DupIndexes++
			return 0, false, fmt.Errorf("%w: %d", ErrDuplicateIndex, index)
		case e.indexPlausible(t, d):
			step = int64(d)
		default:
			// A counter reset or jump.
			e.st.IndexResets++
			indexed = false
		}
	}
	e.input.haveIndex, e.input.lastIndex = true, index
	return step, indexed, nil
}

// behind takes a sample received before the previous one (t, step indexes
// later) and reports whether it joins the fit, with the step to place it
// by: a sample on the line (its stamp is right, the previous one was
// late), or the third in a row behind the old time base (the host clock
// stepped back: the fit restarts at it, with step 0). Otherwise, early
// against the line or with no line to judge it by, its stamp is wrong and
// the caller stamps it with the fit's prediction.
func (e *Estimator) behind(t stamp.Time, step int64) (int64, bool) {
	e.st.Backward++
	if e.loss.pending {
		// Stamped before the suspect (the previous sample): the
		// suspect was late, not the first after a loss.
		e.loss.lateOnly++
		e.flushPending(0)
	}
	if e.input.backRun > 0 && t >= e.input.backLast {
		e.input.backRun++
	} else {
		e.input.backRun = 1
	}
	e.input.backLast = t
	switch {
	case e.input.backRun >= 3:
		e.st.ClockSteps++
		e.k += step
		e.restart(t)
		e.lastEst = stamp.Min
		return 0, true
	case e.onLine(t, e.k+step):
		return step, true
	}
	return step, false
}

// startOver restarts the fit at the sample received at t, step indexes
// after the previous one: the first sample, or one after a gap (counted,
// unless startOnly: stamps that never advanced) or a stalled stamp.
func (e *Estimator) startOver(t stamp.Time, step int64, startOnly bool) {
	if e.fit.started && !startOnly {
		e.st.Gaps++
	}
	e.k += step
	e.restart(t)
	e.lastEst = stamp.Min
}

// noteRepeat follows stamps that stop advancing: a run of duplicates.
// When they advance again, a run that began with the fit (stamps that
// never advanced: an unstamped start; startOnly) or lasted longer than a
// window's worth of periods (a stalled clock, not a burst) is stalled: it
// restarts the fit like a gap.
func (e *Estimator) noteRepeat(t stamp.Time) (stalled, startOnly bool) {
	switch {
	case !e.fit.started:
	case t == e.lastRecv:
		e.noteDuplicate()
	case e.input.dupRun > 0:
		return e.endRepeat()
	default:
		e.input.advanced = true
	}
	return false, false
}

// noteDuplicate counts a stamp equal to the previous one.
func (e *Estimator) noteDuplicate() {
	e.st.Duplicates++
	if e.input.dupRun == 0 {
		e.input.dupPeriod = e.fit.period // the run bends the fit: judge it by the period before
	}
	e.input.dupRun++
}

// endRepeat ends a run of duplicates (see noteRepeat).
func (e *Estimator) endRepeat() (stalled, startOnly bool) {
	in := &e.input
	startOnly = !in.advanced
	stalled = startOnly || float64(in.dupRun)*in.dupPeriod > e.window
	if stalled && in.dupPeriod > 0 {
		// The restart keeps the period from before the stall.
		e.fit.period, e.fit.smooth = in.dupPeriod, in.dupPeriod
	}
	in.dupRun, in.advanced = 0, true
	return stalled, startOnly
}

// refitAt restarts the fit at the sample received at t, without the
// losses it inferred (an ambiguity was raised on it) nor the period they
// gave: the first samples' losses are settled again from their intervals
// (estimates still never go back).
func (e *Estimator) refitAt(t stamp.Time, step int64) {
	e.loss.refit = false
	e.fit.period, e.fit.smooth, e.fit.prior = 0, 0, float64(e.cfg.Period)
	e.flushPending(0)
	e.st.LostSamplesTotal -= min(e.st.LostSamplesTotal, e.loss.taint)
	e.loss.taint = 0
	e.ref.haveLat = false // references were placed by the bad fit
	e.k += step
	e.restart(t)
}

// next returns the steps from the previous sample's index to this one's
// within a running fit, and whether the sample is held as a suspect: the
// warm-up keeps the first samples (announced losses trusted) and settles
// their losses when it ends; indexes give the losses exactly; otherwise
// they are inferred from the sample's lateness.
func (e *Estimator) next(t stamp.Time, step int64, indexed bool) (int64, bool) {
	w := &e.warmup
	switch {
	case !indexed && w.on && w.n < warmup-1 && t.Sub(e.fit.youngFrom) < e.cfg.Window:
		// (A window of fewer samples than the warm-up ends it when
		// its hulls switch: addSample.)
		w.t[w.n] = t
		w.n++
		if e.loss.announced > 0 {
			// Announced: trusted, and the intervals no longer tell.
			step += e.trustAnnounced()
			w.off = true
		}
		return step, false
	case !indexed:
		if w.on {
			w.t[w.n] = t
			w.n++
			e.settleWarmup()
			e.seedHeights()
		}
		lost, hold := e.inferLoss(t)
		return step + lost, hold
	}
	w.on = false // the indexes place the samples
	e.flushPending(0)
	if step > 1 {
		e.st.LostSamplesTotal += uint64(step - 1)
	}
	return step, false
}

// addSample puts the sample received at t, at index e.k, into the fit,
// unless hold (a suspect: held out of the hulls until the next sample
// decides it) — or unless the change test finds that the line no longer
// fits the stream and restarts the fit at it. It switches the hulls when
// due and refits the line. It returns the sample's coordinates in the fit
// and whether it is held.
func (e *Estimator) addSample(t stamp.Time, hold bool) (x, y float64, held bool) {
	f := &e.fit
	x = float64(e.k - f.baseK)
	y = float64(t.Sub(f.baseT)) // saturated: only a window as long as the stamps could overflow
	if e.checkChange(t, x, y, hold) {
		x, y, hold = 0, 0, false
	}
	if hold {
		e.loss.pendT = t
	} else {
		f.hulls.Push(x, y)
		f.long.Push(x, y)
	}
	if float64(t.Sub(f.longFrom)) >= longWindows*e.window || f.long.Young().Count() >= MaxWindowSamples {
		f.long.Switch()
		f.longFrom = t
	}
	if young := f.hulls.Young(); t.Sub(f.youngFrom) >= e.cfg.Window || young.Count() >= MaxWindowSamples {
		e.switchHulls(t)
		x = float64(e.k - f.baseK)
		y = float64(t.Sub(f.baseT))
	}
	e.fitLine(t)
	if e.ref.pendingN > 0 && e.placing() {
		e.placePending()
	}
	return x, y, hold
}

// emit returns the estimate est of the sample received at t, bounded:
// never acquired after it was received (with references, MinLatency no
// longer bounds the latency), never before the previous estimate; and
// records it (corrected: the model's, not the fallback).
func (e *Estimator) emit(t, est stamp.Time, corrected bool) stamp.Time {
	if lim := t.Add(-e.cfg.MinLatency); !e.ref.have && est > lim {
		est = lim
	} else if est > t {
		est = t
	}
	if est < e.lastEst {
		est = e.lastEst // estimates never go back
	}
	e.lastRecv, e.lastEst, e.recvK = t, est, e.k
	e.st.Uncorrected = !corrected
	if !corrected {
		e.st.UncorrectedSamples++
	}
	e.st.Samples++
	e.st.Stamp = est
	e.st.LastCorrection = t.Sub(est)
	return est
}

// estimate returns the estimate of the sample received at t, at (x, y) in
// the fit's coordinates (held out of the hulls if hold), and whether it is
// the model's: the line minus the latency where the model can vouch for
// it. Elsewhere (no line yet, the warm-up, a young fit without a measured
// period, an unsettled stream, a suspect whose loss the next samples must
// decide) it is the receive stamp minus the least latency, never worse than
// the raw stamp; a young fit's estimate is held to the heights its samples
// have shown.
func (e *Estimator) estimate(t stamp.Time, x, y float64, hold bool) (stamp.Time, bool) {
	if !e.fit.haveLine {
		return t.Add(-ns(e.ref.latency)), false
	}
	e.refLatency(x)
	fallback := func() stamp.Time { return t.Add(-ns(e.ref.latency)) }
	height := y - e.fit.line.At(x)
	e.judgeJitter(height)
	if jit := ns(height); jit > e.st.MaxJitter {
		e.st.MaxJitter = jit
	}
	if hold && !e.suspectPlaced(height) {
		// A suspect whose loss the next samples will decide: its receive
		// stamp, never a period off.
		return fallback(), false
	}
	if e.change.unsettled && t.Sub(e.fit.baseT) >= e.cfg.Window {
		e.change.unsettled = false
	}
	if e.loss.ambiguous && e.change.gapPeriods >= ambiguousGap && !e.input.known {
		// With an ambiguous jitter no loss is inferred: a sample that
		// came ambiguousGap periods or more after the one before (more
		// than that jitter makes) is placed at the next index, periods
		// early, as after a flood that taught the fit a short period.
		return fallback(), false
	}
	if e.change.gapRun >= gapsUncorrected && !e.input.known {
		// Samples in a row each a loss after the one before: the fit's
		// period may be far too short (a flood's, which changeGaps will
		// drop), and its line places them wherever it counts the losses,
		// milliseconds off. Until the run ends or the fit restarts, the
		// receive stamp (indexes and announced losses say the step:
		// they place the sample), minus the least latency only: a
		// latency the references gave on such a fit may be a flood's,
		// placed on the wrong samples.
		return t.Add(-e.cfg.MinLatency), false
	}
	if e.warmup.on || e.fit.period <= 0 || !e.fit.mature && e.fit.priorN == 0 || e.change.unsettled {
		if !e.warmup.on && !hold {
			// (During the warm-up the line does not know the losses yet:
			// a sample after one is a period high.)
			e.noteHeight(height)
		}
		return fallback(), false
	}
	// A young fit is held to the heights its samples have shown (its
	// slope may still be off); a mature one is trusted, and the change
	// test restarts it where the stream leaves its line.
	est := e.fit.baseT.Add(ns(e.fit.line.At(x) - e.ref.latency)) // estimateAt, the latency set above
	if !e.fit.mature && e.fit.heightN > 8 {
		if lim := t.Add(-ns(max(e.fit.height, 0) + e.ref.latency)); est < lim {
			e.noteHeight(height)
			return lim, false
		}
	}
	e.noteHeight(height)
	return est, true
}

// checkChange tests whether the line still fits the stream, with the
// sample at (x, y) before it joins the fit (held: a suspect, whose height
// is not judged). The line is a lower envelope: samples lie on and above
// it, the lowest of any run close to it. Where a run of a quarter window
// (at least 32 samples) lies all above it by more than half the fit's mean
// height (the period grew), or all below it by as much (the period
// shrank), or where changeMultiples samples in a row each came the same
// whole number of periods (2 or more) after the one before (the rate fell
// to a fraction), or where changeRecords samples in a row are records (a
// ramp), the line no longer fits (the records are judged from the eighth
// sample of a fit, the runs once it is mature): the fit restarts at this
// sample, its period unknown (or that multiple), and the change is counted
// (Status.PeriodChanges). It returns whether it restarted.
func (e *Estimator) checkChange(t stamp.Time, x, y float64, held bool) bool {
	if !e.fit.haveLine || e.warmup.on || e.fit.period <= 0 || e.cfg.NeverInferLoss || e.fit.hulls.Answering().Count() < 8 || e.input.dupRun > 0 {
		e.change.n, e.change.records, e.change.multRun, e.change.gapRun, e.change.gapPeriods = 0, 0, 0, 0, 0
		return false
	}
	// An ambiguous jitter (heights near a period) blurs the runs and the
	// records, which are then not judged; the gaps are still telling: a
	// jitter of a period does not make every sample come 1.75 periods or
	// more after the one before, a period far too short does (a flood's,
	// whose disorder against the stream's own writer is what made the
	// jitter look ambiguous).
	ambiguous := e.loss.ambiguous
	if ambiguous {
		e.change.n, e.change.records = 0, 0
	}
	pre := y - e.fit.line.At(x)
	mult := int64(0)
	gap := float64(t.Sub(e.lastRecv))
	e.change.gapPeriods = gap / e.fit.period
	if gap >= 1.75*e.fit.period {
		if r := math.Round(gap / e.fit.period); math.Abs(gap-r*e.fit.period) < 0.25*e.fit.period {
			mult = int64(r)
		}
		e.change.gapRun++
	} else {
		e.change.gapRun = 0
	}
	if e.change.n == 0 {
		e.change.lowest, e.change.highest = math.Inf(1), math.Inf(-1)
	}
	e.change.n++
	if mult == 0 || mult != e.change.mult {
		e.change.mult, e.change.multRun = mult, 0
	}
	e.change.multRun++
	changed, flooded := false, false
	period := 0.0
	switch {
	case e.change.mult >= 2 && e.change.multRun >= changeMultiples:
		changed, period = true, float64(e.change.mult)*e.fit.period
	case e.change.gapRun >= changeGaps:
		// Every sample a loss, of a different number of periods each
		// time: the period is far too short (it was learnt from a flood).
		// Start over as a new estimator would: from the configured
		// period, else unknown, for a warm-up to measure from the
		// intervals (the least gap of the run is no guess: with a jitter
		// of a period it is a fraction of one, and a fit started on it
		// counts losses that are not there).
		changed, flooded, period = true, true, float64(e.cfg.Period)
		e.change.gapRun = 0
	}
	if !held && !ambiguous {
		e.change.lowest, e.change.highest = min(e.change.lowest, pre), max(e.change.highest, pre)
		// A run of records: each sample higher above the line than any
		// of the fit before it, or each a quarter period below it. Four
		// in a row do not happen by chance on a line that holds (with
		// independent delays, the n-th sample is a record with
		// probability 1/n); a ramp makes every sample one.
		switch {
		case pre > e.fit.height && pre > 0.02*e.fit.period && e.fit.heightN >= 8:
			e.change.records = max(e.change.records, 0) + 1
		case pre < -0.25*e.fit.period:
			e.change.records = min(e.change.records, 0) - 1
		default:
			e.change.records = 0
		}
		changed = e.change.records >= changeRecords || e.change.records <= -changeRecords
	}
	if need := max(32, int(e.window/e.fit.period/4)); !ambiguous && e.change.n >= need && e.fit.mature {
		e.change.n = 0
		h := e.fit.hulls.Answering()
		mx, my := h.Mean()
		theta := 0.5 * max(my-e.fit.line.At(mx), 0)
		if e.change.lowest > theta && e.change.lowest > 0.02*e.fit.period || e.change.highest < -theta && e.change.highest < -0.02*e.fit.period {
			changed = true
		}
	}
	if !changed {
		return false
	}
	e.st.PeriodChanges++
	// A change within a few windows of the previous one: the period is
	// moving (a ramp), and a fit of a window cannot follow it. The
	// estimates stay the receive stamps until a fit has held for a
	// window.
	e.change.unsettled = e.st.PeriodChanges > 1 && float64(t.Sub(e.change.last)) < unsettledWindows*e.window
	e.change.last = t
	e.loss.pending = false
	if flooded || e.ref.haveLat && period > e.ref.latPeriod*1.01 {
		// The latency was measured modulo a shorter period (a flood's:
		// references placed on its dense samples): it cannot tell which
		// of the longer period's samples a reference marks. Forgotten,
		// the next reference is placed as the first one was.
		e.ref.haveLat, e.ref.have = false, false
		e.ref.latency = float64(e.cfg.MinLatency)
	}
	e.fit.period, e.fit.smooth, e.fit.prior = period, period, period
	e.restart(t)
	if flooded {
		e.fit.priorN = 0
	}
	return true
}

// ambiguousGap is the interval, in periods, beyond which a sample of a
// stream whose jitter is ambiguous keeps its receive stamp: a jitter near
// a period makes intervals of up to about two.
const ambiguousGap = 3

// changeMultiples is how many samples in a row, each the same whole
// number (2 or more) of periods after the one before, make a change of
// rate (a camera from 30 to 15 fps).
const changeMultiples = 8

// gapsUncorrected is how many samples in a row, each 1.75 periods or more
// after the one before, leave the stamps uncorrected until the run ends:
// three in a row come by chance with a tenth of the samples lost about
// once in a thousand samples, and then cost those samples their
// correction, never more than their jitter.
const gapsUncorrected = 3

// changeGaps is how many samples in a row, each 1.75 periods or more
// after the one before (losses on every sample, of any number of
// periods), make a change: the period the fit holds is far too short, as
// after a flood. Real losses are not that steady: a stream that lost a
// sample between every two it delivered would come at a steady multiple.
const changeGaps = 32

// unsettledWindows: a change this many windows or fewer after the
// previous one leaves the estimator unsettled (Estimator.checkChange).
const unsettledWindows = 4

// changeRecords is how many records in a row (samples above every height
// the fit has shown, or a quarter period below the line) make a change.
const changeRecords = 4

// suspectPlaced reports whether a suspect (a sample at height above the
// line, late by a period or more) is placed by the fit at the index its
// guess gave: where the stream's suspects have been losses (pendSure), or
// where it is taken as late (no loss guessed) and the stream has shown
// delays of that size (its suspects have mostly turned out late, or its
// heights make such a delay at least as likely as a loss: delayOdds).
func (e *Estimator) suspectPlaced(height float64) bool {
	switch {
	case e.loss.pendSure:
		return true
	case e.loss.pendGuess != 0:
		return false
	case e.loss.lateOnly+e.loss.bursts > 2*e.loss.losses:
		return true
	}
	return e.delayOdds(height)
}

// onLine reports whether t is on or above the line's prediction for index
// k (late counts: the hull is not pulled by late points), with a fit mature
// enough to judge it.
func (e *Estimator) onLine(t stamp.Time, k int64) bool {
	return e.fit.haveLine && e.fit.period > 0 && e.fit.mature && !e.warmup.on && e.lateness(t, k) >= 0
}

// predict stamps a sample received at t, step indexes after the previous
// one, whose receive stamp is wrong (it went back, and is early against
// the line): the fit's estimate for its index, never before the previous
// estimate nor after the last receive stamp plus the periods since. The
// fit, the period and the time of the last receive stamp are left as they
// were.
func (e *Estimator) predict(t stamp.Time, step int64) stamp.Time {
	e.k += step
	if e.warmup.on {
		e.warmup.off = true // the warm-up's samples no longer have consecutive indexes
	}
	e.tickAnnounced()
	est := e.lastEst
	ahead := ns(float64(e.k-e.recvK) * e.fit.period)
	switch {
	case e.fit.haveLine && e.fit.period > 0:
		// No later than the periods since the last receive stamp allow
		// (as if this one were on time): a line that runs ahead of the
		// stamps (their estimates were held to them) does not carry it
		// away.
		lim := e.lastRecv.Add(ahead)
		if !e.ref.have {
			lim = lim.Add(-e.cfg.MinLatency)
		}
		est = min(e.estimateAt(float64(e.k-e.fit.baseK)), lim)
	case e.fit.period > 0:
		est = e.lastEst.Add(ahead)
	}
	est = max(est, e.lastEst)
	e.lastEst = est
	e.st.Samples++
	e.st.Stamp = est
	e.st.LastCorrection = t.Sub(est)
	return est
}

// tickAnnounced counts an update against the announced losses' deadline:
// those the stream has not shown within 10 updates are rejected.
func (e *Estimator) tickAnnounced() {
	if e.loss.annTTL > 0 {
		if e.loss.annTTL--; e.loss.annTTL == 0 {
			e.st.RejectedExpectedLosses += uint64(e.loss.announced)
			e.loss.announced = 0
			e.st.ExpectedLosses = 0
		}
	}
}

// indexPlausible reports whether an index step of d fits the time elapsed
// since the previous sample (a counter reset or corruption does not).
func (e *Estimator) indexPlausible(t stamp.Time, d uint64) bool {
	if d > e.idxMask/2 || d > maxStep {
		return false // went back, or absurdly far
	}
	if e.fit.period <= 0 || !e.fit.started {
		return true
	}
	elapsed := float64(t.Sub(e.lastRecv))
	// The step may be anything the elapsed time allows, with room for the
	// jitter of both samples and a window's worth of delay.
	return float64(d-1)*e.fit.period <= elapsed+e.window
}

// inferLoss returns the number of samples lost before the one received at
// t, from its lateness against the line, and whether to hold the sample
// out of the hulls as a suspect. It first settles the previous suspect.
func (e *Estimator) inferLoss(t stamp.Time) (lost int64, hold bool) {
	if !e.fit.haveLine || e.fit.period <= 0 {
		e.flushPending(0)
		return e.trustAnnounced(), false // no period to check them against
	}
	if e.loss.pending {
		e.settlePending(t)
	}
	if e.loss.announced > 0 && !e.fit.mature {
		// A young fit's period is too uncertain to check announced
		// losses against (two samples across a run of losses make one
		// long period): trust them.
		return e.trustAnnounced(), false
	}
	late := e.lateness(t, e.k+1)
	if late <= -1 && e.loss.inferred > 0 && e.fit.mature {
		// A period early: losses were counted that did not happen (a long
		// delay mistaken for one). The hulls hold points at wrong indexes:
		// start a new fit, keeping the period.
		e.st.LostSamplesTotal -= min(e.st.LostSamplesTotal, uint64(-late))
		e.loss.taint -= min(e.loss.taint, uint64(-late))
		e.st.Recounts++
		e.restart(t)
		return 0, false
	}
	if late < 1 && e.loss.announced > 0 {
		// Announced, and the line (young, or drifting) sees no gap: the
		// interval since the previous sample may still show it.
		if gap := float64(t.Sub(e.lastRecv)); gap >= 1.5*e.fit.period {
			late = int64(math.Round(gap/e.fit.period)) - 1
		}
	}
	switch {
	case late < 1:
		return 0, false
	case e.loss.announced > 0:
		n := min(late, e.loss.announced)
		e.loss.announced -= n
		e.st.ExpectedLosses = uint64(e.loss.announced)
		e.st.LostSamplesTotal += uint64(n)
		return n, false
	case e.cfg.NeverInferLoss || e.warmup.on || e.loss.ambiguous:
		// Without a known period, a young fit's slope is too uncertain
		// to tell a loss from jitter: inferring one would lock the
		// estimator on a fraction of the true period (3 samples taken
		// for 2, with a loss counted every other sample). Wait for a few
		// samples.
		return 0, false
	}
	return e.suspect(late), true
}

// trustAnnounced takes every announced loss as a loss and returns their
// number.
func (e *Estimator) trustAnnounced() int64 {
	n := e.loss.announced
	e.loss.announced, e.st.ExpectedLosses = 0, 0
	e.st.LostSamplesTotal += uint64(n)
	return n
}

// settlePending decides, from the sample received at t, whether the held
// suspect followed losses or was late, and pushes it into the fit.
func (e *Estimator) settlePending(t stamp.Time) {
	l := &e.loss
	late := e.lateness(t, e.k+1)
	switch {
	case l.ambiguous:
		// Raised since: a late sample cannot be told from a lost one.
		l.lateOnly++
		e.flushPending(0)
	case float64(t.Sub(l.pendT)) < 0.5*e.fit.period:
		// Close behind the suspect: they came in a burst, so the
		// suspect was late, not the first after a loss.
		l.bursts++
		e.flushPending(0)
	case l.pendGuess > 0 && late >= 0, l.pendGuess == 0 && late >= l.pendLost:
		// As late as the suspect (or on time after a guessed loss): a
		// loss shifts every later sample alike.
		e.flushPending(l.pendLost)
	default:
		// Less late than the suspect: a queue draining after a delay.
		l.lateOnly++
		e.flushPending(0)
	}
}

// suspect holds a sample late by late periods as a suspect and returns the
// losses guessed at once: all of them where the stream's suspects have
// mostly been losses rather than bursts, late samples or mistakes; all
// but one where the stream has never delayed a sample by a period; else
// none, until the next sample decides.
func (e *Estimator) suspect(late int64) (guess int64) {
	l := &e.loss
	if e.cfg.LossThreshold <= 1 || (l.losses >= 2 && l.losses > 2*(l.bursts+l.lateOnly+e.st.Recounts)) {
		guess = late
	} else if l.bursts+l.lateOnly+e.st.Recounts == 0 && late > 1 && float64(late)*e.fit.period <= e.window/4 {
		// The stream has never delayed a sample by a period or more:
		// only one period of this can be delay, the rest must be loss.
		// A run of m lost samples then costs at most one period on the
		// next sample, not m. Not once the stream has shown delays (a
		// wrong guess costs its size on every sample queued behind the
		// suspect, as estimates never go back), nor for silences over a
		// quarter window.
		guess = late - 1
	}
	l.pending, l.pendFrom, l.pendLost, l.pendGuess = true, e.k, late, guess
	l.pendSure = guess > 0 && guess == late
	if guess > 0 {
		l.inferred++
		l.losses++
		e.st.LostSamplesTotal += uint64(guess)
		l.taint += uint64(guess)
	}
	return guess
}

// lateness returns how many whole periods after the line's prediction for
// index k the time t is, counting 0.9 period as one; negative if early.
func (e *Estimator) lateness(t stamp.Time, k int64) int64 {
	d := float64(t.Sub(e.fit.baseT)) - e.fit.line.At(float64(k-e.fit.baseK))
	if d >= -0.1*e.fit.period && d < 0.9*e.fit.period {
		return 0 // on time: the common case, without a division
	}
	// Bounded, so the indexes cannot overflow: no sample is 2^40 periods
	// late within a window (of at most MaxWindowSamples samples).
	return int64(math.Max(-maxStep, math.Min(maxStep, math.Floor(d/e.fit.period+0.1))))
}

// flushPending settles the held suspect as following lost losses (it was
// stamped assuming pendGuess) and pushes it into the hulls at its index.
func (e *Estimator) flushPending(lost int64) {
	if !e.loss.pending {
		return
	}
	e.loss.pending = false
	if lost != e.loss.pendGuess {
		e.k += lost - e.loss.pendGuess
		if lost > 0 && e.loss.pendGuess == 0 {
			e.loss.losses++
			e.loss.inferred++
		}
		if lost == 0 && e.loss.pendGuess > 0 {
			e.loss.losses--
			e.loss.inferred--
		}
		e.st.LostSamplesTotal = uint64(int64(e.st.LostSamplesTotal) + lost - e.loss.pendGuess)
		e.loss.taint = uint64(max(0, int64(e.loss.taint)+lost-e.loss.pendGuess))
	}
	k := e.loss.pendFrom + 1 + lost
	e.fit.hulls.Push(float64(k-e.fit.baseK), float64(e.loss.pendT.Sub(e.fit.baseT)))
	e.fit.long.Push(float64(k-e.fit.baseK), float64(e.loss.pendT.Sub(e.fit.baseT)))
}

// settleWarmup ends the warm-up: the samples' intervals, against their
// mean (the period, once the losses are taken out), show the losses no
// line could yet (an interval of 1.5 periods or more, not made up by the
// next one); the fit keeps those that bring the samples closer to their
// envelope, and if there are any, the hulls are rebuilt with the samples at
// their indexes.
func (e *Estimator) settleWarmup() {
	w := &e.warmup
	w.on = false
	for i := range w.x {
		w.x[i] = int64(i)
	}
	if e.fit.baseT != w.t[0] || e.cfg.NeverInferLoss || w.off {
		return // the hulls switched during the warm-up: a very short window
	}
	lost, extra := w.intervalLosses()
	if extra == 0 {
		return
	}
	if lost, extra = w.keepLosses(e.fit.baseT, lost, extra); extra == 0 {
		return
	}
	e.refitWarmup(lost, extra)
}

// intervalLosses returns the losses the warm-up's intervals show before
// each sample (lost[i] before sample i+1), and their sum; none where the
// intervals are not clear enough (bursts, or a jitter near the period).
func (w *warmupState) intervalLosses() (lost [warmup - 1]int64, extra int64) {
	n := w.n // the warm-up's samples, the newest (this update's) last
	if n < 4 {
		return lost, 0
	}
	var da [warmup - 1]int64
	d := da[:n-1]
	for i := range d {
		d[i] = int64(w.t[i+1].Sub(w.t[i]))
	}
	// The period: the mean interval, then the mean with the losses found
	// (bounded jitter cannot move it, unlike a median of intervals that
	// alternate long and short).
	span := float64(w.t[n-1].Sub(w.t[0]))
	m := span / float64(len(d))
	if m <= 0 {
		return lost, 0
	}
	for range 4 {
		extra = 0
		for i, v := range d {
			lost[i] = 0
			if v <= 0 || float64(v) < 0.4*m {
				return lost, 0 // bursts (or a jitter near the period): not clear enough
			}
			// lost[i] samples were lost before sample i+1. A long interval
			// followed by a short one is a delayed sample, not a loss: the
			// pair must show the loss too. The newest sample, whose
			// interval has no successor yet, is left to the live inference.
			if i == len(d)-1 || float64(v) < 1.5*m {
				continue
			}
			// What a delay would owe: only a short next interval shows
			// one (a loss-inflated m must not turn a normal next interval
			// into a deficit that hides the loss).
			deficit := 0.0
			if float64(d[i+1]) < 0.6*m {
				deficit = m - float64(d[i+1])
			}
			n := max(0, int64(math.Round((float64(v)-deficit)/m))-1)
			lost[i] = n
			extra += n
		}
		m = span / float64(int64(len(d))+extra)
	}
	return lost, extra
}

// keepLosses judges the losses the intervals show (lost, extra in all)
// by the fit itself, and returns those kept and their sum. The intervals
// only hint at the losses: with a jitter over half a period a no-loss
// interval can pass for a loss (P + J ≥ 1.5 P) and one loss every few
// samples fits a shorter period. The right indexes put the samples
// closest above their lower envelope (the least mean height, the
// criterion the line is fitted by), so each loss is kept only if taking
// it out leaves the samples higher above their envelope. base is the
// fit's y origin.
func (w *warmupState) keepLosses(base stamp.Time, lost [warmup - 1]int64, extra int64) ([warmup - 1]int64, int64) {
	var xs, ys [warmup]float64
	for i := range w.n {
		ys[i] = float64(w.t[i].Sub(base))
	}
	place := func() (float64, float64, float64) {
		x := 0.0
		for i := range w.n - 1 {
			if i > 0 {
				x += float64(1 + lost[i-1])
			}
			xs[i] = x
		}
		return envelopeHeight(xs[:w.n-1], ys[:w.n-1])
	}
	h, top, slope := place()
	all := lost
	lost = [warmup - 1]int64{}
	if h0, _, _ := place(); h0 <= h || top >= 0.5*slope {
		// None of them: the samples sit closer without, or even with them
		// they lie above the envelope by half a period (the intervals
		// cannot tell a loss from a delay then).
		return lost, 0
	}
	lost = all
	for i := range lost {
		if lost[i] == 0 {
			continue
		}
		n := lost[i]
		lost[i] = 0
		if h0, _, _ := place(); h0 <= h {
			h, extra = h0, extra-n
		} else {
			lost[i] = n
		}
	}
	return lost, extra
}

// refitWarmup rebuilds the fit with the warm-up's samples (all but the
// newest) at their indexes after the losses (lost[i] before sample i+1,
// extra in all), counts them, and refits the line the newest sample is
// judged against.
func (e *Estimator) refitWarmup(lost [warmup - 1]int64, extra int64) {
	f, w := &e.fit, &e.warmup
	f.hulls.Clear()
	f.long.Clear()
	e.ref.hulls.Clear() // their indexes moved too
	e.ref.anchorOK = false
	x := int64(0)
	for i := range w.n - 1 {
		if i > 0 {
			x += 1 + lost[i-1]
		}
		f.hulls.Push(float64(x), float64(w.t[i].Sub(f.baseT)))
		f.long.Push(float64(x), float64(w.t[i].Sub(f.baseT)))
		w.x[i] = x
	}
	f.longSlope = 0
	e.k = f.baseK + x
	e.st.LostSamplesTotal += uint64(extra)
	// The stream has shown that it loses samples: its next suspects are
	// not taken for delays without a second look (suspectPlaced).
	for _, n := range lost {
		if n > 0 {
			e.loss.losses++
		}
	}
	e.loss.taint += uint64(extra)
	f.smooth, f.fits = 0, 0
	e.fitLine(w.t[w.n-2]) // the line the newest sample is judged against
}

// seedHeights gives a fit that ends its warm-up the heights of the
// warm-up's samples above its line, at the indexes settleWarmup placed
// them at: the heights its next samples are judged against.
func (e *Estimator) seedHeights() {
	if !e.fit.haveLine || e.fit.baseT != e.warmup.t[0] || e.warmup.off {
		return
	}
	for i := range e.warmup.n - 1 {
		e.noteHeight(float64(e.warmup.t[i].Sub(e.fit.baseT)) - e.fit.line.At(float64(e.warmup.x[i])))
	}
}

// noteHeight counts a sample's height above the line into the heights the
// fit has shown (fit.height), unless it is a period or more (a sample after
// a loss the line does not know of yet, or a delay the next samples are to
// judge: no evidence of the jitter).
func (e *Estimator) noteHeight(h float64) {
	if e.fit.period > 0 && h >= 0.9*e.fit.period {
		return
	}
	e.fit.height = max(e.fit.height, h)
	e.fit.heightN++
}

// delayOdds compares, for a suspect at height h above the line, the odds
// that it is a delay of h with the odds that a sample was lost and it came
// with a jitter of h − P. A delay of h needs a stream whose heights have
// reached h/2 (fit.height), and is judged by an exponential tail of the
// mean height m of the fit's samples: e^(−h/m) against e^(−(h−P)/m) for
// the loss's jitter, so the odds are e^(−P/m) against the loss rate the
// stream has shown, (losses + 0.02) / (samples + 1) (a stream that has
// lost none of n samples is taken to lose about one in 50·n). It reports
// whether a delay is at least as likely.
func (e *Estimator) delayOdds(h float64) bool {
	if e.fit.period <= 0 || e.fit.height < h/2 {
		return false
	}
	a := e.fit.hulls.Answering()
	mx, my := a.Mean()
	m := my - e.fit.line.At(mx)
	if m <= 0 {
		return false
	}
	loss := (float64(e.loss.losses) + 0.02) / (float64(e.st.Samples) + 1)
	return math.Exp(-e.fit.period/m) >= loss
}

// switchHulls lets the younger hull answer and re-bases the coordinates on
// its first point, so they stay small.
func (e *Estimator) switchHulls(t stamp.Time) {
	young := e.fit.hulls.Young()
	x0, y0 := young.First()
	dk := int64(math.Round(x0))
	dy := ns(y0)
	e.fit.hulls.Switch()
	e.warmup.on = false
	e.fit.hulls.Answering().Shift(float64(dk), float64(dy))
	e.ref.hulls.Switch()
	e.ref.hulls.Answering().Shift(float64(dk), float64(dy))
	e.fit.long.Shift(float64(dk), float64(dy))
	e.fit.baseK += dk
	e.fit.baseT = e.fit.baseT.Add(dy)
	e.fit.youngFrom = t
	e.ref.anchorOK = false
	if e.fit.haveLine {
		e.fit.line.X0 -= float64(dk)
		e.fit.line.Y0 -= float64(dy)
	}
}

// fit refreshes the line and, once the hull has two vertices, the period.
func (e *Estimator) fitLine(t stamp.Time) {
	h := e.fit.hulls.Answering()
	if h.Count() == 0 {
		return
	}
	lo, hi := math.SmallestNonzeroFloat64, math.Inf(1) // a slope at lo: stamps that do not advance
	short := h.Count() < 8 || float64(t.Sub(e.fit.baseT)) < e.window/4
	e.fit.mature = !short
	switch {
	case short && e.fit.prior > 0:
		lo, hi = e.fit.prior, e.fit.prior // too short to fit a period: use the prior
	case h.Vertices() < 2 && e.fit.period > 0:
		lo, hi = e.fit.period, e.fit.period
	case h.Vertices() < 2:
		x0, y0 := h.First()
		e.fit.line, e.fit.haveLine = hull.Line{X0: x0, Y0: y0}, true // the first sample: no period yet
		return
	}
	if lo != hi && e.fit.smooth > 0 && !short && h.Vertices() >= 2 {
		// Smooth the fitted slope over about a window of updates: the edge
		// slopes of successive fits are noisy, the period is not. With a
		// window of many samples, sampling the edge every fitEvery updates
		// loses nothing and saves most of the fitting.
		if e.fit.fits++; e.fit.fits%fitEvery == 0 {
			l, _ := h.Fit(lo, hi)
			if l.M >= minPeriod {
				// Follow a drift over about a window, but while the fit is
				// young weigh each slope by its span squared (slopes of
				// longer spans are that much more precise): a gain of
				// about 3/fits.
				a := min(1, max(fitEvery*e.fit.smooth/e.window, 3/float64(e.fit.fits/fitEvery)))
				e.fit.smooth += a * (l.M - e.fit.smooth)
			}
			e.fit.longSlope = 0
			if lh := e.fit.long.Answering(); lh.Vertices() >= 2 && lh.Span() > h.Span() {
				if ll, _ := lh.Fit(lo, hi); ll.M >= minPeriod {
					e.fit.longSlope = ll.M
				}
			}
		}
		// The slope: the long hull's where it spans more than the
		// window's (see longWindows), else the window's smoothed one.
		m := e.fit.smooth
		switch {
		case e.fit.longSlope > 0:
			m = e.fit.longSlope
		case e.fit.priorN > 0:
			// A period measured before a restart weighs against the new
			// fit's by their precision, as the cube of the samples each
			// was fitted over (n points over a span of n: (n·n)² / n).
			n := float64(h.Count()) / fitEvery
			w := n * n * n / (n*n*n + e.fit.priorN*e.fit.priorN*e.fit.priorN)
			m = e.fit.prior + w*(e.fit.smooth-e.fit.prior)
		}
		e.fit.line, e.fit.haveLine = h.Support(m), true
		e.fit.period = m
		return
	}
	l, _ := h.Fit(lo, hi)
	if h.Vertices() >= 2 && l.M >= minPeriod && lo != hi {
		e.fit.smooth = l.M
	}
	e.fit.line, e.fit.haveLine = l, true
	if h.Vertices() >= 2 && l.M >= minPeriod {
		e.fit.period = l.M
	}
}

// A sample lying at least ambiguousHeight periods above the line is high.
// Where half the samples are high (a uniform jitter of 0.9 period, at
// which a sample late by 0.9 period, a suspect, may be late or follow a
// loss) a late sample cannot be told from a lost one: the fraction of high
// samples, a median unmoved by bursts and rare long delays, raises the
// ambiguity at ambiguousFrac and clears it under clearFrac (a jitter of
// 0.85 period). highGain is the least gain of the fraction's average.
const (
	ambiguousHeight = 0.45
	ambiguousFrac   = 0.5
	clearFrac       = 0.47
	highGain        = 1.0 / 1024
)

// judgeJitter counts a sample height above the line into the fraction of
// high samples and raises or clears the ambiguity (Status.Ambiguous), when
// no Period is configured and losses may be inferred from timing. It is
// raised from the warm-up's samples on (a young fit is where a wrong
// period sets in), once its losses are settled, and cleared only by a
// mature fit.
func (e *Estimator) judgeJitter(height float64) {
	if e.cfg.Period > 0 || e.cfg.NeverInferLoss || e.fit.period <= 0 || e.warmup.on {
		// (During the warm-up the line does not know the losses yet.)
		return
	}
	high := 0.0
	if height >= ambiguousHeight*e.fit.period {
		high = 1
	}
	e.loss.highN++
	g := highGain // (a division a sample saved once the gain is the least)
	if e.loss.highN < 1/highGain {
		g = 1 / float64(e.loss.highN)
	}
	e.loss.highFrac += g * (high - e.loss.highFrac)
	switch {
	case e.loss.highN < warmup:
	case !e.loss.ambiguous && e.loss.highFrac >= ambiguousFrac:
		e.loss.ambiguous = true
		e.st.Ambiguities++
		// The losses inferred from timing until now are not to be
		// trusted, nor the period they gave: the next update fits again
		// without them.
		e.loss.refit = e.loss.taint > 0
	case e.loss.ambiguous && e.fit.mature && e.loss.highFrac < clearFrac:
		e.loss.ambiguous = false
	}
}

// UpdateReference takes a hardware reference stamp: the true acquisition
// time of a sample (e.g. a sync pulse), observed late by a jitter that is
// never negative. It is used from the first reference on, as soon as the
// estimator has a period.
//
// Which sample a reference belongs to is known only modulo one period: it
// is the one whose line value minus the latency is nearest (the first
// time, the earliest one at least MinLatency after it). A young fit's line
// is too uncertain to tell (it may lie periods above the samples' lower
// envelope), so until the fit covers a quarter window the references are
// kept, the newest giving the latency, and placed once it does. The
// estimates are then the line under the references of the current fit
// (late references cannot pull it), at a slope that weighs theirs against
// the samples' by precision. Every restart forgets them (the indexes may
// not follow on), keeping the last latency until the next ones are placed;
// a latency that changes is followed as references leave the fit (one to
// two windows).
//
// A reference that belongs to a sample before the current fit, more than a
// window's worth of samples after the last one, or before the previous
// reference's, is rejected with ErrReference and counted.
func (e *Estimator) UpdateReference(ref stamp.Time) error {
	e.st.References++
	e.st.ReferenceTimeRaw = ref
	if !e.placing() {
		if e.ref.pendingN == len(e.ref.pending) {
			copy(e.ref.pending[:], e.ref.pending[1:]) // the newest are kept
			e.ref.pendingN--
		}
		e.ref.pending[e.ref.pendingN] = ref
		e.ref.pendingN++
		if e.fit.haveLine && e.fit.period > 0 {
			// Meanwhile the young line gives the latency.
			_, lat := e.place(ref)
			e.st.LatencyRaw = ns(lat)
			e.ref.latency, e.ref.have = lat, true
		}
		return nil
	}
	return e.addReference(ref)
}

// placing reports whether the fit is mature enough to place references.
func (e *Estimator) placing() bool {
	return e.fit.haveLine && e.fit.period > 0 && e.fit.mature && !e.warmup.on
}

// place returns the index (relative to the base) of the sample ref belongs
// to, and the latency of the line there.
func (e *Estimator) place(ref stamp.Time) (x, lat float64) {
	m := e.fit.line.M
	if m < minPeriod {
		m = e.fit.period
	}
	yref := float64(ref.Sub(e.fit.baseT))
	if e.ref.haveLat {
		x = math.Round(e.fit.line.X0 + (yref+e.ref.lat-e.fit.line.Y0)/m)
	} else {
		x = math.Ceil(e.fit.line.X0 + (yref+float64(e.cfg.MinLatency)-e.fit.line.Y0)/m - 1e-9)
	}
	return x, e.fit.line.At(x) - yref
}

// addReference places ref with a mature fit and adds it to the fit's
// references.
func (e *Estimator) addReference(ref stamp.Time) error {
	xr, lat := e.place(ref)
	cur := float64(e.k - e.fit.baseK)
	rh := e.ref.hulls.Answering()
	switch {
	case !(xr >= 0 && xr-cur <= e.window/e.fit.period+1):
		e.st.RejectedReferences++
		return fmt.Errorf("%w: %v belongs to no sample of the current fit (from %v, up to a window after %v)", ErrReference, ref, e.fit.baseT, e.lastRecv)
	case rh.Count() > 0 && xr < rh.Last():
		e.st.RejectedReferences++
		return fmt.Errorf("%w: %v belongs to a sample before the previous reference's", ErrReference, ref)
	}
	e.st.LatencyRaw = ns(lat)
	e.ref.hulls.Push(xr, float64(ref.Sub(e.fit.baseT)))
	e.ref.anchorOK = false
	e.ref.have = true
	e.refLatency(cur)
	return nil
}

// placePending places the references kept while the fit was young.
func (e *Estimator) placePending() {
	for _, r := range e.ref.pending[:e.ref.pendingN] {
		_ = e.addReference(r) // a rejection is counted
	}
	e.ref.pendingN = 0
}

// refLatency sets the latency at index x from the fit's references, if
// it has any; a mature fit's is kept to place the next references.
func (e *Estimator) refLatency(x float64) {
	if r, ok := e.refLine(x); ok {
		e.ref.latency = e.fit.line.At(x) - r
		e.ref.lat, e.ref.haveLat, e.ref.latPeriod = e.ref.latency, true, e.fit.period
	}
}

// estimateAt returns the estimate for index x (relative to the base): the
// line minus the latency.
func (e *Estimator) estimateAt(x float64) stamp.Time {
	e.refLatency(x)
	est := e.fit.baseT.Add(ns(e.fit.line.At(x) - e.ref.latency))
	return est
}

// refLine returns, at index x, the line under the current fit's
// references; false if there are none. Its slope weighs the references'
// own fitted slope against the samples' by their precision: a lower
// envelope of n points spread over a span S with jitter J above it has a
// slope error of about J/(n·S), so dense references (whose jitter is
// small) give the slope, and sparse ones only the offset.
func (e *Estimator) refLine(x float64) (float64, bool) {
	rh := e.ref.hulls.Answering()
	if rh.Count() == 0 {
		return 0, false
	}
	m := e.fit.line.M
	if !e.ref.anchorOK || m != e.ref.anchorM {
		mr := m
		if rh.Vertices() >= 2 {
			lf, _ := rh.Fit(minPeriod, math.Inf(1))
			wf := precision(rh, lf)
			wr := precision(e.fit.hulls.Answering(), e.fit.line)
			if wf+wr > 0 && !math.IsInf(wf+wr, 0) {
				mr = (wf*lf.M + wr*m) / (wf + wr)
			} else if math.IsInf(wf, 1) {
				mr = lf.M
			}
		}
		l := rh.Support(mr)
		e.ref.anchor, e.ref.anchorSlope, e.ref.anchorM, e.ref.anchorOK = l.At(0), mr, m, true
	}
	return e.ref.anchor + e.ref.anchorSlope*x, true
}

// precision returns the weight of line l's slope as fitted under the points
// of h: (n·S/J)², with J the points' mean height above l (at least 1 ns).
func precision(h *hull.Lower, l hull.Line) float64 {
	n := float64(h.Count())
	if n <= 2 {
		return 0
	}
	mx, my := h.Mean()
	j := max((my-l.At(mx))*n/(n-2), 1)
	v := (n - 2) * h.Span() / j
	return v * v
}

// envelopeHeight returns the mean height of the points (x increasing)
// above their lower envelope (the least mean height above a line under
// all of them: the line through the lower hull's edge over the mean x),
// their greatest height above it, and its slope.
func envelopeHeight(xs, ys []float64) (mean, top, slope float64) {
	n := len(xs)
	if n < 3 {
		return 0, 0, 0
	}
	var st [warmup]int
	m := 0
	mx, my := 0.0, 0.0
	for i := range n {
		mx += xs[i]
		my += ys[i]
		for m >= 2 {
			a, b := st[m-2], st[m-1]
			// Pop b if it lies on or above the segment from a to i.
			if (ys[b]-ys[a])*(xs[i]-xs[a]) >= (ys[i]-ys[a])*(xs[b]-xs[a]) {
				m--
				continue
			}
			break
		}
		st[m] = i
		m++
	}
	mx /= float64(n)
	my /= float64(n)
	for j := 0; j+1 < m; j++ {
		a, b := st[j], st[j+1]
		if xs[b] >= mx || j+2 == m {
			slope = (ys[b] - ys[a]) / (xs[b] - xs[a])
			for i := range n {
				top = max(top, ys[i]-(ys[a]+slope*(xs[i]-xs[a])))
			}
			return my - (ys[a] + slope*(mx-xs[a])), top, slope
		}
	}
	return 0, 0, 0
}
