package soak

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"time"

	"gonum.org/v1/gonum/stat"
)

// Exit is how a process ended after a signal.
type Exit struct {
	// Seen: the process ended within the time the soak watched it.
	Seen bool
	// After is the time from the signal to its end.
	After time.Duration
	// Code is its exit status (negative: killed by that signal), if
	// CodeKnown.
	Code      int
	CodeKnown bool
}

// Clean tells whether the process exited with status 0 within bound.
func (e Exit) Clean(bound time.Duration) bool {
	return e.Seen && e.After <= bound && e.CodeKnown && e.Code == 0
}

func (e Exit) String() string {
	switch {
	case !e.Seen:
		return "no exit seen"
	case !e.CodeKnown:
		return fmt.Sprintf("exit (status unknown) after %v", e.After.Round(time.Millisecond))
	}
	return fmt.Sprintf("exit %d after %v", e.Code, e.After.Round(time.Millisecond))
}

// Injected is a fault as the soak injected it.
type Injected struct {
	Fault
	// Start and End are when it began and ended, from the soak's start.
	Start, End time.Duration
	// Skipped says why it was not injected ("" when it was).
	Skipped string
	// PID is the process a PublisherKill or NodeTerm signalled, of node
	// Fault.Node.
	PID int
	// Exit is how a NodeTerm's process ended.
	Exit Exit
	// Sent is the number of messages a flood published.
	Sent uint64
	// Note is what else the soak says of it.
	Note string
}

// Level is a per-second figure of the pipeline that a fault may disturb
// and that is back after the fault when it is near its level before it.
type Level struct {
	// Name names it in the summary.
	Name string
	// Node is the node whose samples hold it.
	Node string
	// Value reads it from a sample (NaN: none that second).
	Value func(Sample) float64
	// Higher: a rate, whose level is its median over the Before window
	// and which is back at RateShare of its level or above; otherwise an
	// error, whose level is its worst second in the Before window (its
	// usual range: a fit's error wanders), or its steady level if that is
	// higher (its median over the soak's seconds outside every fault and
	// its recovery bound: a quiet Before window is not its level), and
	// which is back at ErrorFactor × its level + ErrorSlack or below.
	Higher bool
}

// Bounds are what a soak must meet.
type Bounds struct {
	// RSSChange bounds each node's |RSS change| from after warm-up to the
	// end, in % (of its longest-running process).
	RSSChange float64
	// RSSSlope bounds |RSS slope| after warm-up, in MB/hour, for fits
	// that span SlopeSpan or more (shorter ones are reported, not held to
	// it: the heap's saw-tooth dominates a fit of a few minutes).
	RSSSlope  float64
	SlopeSpan time.Duration
	// PeakRSS bounds each process's peak RSS (VmHWM), in MB.
	PeakRSS float64
	// Drops bounds each node's drops outside every fault's window.
	Drops uint64
	// Recovery bounds the time from a fault's end until the pipeline is
	// back at its levels (and a restarted node publishes its status).
	Recovery time.Duration
	// Exit bounds the time from SIGTERM to a clean exit.
	Exit time.Duration
}

// SummaryConfig says how samples become a summary.
type SummaryConfig struct {
	// WarmUp is the start of the soak (and of each new process) before
	// which no drop counts and no RSS is held to a bound.
	WarmUp time.Duration
	// Levels are what must come back after each fault.
	Levels []Level
	// Before is the time before a fault that gives the levels to come
	// back to. It defaults to 10 s.
	Before time.Duration
	// Hold is how long a level must stay back to count as back. It
	// defaults to 3 s.
	Hold time.Duration
	// RateShare, ErrorFactor and ErrorSlack (µs) say when a level is back
	// (Level.Higher). They default to 0.8, 2 and 200 µs.
	RateShare, ErrorFactor, ErrorSlack float64
	// DropMargin extends a fault's window (for drops) after its
	// recovery, or after the recovery bound if that is later (the
	// counters come with the nodes' status, once a second). It defaults
	// to 3 s.
	DropMargin time.Duration
	Bounds     Bounds
}

