package report

import (
	"bytes"
	"fmt"
	"html/template"
	"image/color"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// The HTML report is one file: styles inline, plots as inline SVG drawn by
// gonum.org/v1/plot, no script and nothing fetched, so it reads offline and
// can be mailed or attached to an issue. The same page layout serves any
// timing report (a bag's; an ArduPilot vehicle's logs, which add sections
// of their own on its clocks): a title, the command's sections, a summary
// table, one section per stream with its plots, and notes.

var (
	colBefore = color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}
	colAfter  = color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}
	colOther  = color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff}
)

// svgOf renders a plot as inline SVG markup.
func svgOf(p *plot.Plot, w, h vg.Length) (template.HTML, error) {
	c := vgsvg.New(w, h)
	p.Draw(draw.New(c))
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		return "", err
	}
	s := buf.String()
	if i := strings.Index(s, "<svg"); i > 0 {
		s = s[i:] // drop the XML prolog: the SVG is inline
	}
	return template.HTML(s), nil //nolint:gosec // our own SVG
}

// palette colours the series of a section's plots, in order.
var palette = []color.Color{colAfter, colBefore, colOther,
	color.RGBA{R: 0x94, G: 0x67, B: 0xbd, A: 0xff}, color.RGBA{R: 0xff, G: 0x7f, B: 0x0e, A: 0xff},
	color.RGBA{R: 0x8c, G: 0x56, B: 0x4b, A: 0xff}, color.RGBA{R: 0xe3, G: 0x77, B: 0xc2, A: 0xff},
	color.RGBA{R: 0x7f, G: 0x7f, B: 0x7f, A: 0xff}, color.RGBA{R: 0x17, G: 0xbe, B: 0xcf, A: 0xff}}

// colors returns n colours of the palette.
func colors(n int) []color.Color {
	out := make([]color.Color, n)
	for i := range out {
		out[i] = palette[i%len(palette)]
	}
	return out
}

// dashes are the line styles of a plot's series, in order: overlapping
// series stay apart in grey print and for readers who do not tell the
// colours apart.
var dashes = [][]vg.Length{nil, {vg.Points(4), vg.Points(2)}, {vg.Points(1), vg.Points(1.5)}, {vg.Points(6), vg.Points(2), vg.Points(1), vg.Points(2)}}

// seriesPlot draws min/max envelopes of series against seconds since
// start: two lines for a series whose slots hold several values, one for a
// series of single values; each series in its own line style.
func seriesPlot(title, xlabel, ylabel string, start int64, series []*Series, names []string, colors []color.Color) (*plot.Plot, bool) {
	return scaledSeriesPlot(title, xlabel, ylabel, start, series, names, colors, 1)
}

// durationPlot is seriesPlot for series of durations in ns: the y axis in
// the unit that fits them, named after quantity, and cut at top (ns) when
// top > 0.
func durationPlot(title, xlabel, quantity string, start int64, series []*Series, names []string, colors []color.Color, top float64) (*plot.Plot, bool) {
	var span float64
	for _, s := range series {
		for _, p := range s.Points() {
			span = math.Max(span, math.Max(math.Abs(p.Min), math.Abs(p.Max)))
		}
	}
	if top > 0 {
		span = math.Min(span, top)
	}
	scale, unit := DurationUnit(span)
	p, ok := scaledSeriesPlot(title, xlabel, quantity+" ("+unit+")", start, series, names, colors, scale)
	if ok && top > 0 {
		p.Y.Max = top / scale
	}
	return p, ok
}

