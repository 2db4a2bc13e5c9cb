// Package demo holds the demo command: a tour of timealign on simulated
// sensors with known ground truth, each section one problem of sensor
// stamps and what the package does about it (fixed seeds: every run prints
// the same numbers).
package demo

import (
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/timealign/timealign/cmd/timealign/internal/cli"
	"github.com/timealign/timealign/pkg/sim"
)

// Command returns the demo command.
func Command() *cli.Command {
	return &cli.Command{Name: "demo", Short: "tour of the package on simulated sensors (no ROS 2 needed)", Run: runDemo}
}

const demoDoc = `
A tour of timealign on simulated sensors with known ground truth; no ROS 2
needed. Each section shows one problem of sensor stamps and what the package
does about it. Every run prints the same numbers (fixed seeds).`

// demoMetrics defines, once, the figures every section shows.
const demoMetrics = `Errors are a stamp minus the true acquisition time. bias is their mean (a
constant latency), std their standard deviation (the jitter left), spread the
largest |error − bias| (the farthest single stamp from the bias).`

// demoSection is one part of the tour.
type demoSection struct {
	title string
	run   func(w io.Writer) error
}

// demoSections lists the tour in order; each issue adds its part.
func demoSections() []demoSection {
	return []demoSection{
		{"The problem: what sensor stamps look like", demoProblem},
		{"Jitter: stamps of a periodic stream (tsest)", demoTsest},
		{"Device clocks: ticks to host time (pll)", demoPLL},
		{"Matching topics: message_filters policies (sync)", demoSync},
		{"Time order: Rock's stream aligner (align)", demoAlign},
		{"ArduPilot logs: the boot clock on the tlog's clock (mav)", demoMav},
	}
}

func runDemo(e *cli.Env, args []string) error {
	fs := cli.NewFlags(e, "demo", "", demoDoc)
	if err := cli.ParseFlags(e, fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return cli.Usagef("demo takes no arguments, got %q", fs.Args())
	}
	fmt.Fprintln(e.Stdout, "timealign demo — trustworthy time for robots (simulated sensors, fixed seeds)")
	fmt.Fprintln(e.Stdout)
	fmt.Fprintln(e.Stdout, demoMetrics)
	for i, s := range demoSections() {
		if err := e.Ctx.Err(); err != nil {
			return err
		}
		fmt.Fprintf(e.Stdout, "\n%d. %s\n%s\n", i+1, s.title, strings.Repeat("─", len(s.title)+3))
		if err := s.run(e.Stdout); err != nil {
			return fmt.Errorf("%s: %w", s.title, err)
		}
	}
	return nil
}

// demoProblem shows the raw error of stamps taken on arrival.
func demoProblem(w io.Writer) error {
	para(w, "Drivers stamp a sample when the OS hands it to them: the stamp is late by the transport "+
		"latency, scattered by scheduler jitter; device clocks drift and wrap.")
	fmt.Fprintln(w)
	tb := cli.NewTable("sensor", "rate", "samples", "lost", "bias µs", "std µs", "spread µs")
	var imu []sim.Sample
	for _, name := range []string{"imu", "camera", "lidar", "autopilot", "bursty"} {
		p, err := sim.LookupPreset(name)
		if err != nil {
			return err
		}
		cfg := p.Config
		cfg.Count = int(20 * time.Second / cfg.Period)
		s, err := sim.Generate(cfg)
		if err != nil {
			return err
		}
		if name == "imu" {
			imu = s
		}
		errs := rawErrors(s)
		sc := sim.ScoreErrors(errs)
		tb.Row(name, fmt.Sprintf("%.0f Hz", float64(time.Second)/float64(cfg.Period)),
			fmt.Sprint(len(s)), fmt.Sprint(len(s)-len(errs)),
			sim.Micros(sc.Bias), sim.Micros(sc.Std), sim.Micros(sc.Spread))
	}
	tb.Write(w)
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Raw IMU stamp error (receive − true), histogram of 2000 samples:")
	histogram(w, rawErrors(imu), 10, 40)
	p, err := sim.LookupPreset("lidar")
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "\nThe lidar's 32-bit µs tick counter wraps every %.0f minutes, and its clock runs %+.0f ppm\n",
		float64(uint64(1)<<32)*float64(p.Config.Clock.TickPeriod)/float64(time.Minute), p.Config.Clock.SkewPPM)
	fmt.Fprintf(w, "fast: %.1f ms of drift per minute against the host.\n", p.Config.Clock.SkewPPM*60/1e3)
	return nil
}

func rawErrors(s []sim.Sample) []float64 {
	var errs []float64
	for _, x := range s {
		if !x.Lost {
			errs = append(errs, float64(x.Receive.Sub(x.True)))
		}
	}
	return errs
}

// demoWidth is the width the demo's prose is wrapped to.
const demoWidth = 86

// para writes text as a paragraph wrapped at demoWidth columns.
func para(w io.Writer, text string) {
	line := 0
	for i, word := range words(text) {
		n := utf8.RuneCountInString(word)
		if i > 0 && line+1+n > demoWidth {
			fmt.Fprintln(w)
			line = 0
		} else if i > 0 {
			fmt.Fprint(w, " ")
			line++
		}
		fmt.Fprint(w, word)
		line += n
	}
	fmt.Fprintln(w)
}

// words splits text at spaces, keeping a number with its unit ("5 ms",
// "2 %") so that no line ends between them.
func words(text string) []string {
	var out []string
	for _, f := range strings.Fields(text) {
		if n := len(out); n > 0 && isUnit(f) && isNumber(out[n-1]) {
			out[n-1] += " " + f
			continue
		}
		out = append(out, f)
	}
	return out
}

func isUnit(s string) bool {
	switch strings.TrimRight(s, ".,;:)") {
	case "ns", "µs", "ms", "s", "min", "h", "Hz", "kHz", "ppm", "%", "bit", "MB", "GB":
		return true
	}
	return false
}

func isNumber(s string) bool {
	s = strings.TrimLeft(s, "(+−-~≤≥<>")
	return s != "" && strings.IndexFunc(s, func(r rune) bool { return !strings.ContainsRune("0123456789.,–", r) }) < 0
}

// histogram prints a text histogram of values (ns) in bins, bars at most
// barWidth wide.
func histogram(w io.Writer, values []float64, bins, barWidth int) {
	if len(values) == 0 {
		return
	}
	values = values[:min(len(values), 2000)]
	lo, hi := values[0], values[0]
	for _, v := range values {
		lo, hi = min(lo, v), max(hi, v)
	}
	if hi == lo {
		hi = lo + 1
	}
	counts := make([]int, bins)
	for _, v := range values {
		b := int(float64(bins) * (v - lo) / (hi - lo))
		counts[min(b, bins-1)]++
	}
	most := 0
	for _, c := range counts {
		most = max(most, c)
	}
	step := (hi - lo) / float64(bins)
	for i, c := range counts {
		from := (lo + float64(i)*step) / 1e3
		fmt.Fprintf(w, "  %7.0f–%-7.0f µs │%s %d\n", from, from+step/1e3, strings.Repeat("█", c*barWidth/most), c)
	}
}
