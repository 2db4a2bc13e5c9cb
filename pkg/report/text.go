package report

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
	"time"
)

// Dur formats a duration for people: three significant digits in the unit
// that fits ("1.23ms", "45.6µs", "-2.00s", "0").
func Dur(d time.Duration) string {
	if d == 0 {
		return "0"
	}
	a := math.Abs(float64(d))
	var v float64
	var unit string
	switch {
	case a >= float64(time.Second):
		v, unit = float64(d)/1e9, "s"
	case a >= float64(time.Millisecond):
		v, unit = float64(d)/1e6, "ms"
	case a >= float64(time.Microsecond):
		v, unit = float64(d)/1e3, "µs"
	default:
		return fmt.Sprintf("%dns", int64(d))
	}
	switch av := math.Abs(v); {
	case av >= 100:
		return fmt.Sprintf("%.0f%s", v, unit)
	case av >= 10:
		return fmt.Sprintf("%.1f%s", v, unit)
	}
	return fmt.Sprintf("%.2f%s", v, unit)
}

// shortType drops the package and "msg" of a type: "sensor_msgs/msg/Imu"
// -> "Imu".
func shortType(t string) string {
	if i := strings.LastIndexByte(t, '/'); i >= 0 {
		return t[i+1:]
	}
	return t
}

// WriteTable writes the concise terminal report: one row per periodic
// topic, then the topics that are not periodic, what to do with each
// topic's stamps, the offsets between streams and the ApproximateTime
// analysis.
func (r *Report) WriteTable(w io.Writer) error {
	var tb strings.Builder
	others, err := r.writePeriodic(w, &tb)
	if err != nil {
		return err
	}
	if len(others) > 0 {
		if err := writeNotPeriodic(w, &tb, others); err != nil {
			return err
		}
	}
	for _, t := range r.Topics {
		if t.Malformed > 0 {
			fmt.Fprintf(w, "note: %s: %d messages of a Header-first type did not parse (skipped)\n", t.Name, t.Malformed)
		}
	}
	r.writeActions(w)
	if len(r.Offsets) > 0 {
		fmt.Fprintln(w, "\noffsets between host-stamped streams (B's stamps minus A's for simultaneous events, from median latencies):")
		for _, o := range r.Offsets {
			fmt.Fprintf(w, "  %s → %s: %s\n", o.A, o.B, Dur(o.Offset))
		}
	}
	if r.Sync != nil {
		r.Sync.writeTable(w)
	}
	return nil
}

// writePeriodic writes the table of the periodic topics (tb holds it
// while tabwriter aligns it) and returns the other topics.
func (r *Report) writePeriodic(w io.Writer, tb *strings.Builder) (others []*TopicReport, err error) {
	tw := tabwriter.NewWriter(tb, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "topic\ttype\tmsgs\trate\tperiod\tjitter std\tjitter p99\tlatency p50 / p99\tgaps (missing)\tdup\tback\tclock")
	fmt.Fprintln(tw, "\t\t\t\t\tbefore → after\tbefore → after\t\t\t\t\t")
	for _, t := range r.Topics {
		if t.Class != Periodic {
			others = append(others, t)
			continue
		}
		writePeriodicRow(tw, t)
	}
	if len(others) == len(r.Topics) {
		tb.Reset() // no periodic topic: no table of them
		fmt.Fprintln(w, "no periodic topic")
		return others, nil
	}
	return others, flushTrimmed(w, tw, tb)
}

// writePeriodicRow writes a periodic topic's row: its rate and period,
// the jitter before and after correction, latency, gaps and clock.
func writePeriodicRow(tw io.Writer, t *TopicReport) {
	rate := "-"
	if t.RateHz > 0 {
		rate = fmt.Sprintf("%.4g Hz", t.RateHz)
	}
	if t.Stamped == 0 {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t\t(%s)\t\t\t\t\t\t\n", t.Name, shortType(t.Type), t.Count, rate, noStampWhy(t))
		return
	}
	clock := "host"
	lat := Dur(t.Latency.P50) + " / " + Dur(t.Latency.P99)
	if t.DeviceClock {
		lat = "-"
		clock = "device"
		if t.ClockValid {
			clock = fmt.Sprintf("device %+.1f ppm, offset %s", t.SkewPPM, Dur(t.ClockOffset))
		}
	} else if t.ClockValid && math.Abs(t.SkewPPM) >= 1 {
		clock = fmt.Sprintf("host %+.1f ppm", t.SkewPPM)
	}
	fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s → %s\t%s → %s\t%s\t%d (%d)\t%d\t%d\t%s\n",
		t.Name, shortType(t.Type), t.Count, rate, Dur(t.Period),
		Dur(t.JitterBefore.Std), Dur(t.JitterAfter.Std), Dur(absMax(t.JitterBefore)), Dur(absMax(t.JitterAfter)),
		lat, t.Gaps, t.Missing, t.Duplicates, t.Backward, clock)
}

// writeNotPeriodic writes the table of the topics that are not periodic.
func writeNotPeriodic(w io.Writer, tb *strings.Builder, others []*TopicReport) error {
	fmt.Fprintln(w, "\nnot periodic (no period, jitter, gaps or estimate):")
	tw := tabwriter.NewWriter(tb, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "topic\ttype\tmsgs\tclass\tspan\toccurrence\twhy")
	for _, t := range others {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\n", t.Name, shortType(t.Type), t.Count, t.Class, Dur(t.Span), occurrence(t), t.ClassWhy)
	}
	return flushTrimmed(w, tw, tb)
}