func scaledSeriesPlot(title, xlabel, ylabel string, start int64, series []*Series, names []string, colors []color.Color, scale float64) (*plot.Plot, bool) {
	p := newPlot(title, xlabel, ylabel)
	any := false
	for i, s := range series {
		pts := s.Points()
		if len(pts) == 0 {
			continue
		}
		any = true
		pts = coarsen(pts, maxDrawn)
		off := float64(s.Start()-start) / 1e9
		lo := make(plotter.XYs, len(pts))
		hi := make(plotter.XYs, len(pts))
		band := false
		for k, pt := range pts {
			x := off + pt.X.Seconds()
			lo[k], hi[k] = plotter.XY{X: x, Y: pt.Min / scale}, plotter.XY{X: x, Y: pt.Max / scale}
			band = band || pt.Min != pt.Max
		}
		lines := []plotter.XYs{hi, lo}
		name := names[i] + " (min/max)"
		if !band {
			lines, name = lines[:1], names[i]
		}
		for j, xy := range lines {
			l, err := plotter.NewLine(xy)
			if err != nil {
				continue
			}
			l.Color = colors[i]
			l.Width = vg.Points(0.8)
			l.Dashes = dashes[i%len(dashes)]
			p.Add(l)
			if j == 0 {
				p.Legend.Add(name, l)
			}
		}
	}
	p.Legend.Top = true
	p.Add(plotter.NewGrid())
	return p, any
}

// maxDrawn bounds the points of a line drawn: at 13 cm, more min/max
// slots make a solid block in which two series cannot be told apart.
const maxDrawn = 250

// coarsen merges neighbouring points (their min and max) until at most n
// are left.
func coarsen(pts []Point, n int) []Point {
	if len(pts) <= n {
		return pts
	}
	k := (len(pts) + n - 1) / n
	out := make([]Point, 0, n)
	for i := 0; i < len(pts); i += k {
		p := pts[i]
		for _, q := range pts[i+1 : min(i+k, len(pts))] {
			p.Min, p.Max = min(p.Min, q.Min), max(p.Max, q.Max)
		}
		out = append(out, p)
	}
	return out
}

// newPlot returns a plot whose tick labels share one format.
func newPlot(title, xlabel, ylabel string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = xlabel
	p.Y.Label.Text = ylabel
	p.X.Tick.Marker = plainTicks{}
	p.Y.Tick.Marker = plainTicks{}
	return p
}

// plainTicks are gonum's default ticks, labelled in one format: plain
// decimals, as many as the step between labels needs (no "1e+06", no
// "0.5" beside "1").
type plainTicks struct{}

func (plainTicks) Ticks(lo, hi float64) []plot.Tick {
	ts := plot.DefaultTicks{}.Ticks(lo, hi)
	var labelled []float64
	for _, t := range ts {
		if t.Label != "" {
			labelled = append(labelled, t.Value)
		}
	}
	dec := 0
	if len(labelled) > 1 {
		step := math.Abs(labelled[1] - labelled[0])
		for dec < 9 && math.Abs(step*math.Pow10(dec)-math.Round(step*math.Pow10(dec))) > 1e-6*step*math.Pow10(dec) {
			dec++
		}
	}
	for i := range ts {
		if ts[i].Label != "" {
			v := ts[i].Value
			if math.Abs(v) < 1e-12*math.Max(math.Abs(lo), math.Abs(hi)) {
				v = 0
			}
			ts[i].Label = strconv.FormatFloat(v, 'f', dec, 64)
		}
	}
	return ts
}

// DurationUnit picks the unit for durations spanning span ns (s, ms, µs
// or ns) and its size in ns: what to divide values by before plotting.
func DurationUnit(span float64) (float64, string) {
	switch {
	case span >= 1e9:
		return 1e9, "s"
	case span >= 2e6:
		return 1e6, "ms"
	case span >= 2e3:
		return 1e3, "µs"
	}
	return 1, "ns"
}

