package main

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/timealign/timealign/pkg/mav"
	"github.com/timealign/timealign/pkg/report"
	"github.com/timealign/timealign/pkg/stamp"
)

// mergeStats collects, in bounded memory, what the timing report shows of
// the tlog: the latency of each autopilot message with time_boot_ms above
// the fitted floor (the fit's residual), over time and as histograms.
type mergeStats struct {
	boots  []*bootStats
	all    *report.Histogram
	byName map[string]*report.Histogram
	other  *report.Histogram // names beyond maxNames
}

type bootStats struct {
	over *report.Buckets // latency over receive time
}

const maxNames = 24

func newLatencyHist() *report.Histogram { return report.NewLogHistogram(1e3, 1e11, 64) } // 1 µs .. 100 s

func newMergeStats(run *mavRun) *mergeStats {
	s := &mergeStats{all: newLatencyHist(), byName: map[string]*report.Histogram{}, other: newLatencyHist()}
	for _, b := range run.res.Boots {
		s.boots = append(s.boots, &bootStats{over: report.NewBuckets(float64(b.FirstReceive), float64(b.LastReceive), 400)})
	}
	return s
}

func (s *mergeStats) latency(boot int, name string, r stamp.Time, d time.Duration) {
	if boot < 0 || boot >= len(s.boots) {
		return
	}
	v := float64(d)
	s.boots[boot].over.Add(float64(r), v)
	s.all.Add(max(v, 1e3)) // at or below the floor: the first bin
	h := s.byName[name]
	if h == nil {
		if len(s.byName) >= maxNames {
			s.other.Add(max(v, 1e3))
			return
		}
		h = newLatencyHist()
		s.byName[name] = h
	}
	h.Add(max(v, 1e3))
}

// tlogLatencies reads the tlog once more for the report of mav align.
func tlogLatencies(f *files, run *mavRun, pr *progress) (*mergeStats, error) {
	s := newMergeStats(run)
	in, err := f.input(0)
	if err != nil {
		return nil, err
	}
	tr := mav.NewTlogReader(pr.reader(in))
	tr.IgnoreCRC = run.ignoreCRC
	res := run.res
	for {
		m, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return s, nil
		}
		if err != nil {
			return nil, err
		}
		b, ok := m.TimeBootMs()
		if !ok || int(m.SysID) != res.SysID || int(m.CompID) != res.CompID || len(res.Boots) == 0 {
			continue
		}
		bt := res.BootOfReceive(m.Receive)
		if e := bt.Find(mav.SourceTlog); e != nil {
			s.latency(bt.Index, m.Name, m.Receive, time.Duration(m.Receive-e.Unix(time.Duration(b)*time.Millisecond)))
		}
	}
}

