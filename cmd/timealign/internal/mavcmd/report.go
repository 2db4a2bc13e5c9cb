package mavcmd

import (
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strings"
	"time"

	"github.com/timealign/timealign/cmd/timealign/internal/cli"
	"github.com/timealign/timealign/pkg/mav"
	"github.com/timealign/timealign/pkg/report"
	"github.com/timealign/timealign/pkg/stamp"
)

// The timing report of mav align and merge (--report) is the bag report's
// page (pkg/report): the analysis of every topic of the logs, the
// autopilot's stamp (time_boot_ms, TimeUS on the merged clock) taking the
// place of the header stamp and the tlog's receive stamp that of the log
// time, after sections of its own on the clocks: every source's offset,
// the BINs and the evidence, and the latency of the tlog's messages above
// the fitted floor (the fit's residual).

// mavTiming collects the report's data in bounded memory.
type mavTiming struct {
	a   *report.Analyzer
	ids map[string]int // topic -> analyzer id
	// lat and latOver are the latency above the floor of every autopilot
	// message of the tlog with time_boot_ms.
	lat     report.Hist
	latOver report.Series
}

func newMavTiming() (*mavTiming, error) {
	cfg := report.DefaultConfig()
	cfg.PerTopicOnly = true // an autopilot's topics are many, and not matched into sets
	a, err := report.New(cfg)
	if err != nil {
		return nil, err
	}
	return &mavTiming{a: a, ids: map[string]int{}, latOver: report.Series{Cap: cfg.PlotPoints}}, nil
}

// add analyses one message of channel c (its schema: the MAVLink message
// or dataflash record type) of instance inst (−1: the type has none): its
// log time, its autopilot stamp on the same clock (hasBoot: it has one)
// and its size. Each instance is a topic of its own, "/bin/MAG[1]".
func (t *mavTiming) add(c *channel, inst int16, logT, pub stamp.Time, hasBoot bool, size int) {
	if inst >= 0 {
		id, ok := c.byInst[inst]
		if !ok {
			if c.byInst == nil {
				c.byInst = map[int16]int{}
			}
			id = t.topic(fmt.Sprintf("%s[%d]", c.topic, inst), c.schema, c.tlog, hasBoot)
			c.byInst[inst] = id
		}
		t.addID(id, c.tlog, logT, pub, hasBoot, size)
		return
	}
	if c.report < 0 {
		c.report = t.topic(c.topic, c.schema, c.tlog, hasBoot)
	}
	t.addID(c.report, c.tlog, logT, pub, hasBoot, size)
}

// topic returns the report's id of a topic (name: its MAVLink message or
// dataflash record type; tlog: it is the tlog's), adding it on first use.
func (t *mavTiming) topic(topic, name string, tlog, hasBoot bool) int {
	id, ok := t.ids[topic]
	if !ok {
		id = len(t.ids)
		typ, src := "dataflash/"+name, "dataflash FMT"
		if tlog {
			typ, src = "mavlink/"+name, "MAVLink"
		}
		if err := t.a.AddTopic(id, topic, typ, hasBoot, src); err != nil {
			return id // ids are given in order: cannot happen
		}
		t.ids[topic] = id
	}
	return id
}

// addID adds a message of the topic with report id id.
func (t *mavTiming) addID(id int, tlog bool, logT, pub stamp.Time, hasBoot bool, size int) {
	t.a.Add(report.Message{Topic: id, LogTime: logT, Header: pub, HasHeader: hasBoot, Size: size})
	if tlog && hasBoot {
		d := logT.Sub(pub)
		t.lat.Add(d)
		t.latOver.Add(int64(logT), float64(d)/1e6)
	}
}

// tlogTiming reads the tlog once more for the report of mav align.
func tlogTiming(f *cli.Files, run *mavRun, pr *cli.Progress) (*mavTiming, error) {
	t, err := newMavTiming()
	if err != nil {
		return nil, err
	}
	in, err := f.Input(0)
	if err != nil {
		return nil, err
	}
	tr := mav.NewTlogReader(pr.Reader(in))
	tr.IgnoreCRC = run.ignoreCRC
	for {
		m, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return t, nil
		}
		if err != nil {
			return nil, err
		}
		logT, pub, boot := run.res.TlogStamps(run.cfg.Prefer, m)
		t.addID(t.topic(fmt.Sprintf("/tlog/%d/%d/%s", m.SysID, m.CompID, m.Name), m.Name, true, boot >= 0), true, logT, pub, boot >= 0, m.Size())
	}
}

