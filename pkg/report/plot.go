package report

import (
	"fmt"
	"html"
	"math"
	"strings"
	"time"
)

// Axis describes one axis of a plot.
type Axis struct {
	Label string
	// Unit formats the ticks: "" plain numbers, "time" Unix nanoseconds
	// shown as UTC clock times, "duration" nanoseconds shown as durations
	// (µs, ms, s), "s" seconds.
	Unit string
	// Log makes the axis logarithmic (values ≤ 0 are left out).
	Log bool
	// Min and Max fix the range when Min < Max (else it fits the data).
	Min, Max float64
}

// Series is one line of a plot, or one histogram.
type Series struct {
	Name string
	X, Y []float64
	// Lo and Hi, when set (same length as X), draw a band around the line:
	// the min and max of each bucket.
	Lo, Hi []float64
	// Points draws markers instead of a line.
	Points bool
	// Bars draws a histogram: X holds len(Y)+1 bin edges.
	Bars bool
}

// Plot is an SVG chart of series.
type Plot struct {
	Title   string
	Caption string
	X, Y    Axis
	Series  []Series
	// Width and Height in px; 0 means 940 × 280.
	Width, Height int
}

var palette = []string{"#2f6fb3", "#e07b28", "#2e9d57", "#c8372d", "#7d5bb5", "#8c6d31", "#d361a8", "#5f6b7a", "#1fa2a8", "#b5a22c"}

type scale struct {
	lo, hi   float64
	a, b     float64 // pixel range
	log      bool
	unit     string
	ticks    []float64
	tickText []string
}

func (s *scale) px(v float64) float64 {
	if s.log {
		v, lo, hi := math.Log10(v), math.Log10(s.lo), math.Log10(s.hi)
		return s.a + (v-lo)/(hi-lo)*(s.b-s.a)
	}
	return s.a + (v-s.lo)/(s.hi-s.lo)*(s.b-s.a)
}

func (s *scale) ok(v float64) bool {
	return !math.IsNaN(v) && !math.IsInf(v, 0) && (!s.log || v > 0)
}

