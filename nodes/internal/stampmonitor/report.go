package stampmonitor

import (
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/timealign/timealign/nodes/internal/nodekit"
	"github.com/timealign/timealign/nodes/internal/stampmonitor/config"
	"github.com/timealign/timealign/pkg/stamp"
)

// Report is what the node reports at Now (a nodekit.Report): the core's
// Status against the previous report's (Prev), its rows over the window
// at Now (the Inputs first, then the sensor_sim topics no input matched),
// and the runtime's status (whose first input is the ground truth).
type Report struct {
	Now          stamp.Time
	Status, Prev Status
	Rows         []TopicErrors
	// Inputs is the number of corrected inputs.
	Inputs  int
	Runtime nodekit.RuntimeStatus
}

// truthTopic is the resolved topic of the ground truth.
func (r Report) truthTopic() string {
	if len(r.Runtime.Inputs) > 0 {
		return r.Runtime.Inputs[0]
	}
	return "truth"
}

// Diagnose returns the node's health at Now: WARN when the ground truth
// or an input has not come (or has gone silent), when an input's messages
// match no ground truth, and when samples or messages were dropped since
// Prev; OK otherwise. Its messages name the topics.
func (r Report) Diagnose() nodekit.Diagnostic {
	s, prev, rows, now := r.Status, r.Prev, r.Rows, r.Now
	var d nodekit.Diagnostic
	silent := s.Config.SilentAfter
	truth := r.truthTopic()
	switch {
	case s.Truths == 0:
		d.Raise(nodekit.Warn, "no ground truth on "+truth+" yet: start sensor_sim, or remap truth to its ground-truth topic")
	case now.Sub(s.LastTruth) > silent:
		d.Raise(nodekit.Warn, fmt.Sprintf("no ground truth on %s for more than %v: has sensor_sim stopped?", truth, silent))
	}
	inputs := r.Inputs
	for i, row := range rows[:inputs] {
		switch {
		case row.Received == 0:
			d.Raise(nodekit.Warn, fmt.Sprintf("no messages on %s (in%d) yet", row.Topic, i))
		case now.Sub(row.Last) > silent:
			d.Raise(nodekit.Warn, fmt.Sprintf("no messages on %s (in%d) for more than %v", row.Topic, i, silent))
		case row.Matched == 0 && row.Unmatched > 0:
			d.Raise(nodekit.Warn, fmt.Sprintf("no message on %s (in%d) matches a ground truth: is it a sensor_sim topic, or republished from one with only its stamp changed?", row.Topic, i))
		}
	}
	if inputs == 0 && s.Truths > 0 {
		d.Raise(nodekit.OK, "raw stamp errors of "+fmt.Sprint(len(rows))+" sensor_sim topics (no corrected input)")
	}
	d.Raise(nodekit.OK, fmt.Sprintf("measuring %d topics against ground truth", inputs))
	if k := nodekit.Since(s.DroppedPending, prev.DroppedPending); k > 0 {
		d.Raise(nodekit.Warn, fmt.Sprintf("%d samples dropped unmatched: more than max_pending (%d) waited", k, s.Config.MaxPending))
	}
	if k := nodekit.Since(s.DroppedMalformed, prev.DroppedMalformed); k > 0 {
		d.Raise(nodekit.Warn, fmt.Sprintf("%d malformed messages dropped (%s)", k, s.LastError))
	}
	if k := nodekit.Since(s.DroppedTopics, prev.DroppedTopics); k > 0 {
		d.Raise(nodekit.Warn, fmt.Sprintf("ground truth of more than %d topics: %d dropped", MaxTruthTopics, k))
	}
	for _, row := range rows {
		d.Add(row.Name+".raw", describe(row.Raw))
		if row.Topic != "" {
			d.Add(row.Name+".corrected", describe(row.Corrected))
			d.Add(row.Name+".matched", fmt.Sprintf("%d of %d (%d unmatched)", row.Matched, row.Received, row.Unmatched))
		}
	}
	d.Add("truths", s.Truths)
	d.Add("truths_unmatched", s.TruthsUnmatched)
	d.Add("pending", s.Pending)
	d.Add("dropped_pending", s.DroppedPending)
	d.Add("dropped_malformed", s.DroppedMalformed)
	for _, p := range config.Settings(s.Config) {
		d.Add(p.Name, p.Value.String())
	}
	return d
}

