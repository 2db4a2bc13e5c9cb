package report

import (
	"fmt"
	"html/template"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
)

// Section is a part of a report's page that the analysis does not make:
// what a command knows of its recording beyond the timing of the streams
// (the clocks of an ArduPilot vehicle, say) as paragraphs, notes, tables
// and plots, drawn in the page's style (Page.Sections). Its plots take
// their data from the same bounded accumulators as the streams' (Series,
// Hist). The zero value, with a Title, is an empty section ready to use.
type Section struct {
	Title  string
	blocks []sectionBlock
}

// Level marks a table row or a note: Plain, Good, Warn or Bad.
type Level int

const (
	Plain Level = iota
	Good
	Warn
	Bad
)

func (l Level) class() string {
	switch l {
	case Good:
		return "good"
	case Warn:
		return "warn"
	case Bad:
		return "bad"
	}
	return ""
}

// Table is a table of text cells; cells that read as numbers are aligned
// right.
type Table struct {
	Caption string
	Columns []string
	Rows    [][]string
	// Levels marks each row (optional; missing ones are Plain).
	Levels []Level
}

// LinePlot plots Series (min/max envelopes) against the seconds since the
// report's start, one line or envelope per series.
type LinePlot struct {
	Title, YLabel, Caption string
	Series                 []*Series
	Names                  []string
}

// HistPlot plots histograms of durations, each as the share of its
// values, on common bins between their 0.5th and 99.5th percentiles.
type HistPlot struct {
	Title, XLabel, Caption string
	Hists                  []*Hist
	Names                  []string
}

// sectionBlock is one paragraph, table or plot of a section.
type sectionBlock struct {
	text  string
	note  bool // a paragraph in a box, coloured by level
	level Level
	table *Table
	lines *LinePlot
	hists *HistPlot
}

// Text adds a paragraph.
func (s *Section) Text(format string, args ...any) {
	s.blocks = append(s.blocks, sectionBlock{text: fmt.Sprintf(format, args...)})
}

// Note adds a paragraph marked with a level.
func (s *Section) Note(l Level, format string, args ...any) {
	s.blocks = append(s.blocks, sectionBlock{text: fmt.Sprintf(format, args...), note: true, level: l})
}

// Table adds a table.
func (s *Section) Table(t Table) { s.blocks = append(s.blocks, sectionBlock{table: &t}) }

// Lines adds a plot of series over time.
func (s *Section) Lines(p LinePlot) { s.blocks = append(s.blocks, sectionBlock{lines: &p}) }

// Hists adds a plot of histograms.
func (s *Section) Hists(p HistPlot) { s.blocks = append(s.blocks, sectionBlock{hists: &p}) }

// htmlBlock is a block ready for the page template: a table, a row of
// plots (consecutive plots share one), or a paragraph.
type htmlBlock struct {
	Table *htmlTable
	Plots []htmlPlot
	Text  string
	Class string
}

type htmlTable struct {
	Caption string
	Columns []string
	Rows    []htmlRow
}

type htmlRow struct {
	Class string
	Cells []htmlCell
}

type htmlCell struct {
	Text string
	Num  bool
}

type htmlPlot struct {
	SVG     template.HTML
	Caption string
}

// render draws the section's blocks; plots over time start at start (ns)
// and label their x axis xlabel.
func (s *Section) render(start int64, xlabel string) ([]htmlBlock, error) {
	var out []htmlBlock
	for _, b := range s.blocks {
		var p *plot.Plot
		var caption string
		switch {
		case b.table != nil:
			t := &htmlTable{Caption: b.table.Caption, Columns: b.table.Columns}
			for i, row := range b.table.Rows {
				r := htmlRow{}
				if i < len(b.table.Levels) {
					r.Class = b.table.Levels[i].class()
				}
				for _, c := range row {
					r.Cells = append(r.Cells, htmlCell{Text: c, Num: numeric(c)})
				}
				t.Rows = append(t.Rows, r)
			}
			out = append(out, htmlBlock{Table: t})
			continue
		case b.lines != nil:
			l := b.lines
			var ok bool
			if p, ok = seriesPlot(l.Title, xlabel, l.YLabel, start, l.Series, l.Names, colors(len(l.Series))); !ok {
				continue
			}
			caption = l.Caption
		case b.hists != nil:
			h := b.hists
			var ok bool
			if p, ok = histPlot(h.Title, h.XLabel, h.Hists, h.Names, colors(len(h.Hists))); !ok {
				continue
			}
			caption = h.Caption
		default:
			cls := ""
			if b.note {
				cls = strings.TrimSpace("note " + b.level.class())
			}
			out = append(out, htmlBlock{Text: b.text, Class: cls})
			continue
		}
		svg, err := svgOf(p, 13*vg.Centimeter, 7*vg.Centimeter)
		if err != nil {
			return nil, err
		}
		if n := len(out); n > 0 && out[n-1].Plots != nil {
			out[n-1].Plots = append(out[n-1].Plots, htmlPlot{SVG: svg, Caption: caption})
			continue
		}
		out = append(out, htmlBlock{Plots: []htmlPlot{{SVG: svg, Caption: caption}}})
	}
	return out, nil
}

// numeric reports whether a cell reads as a number (a sign, a digit):
// such cells are aligned right.
func numeric(s string) bool {
	s = strings.TrimLeft(strings.TrimSpace(s), "+-−±")
	return s != "" && s[0] >= '0' && s[0] <= '9'
}