func (p Plot) svg(w *page) {
	w.plots++
	W, H := p.Width, p.Height
	if W == 0 {
		W = 940
	}
	if H == 0 {
		H = 280
	}
	left, right, top, bottom := 72.0, 16.0, 28.0, 42.0
	if len(p.Series) > 1 {
		right = 150
	}
	xs := &scale{a: left, b: float64(W) - right, log: p.X.Log, unit: p.X.Unit}
	ys := &scale{a: float64(H) - bottom, b: top, log: p.Y.Log, unit: p.Y.Unit}
	fit(xs, p.X, p.Series, true)
	fit(ys, p.Y, p.Series, false)
	fmt.Fprintf(w, `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %d %d" width="%d" height="%d" role="img">`, W, H, W, H)
	if p.Title != "" {
		fmt.Fprintf(w, `<text class="title" x="%g" y="16">%s</text>`, left, html.EscapeString(p.Title))
	}
	if xs.hi <= xs.lo || ys.hi <= ys.lo {
		fmt.Fprintf(w, `<text x="%g" y="%g">no data</text></svg>`, left+10, float64(H)/2)
		return
	}
	// Grid and ticks.
	for i, t := range ys.ticks {
		y := ys.px(t)
		fmt.Fprintf(w, `<line class="grid" x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f"/>`, xs.a, xs.b, y, y)
		fmt.Fprintf(w, `<text x="%.1f" y="%.1f" text-anchor="end">%s</text>`, xs.a-6, y+4, html.EscapeString(ys.tickText[i]))
	}
	for i, t := range xs.ticks {
		x := xs.px(t)
		fmt.Fprintf(w, `<line class="grid" x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f"/>`, x, x, ys.b, ys.a)
		fmt.Fprintf(w, `<text x="%.1f" y="%.1f" text-anchor="middle">%s</text>`, x, ys.a+15, html.EscapeString(xs.tickText[i]))
	}
	fmt.Fprintf(w, `<line class="axis" x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f"/>`, xs.a, xs.b, ys.a, ys.a)
	fmt.Fprintf(w, `<line class="axis" x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f"/>`, xs.a, xs.a, ys.a, ys.b)
	if p.X.Label != "" {
		fmt.Fprintf(w, `<text x="%.1f" y="%d" text-anchor="middle">%s</text>`, (xs.a+xs.b)/2, H-6, html.EscapeString(p.X.Label))
	}
	if p.Y.Label != "" {
		fmt.Fprintf(w, `<text transform="translate(14 %.1f) rotate(-90)" text-anchor="middle">%s</text>`, (ys.a+ys.b)/2, html.EscapeString(p.Y.Label))
	}
	fmt.Fprintf(w, `<clipPath id="c%d"><rect x="%.1f" y="%.1f" width="%.1f" height="%.1f"/></clipPath><g clip-path="url(#c%d)">`,
		w.plots, xs.a, ys.b, xs.b-xs.a, ys.a-ys.b, w.plots)
	for i, s := range p.Series {
		col := palette[i%len(palette)]
		switch {
		case s.Bars:
			bars(w, s, xs, ys, col)
		default:
			line(w, s, xs, ys, col)
		}
	}
	w.WriteString("</g>")
	if len(p.Series) > 1 {
		for i, s := range p.Series {
			y := top + 8 + float64(i)*16
			fmt.Fprintf(w, `<rect x="%.1f" y="%.1f" width="12" height="3" fill="%s"/>`, xs.b+12, y-4, palette[i%len(palette)])
			fmt.Fprintf(w, `<text x="%.1f" y="%.1f">%s</text>`, xs.b+30, y, html.EscapeString(clip(s.Name, 20)))
		}
	}
	w.WriteString("</svg>")
}

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// fit sets the scale's range from the data (or the axis's fixed range)
// and its ticks.
func fit(s *scale, a Axis, series []Series, x bool) {
	lo, hi := math.Inf(1), math.Inf(-1)
	see := func(v float64) {
		if s.ok(v) {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	for _, sr := range series {
		if x {
			for _, v := range sr.X {
				see(v)
			}
			continue
		}
		for _, v := range sr.Y {
			see(v)
		}
		for _, v := range sr.Lo {
			see(v)
		}
		for _, v := range sr.Hi {
			see(v)
		}
		if sr.Bars && !s.log {
			see(0)
		}
	}
	if a.Min < a.Max {
		lo, hi = a.Min, a.Max
	}
	if math.IsInf(lo, 0) {
		s.lo, s.hi = 0, 0
		return
	}
	if hi == lo {
		if s.log {
			lo, hi = lo/2, hi*2
		} else {
			d := math.Max(math.Abs(lo)*0.1, 1)
			lo, hi = lo-d, hi+d
		}
	}
	if !x && !s.log && !(a.Min < a.Max) {
		pad := (hi - lo) * 0.05
		if lo != 0 || hi < 0 {
			lo -= pad
		}
		hi += pad
	}
	s.lo, s.hi = lo, hi
	switch {
	case s.log:
		for e := math.Floor(math.Log10(lo)); e <= math.Ceil(math.Log10(hi)); e++ {
			v := math.Pow(10, e)
			if v >= lo && v <= hi {
				s.ticks = append(s.ticks, v)
			}
		}
	case s.unit == "time":
		s.ticks = timeTicks(lo, hi)
	default:
		s.ticks = niceTicks(lo, hi, 6)
	}
	for _, t := range s.ticks {
		s.tickText = append(s.tickText, format(t, s.unit, s.ticks))
	}
}

// niceTicks returns about n ticks at 1, 2 or 5 × 10^k steps.
func niceTicks(lo, hi float64, n int) []float64 {
	raw := (hi - lo) / float64(n)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag
	for _, m := range []float64{1, 2, 5, 10} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	var out []float64
	for v := math.Ceil(lo/step) * step; v <= hi+step*1e-9; v += step {
		if math.Abs(v) < step*1e-9 {
			v = 0
		}
		out = append(out, v)
	}
	return out
}

var timeSteps = []time.Duration{time.Millisecond, 10 * time.Millisecond, 100 * time.Millisecond, time.Second, 2 * time.Second,
	5 * time.Second, 10 * time.Second, 15 * time.Second, 30 * time.Second, time.Minute, 2 * time.Minute, 5 * time.Minute,
	10 * time.Minute, 15 * time.Minute, 30 * time.Minute, time.Hour, 2 * time.Hour, 3 * time.Hour, 6 * time.Hour, 12 * time.Hour, 24 * time.Hour}

// timeTicks returns clock-aligned ticks of Unix ns.
func timeTicks(lo, hi float64) []float64 {
	step := timeSteps[len(timeSteps)-1]
	for _, s := range timeSteps {
		if (hi-lo)/float64(s) <= 7 {
			step = s
			break
		}
	}
	st := float64(step)
	var out []float64
	for v := math.Ceil(lo/st) * st; v <= hi; v += st {
		out = append(out, v)
	}
	return out
}

// format writes a tick value.
func format(v float64, unit string, ticks []float64) string {
	switch unit {
	case "time":
		t := time.Unix(0, int64(v)).UTC()
		if len(ticks) > 1 && ticks[1]-ticks[0] < float64(time.Second) {
			return t.Format("15:04:05.000")
		}
		return t.Format("15:04:05")
	case "duration":
		return Duration(v)
	case "s":
		return trimFloat(v) + "s"
	}
	return trimFloat(v)
}

func trimFloat(v float64) string {
	if v == 0 {
		return "0"
	}
	if math.Abs(v) >= 1e6 || math.Abs(v) < 1e-3 {
		return fmt.Sprintf("%.3g", v)
	}
	s := fmt.Sprintf("%.6f", v)
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}

// Duration formats nanoseconds with a unit that fits (ns, µs, ms, s) and
// 3 significant digits.
func Duration(ns float64) string {
	a := math.Abs(ns)
	switch {
	case a == 0:
		return "0"
	case a < 1e3:
		return trimSig(ns) + " ns"
	case a < 1e6:
		return trimSig(ns/1e3) + " µs"
	case a < 1e9:
		return trimSig(ns/1e6) + " ms"
	}
	return trimSig(ns/1e9) + " s"
}

func trimSig(v float64) string {
	s := fmt.Sprintf("%.3g", v)
	if strings.ContainsAny(s, "e") {
		return fmt.Sprintf("%.0f", v)
	}
	return s
}

// maxPoints bounds what one series draws; longer series are thinned by
// keeping the min and max of each run (the shape, outliers included).
const maxPoints = 2000

func line(w *page, s Series, xs, ys *scale, col string) {
	n := len(s.X)
	if len(s.Y) < n {
		n = len(s.Y)
	}
	idx := thin(s.X[:n], s.Y[:n], maxPoints)
	if len(s.Lo) == n && len(s.Hi) == n {
		var up, down []string
		for _, i := range idx {
			if xs.ok(s.X[i]) && ys.ok(s.Lo[i]) && ys.ok(s.Hi[i]) {
				up = append(up, fmt.Sprintf("%.1f,%.1f", xs.px(s.X[i]), ys.px(s.Hi[i])))
				down = append(down, fmt.Sprintf("%.1f,%.1f", xs.px(s.X[i]), ys.px(s.Lo[i])))
			}
		}
		for i, j := 0, len(down)-1; i < j; i, j = i+1, j-1 {
			down[i], down[j] = down[j], down[i]
		}
		if len(up) > 0 {
			fmt.Fprintf(w, `<polygon points="%s %s" fill="%s" fill-opacity="0.18" stroke="none"/>`, strings.Join(up, " "), strings.Join(down, " "), col)
		}
	}
	if s.Points {
		for _, i := range idx {
			if xs.ok(s.X[i]) && ys.ok(s.Y[i]) {
				fmt.Fprintf(w, `<circle cx="%.1f" cy="%.1f" r="1.6" fill="%s"/>`, xs.px(s.X[i]), ys.px(s.Y[i]), col)
			}
		}
		return
	}
	var pts []string
	flush := func() {
		if len(pts) > 0 {
			fmt.Fprintf(w, `<polyline points="%s" fill="none" stroke="%s" stroke-width="1.4"/>`, strings.Join(pts, " "), col)
			pts = pts[:0]
		}
	}
	for _, i := range idx {
		if !xs.ok(s.X[i]) || !ys.ok(s.Y[i]) {
			flush() // a gap
			continue
		}
		pts = append(pts, fmt.Sprintf("%.1f,%.1f", xs.px(s.X[i]), ys.px(s.Y[i])))
	}
	flush()
}

// thin returns the indexes to draw: all of them, or for long series the
// first, min, max and last of each of max/4 runs.
func thin(x, y []float64, limit int) []int {
	n := len(x)
	idx := make([]int, 0, min(n, limit))
	if n <= limit {
		for i := range n {
			idx = append(idx, i)
		}
		return idx
	}
	runs := limit / 4
	for r := range runs {
		a, b := r*n/runs, (r+1)*n/runs
		if a >= b {
			continue
		}
		lo, hi := a, a
		for i := a; i < b; i++ {
			if y[i] < y[lo] {
				lo = i
			}
			if y[i] > y[hi] {
				hi = i
			}
		}
		for _, i := range sortedUnique(a, lo, hi, b-1) {
			idx = append(idx, i)
		}
	}
	return idx
}

func sortedUnique(v ...int) []int {
	for i := 1; i < len(v); i++ {
		for j := i; j > 0 && v[j] < v[j-1]; j-- {
			v[j], v[j-1] = v[j-1], v[j]
		}
	}
	out := v[:0]
	for i, x := range v {
		if i == 0 || x != v[i-1] {
			out = append(out, x)
		}
	}
	return out
}

func bars(w *page, s Series, xs, ys *scale, col string) {
	if len(s.X) != len(s.Y)+1 {
		return
	}
	base := ys.a
	var pts []string
	for i, c := range s.Y {
		x0, x1 := s.X[i], s.X[i+1]
		if !xs.ok(x0) || !xs.ok(x1) || !ys.ok(c) {
			continue
		}
		y := ys.px(c)
		if ys.log && c <= 0 {
			y = base
		}
		pts = append(pts, fmt.Sprintf("%.1f,%.1f %.1f,%.1f", xs.px(x0), y, xs.px(x1), y))
	}
	if len(pts) == 0 {
		return
	}
	first := strings.SplitN(pts[0], ",", 2)[0]
	last := pts[len(pts)-1]
	lastX := last[strings.LastIndex(last, " ")+1 : strings.LastIndex(last, ",")]
	fmt.Fprintf(w, `<polygon points="%s,%.1f %s %s,%.1f" fill="%s" fill-opacity="0.35" stroke="%s" stroke-width="1"/>`,
		first, base, strings.Join(pts, " "), lastX, base, col, col)
}
