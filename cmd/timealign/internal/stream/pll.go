package stream

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/timealign/timealign/cmd/timealign/internal/cli"
	"github.com/timealign/timealign/pkg/csvio"
	"github.com/timealign/timealign/pkg/pll"
)

const pllDoc = `
Maps device clock ticks to host time (pkg/pll). Input: CSV with header
receive_ns,ticks[,scan_ticks]: the host's receive stamp (integer ns), the
device tick the sample was sent with, and optionally the tick of the
measurement to stamp (defaults to ticks). Output: one row per input row,
receive_ns,ticks,valid,estimate_ns, where estimate_ns is the measurement's
host time (empty while valid is false).

Modes: envelope (the default) fits the lower envelope of a sliding window:
latency is never negative, so the true line lies under the points; it is
robust to latency and outliers and the most accurate. regression fits the
FIFO with its own intercept; offset is for boot clocks of known rate (min
of receive − device time); sick reproduces SICK's SoftwarePLL (sick_scan_xd)
row for row, for identical behaviour. --fifo-size, --max-deviation,
--max-invalid and --tick-bits default to SICK's values in every mode; a flag
the chosen mode does not use is an error.`

// pllModeFlags lists the flags that only some modes use.
var pllModeFlags = map[string][]string{
	"tick-period":    {"regression", "envelope", "offset"},
	"window-samples": {"regression", "envelope", "offset"},
	"max-skew-ppm":   {"regression", "envelope", "offset"},
	"max-early":      {"envelope", "offset"},
	"track-skew":     {"offset"},
}

func runPLL(e *cli.Env, args []string) error {
	fs := cli.NewFlags(e, "pll", "[flags] [input.csv]", pllDoc)
	cfg := pll.DefaultConfig()
	mode := fs.String("mode", cfg.Mode.String(), "estimator: envelope (most accurate), regression, offset, or sick (SICK's SoftwarePLL)")
	fs.IntVar(&cfg.FIFOSize, "fifo-size", cfg.FIFOSize, "FIFO size: samples that must agree before stamps are valid")
	fs.DurationVar(&cfg.MaxDeviation, "max-deviation", cfg.MaxDeviation, "largest distance of a consistent sample from the fit")
	fs.IntVar(&cfg.MaxInvalid, "max-invalid", cfg.MaxInvalid, "consecutive inconsistent samples before starting over")
	fs.IntVar(&cfg.TickBits, "tick-bits", cfg.TickBits, "width of the tick counter in bits (1..64); ticks wrap at 2^bits")
	fs.DurationVar(&cfg.TickPeriod, "tick-period", cfg.TickPeriod, "regression/envelope/offset: nominal duration of one tick")
	fs.IntVar(&cfg.Window, "window-samples", cfg.Window, "envelope/offset: samples in the sliding window; regression: slope memory")
	fs.Float64Var(&cfg.MaxSkewPPM, "max-skew-ppm", cfg.MaxSkewPPM, "regression/envelope/offset: largest rate error against --tick-period, ppm")
	fs.DurationVar(&cfg.MaxEarly, "max-early", cfg.MaxEarly, "envelope/offset: how far before the fit a sample may arrive (capped at --max-deviation)")
	fs.BoolVar(&cfg.TrackSkew, "track-skew", false, "offset: fit the clock rate too")
	out := fs.String("out", "", "output file (default standard output)")
	status := fs.String("status", "", "write the final status as JSON to this file")
	cli.Deprecate(e, fs, "window", "window-samples")
	if err := cli.ParseFlags(e, fs, args); err != nil {
		return err
	}
	m, err := pll.ParseMode(*mode)
	if err != nil {
		return cli.Usagef("--mode: %s is not a mode (want envelope, regression, offset or sick)", cli.Cut(*mode))
	}
	cfg.Mode = m
	if err := cli.UnusedFlags(fs, "--mode", m.String(), pllModeFlags); err != nil {
		return err
	}
	if set := cli.SetFlags(fs); set["max-early"] && set["max-deviation"] && cfg.MaxEarly > cfg.MaxDeviation {
		return cli.Usagef("--max-early (%v) is larger than --max-deviation (%v): a sample that early would be inconsistent anyway", cfg.MaxEarly, cfg.MaxDeviation)
	}
	p, err := pll.New(cfg)
	if err != nil {
		return cli.ConfigError(fs, err, map[string]string{"Window": "window-samples"})
	}
	f, err := cli.OpenFiles(e, fs, cli.Out("--out", *out), cli.Out("--status", *status))
	if err != nil {
		return err
	}
	defer f.Abort()
	sum, err := pllStream(p, f.In, f.Name, f.Out(0))
	if err != nil {
		return err
	}
	if f.Asked(1) {
		if err := cli.WriteJSON(f.Out(1), p.Status()); err != nil {
			return err
		}
	}
	if err := f.Commit(); err != nil {
		return err
	}
	sum.report(e, p.Status())
	return nil
}

// pllSummary counts what the user should hear about.
type pllSummary struct {
	rows, invalid int
}

// report says on stderr how many rows got no estimate, with the counters
// that explain them.
func (s pllSummary) report(e *cli.Env, st pll.Status) {
	if s.invalid == 0 {
		return
	}
	var why []string
	for _, c := range []struct {
		n    int
		what string
	}{{st.Rejected, "rejected"}, {st.Resets, "restarts"}, {st.Relocks, "re-locks"}, {st.Stale, "ticks going back"},
		{st.Duplicates, "duplicates"}, {st.TimeBack, "receive stamps going back"}} {
		if c.n > 0 {
			why = append(why, fmt.Sprintf("%d %s", c.n, c.what))
		}
	}
	msg := "while the fit locked"
	if len(why) > 0 {
		msg += " (" + strings.Join(why, ", ") + ")"
	}
	fmt.Fprintf(e.Stderr, "timealign pll: %d of %d rows have no estimate (valid=false) %s; --status has the counters\n", s.invalid, s.rows, msg)
}

// pllStream runs p over the rows of in and writes one output row each.
func pllStream(p *pll.PLL, in io.Reader, name string, out io.Writer) (pllSummary, error) {
	var sum pllSummary
	rd, err := csvio.NewReader(in, name, csvio.Columns{Required: []string{"receive_ns", "ticks"}, Optional: []string{"scan_ticks"}})
	if err != nil {
		return sum, err
	}
	mask := ^uint64(0) >> (64 - p.Config().TickBits)
	w := csvio.NewWriter(out, "receive_ns", "ticks", "valid", "estimate_ns")
	for {
		row, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return sum, err
		}
		r, err := row.Stamp(0)
		if err != nil {
			return sum, err
		}
		tk, err := row.Uint(1)
		if err != nil {
			return sum, err
		}
		if tk > mask {
			return sum, row.Errorf(1, "tick %d does not fit in --tick-bits %d", tk, p.Config().TickBits)
		}
		scan, ok, err := row.OptUint(2)
		if err != nil {
			return sum, err
		}
		if !ok {
			scan = tk
		} else if scan > mask {
			return sum, row.Errorf(2, "tick %d does not fit in --tick-bits %d", scan, p.Config().TickBits)
		}
		p.UpdateScan(r, tk, scan)
		est, valid := p.Corrected(scan)
		sum.rows++
		w.Stamp(r).Uint(tk).Bool(valid)
		if valid {
			w.Stamp(est)
		} else {
			sum.invalid++
			w.Empty()
		}
		w.EndRow()
	}
	return sum, w.Flush()
}