func (c *SummaryConfig) defaults() {
	c.Before = cmp.Or(c.Before, 10*time.Second)
	c.Hold = cmp.Or(c.Hold, 3*time.Second)
	c.RateShare = cmp.Or(c.RateShare, 0.8)
	c.ErrorFactor = cmp.Or(c.ErrorFactor, 2)
	c.ErrorSlack = cmp.Or(c.ErrorSlack, 200)
	c.DropMargin = cmp.Or(c.DropMargin, 3*time.Second)
}

// LevelRecovery is one level's return after a fault.
type LevelRecovery struct {
	Name string
	// Before is its level before the fault (NaN: none, not waited for),
	// Steady an error's steady level (NaN: none), Limit the value it had
	// to come back to, Worst its worst second from the fault's start until
	// it was back (or the deadline).
	Before, Steady, Limit, Worst float64
	// Back: it came back, After the fault's end.
	Back  bool
	After time.Duration
	// Restart: the level is a node's restart (its first status from a
	// new process), not a figure.
	Restart bool
}

// Recovery is the pipeline's return after a fault.
type Recovery struct {
	Injected
	// Levels are each level's return, and for a killed or stopped node
	// its restart ("restart": its first status from a new process).
	Levels []LevelRecovery
	// Recovered: every level came back before the next fault (or the
	// end), After the fault's end (the slowest level).
	Recovered bool
	After     time.Duration
}

// NodeSummary sums up one node.
type NodeSummary struct {
	Node string
	// Processes is the number of processes seen, Restarts those that no
	// fault explains.
	Processes, Restarts int
	// RSSWarm and RSSEnd are the RSS (MB) of its longest-running process
	// at rest after warm-up and at its end (medians of its first and last
	// tenth of samples outside the faults' windows, 5 to 30 each; of all
	// its samples if fewer than 10 are outside); Change the change between
	// them in %. A process is warm once it has been through one fault of
	// each kind the soak injected (WarmAt, since the soak's start): a Go
	// process's heap, and so its RSS, grows once to the working set of
	// its first flood and holds it (docs/nodes.md#memory), and what the
	// bound is for is growth after that. Where it never met every kind,
	// the reference is its first samples after the warm-up time.
	RSSWarm, RSSEnd, Change float64
	WarmAt                  time.Duration
	// RSSStart is the RSS (MB) of that process at rest after the warm-up
	// time, before its first fault, and ChangeFromStart the change from it
	// to RSSEnd in % (shown, not bounded).
	RSSStart, ChangeFromStart float64
	// Slope is the least-squares slope of that process's RSS after
	// warm-up in MB/hour, over Span.
	Slope float64
	Span  time.Duration
	// PeakRSS is the largest peak RSS of its processes (MB).
	PeakRSS float64
	// CPUMean and CPUMax are its CPU in % of a core.
	CPUMean, CPUMax float64
	// Drops counts its drops after warm-up; Unexplained those outside
	// every fault's window, first at FirstUnexplained.
	Drops, Unexplained uint64
	FirstUnexplained   time.Duration
}

// Summary is the outcome of a soak.
type Summary struct {
	Duration time.Duration
	Nodes    []NodeSummary
	Faults   []Recovery
	// Violations lists every bound broken.
	Violations []string
}

