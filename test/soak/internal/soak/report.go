package soak

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
	"time"
)

// Write prints the summary: a table of the nodes, one line per fault
// with the return of each level, and the violations.
func (s Summary) Write(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "node\tprocs\tRSS warm (at) → end (MB)\tchange\tfrom its start\tslope (MB/h, span)\tpeak RSS\tCPU mean/max\tdrops\toutside faults\n")
	for _, n := range s.Nodes {
		rss := "n/a (no sample after warm-up)\t\t"
		if !math.IsNaN(n.Change) {
			at := "no round of faults"
			if n.WarmAt > 0 {
				at = n.WarmAt.Round(time.Second).String()
			}
			rss = fmt.Sprintf("%.1f (%s) → %.1f\t%+.1f %%\t%+.1f %% (%.1f)\t%+.1f (%v)", n.RSSWarm, at, n.RSSEnd, n.Change,
				n.ChangeFromStart, n.RSSStart, n.Slope, n.Span.Round(time.Second))
		}
		fmt.Fprintf(tw, "%s\t%d%s\t%s\t%.1f MB\t%.1f / %.1f %%\t%d\t%d%s\n",
			n.Node, n.Processes, restarts(n.Restarts), rss, n.PeakRSS, n.CPUMean, n.CPUMax, n.Drops, n.Unexplained, firstAt(n))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	for _, r := range s.Faults {
		back := "not recovered"
		if r.Recovered {
			back = fmt.Sprintf("recovered after %v", r.After.Round(100*time.Millisecond))
		}
		fmt.Fprintf(w, "%v: %s\n", r.Fault, back)
		if d := r.detail(); d != "" {
			fmt.Fprintf(w, "    %s\n", d)
		}
		var lv []string
		for _, l := range r.Levels {
			lv = append(lv, l.String())
		}
		fmt.Fprintf(w, "    %s\n", strings.Join(lv, "; "))
	}
	fmt.Fprintln(w)
	if len(s.Violations) == 0 {
		_, err := fmt.Fprintln(w, "bounds: all met")
		return err
	}
	fmt.Fprintf(w, "bounds: %d broken\n", len(s.Violations))
	for _, v := range s.Violations {
		fmt.Fprintf(w, "  - %s\n", v)
	}
	return nil
}

func restarts(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(" (%d unexplained)", n)
}

func firstAt(n NodeSummary) string {
	if n.Unexplained == 0 {
		return ""
	}
	return fmt.Sprintf(" (first at %v)", n.FirstUnexplained)
}

// detail says what the fault did, as injected.
func (r Recovery) detail() string {
	var d []string
	if r.PID != 0 {
		d = append(d, fmt.Sprintf("pid %d", r.PID))
	}
	if r.Kind == NodeTerm {
		d = append(d, r.Exit.String())
	}
	if r.Sent > 0 {
		secs := (r.End - r.Start).Seconds()
		d = append(d, fmt.Sprintf("%d messages in %.1f s (%.0f/s)", r.Sent, secs, float64(r.Sent)/secs))
	}
	if r.Note != "" {
		d = append(d, r.Note)
	}
	return strings.Join(d, ", ")
}

func (l LevelRecovery) String() string {
	switch {
	case l.Restart && l.Back:
		return fmt.Sprintf("%s: %v", l.Name, l.After.Round(100*time.Millisecond))
	case l.Restart:
		return l.Name + ": none seen"
	case math.IsNaN(l.Before):
		return l.Name + ": no level before"
	}
	worst := fmt.Sprintf("worst %.4g", l.Worst)
	if math.IsNaN(l.Worst) {
		worst = "no figure since the fault"
	}
	level := fmt.Sprintf("level %.4g", l.Before)
	if l.Steady > l.Before { // false for NaN
		level += fmt.Sprintf(", steady %.4g", l.Steady)
	}
	if !l.Back {
		return fmt.Sprintf("%s: not back (%s, limit %.4g, %s)", l.Name, level, l.Limit, worst)
	}
	return fmt.Sprintf("%s: %v (%s, limit %.4g, %s)", l.Name, l.After.Round(100*time.Millisecond), level, l.Limit, worst)
}

// Term is one SIGTERM of the series that stops fresh nodes at random
// phases.
type Term struct {
	Node string
	// Phase is the time from the node's start to the signal.
	Phase time.Duration
	Exit  Exit
	// Errors counts the [ERROR] lines of its output.
	Errors int
}

// TermSummary sums up a series of SIGTERMs.
type TermSummary struct {
	N, Clean int
	// Slowest is the longest time to an exit.
	Slowest time.Duration
	// Violations lists every SIGTERM not followed by exit 0 within the
	// bound, or with an error logged.
	Violations []string
}

// SummarizeTerms holds a series of SIGTERMs to bound.
func SummarizeTerms(ts []Term, bound time.Duration) TermSummary {
	s := TermSummary{N: len(ts)}
	for i, t := range ts {
		if t.Exit.Seen {
			s.Slowest = max(s.Slowest, t.Exit.After)
		}
		if t.Exit.Clean(bound) {
			s.Clean++
		} else {
			s.Violations = append(s.Violations, fmt.Sprintf("SIGTERM %d to %s %v after its start: %v, want exit 0 within %v", i+1, t.Node, t.Phase, t.Exit, bound))
		}
		if t.Errors > 0 {
			s.Violations = append(s.Violations, fmt.Sprintf("SIGTERM %d to %s %v after its start: %d [ERROR] lines", i+1, t.Node, t.Phase, t.Errors))
		}
	}
	return s
}