// writeMavReport writes output 1 (--report): the timing report of the
// alignment and, after a merge, of the merged stream.
func writeMavReport(f *files, run *mavRun, m *merger, pr *progress) error {
	var st *mergeStats
	if m != nil {
		st = m.stats
	} else {
		var err error
		if st, err = tlogLatencies(f, run, pr); err != nil {
			return err
		}
	}
	res := run.res
	title := "Timing report: " + filepath.Base(run.tlog)
	r := report.New(title)
	var names []string
	for _, b := range run.bins {
		names = append(names, filepath.Base(b))
	}
	r.Subtitle = fmt.Sprintf("tlog %s", run.tlog)
	if len(names) > 0 {
		r.Subtitle += "; BIN " + strings.Join(names, ", ")
	}
	if fw := res.Identity.Firmware(); fw != "" {
		r.Subtitle += fmt.Sprintf("; autopilot %d/%d, %s", res.SysID, res.CompID, fw)
	}

	sec := r.Section("Clocks")
	sec.Text("The autopilot stamps its messages with its boot clock (time_boot_ms, TimeUS); the tlog with the " +
		"clock of the computer that received them. Each source below gives the offset from the boot clock to a " +
		"Unix clock; the winner maps the boot to the merged stream's clock, and every other source is compared with it. " +
		"± is the uncertainty: how far above the true floor the fitted one typically lies.")
	for _, bt := range res.Boots {
		bootSection(r, run, bt, st)
	}
	if g := res.GPSInput; g != nil {
		sec.Note(report.Neutral, "GPS_INPUT: the logging computer's clock is %s ahead of GPS time (± %s, %d samples).",
			fmtShort(g.OffsetAt(g.Ref)), fmtUnc(g.Uncertainty), g.Samples)
	}

	bs := r.Section("Dataflash logs")
	tb := report.Table{Columns: []string{"file", "uptime", "records", "boot", "belongs", "evidence"}}
	for i, b := range res.Bins {
		var ev []string
		for _, e := range b.Evidence {
			ev = append(ev, map[int]string{1: "+ ", 0: "? ", -1: "✗ "}[e.Verdict]+e.Detail)
		}
		boot := "—"
		if b.Boot >= 0 {
			boot = fmt.Sprint(b.Boot + 1)
		}
		tb.Rows = append(tb.Rows, []string{filepath.Base(run.bins[i]), secs(b.First) + " – " + secs(b.Last), fmt.Sprint(b.Records),
			boot, b.Belongs, strings.Join(ev, "; ")})
		tb.Status = append(tb.Status, map[string]report.Status{"yes": report.Good, "no": report.Bad, "unknown": report.Warn}[b.Belongs])
	}
	if len(tb.Rows) > 0 {
		bs.Table(tb)
	} else {
		bs.Text("No BIN given.")
	}

	if st != nil && st.all.Total() > 0 {
		ls := r.Section("Latency of the tlog")
		ls.Text("How late each message of the autopilot that carries time_boot_ms reached the logging computer, above the " +
			"fitted floor of its boot (the fit's residual): transport, queueing and scheduling delay. The floor itself (a " +
			"constant delay every message shares) cannot be seen from the logs.")
		p := report.Plot{Title: "All messages", X: report.Axis{Label: "latency above the floor", Unit: "duration", Log: true},
			Y: report.Axis{Label: "messages"}, Series: []report.Series{st.all.Series("all")}}
		ls.Plot(p)
		var rows [][]string
		for _, name := range sortedByTotal(st.byName) {
			h := st.byName[name]
			rows = append(rows, []string{name, fmt.Sprint(h.Total()), report.Duration(h.Quantile(0.5)), report.Duration(h.Quantile(0.9)),
				report.Duration(h.Quantile(0.99)), report.Duration(h.Quantile(1))})
		}
		if st.other.Total() > 0 {
			h := st.other
			rows = append(rows, []string{"(others)", fmt.Sprint(h.Total()), report.Duration(h.Quantile(0.5)), report.Duration(h.Quantile(0.9)),
				report.Duration(h.Quantile(0.99)), report.Duration(h.Quantile(1))})
		}
		ls.Table(report.Table{Caption: "Latency above the floor by message (from histogram bins)",
			Columns: []string{"message", "count", "median", "90 %", "99 %", "max"}, Rows: rows})
		var series []report.Series
		for i, name := range sortedByTotal(st.byName) {
			if i == 6 {
				break
			}
			series = append(series, st.byName[name].Share(name))
		}
		ls.Plot(report.Plot{Title: "By message (share of each message's count)", X: report.Axis{Label: "latency above the floor", Unit: "duration", Log: true},
			Y: report.Axis{Label: "share"}, Series: series})
	}

	if m != nil {
		ms := r.Section("Merged stream")
		ms.Text("%d messages on %d topics, in time order on the clock of the winning source.", m.written, len(m.channels))
		if m.late > 0 {
			ms.Note(report.Warn, "%d messages came more than --reorder %v late and were written out of order.", m.late, m.reorder)
		}
		chans := slices.Collect(func(yield func(*channel) bool) {
			for _, c := range m.channels {
				if !yield(c) {
					return
				}
			}
		})
		sort.Slice(chans, func(i, j int) bool {
			if chans[i].count != chans[j].count {
				return chans[i].count > chans[j].count
			}
			return chans[i].topic < chans[j].topic
		})
		var rows [][]string
		for i, c := range chans {
			if i == 60 {
				rows = append(rows, []string{fmt.Sprintf("… and %d more topics", len(chans)-60), "", "", "", ""})
				break
			}
			rate := "—"
			if d := time.Duration(c.last - c.first); d > 0 && c.count > 1 {
				rate = fmt.Sprintf("%.2f", float64(c.count-1)/d.Seconds())
			}
			rows = append(rows, []string{c.topic, fmt.Sprint(c.count), utc(c.first)[11:23], utc(c.last)[11:23], rate})
		}
		ms.Table(report.Table{Columns: []string{"topic", "messages", "first (UTC)", "last (UTC)", "rate /s"}, Rows: rows})
	}
	return r.WriteHTML(f.out(1))
}