// writeActions writes what to do with each topic's stamps that needs
// something done, with its command.
func (r *Report) writeActions(w io.Writer) {
	var todo []*TopicReport
	for _, t := range r.Topics {
		if t.Verdict.Action != NoAction && t.Verdict.Action != "" {
			todo = append(todo, t)
		}
	}
	if len(todo) == 0 {
		return
	}
	fmt.Fprintln(w, "\nwhat to do with the stamps:")
	for _, t := range todo {
		fmt.Fprintf(w, "  %s: %s\n", t.Name, t.Verdict.Text)
		if t.Verdict.Command != "" {
			fmt.Fprintf(w, "    %s\n", t.Verdict.Command)
		}
	}
	if r.FixCommand != "" && strings.Count(r.FixCommand, "--apply") > 1 {
		fmt.Fprintf(w, "  all at once: %s\n", r.FixCommand)
	}
}

// writeTable writes the ApproximateTime analysis: its sets and spread,
// each topic's counts, notes and the suggested parameters.
func (s *SyncReport) writeTable(w io.Writer) {
	fmt.Fprintf(w, "\nApproximateTime on %s:", strings.Join(s.Topics, ", "))
	if s.Skipped != "" {
		fmt.Fprintf(w, " not analysed: %s\n", s.Skipped)
		return
	}
	fmt.Fprintf(w, " %d sets, spread p50 %s, p99 %s, max %s\n", s.Sets, Dur(s.Spread.P50), Dur(s.Spread.P99), Dur(s.Spread.Max))
	for i, name := range s.Topics {
		fmt.Fprintf(w, "  %s: %s\n", name, s.counts(i))
	}
	for _, n := range s.Notes {
		fmt.Fprintln(w, "note:", n)
	}
	sg := s.Suggested
	fmt.Fprintf(w, "suggested synchronizer parameters: queue_size: %d, max_interval_sec: %.6g, age_penalty: %g, lower_bounds_sec: [%s]\n",
		sg.QueueSize, sg.MaxInterval.Seconds(), sg.AgePenalty, secs(sg.LowerBounds))
}

// flushTrimmed flushes tw (writing into tb) to w without trailing blanks,
// and empties tb.
func flushTrimmed(w io.Writer, tw *tabwriter.Writer, tb *strings.Builder) error {
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, line := range strings.SplitAfter(tb.String(), "\n") {
		if line == "" {
			continue
		}
		if _, err := io.WriteString(w, strings.TrimRight(line, " \n")+"\n"); err != nil {
			return err
		}
	}
	tb.Reset()
	return nil
}

// noStampWhy says why a topic has no stamps.
func noStampWhy(t *TopicReport) string {
	switch {
	case t.HeaderFirst && t.Malformed > 0:
		return fmt.Sprintf("%d malformed", t.Malformed)
	case !t.HeaderFirst && t.DefSource == "unknown":
		return "type unknown"
	}
	return "no header stamp"
}

// occurrence is the rate of a topic that is not periodic.
func occurrence(t *TopicReport) string {
	switch {
	case t.RateHz <= 0:
		return "-"
	case t.RateHz < 1:
		return fmt.Sprintf("%.3g /min", t.RateHz*60)
	case t.RateHz >= 1000:
		return fmt.Sprintf("%.0f /s", t.RateHz)
	}
	return fmt.Sprintf("%.4g /s", t.RateHz)
}

// counts accounts for every message of sync topic i: the sum is the
// topic's count.
func (s *SyncReport) counts(i int) string {
	name := s.Topics[i]
	total := s.Messages[i]
	if i < len(s.Before) {
		total += s.Before[i] + s.NoStamp[i]
	}
	parts := []string{fmt.Sprintf("%d in sets", s.Sets)}
	var drops []string
	for reason, n := range s.Drops[name] {
		drops = append(drops, fmt.Sprintf("%d %s", n, reason))
	}
	if len(drops) > 0 {
		parts = append(parts, "dropped "+strings.Join(sortStrings(drops), ", "))
	} else {
		parts = append(parts, "none dropped")
	}
	if s.Unmatched[i] > 0 {
		parts = append(parts, fmt.Sprintf("%d still queued at the end", s.Unmatched[i]))
	}
	if i < len(s.Before) && s.Before[i] > 0 {
		parts = append(parts, fmt.Sprintf("%d before the matching started (it waits for every topic's first message)", s.Before[i]))
	}
	if i < len(s.NoStamp) && s.NoStamp[i] > 0 {
		parts = append(parts, fmt.Sprintf("%d without a header stamp", s.NoStamp[i]))
	}
	return fmt.Sprintf("%d messages: %s", total, strings.Join(parts, ", "))
}

// absMax is the larger of |p1| and |p99|: the 98 % band of the jitter.
func absMax(s Summary) time.Duration {
	a, b := s.P1, s.P99
	if a < 0 {
		a = -a
	}
	if b < 0 {
		b = -b
	}
	return max(a, b)
}

func secs(ds []time.Duration) string {
	parts := make([]string, len(ds))
	for i, d := range ds {
		parts[i] = fmt.Sprintf("%.6g", d.Seconds())
	}
	return strings.Join(parts, ", ")
}

func sortStrings(s []string) []string {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
	return s
}