// Summarize sums up a soak of the given duration from its samples and
// its faults as injected, and holds it to c.Bounds.
func Summarize(samples []Sample, faults []Injected, duration time.Duration, c SummaryConfig) Summary {
	c.defaults()
	s := Summary{Duration: duration}
	bySec := map[string]map[int]Sample{} // node → second → sample
	var nodes []string
	for _, x := range samples {
		if bySec[x.Node] == nil {
			bySec[x.Node] = map[int]Sample{}
			nodes = append(nodes, x.Node)
		}
		bySec[x.Node][sec(x.T)] = x
	}
	var done []Injected
	for _, f := range faults {
		if f.Skipped == "" {
			done = append(done, f)
		}
	}
	steady := steadyLevels(bySec, done, c)
	var windows [][2]time.Duration // fault windows for drops
	for i, f := range done {
		deadline := duration
		if i+1 < len(done) {
			deadline = done[i+1].Start
		}
		r := recovery(f, deadline, bySec, steady, c)
		s.Faults = append(s.Faults, r)
		end := deadline
		if r.Recovered {
			end = f.End + max(r.After, c.Bounds.Recovery)
		}
		windows = append(windows, [2]time.Duration{f.Start - time.Second, end + c.DropMargin})
		switch {
		case !r.Recovered:
			s.Violations = append(s.Violations, fmt.Sprintf("%v: not recovered before %v", f.Fault, deadline))
		case r.After > c.Bounds.Recovery:
			s.Violations = append(s.Violations, fmt.Sprintf("%v: recovered after %v (bound %v)", f.Fault, r.After, c.Bounds.Recovery))
		}
		if f.Kind == NodeTerm && !f.Exit.Clean(c.Bounds.Exit) {
			s.Violations = append(s.Violations, fmt.Sprintf("%v: %v, want exit 0 within %v", f.Fault, f.Exit, c.Bounds.Exit))
		}
	}
	for _, node := range nodes {
		var xs []Sample
		for _, x := range samples {
			if x.Node == node {
				xs = append(xs, x)
			}
		}
		n := summarizeNode(node, xs, done, windows, c.WarmUp)
		s.Nodes = append(s.Nodes, n)
		s.Violations = append(s.Violations, n.violations(c.Bounds)...)
	}
	return s
}

// sec is the second a time falls in, rounded.
func sec(t time.Duration) int { return int((t + time.Second/2) / time.Second) }

// steadyLevels returns the steady level of each error level of c (by
// index; NaN for rates and for none): its median over the seconds after
// warm-up outside every fault, from a second before its start to the
// recovery bound after its end.
func steadyLevels(bySec map[string]map[int]Sample, faults []Injected, c SummaryConfig) []float64 {
	out := make([]float64, len(c.Levels))
	for i, l := range c.Levels {
		out[i] = math.NaN()
		if l.Higher {
			continue
		}
		var v []float64
	next:
		for t, x := range bySec[l.Node] {
			if time.Duration(t)*time.Second < c.WarmUp || math.IsNaN(l.Value(x)) {
				continue
			}
			for _, f := range faults {
				if t >= sec(f.Start-time.Second) && t <= sec(f.End+c.Bounds.Recovery) {
					continue next
				}
			}
			v = append(v, l.Value(x))
		}
		if len(v) > 0 {
			slices.Sort(v)
			out[i] = stat.Quantile(0.5, stat.Empirical, v, nil)
		}
	}
	return out
}

// recovery measures the return of every level after fault f, up to
// deadline; steady holds the steady levels (steadyLevels).
func recovery(f Injected, deadline time.Duration, bySec map[string]map[int]Sample, steady []float64, c SummaryConfig) Recovery {
	r := Recovery{Injected: f, Recovered: true}
	first, last := sec(f.End+time.Second/2), sec(deadline)-1 // whole seconds after the end
	hold := max(1, int(c.Hold/time.Second))
	for li, l := range c.Levels {
		series := bySec[l.Node]
		var before []float64
		for t := sec(f.Start - c.Before); t < sec(f.Start); t++ {
			if x, ok := series[t]; ok && !math.IsNaN(l.Value(x)) {
				before = append(before, l.Value(x))
			}
		}
		lr := LevelRecovery{Name: l.Name, Before: math.NaN(), Steady: steady[li], Limit: math.NaN(), Worst: math.NaN()}
		if len(before) == 0 {
			lr.Back = true // no level to come back to
			r.Levels = append(r.Levels, lr)
			continue
		}
		slices.Sort(before)
		if l.Higher {
			lr.Before = stat.Quantile(0.5, stat.Empirical, before, nil)
			lr.Limit = c.RateShare * lr.Before
		} else {
			lr.Before = before[len(before)-1]
			level := lr.Before
			if lr.Steady > level { // false for NaN
				level = lr.Steady
			}
			lr.Limit = c.ErrorFactor*level + c.ErrorSlack
		}
		ok := func(t int) bool {
			x, found := series[t]
			v := math.NaN()
			if found {
				v = l.Value(x)
			}
			return !math.IsNaN(v) && (l.Higher && v >= lr.Limit || !l.Higher && v <= lr.Limit)
		}
		run := 0
		for t := first; t <= last; t++ {
			if !ok(t) {
				run = 0
				continue
			}
			if run++; run == hold {
				lr.Back, lr.After = true, max(0, time.Duration(t-hold+1)*time.Second-f.End)
				break
			}
		}
		backAt := last
		if lr.Back {
			backAt = max(sec(f.End+lr.After), sec(f.Start)+1)
		}
		for t := sec(f.Start) + 1; t <= backAt; t++ { // the sample at t closes second t
			if x, found := series[t]; found && !math.IsNaN(l.Value(x)) {
				v := l.Value(x)
				if math.IsNaN(lr.Worst) || l.Higher && v < lr.Worst || !l.Higher && v > lr.Worst {
					lr.Worst = v
				}
			}
		}
		r.Levels = append(r.Levels, lr)
	}
	if f.Kind == PublisherKill || f.Kind == NodeTerm {
		lr := LevelRecovery{Name: "restart of " + f.Node, Before: math.NaN(), Steady: math.NaN(), Limit: math.NaN(), Worst: math.NaN(), Restart: true}
		for t := sec(f.Start); t <= last; t++ {
			if x, ok := bySec[f.Node][t]; ok && x.PID != 0 && x.PID != f.PID && x.Status {
				lr.Back, lr.After = true, max(0, x.T-f.End)
				break
			}
		}
		r.Levels = append(r.Levels, lr)
	}
	for _, lr := range r.Levels {
		r.Recovered = r.Recovered && lr.Back
		r.After = max(r.After, lr.After)
	}
	return r
}