// writeMavReport writes output 1 (--report): the timing report of the
// alignment and, after a merge (m), of the merged stream.
func writeMavReport(f *cli.Files, run *mavRun, m *merger, pr *cli.Progress) error {
	var t *mavTiming
	if m != nil {
		t = m.stats
	} else {
		var err error
		if t, err = tlogTiming(f, run, pr); err != nil {
			return err
		}
	}
	rep := t.a.Report()
	pg := reportPage(run, m, rep)
	pg.Sections = append(pg.Sections, clocksSection(run.res, rep))
	for _, bt := range run.res.Boots {
		pg.Sections = append(pg.Sections, bootSection(bt))
	}
	pg.Sections = append(pg.Sections, binsSection(run))
	if t.lat.Count() > 0 {
		pg.Sections = append(pg.Sections, latencySection(t))
	}
	if m != nil {
		pg.Sections = append(pg.Sections, mergedSection(m, rep))
	}
	return rep.WritePage(f.Out(1), pg)
}

// reportPage is the report's page before its sections: its title (the
// logs), the meaning of its figures.
func reportPage(run *mavRun, m *merger, rep *report.Report) report.Page {
	names := []string{filepath.Base(run.tlog)}
	for _, b := range run.bins {
		names = append(names, filepath.Base(b))
	}
	pg := report.Page{
		Title:   strings.Join(names, " + "),
		Heading: "timealign mav report",
		Stamp:   "autopilot stamp",
		Notes: "The autopilot stamp of a message is its time_boot_ms (tlog) or TimeUS (BIN) mapped onto the merged clock by the " +
			"winning offset of its boot; its log time is the tlog's receive stamp (moved onto the same clock), and a BIN record's " +
			"log time is its autopilot stamp (latency 0). Interval jitter is Δ − k·period between consecutive autopilot stamps, " +
			"before and after pkg/tsest's estimate, on topics whose own stamps show a period (the others, one-off and bursty, " +
			"have their count, span and rate of occurrence); gaps are messages or records missing by the estimator's count. A tlog " +
			"message's latency is how late it reached the logging computer above the fitted floor.",
		FixNote: "mav merge writes the autopilot's stamps as they are: to correct this topic's, run the timestamp_estimator " +
			"node on it (or timealign estimate on its stamps). The estimator takes a stamp for late, never early, against a " +
			"steady period; an autopilot stamps a record when it writes it, and where that is when the sensor was sampled, " +
			"the jitter is the sampling's own and the stamps are better kept: check the sensor's timing first.",
		TimeAxis:   "time since the start of the logs (s)",
		PlotTopics: 12,
	}
	if m != nil && len(rep.Topics) != len(m.channels) {
		pg.TopicsNote = fmt.Sprintf("(each instance of a BIN type counted apart, /bin/MAG[0] and /bin/MAG[1]; the merged stream has %d topics, one per type)",
			len(m.channels))
	}
	if m == nil {
		pg.Title = names[0]
		pg.TimeAxis = "tlog time since its start (s)"
		if len(names) > 1 {
			pg.Title += " (aligned with " + strings.Join(names[1:], ", ") + ")"
		}
	}
	return pg
}

// clocksSection says what the sources are, the autopilot and GPS_INPUT.
func clocksSection(res *mav.Result, rep *report.Report) *report.Section {
	sec := &report.Section{Title: "Clocks"}
	sec.Text("The autopilot stamps its messages with its boot clock (time_boot_ms, TimeUS); the tlog with the clock of the "+
		"computer that received them. Each source below gives the offset from the boot clock to a Unix clock; the winner "+
		"maps the boot to the merged stream's clock, and every other source is compared with it. ± is the uncertainty: how "+
		"far above the true floor the fitted one typically lies. Plots over time start at %s UTC.", cli.UTCMicros(rep.Start))
	if id := res.Identity.Firmware(); id != "" {
		sec.Text("Autopilot %d/%d: %s.", res.SysID, res.CompID, id)
	}
	if g := res.GPSInput; g != nil {
		sec.Note(report.Plain, "GPS_INPUT: the logging computer's clock is %s ahead of GPS time (± %s, %d samples).",
			cli.ShortDuration(g.OffsetAt(g.Ref)), cli.Uncertainty(g.Uncertainty), g.Samples)
	}
	return sec
}

// binsSection lists the BINs: their boot and whether they belong, with
// the evidence.
func binsSection(run *mavRun) *report.Section {
	bs := &report.Section{Title: "Dataflash logs"}
	tb := report.Table{Columns: []string{"file", "uptime", "records", "boot", "belongs", "evidence"}}
	for i, b := range run.res.Bins {
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
		tb.Levels = append(tb.Levels, map[string]report.Level{"yes": report.Good, "no": report.Bad, "unknown": report.Warn}[b.Belongs])
	}
	if len(tb.Rows) > 0 {
		bs.Table(tb)
	} else {
		bs.Text("No BIN given.")
	}
	return bs
}