// histPlot draws histograms on uniform bins between the 1st and 99th
// percentiles of all of them (the rest is counted at the edges).
func histPlot(title, xlabel string, hs []*Hist, names []string, colors []color.Color) (*plot.Plot, bool) {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, h := range hs {
		if h.Count() == 0 {
			continue
		}
		q := h.Quantiles(0.01, 0.99)
		lo, hi = math.Min(lo, float64(q[0])), math.Max(hi, float64(q[1]))
	}
	if math.IsInf(lo, 0) {
		return nil, false
	}
	if hi <= lo {
		hi = lo + 1
	}
	scale, unit := DurationUnit(hi - lo)
	const nb = 60
	w := (hi - lo) / nb
	p := newPlot(title, xlabel+" ("+unit+")", "share of samples (%)")
	for i, h := range hs {
		if h.Count() == 0 {
			continue
		}
		counts := make([]float64, nb)
		for _, b := range h.bins() {
			// spread each bucket uniformly over the display bins it covers
			blo, bhi := b.lo, b.hi
			if bhi <= blo {
				bhi = blo + 1e-9
			}
			for k := range nb {
				x0, x1 := lo+float64(k)*w, lo+float64(k+1)*w
				ov := math.Min(bhi, x1) - math.Max(blo, x0)
				if ov > 0 {
					counts[k] += float64(b.n) * ov / (bhi - blo)
				}
			}
			if bhi <= lo {
				counts[0] += float64(b.n)
			} else if blo >= hi {
				counts[nb-1] += float64(b.n)
			}
		}
		bins := make([]plotter.HistogramBin, nb)
		for k := range nb {
			bins[k] = plotter.HistogramBin{Min: (lo + float64(k)*w) / scale, Max: (lo + float64(k+1)*w) / scale,
				Weight: 100 * counts[k] / float64(h.Count())}
		}
		hp := &plotter.Histogram{Bins: bins, Width: w / scale, LineStyle: plotter.DefaultLineStyle}
		hp.LineStyle.Color = colors[i]
		hp.LineStyle.Width = vg.Points(1)
		hp.LineStyle.Dashes = dashes[i%len(dashes)]
		p.Add(hp)
		p.Legend.Add(names[i], hp)
	}
	p.Legend.Top = true
	return p, true
}

type htmlTopic struct {
	*TopicReport
	ID                     string
	Short                  string
	Plots                  []template.HTML
	Period, JB, JA, Lat    string
	Clock                  string
	LatRow                 bool
	GapRows                []string
	CorrP99, CorrMax, Rate string
	Level                  string // the verdict's class: good, warn, bad or ""
	Span, Occurrence       string
}

type htmlPage struct {
	Page
	R        *Report
	Periodic []htmlTopic
	Others   []htmlTopic
	OneOff   int
	Omitted  int // topics drawn without plots (Page.PlotTopics)
	Blocks   [][]htmlBlock
	Table    string
	TopicIDs map[string]string
}

// Page is the frame of a report's HTML page. The zero value, with a Title,
// is the bag report's (WriteHTML); a command that reports on another kind
// of recording names its own words and adds sections of its own.
type Page struct {
	// Title names the recording: the page's <title> and the line under
	// its heading.
	Title string
	// Heading is the page's first heading. It defaults to "timealign bag
	// report".
	Heading string
	// Stamp is what the stamps of the messages are called (the plots'
	// and tables' words). It defaults to "header stamp".
	Stamp string
	// Notes is the paragraph under the summary table that says what its
	// figures are. It defaults to the bag report's.
	Notes string
	// TopicsNote follows the count of topics in the page's first line
	// (what a topic is, where that needs saying). It defaults to "".
	TopicsNote string
	// FixNote is said where a topic's stamps should be corrected but the
	// report has no command line for it (Report.SetFixCommand was not
	// called). It defaults to "".
	FixNote string
	// TimeAxis labels the x axis of the plots over time (seconds since
	// Report.Start). It defaults to "log time since the start of the bag
	// (s)".
	TimeAxis string
	// PlotTopics bounds the topics drawn with plots to the periodic ones
	// with the most messages (the others have their table only), so that
	// a recording of a hundred topics makes a page that opens. It
	// defaults to 0: every periodic topic.
	PlotTopics int
	// Sections are shown between the heading and the summary table.
	Sections []*Section
}

// WriteHTML writes the report as one self-contained HTML page titled
// title: the bag report's page.
func (r *Report) WriteHTML(w io.Writer, title string) error {
	return r.WritePage(w, Page{Title: title})
}