// warmAfter returns when a process started at start had been through one
// fault of each kind injected (the end of the last of those first ones),
// and false when it never was.
func warmAfter(faults []Injected, start time.Duration) (time.Duration, bool) {
	first := map[Kind]time.Duration{}
	kinds := map[Kind]bool{}
	for _, f := range faults {
		if f.Skipped != "" {
			continue
		}
		kinds[f.Kind] = true
		if _, ok := first[f.Kind]; !ok && f.Start >= start {
			first[f.Kind] = f.End
		}
	}
	if len(kinds) == 0 || len(first) < len(kinds) {
		return 0, false
	}
	var at time.Duration
	for _, end := range first {
		at = max(at, end)
	}
	return at, true
}

// summarizeNode sums up the samples xs of one node (in time order).
func summarizeNode(node string, xs []Sample, faults []Injected, windows [][2]time.Duration, warmUp time.Duration) NodeSummary {
	n := NodeSummary{Node: node, RSSWarm: math.NaN(), RSSEnd: math.NaN(), Change: math.NaN(), Slope: math.NaN(),
		RSSStart: math.NaN(), ChangeFromStart: math.NaN()}
	// Processes, and the samples of each after its warm-up.
	type proc struct {
		start   time.Duration
		samples []Sample
	}
	procs := map[int]*proc{}
	var order []*proc // as they appeared
	var cpu []float64
	for _, x := range xs {
		if x.PID == 0 {
			continue
		}
		p := procs[x.PID]
		if p == nil {
			p = &proc{start: x.T}
			procs[x.PID] = p
			order = append(order, p)
		}
		if x.T >= max(warmUp, p.start+warmUp) {
			p.samples = append(p.samples, x)
		}
		n.PeakRSS = max(n.PeakRSS, float64(x.PeakRSS)/(1<<20))
		cpu = append(cpu, x.CPU)
	}
	n.Processes = len(procs)
	expected := 0
	for _, f := range faults {
		if (f.Kind == PublisherKill || f.Kind == NodeTerm) && f.Node == node {
			expected++
		}
	}
	n.Restarts = max(0, n.Processes-1-expected)
	if len(cpu) > 0 {
		n.CPUMean, n.CPUMax = stat.Mean(cpu, nil), slices.Max(cpu)
	}
	// RSS of the longest-running process after warm-up.
	var longest []Sample
	var longestStart time.Duration
	for _, p := range order {
		if len(p.samples) > len(longest) {
			longest, longestStart = p.samples, p.start
		}
	}
	if len(longest) >= 2 {
		mb := func(x Sample) float64 { return float64(x.RSS) / (1 << 20) }
		// At rest: outside the faults' windows, where a flood's buffers
		// are still held (unless too few samples are).
		rest := slices.DeleteFunc(slices.Clone(longest), func(x Sample) bool {
			return slices.ContainsFunc(windows, func(w [2]time.Duration) bool { return x.T >= w[0] && x.T <= w[1] })
		})
		if len(rest) < 10 {
			rest = longest
		}
		k := min(max(5, len(rest)/10), 30, len(rest))
		n.RSSStart, n.RSSEnd = median(rest[:k], mb), median(rest[len(rest)-k:], mb)
		n.ChangeFromStart = 100 * (n.RSSEnd - n.RSSStart) / n.RSSStart
		n.RSSWarm, n.Change = n.RSSStart, n.ChangeFromStart
		if at, ok := warmAfter(faults, longestStart); ok {
			warm := slices.DeleteFunc(slices.Clone(rest), func(x Sample) bool { return x.T < at })
			if len(warm) >= 2*k { // a reference and an end that do not overlap
				n.WarmAt = at
				n.RSSWarm = median(warm[:k], mb)
				n.Change = 100 * (n.RSSEnd - n.RSSWarm) / n.RSSWarm
			}
		}
		t, rss := make([]float64, len(longest)), make([]float64, len(longest))
		for i, x := range longest {
			t[i], rss[i] = x.T.Hours(), mb(x)
		}
		_, n.Slope = stat.LinearRegression(t, rss, nil, false)
		n.Span = span(longest)
	}
	// Drops: the counters' increments (a new process starts from 0),
	// after warm-up, inside or outside the faults' windows.
	var prev uint64
	have := false
	for _, x := range xs {
		if !x.Status {
			continue
		}
		d := x.Dropped
		if have && x.Dropped >= prev {
			d = x.Dropped - prev
		}
		prev, have = x.Dropped, true
		if d == 0 || x.T < warmUp {
			continue
		}
		n.Drops += d
		if !slices.ContainsFunc(windows, func(w [2]time.Duration) bool { return x.T >= w[0] && x.T <= w[1] }) {
			if n.Unexplained == 0 {
				n.FirstUnexplained = x.T
			}
			n.Unexplained += d
		}
	}
	return n
}