// describe says e in a line: "n 3998, mean 6 ms, std 577 µs, p99 7.9 ms, worst 8 ms".
func describe(e Errors) string {
	if e.Count == 0 {
		return "no samples"
	}
	return fmt.Sprintf("n %d, mean %s, std %s, p99 %s, worst %s", e.Count, Format(e.Mean), Format(e.Std), Format(e.P99), Format(e.Worst))
}

// Format writes an error of ns nanoseconds with three significant digits
// in ns, µs, ms or s.
func Format(ns float64) string {
	a := max(ns, -ns)
	switch {
	case a < 1e3:
		return fmt.Sprintf("%.0f ns", ns)
	case a < 1e6:
		return fmt.Sprintf("%.3g µs", ns/1e3)
	case a < 1e9:
		return fmt.Sprintf("%.3g ms", ns/1e6)
	}
	return fmt.Sprintf("%.4g s", ns/1e9)
}

// Table is the log's table of rows over window: per topic the samples, and
// mean, std, 99th percentile of |error| and worst |error| raw → corrected
// ("" without a row to show).
func Table(rows []TopicErrors, window time.Duration) string {
	var b strings.Builder
	fmt.Fprintf(&b, "stamp − true acquisition time over the last %v, raw → corrected:\n", window)
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprint(tw, "  \ttopic\tsamples\tmean\tstd\tp99 |error|\tworst\n")
	shown := 0
	for _, r := range rows {
		topic, arrow := r.Topic, func(raw, fixed float64) string { return Format(raw) + " → " + Format(fixed) }
		if r.Topic == "" {
			if r.Raw.Count == 0 {
				continue
			}
			topic = "(not corrected)"
			arrow = func(raw, _ float64) string { return Format(raw) }
		}
		shown++
		if r.Raw.Count == 0 {
			fmt.Fprintf(tw, "  %s\t%s\t0\t(no sample matched its ground truth)\t\t\t\n", r.Name, topic)
			continue
		}
		fmt.Fprintf(tw, "  %s\t%s\t%d\t%s\t%s\t%s\t%s\n", r.Name, topic, r.Raw.Count,
			arrow(r.Raw.Mean, r.Corrected.Mean), arrow(r.Raw.Std, r.Corrected.Std),
			arrow(r.Raw.P99, r.Corrected.P99), arrow(r.Raw.Worst, r.Corrected.Worst))
	}
	if shown == 0 {
		return ""
	}
	tw.Flush()
	return strings.TrimSuffix(b.String(), "\n")
}

// AppendStatusMsg serializes the report as a
// timealign/msg/StampMonitorStatus.
func (r Report) AppendStatusMsg(b []byte) []byte {
	s, rows := r.Status, r.Rows
	c := nodekit.NewCDR(b)
	c.Header(r.Now, "")
	c.Duration(s.Config.Window)
	c.Uint32(uint32(len(rows)))
	errs := func(e Errors) {
		c.Uint32(uint32(e.Count))
		for _, v := range []float64{e.Mean, e.Std, e.Min, e.Max, e.P50, e.P90, e.P99, e.Worst} {
			c.Float64(micros(v))
		}
	}
	for _, row := range rows {
		c.String(row.Name)
		c.String(row.Topic)
		c.String(row.TruthTopic)
		errs(row.Raw)
		errs(row.Corrected)
		c.Uint64(row.Received)
		c.Uint64(row.Matched)
		c.Uint64(row.Unmatched)
	}
	for _, v := range []uint64{s.Truths, s.TruthsUnmatched, uint64(s.Pending), s.DroppedPending, s.DroppedMalformed, r.Runtime.DroppedQueue, r.Runtime.TimeJumps} {
		c.Uint64(v)
	}
	return c.B
}
