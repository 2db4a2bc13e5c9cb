package report

import (
	"fmt"
	"strings"
	"time"
)

// Action is what a report recommends for a topic's stamps.
type Action string

const (
	// Keep: the stamps are as good as estimation can make them.
	Keep Action = "keep"
	// Estimate: remove their jitter with the timestamp_estimator.
	Estimate Action = "timestamp_estimator"
	// ClockSync: they are a device clock's; map it to host time with
	// clock_sync.
	ClockSync Action = "clock_sync"
	// NoAction: nothing to correct (no stamps, or not periodic).
	NoAction Action = "none"
)

// The thresholds of the verdict (see Verdict).
const (
	// MinGainRatio: the estimator is recommended when it divides the
	// interval jitter's std by at least this much …
	MinGainRatio = 2
	// MinGain … and removes at least this much of it.
	MinGain = 10 * time.Microsecond
	// WorseRatio: an estimate whose jitter std or 98 % band exceeds the
	// stamps' by this factor makes them worse.
	WorseRatio = 1.1
	// MaxPeriodRatio: an estimator's period more than this factor away
	// from the stream's median interval is not trusted.
	MaxPeriodRatio = 4
)

// Verdict is what to do with a topic's stamps, in one line.
//
// A periodic host-stamped topic is corrected with the timestamp_estimator
// when the estimate's interval jitter std is at most 1/MinGainRatio of the
// stamps' and at least MinGain smaller, and its 98 % band (the larger of
// |p1|, |p99|) no wider; otherwise its stamps are kept. A device-clock topic
// is mapped with clock_sync. Wherever the estimate is worse than the stamps
// (Worse), the line says so, and why.
type Verdict struct {
	Action Action `json:"action"`
	// Text is the verdict in a line.
	Text string `json:"text"`
	// Why says where the estimate is worse than the stamps (empty where
	// it is not).
	Why string `json:"why,omitempty"`
	// Apply is the `bag fix --apply` argument ("/imu=timestamp_estimator"),
	// Command the whole command line where the recording is a bag
	// (Report.SetFixCommand).
	Apply   string `json:"apply,omitempty"`
	Command string `json:"command,omitempty"`
}

// verdict judges a topic whose figures are final.
func verdict(r *TopicReport) Verdict {
	switch {
	case r.Stamped == 0:
		return Verdict{Action: NoAction, Text: "no stamp in the messages: nothing to correct"}
	case r.Class != Periodic:
		return Verdict{Action: NoAction, Text: fmt.Sprintf("%s (%s): no period, so no estimate; stamps kept as they are", r.Class, r.ClassWhy)}
	case r.DeviceClock:
		clk := "a device clock"
		if r.ClockValid {
			clk = fmt.Sprintf("a device clock (%+.1f ppm, offset %s against the log times)", r.SkewPPM, Dur(r.ClockOffset))
		}
		return Verdict{Action: ClockSync, Text: "map " + clk + " to host time with clock_sync", Apply: r.Name + "=clock_sync"}
	}
	b, e := r.JitterBefore, r.JitterAfter
	why := worseWhy(r)
	if n := r.PeriodChanges; n > 0 {
		// Said first: a changing period is what the reader must know
		// before any figure of the estimate.
		changed := fmt.Sprintf("the period changed %d times (now %s): the estimator fitted the recent samples again each time", n, Dur(r.Period))
		if n == 1 {
			changed = fmt.Sprintf("the period changed once (now %s): the estimator fitted the recent samples again", Dur(r.Period))
		}
		if why != "" {
			why = changed + "; " + why
		} else {
			why = changed
		}
	}
	if r.JitterBefore.Count == 0 {
		return Verdict{Action: Keep, Text: "keep the stamps: too few intervals to judge an estimate"}
	}
	if m := r.MedianInterval; m > 0 && (r.Period*MaxPeriodRatio < m || r.Period > m*MaxPeriodRatio) {
		return Verdict{Action: Keep, Why: why, Text: fmt.Sprintf("keep the stamps: the estimator's period (%s) is far from the stream's median interval (%s), "+
			"so its estimate, gaps and missing counts are not to be trusted here", Dur(r.Period), Dur(m))}
	}
	helps := float64(e.Std)*MinGainRatio <= float64(b.Std) && b.Std-e.Std >= MinGain && absMax(e) <= absMax(b)
	if helps {
		v := Verdict{Action: Estimate, Apply: r.Name + "=timestamp_estimator", Why: why,
			Text: fmt.Sprintf("correct with timestamp_estimator: interval jitter std %s → %s, 98 %% band %s → %s",
				Dur(b.Std), Dur(e.Std), Dur(absMax(b)), Dur(absMax(e)))}
		if why != "" {
			v.Text += "; but " + why
		}
		return v
	}
	v := Verdict{Action: Keep, Why: why}
	switch {
	case float64(e.Std) > WorseRatio*float64(b.Std) || float64(absMax(e)) > WorseRatio*float64(absMax(b)):
		v.Text = fmt.Sprintf("keep the stamps: estimation would make them worse (interval jitter std %s → %s, 98 %% band %s → %s)",
			Dur(b.Std), Dur(e.Std), Dur(absMax(b)), Dur(absMax(e)))
	default:
		v.Text = fmt.Sprintf("keep the stamps: already as good as estimation makes them (interval jitter std %s, estimate %s)",
			Dur(b.Std), Dur(e.Std))
	}
	if why != "" {
		v.Text += "; " + why
	}
	return v
}

// worseWhy says where and why estimates are worse than the stamps.
func worseWhy(r *TopicReport) string {
	w := r.Worse
	if w.Samples == 0 {
		return ""
	}
	var parts []string
	if w.AtGaps > 0 {
		parts = append(parts, fmt.Sprintf("%d just after a gap (where the stream's own timing had to tell a lost sample from a late one)", w.AtGaps))
	}
	if w.WarmUp > 0 {
		parts = append(parts, fmt.Sprintf("%d in its warm-up (its first %d samples: the period not yet known)", w.WarmUp, WarmUpSamples))
	}
	if w.Elsewhere > 0 {
		parts = append(parts, fmt.Sprintf("%d elsewhere (stamps early as well as late against the fitted line: the estimator takes all jitter for lateness)", w.Elsewhere))
	}
	s := "samples"
	if w.Samples == 1 {
		s = "sample"
	}
	return fmt.Sprintf("the estimate is worse than the stamp on %d %s, by up to %s: %s", w.Samples, s, Dur(w.Max), strings.Join(parts, "; "))
}

// SetFixCommand sets each verdict's Command from cmd, which returns the
// command line that applies the given `--apply` arguments to the
// recording, and returns the command line of every correction at once
// ("" when there is none).
func (r *Report) SetFixCommand(cmd func(apply []string) string) string {
	var all []string
	for _, t := range r.Topics {
		if t.Verdict.Apply != "" {
			t.Verdict.Command = cmd([]string{t.Verdict.Apply})
			all = append(all, t.Verdict.Apply)
		}
	}
	if len(all) == 0 {
		r.FixCommand = ""
	} else {
		r.FixCommand = cmd(all)
	}
	return r.FixCommand
}
