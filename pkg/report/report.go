// Package report writes self-contained HTML reports of timing analyses:
// sections of text, tables and SVG plots (lines with min–max bands over
// time, histograms), with no script, font or file outside the page, so a
// report can be mailed or attached to an issue as it is.
//
// A report is built as values ([Report], [Section], [Table], [Plot]) and
// written by [Report.WriteHTML]. Long streams are summarized while they
// are read, in bounded memory, by two accumulators: [Buckets] (count,
// min, mean and max of y per interval of x: O(intervals) memory, O(1) per
// value) and [Histogram] (linear or log-spaced bins, with quantiles from
// the bins). Plots draw at most a few thousand points whatever the input.
//
// The package is pure: values in, HTML out to the io.Writer given; no
// clock, no goroutine, no file. The timing reports of `timealign mav` use
// it; the bag reports are meant to share it (same look, same plots).
package report

import (
	"fmt"
	"html"
	"io"
	"strings"
)

// Report is a titled list of sections.
type Report struct {
	Title string
	// Subtitle is a line under the title (the inputs, say).
	Subtitle string
	Sections []*Section
}

// New returns an empty report.
func New(title string) *Report { return &Report{Title: title} }

// Section appends a section and returns it.
func (r *Report) Section(title string) *Section {
	s := &Section{Title: title}
	r.Sections = append(r.Sections, s)
	return s
}

// Section is a titled sequence of paragraphs, tables and plots.
type Section struct {
	Title  string
	blocks []func(w *page)
}

// Text appends a paragraph (plain text; escaped).
func (s *Section) Text(format string, args ...any) {
	t := fmt.Sprintf(format, args...)
	s.blocks = append(s.blocks, func(w *page) {
		fmt.Fprintf(w, "<p>%s</p>\n", html.EscapeString(t))
	})
}

// Note appends a paragraph in a box of the given status (Good, Warn,
// Bad, or "" for neutral).
func (s *Section) Note(status Status, format string, args ...any) {
	t := fmt.Sprintf(format, args...)
	s.blocks = append(s.blocks, func(w *page) {
		fmt.Fprintf(w, "<p class=\"note %s\">%s</p>\n", status, html.EscapeString(t))
	})
}

// Status marks a table row or a note.
type Status string

const (
	Neutral Status = ""
	Good    Status = "good"
	Warn    Status = "warn"
	Bad     Status = "bad"
)

// Table is a table of text cells; cells that look like numbers are right
// aligned.
type Table struct {
	Caption string
	Columns []string
	Rows    [][]string
	// Status colours each row (optional, one per row).
	Status []Status
}

// Table appends a table.
func (s *Section) Table(t Table) {
	s.blocks = append(s.blocks, func(w *page) { writeTable(w, t) })
}

// Plot appends a plot.
func (s *Section) Plot(p Plot) {
	s.blocks = append(s.blocks, func(w *page) {
		w.WriteString("<figure>")
		p.svg(w)
		if p.Caption != "" {
			fmt.Fprintf(w, "<figcaption>%s</figcaption>", html.EscapeString(p.Caption))
		}
		w.WriteString("</figure>\n")
	})
}

func numeric(s string) bool {
	s = strings.TrimSpace(s)
	if s == "" {
		return false
	}
	s = strings.TrimPrefix(s, "−")
	if s == "" {
		return false
	}
	c := s[0]
	return c >= '0' && c <= '9' || (c == '-' || c == '+' || c == '.') && len(s) > 1 && s[1] >= '0' && s[1] <= '9'
}

func writeTable(w *page, t Table) {
	w.WriteString("<table>")
	if t.Caption != "" {
		fmt.Fprintf(w, "<caption>%s</caption>", html.EscapeString(t.Caption))
	}
	w.WriteString("<thead><tr>")
	for _, c := range t.Columns {
		fmt.Fprintf(w, "<th>%s</th>", html.EscapeString(c))
	}
	w.WriteString("</tr></thead><tbody>\n")
	for i, row := range t.Rows {
		cls := ""
		if i < len(t.Status) && t.Status[i] != "" {
			cls = fmt.Sprintf(" class=\"%s\"", t.Status[i])
		}
		fmt.Fprintf(w, "<tr%s>", cls)
		for _, c := range row {
			if numeric(c) {
				fmt.Fprintf(w, "<td class=\"n\">%s</td>", html.EscapeString(c))
			} else {
				fmt.Fprintf(w, "<td>%s</td>", html.EscapeString(c))
			}
		}
		w.WriteString("</tr>\n")
	}
	w.WriteString("</tbody></table>\n")
}

const css = `
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif;color:#1d2330;
 background:#f6f7f9;margin:0;padding:24px}
main{max-width:1000px;margin:0 auto;background:#fff;padding:28px 36px;border-radius:10px;
 box-shadow:0 1px 3px rgba(0,0,0,.08)}
h1{font-size:24px;margin:0 0 4px}h2{font-size:18px;margin:32px 0 10px;padding-bottom:4px;border-bottom:1px solid #e3e6ea}
.sub{color:#5b6472;margin:0 0 12px}
table{border-collapse:collapse;margin:10px 0 14px;font-size:13px;width:100%}
caption{text-align:left;color:#5b6472;padding:0 0 4px}
th,td{padding:5px 10px;border-bottom:1px solid #e8eaee;text-align:left;vertical-align:top}
th{background:#f0f2f5;font-weight:600}td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
tr.good td:first-child{border-left:4px solid #2e9d57}tr.warn td:first-child{border-left:4px solid #d49a00}
tr.bad td:first-child{border-left:4px solid #c8372d}
p.note{padding:8px 12px;border-radius:6px;background:#f0f2f5}p.note.good{background:#e7f5ec}
p.note.warn{background:#fdf4dc}p.note.bad{background:#fbe5e3}
figure{margin:12px 0 18px}figcaption{color:#5b6472;font-size:12.5px;margin-top:2px}
svg{display:block;max-width:100%;height:auto}svg text{font:11px system-ui,sans-serif;fill:#3b4250}
svg .grid{stroke:#eceef1}svg .axis{stroke:#9aa1ab}svg .title{font-size:13px;font-weight:600;fill:#1d2330}
footer{color:#8a919c;font-size:12px;margin-top:28px}
`

// page is the HTML being written; plots number their clip paths on it.
type page struct {
	strings.Builder
	plots int
}

// WriteHTML writes the report as one HTML page.
func (r *Report) WriteHTML(w io.Writer) error {
	var b page
	b.WriteString("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">")
	b.WriteString("<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">")
	fmt.Fprintf(&b, "<title>%s</title><style>%s</style></head><body><main>\n", html.EscapeString(r.Title), css)
	fmt.Fprintf(&b, "<h1>%s</h1>\n", html.EscapeString(r.Title))
	if r.Subtitle != "" {
		fmt.Fprintf(&b, "<p class=\"sub\">%s</p>\n", html.EscapeString(r.Subtitle))
	}
	for _, s := range r.Sections {
		fmt.Fprintf(&b, "<section><h2>%s</h2>\n", html.EscapeString(s.Title))
		for _, blk := range s.blocks {
			blk(&b)
		}
		b.WriteString("</section>\n")
	}
	b.WriteString("<footer>Written by timealign.</footer></main></body></html>\n")
	_, err := io.WriteString(w, b.String())
	return err
}
