package stampmonitor

import (
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/timealign/timealign/nodes/internal/nodekit"
	"github.com/timealign/timealign/pkg/params"
	"github.com/timealign/timealign/pkg/stamp"
)

// TickEvery is how often the node ends the wait of unmatched samples and
// checks whether the table is due.
const TickEvery = 100 * time.Millisecond

// Node runs a Core for the node runtime (a nodekit.Core and
// nodekit.Attacher): input 0 is `truth`, input i+1 is in<i>.
type Node struct {
	p       *Params
	core    *Core
	env     nodekit.Env
	prev    Status
	lastLog stamp.Time
	buf     strings.Builder
}

// NewNode returns the node's nodekit.Core on p, the bound parameters.
func (p *Params) NewNode(nodekit.Publish) (nodekit.Core, error) {
	names := make([]string, p.Inputs)
	for i := range names {
		names[i] = fmt.Sprint("in", i)
	}
	c, err := New(p.Config, names, names)
	if err != nil {
		return nil, err
	}
	return &Node{p: p, core: c, prev: c.Status()}, nil
}

// Attach implements nodekit.Attacher: the rows are named by the labels,
// or the inputs' resolved topics.
func (n *Node) Attach(e nodekit.Env) {
	n.env = e
	for i, r := range n.core.rows {
		if i+1 < len(e.Inputs) {
			r.topic = e.Inputs[i+1]
			r.name = r.topic
		}
		if i < len(n.p.Labels) && n.p.Labels[i] != "" {
			r.name = n.p.Labels[i]
		}
	}
}

func (n *Node) truthTopic() string {
	if len(n.env.Inputs) > 0 {
		return n.env.Inputs[0]
	}
	return "truth"
}

// Handle implements nodekit.Core.
func (n *Node) Handle(i int, msg []byte, receive stamp.Time) error {
	if i == 0 {
		return n.core.Truth(msg, receive)
	}
	return n.core.Input(i-1, msg, receive)
}

// Tick implements nodekit.Core: pending samples expire; every
// log_period_sec the table of errors is logged (when there is one).
func (n *Node) Tick(now stamp.Time) {
	n.core.expire(now)
	if n.lastLog == 0 || now < n.lastLog {
		n.lastLog = now
		return
	}
	if now.Sub(n.lastLog) < n.core.cfg.LogEvery {
		return
	}
	n.lastLog = now
	if t := Table(n.core.Summary(now), n.core.cfg.Window); t != "" && n.env.Log != nil {
		n.env.Log(nodekit.LogInfo, t)
	}
}

// Report implements nodekit.Core.
func (n *Node) Report(b []byte, now stamp.Time, rt nodekit.RuntimeStatus) ([]byte, nodekit.Diagnostic) {
	rows := n.core.Summary(now)
	st := n.core.Status()
	b = AppendStatusMsg(b, now, st, rows, rt.DroppedQueue)
	d := n.Diagnose(rt.Node, now, st, n.prev, rows)
	n.prev = st
	return b, d
}

// Reconfigure implements nodekit.Core.
func (n *Node) Reconfigure([]params.Parameter) error { return n.core.Reconfigure(n.p.Config) }

// Diagnose returns the node's health at now: WARN when the ground truth or
// an input has not come (or has gone silent), when an input's messages
// match no ground truth, and when samples or messages were dropped since
// prev; OK otherwise. Its messages name the topics.
func (n *Node) Diagnose(name string, now stamp.Time, s, prev Status, rows []TopicErrors) nodekit.Diagnostic {
	d := nodekit.Diagnostic{Name: name + ": " + What}
	silent := s.Config.SilentAfter
	truth := n.truthTopic()
	switch {
	case s.Truths == 0:
		d.Raise(nodekit.Warn, "no ground truth on "+truth+" yet: start sensor_sim, or remap truth to its ground-truth topic")
	case now.Sub(s.LastTruth) > silent:
		d.Raise(nodekit.Warn, fmt.Sprintf("no ground truth on %s for more than %v: has sensor_sim stopped?", truth, silent))
	}
	inputs := len(n.core.rows)
	for i, r := range rows[:inputs] {
		switch {
		case r.Received == 0:
			d.Raise(nodekit.Warn, fmt.Sprintf("no messages on %s (in%d) yet", r.Topic, i))
		case now.Sub(r.Last) > silent:
			d.Raise(nodekit.Warn, fmt.Sprintf("no messages on %s (in%d) for more than %v", r.Topic, i, silent))
		case r.Matched == 0 && r.Unmatched > 0:
			d.Raise(nodekit.Warn, fmt.Sprintf("no message on %s (in%d) matches a ground truth: is it a sensor_sim topic, or republished from one with only its stamp changed?", r.Topic, i))
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
	for _, r := range rows {
		d.Add(r.Name+".raw", describe(r.Raw))
		if r.Topic != "" {
			d.Add(r.Name+".corrected", describe(r.Corrected))
			d.Add(r.Name+".matched", fmt.Sprintf("%d of %d (%d unmatched)", r.Matched, r.Received, r.Unmatched))
		}
	}
	d.Add("truths", s.Truths)
	d.Add("truths_unmatched", s.TruthsUnmatched)
	d.Add("pending", s.Pending)
	d.Add("dropped_pending", s.DroppedPending)
	d.Add("dropped_malformed", s.DroppedMalformed)
	for _, p := range Settings(s.Config) {
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

// AppendStatusMsg serializes the rows and s as a
// timealign/msg/StampMonitorStatus stamped now; droppedQueue is the
// node's inbox overflow count.
func AppendStatusMsg(b []byte, now stamp.Time, s Status, rows []TopicErrors, droppedQueue uint64) []byte {
	c := nodekit.NewCDR(b)
	c.Header(now, "")
	c.Duration(s.Config.Window)
	c.Uint32(uint32(len(rows)))
	errs := func(e Errors) {
		c.Uint32(uint32(e.Count))
		for _, v := range []float64{e.Mean, e.Std, e.Min, e.Max, e.P50, e.P90, e.P99, e.Worst} {
			c.Float64(micros(v))
		}
	}
	for _, r := range rows {
		c.String(r.Name)
		c.String(r.Topic)
		c.String(r.TruthTopic)
		errs(r.Raw)
		errs(r.Corrected)
		c.Uint64(r.Received)
		c.Uint64(r.Matched)
		c.Uint64(r.Unmatched)
	}
	for _, v := range []uint64{s.Truths, s.TruthsUnmatched, uint64(s.Pending), s.DroppedPending, s.DroppedMalformed, droppedQueue} {
		c.Uint64(v)
	}
	return c.B
}