func sortedByTotal(m map[string]*report.Histogram) []string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		if m[names[i]].Total() != m[names[j]].Total() {
			return m[names[i]].Total() > m[names[j]].Total()
		}
		return names[i] < names[j]
	})
	return names
}

// bootSection reports one boot: the sources side by side, their offsets
// against the winner's over time, and the tlog's latency over time.
func bootSection(r *report.Report, run *mavRun, bt *mav.Boot, st *mergeStats) {
	s := r.Section(fmt.Sprintf("Boot %d", bt.Index+1))
	s.Text("Uptime %s – %s; tlog stamps %s – %s UTC; %d messages with time_boot_ms.", secs(bt.First), secs(bt.Last),
		utc(bt.FirstReceive), utc(bt.LastReceive)[11:], bt.Messages)
	tb := report.Table{Columns: []string{"source", "offset (Unix time at boot 0)", "±", "skew ppm", "samples", "status", "vs winner", "detail"}}
	for _, e := range bt.Estimates {
		name := e.Source.String()
		if e.File != "" {
			name += " " + e.File
		}
		delta := "—"
		if e.Status != "won" {
			delta = fmtShort(e.Delta)
		}
		tb.Rows = append(tb.Rows, []string{name, utc(stamp.Time(e.OffsetAt(0))), fmtUnc(e.Uncertainty), fmt.Sprintf("%+.2f", e.SkewPPM),
			fmt.Sprint(e.Samples), e.Status, delta, e.Detail})
		tb.Status = append(tb.Status, map[string]report.Status{"won": report.Good, "agrees": report.Good, "disagrees": report.Warn,
			"inconsistent": report.Bad}[e.Status])
	}
	if len(tb.Rows) == 0 {
		s.Note(report.Bad, "No source gives an offset for this boot.")
		return
	}
	s.Table(tb)
	w := bt.WinnerEstimate()
	if w != nil && len(bt.Estimates) > 1 {
		var series []report.Series
		for _, e := range bt.Estimates {
			if e == w {
				continue
			}
			lo, hi := max(e.First, w.First), min(e.Last, w.Last)
			if hi <= lo {
				continue
			}
			sr := report.Series{Name: e.Source.String()}
			for k := 0; k <= 200; k++ {
				b := lo + (hi-lo)*time.Duration(k)/200
				sr.X = append(sr.X, float64(w.Unix(b)))
				sr.Y = append(sr.Y, float64(e.OffsetAt(b)-w.OffsetAt(b)))
			}
			series = append(series, sr)
		}
		if len(series) > 0 {
			s.Plot(report.Plot{Title: "Each source's offset minus the winner's (" + w.Source.String() + ")",
				X: report.Axis{Label: "time (UTC)", Unit: "time"}, Y: report.Axis{Label: "offset difference", Unit: "duration"}, Series: series,
				Caption: "Above zero: that source would make the tlog's messages arrive before they were sent."})
		}
	}
	if st != nil && bt.Index < len(st.boots) && st.boots[bt.Index].over.Count() > 0 {
		b := st.boots[bt.Index].over
		s.Plot(report.Plot{Title: "Latency above the fitted floor over time (mean, with min–max per interval)",
			X: report.Axis{Label: "tlog time (UTC)", Unit: "time"}, Y: report.Axis{Label: "latency", Unit: "duration"},
			Series:  []report.Series{b.Series("latency", report.Mean)},
			Caption: "The fit's residuals: a band that touches zero everywhere is a floor well found; a step is a clock step or a change of link."})
	}
}