func span(xs []Sample) time.Duration {
	if len(xs) < 2 {
		return 0
	}
	return xs[len(xs)-1].T - xs[0].T
}

func median(xs []Sample, f func(Sample) float64) float64 {
	v := make([]float64, len(xs))
	for i, x := range xs {
		v[i] = f(x)
	}
	slices.Sort(v)
	return stat.Quantile(0.5, stat.Empirical, v, nil)
}

func (n NodeSummary) violations(b Bounds) []string {
	var v []string
	if !math.IsNaN(n.Change) && math.Abs(n.Change) > b.RSSChange {
		v = append(v, fmt.Sprintf("%s: RSS %+.1f %% since warm-up (%.1f → %.1f MB), bound ±%g %%", n.Node, n.Change, n.RSSWarm, n.RSSEnd, b.RSSChange))
	}
	if !math.IsNaN(n.Slope) && n.Span >= b.SlopeSpan && math.Abs(n.Slope) > b.RSSSlope {
		v = append(v, fmt.Sprintf("%s: RSS slope %+.1f MB/hour over %v, bound ±%g", n.Node, n.Slope, n.Span, b.RSSSlope))
	}
	if n.PeakRSS > b.PeakRSS {
		v = append(v, fmt.Sprintf("%s: peak RSS %.1f MB, bound %g MB", n.Node, n.PeakRSS, b.PeakRSS))
	}
	if n.Unexplained > b.Drops {
		v = append(v, fmt.Sprintf("%s: %d drops outside every fault's window (first at %v), bound %d", n.Node, n.Unexplained, n.FirstUnexplained, b.Drops))
	}
	if n.Restarts > 0 {
		v = append(v, fmt.Sprintf("%s: %d restarts no fault explains", n.Node, n.Restarts))
	}
	return v
}