// latencySection shows how late the tlog's messages arrived above the
// fitted floor.
func latencySection(t *mavTiming) *report.Section {
	ls := &report.Section{Title: "Latency of the tlog"}
	s := t.lat.Summarize()
	ls.Text("How late the %d messages of the autopilot that carry time_boot_ms reached the logging computer, above the "+
		"fitted floor of their boot (the fit's residual): transport, queueing and scheduling delay; p50 %s, p99 %s, max %s. "+
		"The floor itself (a constant delay every message shares) cannot be seen from the logs; each topic's own figures "+
		"are below.", s.Count, report.Dur(s.P50), report.Dur(s.P99), report.Dur(s.Max))
	ls.Hists(report.HistPlot{Title: "latency above the floor", XLabel: "latency", Hists: []*report.Hist{&t.lat},
		Names: []string{"all messages"}})
	ls.Lines(report.LinePlot{Title: "latency above the floor over time", YLabel: "latency (ms)", Series: []*report.Series{&t.latOver},
		Names: []string{"latency"}, Caption: "A band that touches zero everywhere is a floor well found; a step is a clock step or a change of link."})
	return ls
}

// mergedSection counts the merged stream.
func mergedSection(m *merger, rep *report.Report) *report.Section {
	ms := &report.Section{Title: "Merged stream"}
	inst := ""
	if len(rep.Topics) != len(m.channels) {
		inst = fmt.Sprintf(" (%d in the timing report below, which counts each instance of a BIN type apart)", len(rep.Topics))
	}
	ms.Text("%d messages on %d topics%s, in time order on the clock of the winning source.", m.written, len(m.channels), inst)
	if m.late > 0 {
		ms.Note(report.Warn, "%d messages came more than --reorder-window %v late and were written out of order.", m.late, m.reorder)
	}
	return ms
}

// bootSection reports one boot: the sources side by side and their
// offsets against the winner's over time.
func bootSection(bt *mav.Boot) *report.Section {
	s := &report.Section{Title: fmt.Sprintf("Boot %d", bt.Index+1)}
	s.Text("Uptime %s – %s; tlog stamps %s – %s UTC; %d messages with time_boot_ms.", secs(bt.First), secs(bt.Last),
		cli.UTCMicros(bt.FirstReceive), cli.UTCMicros(bt.LastReceive)[11:], bt.Messages)
	tb := report.Table{Columns: []string{"source", "offset (Unix time at boot 0)", "±", "skew ppm", "samples", "status", "vs winner", "detail"}}
	for _, e := range bt.Estimates {
		name := e.Source.String()
		if e.File != "" {
			name += " " + e.File
		}
		delta := "—"
		if e.Status != "won" {
			delta = cli.ShortDuration(e.Delta)
		}
		tb.Rows = append(tb.Rows, []string{name, cli.UTCMicros(stamp.Time(e.OffsetAt(0))), cli.Uncertainty(e.Uncertainty), fmt.Sprintf("%+.2f", e.SkewPPM),
			fmt.Sprint(e.Samples), e.Status, delta, e.Detail})
		tb.Levels = append(tb.Levels, map[string]report.Level{"won": report.Good, "agrees": report.Good, "disagrees": report.Warn,
			"inconsistent": report.Bad}[e.Status])
	}
	if len(tb.Rows) == 0 {
		s.Note(report.Bad, "No source gives an offset for this boot.")
		return s
	}
	s.Table(tb)
	w := bt.WinnerEstimate()
	if w == nil || len(bt.Estimates) < 2 {
		return s
	}
	// Each other source's offset minus the winner's, where both have an
	// answer, at 201 boot times; in the unit that fits the largest.
	type diff struct {
		name string
		x    []int64
		d    []time.Duration
	}
	var diffs []diff
	var span float64
	for _, e := range bt.Estimates {
		lo, hi := max(e.First, w.First), min(e.Last, w.Last)
		if e == w || hi <= lo {
			continue
		}
		df := diff{name: e.Source.String()}
		for k := 0; k <= 200; k++ {
			b := lo + (hi-lo)*time.Duration(k)/200
			d := e.OffsetAt(b) - w.OffsetAt(b)
			df.x, df.d = append(df.x, int64(w.Unix(b))), append(df.d, d)
			span = math.Max(span, math.Abs(float64(d)))
		}
		diffs = append(diffs, df)
	}
	if len(diffs) == 0 {
		return s
	}
	scale, unit := report.DurationUnit(span)
	p := report.LinePlot{Title: "each source's offset minus the winner's (" + w.Source.String() + ")", YLabel: "offset difference (" + unit + ")",
		Caption: "Above zero: that source would make the tlog's messages arrive before they were sent."}
	for _, df := range diffs {
		sr := &report.Series{Cap: 256}
		for k := range df.x {
			sr.Add(df.x[k], float64(df.d[k])/scale)
		}
		p.Series, p.Names = append(p.Series, sr), append(p.Names, df.name)
	}
	s.Lines(p)
	return s
}