// level is the page's mark of a verdict: correct (warn: something to do),
// keep (good), worse estimates noted (still good: the stamps are kept).
func (v Verdict) level() string {
	switch v.Action {
	case Estimate, ClockSync:
		return "warn"
	case Keep:
		return "good"
	}
	return ""
}

// WritePage writes the report as one self-contained HTML page in the
// frame pg: contents, a summary table of every topic's verdict (which
// links to each topic's section), the sections of pg, what the figures
// are, the periodic topics one by one (verdict,
// command, figures, plots), the others in one folded table, and the
// ApproximateTime analysis.
func (r *Report) WritePage(w io.Writer, pg Page) error {
	if pg.Heading == "" {
		pg.Heading = "timealign bag report"
	}
	if pg.Stamp == "" {
		pg.Stamp = "header stamp"
	}
	if pg.TimeAxis == "" {
		pg.TimeAxis = "log time since the start of the bag (s)"
	}
	hp := htmlPage{Page: pg, R: r, TopicIDs: map[string]string{}}
	var tbl strings.Builder
	if err := r.WriteTable(&tbl); err != nil {
		return err
	}
	hp.Table = tbl.String()
	for _, s := range pg.Sections {
		bs, err := s.render(int64(r.Start), pg.TimeAxis)
		if err != nil {
			return err
		}
		hp.Blocks = append(hp.Blocks, bs)
	}
	drawn := map[*TopicReport]bool{}
	var periodic []*TopicReport
	for _, t := range r.Topics {
		if t.Class == Periodic {
			periodic = append(periodic, t)
		}
	}
	if pg.PlotTopics > 0 && pg.PlotTopics < len(periodic) {
		byCount := slices.Clone(periodic)
		sort.SliceStable(byCount, func(i, j int) bool { return byCount[i].Count > byCount[j].Count })
		for _, t := range byCount[:pg.PlotTopics] {
			drawn[t] = true
		}
		hp.Omitted = len(periodic) - pg.PlotTopics
	}
	for i, t := range r.Topics {
		ht := htmlTopic{TopicReport: t, ID: fmt.Sprintf("topic-%d", i), Short: shortType(t.Type), Period: Dur(t.Period),
			JB: Dur(t.JitterBefore.Std), JA: Dur(t.JitterAfter.Std), Rate: fmt.Sprintf("%.4g", t.RateHz),
			Level: t.Verdict.level(), Span: Dur(t.Span), Occurrence: occurrence(t)}
		hp.TopicIDs[t.Name] = ht.ID
		if t.Class != Periodic {
			if t.Class == OneOff {
				hp.OneOff++
			}
			hp.Others = append(hp.Others, ht)
			continue
		}
		ht.Clock = "host clock"
		if t.DeviceClock {
			ht.Clock = "device clock"
		}
		if t.ClockValid {
			ht.Clock += fmt.Sprintf(", %+.2f ppm against the log times, offset %s", t.SkewPPM, Dur(t.ClockOffset))
		}
		// no latency row where the log time is the stamp (a BIN record's)
		ht.LatRow = t.Stamped > 0 && !t.DeviceClock && (t.Latency.Min != 0 || t.Latency.Max != 0)
		for _, g := range t.LongestGaps {
			ht.GapRows = append(ht.GapRows, fmt.Sprintf("%s long at %.3f s (%d missing)", Dur(g.Length), float64(g.At-r.Start)/1e9, g.Missing))
		}
		// A topic whose messages all came at one time has nothing to
		// plot over time (the table says all).
		if pl := t.plots; pl != nil && t.Last > t.First && (hp.Omitted == 0 || drawn[t]) {
			plots, err := topicPlotsFor(t, pl, pg, int64(r.Start))
			if err != nil {
				return err
			}
			ht.Plots = plots
		}
		hp.Periodic = append(hp.Periodic, ht)
	}
	return pageTmpl.Execute(w, hp)
}

// topicPlotsFor draws a periodic topic's plots: what its verdict rests on.
// A device clock: its stamps against the log times with the fitted line,
// and the residuals. Host stamps: the intervals over time, the jitter of
// the stamps, and, where the estimate is recommended or is worse than the
// stamps somewhere, the estimate's jitter (on a scale of its own) and the
// correction over time; the latency.
func topicPlotsFor(t *TopicReport, pl *topicPlots, pg Page, start int64) ([]template.HTML, error) {
	st := pg.Stamp
	var plots []*plot.Plot
	if t.Stamped > 0 && t.DeviceClock {
		if p, ok := clockPlot(t, pl, pg, start); ok {
			plots = append(plots, p)
		}
		if p, ok := durationPlot("clock fit residual: log time − fitted line", pg.TimeAxis, "residual", start,
			[]*Series{&pl.clockResidual}, []string{"residual (latency above the floor)"}, []color.Color{colOther}, 0); ok {
			plots = append(plots, p)
		}
	}
	series, names, cols := []*Series{&pl.arrival}, []string{"log times"}, []color.Color{colOther}
	if t.Stamped > 0 {
		// the stamps first and solid, the log times dashed on top
		series, names, cols = []*Series{&pl.stampInterval, &pl.arrival}, []string{st + "s", "log times"}, []color.Color{colBefore, colOther}
	}
	title := "interval between consecutive messages"
	if pl.intervalTop > 0 {
		title += fmt.Sprintf(" (cut at %s; longest %s)", Dur(pl.intervalTop), Dur(pl.intervalMax))
	}
	if p, ok := durationPlot(title, pg.TimeAxis, "interval", start, series, names, cols, float64(pl.intervalTop)); ok {
		plots = append(plots, p)
	}
	if t.Stamped > 0 && !t.DeviceClock {
		if p, ok := histPlot("interval jitter of the "+st+"s", "Δ − k·period", []*Hist{&pl.jitBefore},
			[]string{st + "s"}, []color.Color{colBefore}); ok {
			plots = append(plots, p)
		}
		if t.Verdict.Action == Estimate || t.Worse.Samples > 0 {
			title := "interval jitter of the estimates"
			if t.Verdict.Action != Estimate {
				title += " (not recommended)"
			}
			if p, ok := histPlot(title, "Δ − k·period", []*Hist{&pl.jitAfter},
				[]string{"estimates"}, []color.Color{colAfter}); ok {
				plots = append(plots, p)
			}
			if p, ok := durationPlot("correction: "+st+" − estimate", pg.TimeAxis, "correction", start,
				[]*Series{&pl.correction}, []string{"correction"}, []color.Color{colAfter}, 0); ok {
				plots = append(plots, p)
			}
		}
		if t.Latency.Max > t.Latency.Min { // one value: no histogram
			if p, ok := histPlot("latency: log time − "+st, "latency", []*Hist{&pl.latency},
				[]string{"latency"}, []color.Color{colOther}); ok {
				plots = append(plots, p)
			}
		}
	}
	var out []template.HTML
	for _, p := range plots {
		s, err := svgOf(p, 13*vg.Centimeter, 7*vg.Centimeter)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// clockPlot draws a device clock's stamps against the log times, and the
// line the clock fit maps them with.
func clockPlot(t *TopicReport, pl *topicPlots, pg Page, start int64) (*plot.Plot, bool) {
	p, ok := scaledSeriesPlot("device stamp against log time", pg.TimeAxis, "device stamp since its first (s)", start,
		[]*Series{&pl.clockStamp}, []string{"device stamps"}, []color.Color{colBefore}, 1)
	if !ok || !pl.haveFit {
		return p, ok
	}
	xy := plotter.XYs{
		{X: (pl.fitLine[0][0] - float64(start)) / 1e9, Y: pl.fitLine[0][1]},
		{X: (pl.fitLine[1][0] - float64(start)) / 1e9, Y: pl.fitLine[1][1]},
	}
	l, err := plotter.NewLine(xy)
	if err != nil {
		return p, ok
	}
	l.Color, l.Width, l.Dashes = colAfter, vg.Points(1), dashes[1]
	p.Add(l)
	p.Legend.Add(fmt.Sprintf("clock fit (%+.1f ppm)", t.SkewPPM), l)
	return p, true
}

var pageTmpl = template.Must(template.New("page").Funcs(template.FuncMap{
	"dur": Dur,
	"sec": func(t interface{ Seconds() float64 }) string { return fmt.Sprintf("%.6g", t.Seconds()) },
	"durs": func(ds []time.Duration) string {
		return secs(ds)
	},
	"sub": func(a, b int) int { return a - b },
	"topics": func(n int) string {
		if n == 1 {
			return "1 topic"
		}
		return fmt.Sprintf("%d topics", n)
	},
	"action": func(a Action, stamped uint64) string {
		switch {
		case a == Keep:
			return "keep the stamps"
		case a == NoAction && stamped == 0:
			return "— (no stamp)"
		case a == NoAction:
			return "—"
		}
		return string(a)
	},
	"counts": func(s *SyncReport, i int) string { return s.counts(i) },
}).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>timealign report: {{.Title}}</title>
<style>
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:2em auto;max-width:1200px;color:#222;padding:0 1em}
h1{font-size:1.4em} h2{font-size:1.2em;border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:2em} h3{font-size:1.05em;margin:1.8em 0 .3em}
table{border-collapse:collapse;margin:.5em 0} td,th{padding:.2em .6em;border-bottom:1px solid #eee;text-align:left;vertical-align:top}
th{background:#f5f5f5} td.n{text-align:right;font-variant-numeric:tabular-nums}
caption{text-align:left;color:#777;padding-bottom:.2em}
tr.good td:first-child{border-left:4px solid #2ca02c} tr.warn td:first-child{border-left:4px solid #e0a000} tr.bad td:first-child{border-left:4px solid #d62728}
p.note,p.verdict{padding:.4em .8em;background:#f5f5f5} p.good{background:#e8f5e9} p.warn{background:#fdf4dc} p.bad{background:#fbe5e3}
p.verdict{font-weight:600;margin-bottom:.3em}
pre,code.cmd{background:#f8f8f8;padding:.5em .8em;overflow-x:auto;font-size:.85em}
code.cmd{display:block;white-space:pre-wrap;word-break:break-all}
.plots{display:flex;flex-wrap:wrap;gap:1em} .plots svg{border:1px solid #eee}
figure{margin:0} figcaption{color:#777;font-size:.85em;max-width:13cm}
.muted{color:#777} nav ul{columns:2;margin:.3em 0} details>summary{cursor:pointer;font-weight:600;margin:.5em 0}
table.summary td{font-size:.92em} td.nw{white-space:nowrap}
</style></head><body>
<h1>{{.Heading}}</h1>
<p>{{.Title}}: {{.R.Messages}} messages on {{topics (len .R.Topics)}}{{with .TopicsNote}} {{.}}{{end}}: {{len .Periodic}} periodic, {{len .Others}} not ({{.OneOff}} one-off, {{sub (len .Others) .OneOff}} bursty).</p>
<nav><b>Contents</b><ul>
<li><a href="#summary">Summary: every topic's verdict</a></li>
{{range $i, $s := .Sections}}<li><a href="#section-{{$i}}">{{$s.Title}}</a></li>
{{end}}<li><a href="#figures">What the figures are</a></li>
<li><a href="#periodic">Periodic topics ({{len .Periodic}})</a></li>
{{if .Others}}<li><a href="#aperiodic">Topics that are not periodic ({{len .Others}})</a></li>{{end}}
{{if .R.Sync}}<li><a href="#approximatetime">ApproximateTime</a></li>{{end}}
</ul></nav>
<h2 id="summary">Summary: every topic's verdict</h2>
<table class="summary">
<tr><th>topic</th><th>class</th><th>messages</th><th>rate</th><th>period</th><th>jitter std: stamps → estimate</th><th>verdict</th></tr>
{{range .Periodic}}<tr{{with .Level}} class="{{.}}"{{end}}><td><a href="#{{.ID}}">{{.Name}}</a></td><td>{{.Class}}</td><td class="n">{{.Count}}</td><td class="n">{{.Rate}} Hz</td>
<td class="n">{{if .Stamped}}{{.Period}}{{end}}</td><td class="n">{{if .Stamped}}{{.JB}}{{if not .DeviceClock}} → {{.JA}}{{end}}{{end}}</td><td>{{action .Verdict.Action .Stamped}}{{if .Worse.Samples}} <span class="muted">(estimate worse on {{.Worse.Samples}})</span>{{end}}{{if .PeriodChanges}} <span class="muted">(period changed)</span>{{end}}</td></tr>
{{end}}</table>
{{if .Others}}<details><summary>{{topics (len .Others)}} that {{if eq (len .Others) 1}}is{{else}}are{{end}} not periodic: no estimate, stamps kept</summary>
<table class="summary"><tr><th>topic</th><th>class</th><th>messages</th><th>occurrence</th><th>span</th></tr>
{{range .Others}}<tr><td><a href="#{{.ID}}">{{.Name}}</a></td><td class="nw">{{.Class}}</td><td class="n">{{.Count}}</td><td class="n">{{.Occurrence}}</td><td class="n">{{.Span}}</td></tr>
{{end}}</table></details>{{end}}
{{with .R.FixCommand}}<p>Every recommended correction at once:</p><code class="cmd">{{.}}</code>{{end}}
{{range $i, $s := .Sections}}<h2 id="section-{{$i}}">{{$s.Title}}</h2>
{{range index $.Blocks $i}}{{template "block" .}}{{end}}{{end}}
<h2 id="figures">What the figures are</h2>
{{if .Notes}}<p class="muted">{{.Notes}}</p>{{else}}<p class="muted">A topic is classified from its own stamps first: periodic (a period and a jitter make sense), bursty (event-driven or batched) or one-off (a handful of messages, or a few bursts); only periodic ones get a period, jitter, gaps and an estimate.
Interval jitter is Δ − k·period between consecutive stamps (√2 × the stamps' own jitter when it is independent);
"stamps" is measured on the header stamps, "estimate" on the estimator's stamps (what <code>timealign bag fix</code> writes with the timestamp_estimator).
The correction is header stamp − estimate; the latency is log time − header stamp.</p>{{end}}
<details><summary>The table as the terminal prints it</summary><pre>{{.Table}}</pre></details>
<h2 id="periodic">Periodic topics</h2>
{{if not .Periodic}}<p class="muted">No topic is periodic.</p>{{end}}
{{if .Omitted}}<p class="muted">Plots are drawn for the {{.PlotTopics}} periodic topics with the most messages; the other {{.Omitted}} have their figures only.</p>{{end}}
{{range .Periodic}}
<h3 id="{{.ID}}">{{.Name}} <span class="muted">{{.Type}}</span></h3>
<p class="verdict{{with .Level}} {{.}}{{end}}">{{.Verdict.Text}}</p>
{{if .Verdict.Command}}<code class="cmd">{{.Verdict.Command}}</code>{{else if and .Verdict.Apply $.FixNote}}<p class="muted">{{$.FixNote}}</p>{{end}}
<table>
<tr><th>messages</th><td class="n">{{.Count}}</td><th>rate</th><td class="n">{{.Rate}} Hz</td><th>period</th><td class="n">{{if .Stamped}}{{.Period}}{{else}}—{{end}}</td></tr>
{{if .Stamped}}{{if .DeviceClock}}<tr><th>jitter std: stamps</th><td class="n">{{.JB}}</td><td colspan="4" class="muted">device stamps are mapped by the clock fit, not estimated</td></tr>
{{else}}<tr><th>jitter std: stamps</th><td class="n">{{.JB}}</td><th>estimate</th><td class="n">{{.JA}}</td><th>correction p50 / p99 / max</th><td class="n">{{dur .Correction.P50}} / {{dur .Correction.P99}} / {{dur .Correction.Max}}</td></tr>{{end}}
{{if .LatRow}}<tr><th>latency p1 / p50 / p99</th><td class="n" colspan="3">{{dur .Latency.P1}} / {{dur .Latency.P50}} / {{dur .Latency.P99}}</td><th>max</th><td class="n">{{dur .Latency.Max}}</td></tr>{{end}}
<tr><th>gaps (missing)</th><td class="n">{{.Gaps}} ({{.Missing}})</td><th>estimated losses</th><td class="n">{{.EstimatedLosses}}</td><th>duplicates / back</th><td class="n">{{.Duplicates}} / {{.Backward}}</td></tr>
<tr><th>clock</th><td colspan="5">{{.Clock}}</td></tr>
{{if .GapRows}}<tr><th>longest gaps</th><td colspan="5">{{range .GapRows}}{{.}}<br>{{end}}</td></tr>{{end}}
{{else}}<tr><td colspan="6" class="muted">{{if .HeaderFirst}}{{.Malformed}} messages did not parse as Header-first{{else}}no {{$.Stamp}} (type source: {{.DefSource}}){{end}}</td></tr>{{end}}
</table>
{{if .Plots}}<div class="plots">{{range .Plots}}{{.}}{{end}}</div>{{end}}
{{end}}
{{if .Others}}<h2 id="aperiodic">Topics that are not periodic</h2>
<details><summary>{{topics (len .Others)}}: {{.OneOff}} one-off, {{sub (len .Others) .OneOff}} bursty (count, span and rate of occurrence; no period, jitter, gaps or estimate)</summary>
<table>
<tr><th>topic</th><th>type</th><th>class</th><th>messages</th><th>span</th><th>occurrence</th><th>why</th></tr>
{{range .Others}}<tr><td id="{{.ID}}">{{.Name}}</td><td>{{.Short}}</td><td class="nw">{{.Class}}</td><td class="n">{{.Count}}</td><td class="n">{{.Span}}</td><td class="n">{{.Occurrence}}</td><td>{{.ClassWhy}}</td></tr>
{{end}}</table></details>{{end}}
{{with .R.Sync}}<h2 id="approximatetime">ApproximateTime</h2>
{{if .Skipped}}<p>Not analysed: {{.Skipped}}</p>{{else}}
<p>On {{range $i, $t := .Topics}}{{if $i}}, {{end}}{{$t}}{{end}}: {{.Sets}} sets; spread p50 {{dur .Spread.P50}}, p99 {{dur .Spread.P99}}, max {{dur .Spread.Max}}.</p>
<ul>{{range $i, $t := .Topics}}<li>{{$t}}: {{counts $.R.Sync $i}}</li>{{end}}</ul>
{{range .Notes}}<p class="note warn">{{.}}</p>{{end}}
<p>Suggested synchronizer parameters: <code>queue_size: {{.Suggested.QueueSize}}</code>, <code>max_interval_sec: {{sec .Suggested.MaxInterval}}</code>,
<code>age_penalty: {{.Suggested.AgePenalty}}</code>, <code>lower_bounds_sec: [{{durs .Suggested.LowerBounds}}]</code></p>
<ul>{{range .Suggested.Why}}<li>{{.}}</li>{{end}}</ul>{{end}}{{end}}
<p class="muted">Written by timealign. Everything is in this file; it needs no network.</p>
</body></html>
{{define "block"}}{{if .Table}}{{with .Table}}<table>{{with .Caption}}<caption>{{.}}</caption>{{end}}
<tr>{{range .Columns}}<th>{{.}}</th>{{end}}</tr>
{{range .Rows}}<tr{{with .Class}} class="{{.}}"{{end}}>{{range .Cells}}<td{{if .Num}} class="n"{{end}}>{{.Text}}</td>{{end}}</tr>
{{end}}</table>
{{end}}{{else if .Plots}}<div class="plots">{{range .Plots}}<figure>{{.SVG}}{{with .Caption}}<figcaption>{{.}}</figcaption>{{end}}</figure>{{end}}</div>
{{else}}<p{{with .Class}} class="{{.}}"{{end}}>{{.Text}}</p>
{{end}}{{end}}`))
