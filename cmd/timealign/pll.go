package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

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

Modes: sick reproduces SICK's SoftwarePLL (sick_scan_xd) and its defaults;
regression fits the FIFO with its own intercept; envelope fits the lower
envelope of a sliding window (robust to latency and outliers); offset is for
boot clocks of known rate (min of receive − device time).`

// pllFlags holds the command's flags; defaults are pll.DefaultConfig's.
type pllFlags struct {
	mode   string
	cfg    pll.Config
	out    string
	status string
}

func runPLL(e *env, args []string) error {
	fs := newFlags(e, "pll", "[flags] [input.csv]", pllDoc)
	f := pllFlags{cfg: pll.DefaultConfig()}
	fs.StringVar(&f.mode, "mode", "sick", "estimator: sick, regression, envelope or offset")
	fs.IntVar(&f.cfg.FIFOSize, "fifo-size", f.cfg.FIFOSize, "FIFO size: samples that must agree before stamps are valid")
	fs.DurationVar(&f.cfg.MaxDeviation, "max-deviation", f.cfg.MaxDeviation, "largest distance of a consistent sample from the fit")
	fs.IntVar(&f.cfg.MaxInvalid, "max-invalid", f.cfg.MaxInvalid, "consecutive inconsistent samples before starting over")
	fs.IntVar(&f.cfg.TickBits, "tick-bits", f.cfg.TickBits, "width of the tick counter in bits (1..64); ticks wrap at 2^bits")
	fs.DurationVar(&f.cfg.TickPeriod, "tick-period", f.cfg.TickPeriod, "nominal duration of one tick")
	fs.IntVar(&f.cfg.Window, "window", f.cfg.Window, "envelope/offset: samples in the sliding window; regression: slope memory")
	fs.Float64Var(&f.cfg.MaxSkewPPM, "max-skew-ppm", f.cfg.MaxSkewPPM, "regression/envelope: largest rate error against --tick-period, ppm")
	fs.DurationVar(&f.cfg.MaxEarly, "max-early", f.cfg.MaxEarly, "envelope/offset: how far before the fit a sample may arrive")
	fs.BoolVar(&f.cfg.TrackSkew, "track-skew", false, "offset: fit the clock rate too")
	fs.StringVar(&f.out, "out", "", "output file (default standard output)")
	fs.StringVar(&f.status, "status", "", "write the final status as JSON to this file")
	if err := parseFlags(e, fs, args); err != nil {
		return err
	}
	m, err := pll.ParseMode(f.mode)
	if err != nil {
		return usagef("--mode: %v", err)
	}
	f.cfg.Mode = m
	p, err := pll.New(f.cfg)
	if err != nil {
		return usagef("%v (see -help)", err)
	}
	in, name, closeIn, err := input(e, fs)
	if err != nil {
		return err
	}
	defer closeIn()
	out, closeOut, err := output(e, f.out)
	if err != nil {
		return err
	}
	err = pllStream(e, p, in, name, out)
	if cerr := closeOut(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if f.status != "" {
		return writeStatusJSON(f.status, p.Status())
	}
	return nil
}

// pllStream runs p over the rows of in and writes one output row each.
func pllStream(e *env, p *pll.PLL, in io.Reader, name string, out io.Writer) error {
	rd, err := csvio.NewReader(in, name, csvio.Columns{Required: []string{"receive_ns", "ticks"}, Optional: []string{"scan_ticks"}})
	if err != nil {
		return err
	}
	mask := ^uint64(0) >> (64 - p.Config().TickBits)
	w := csvio.NewWriter(out, "receive_ns", "ticks", "valid", "estimate_ns")
	for n := 0; ; n++ {
		if n&1023 == 0 {
			if err := e.ctx.Err(); err != nil {
				return err
			}
		}
		row, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		r, err := row.Stamp(0)
		if err != nil {
			return err
		}
		tk, err := row.Uint(1)
		if err != nil {
			return err
		}
		if tk > mask {
			return row.Errorf(1, "tick %d does not fit in --tick-bits %d", tk, p.Config().TickBits)
		}
		scan, ok, err := row.OptUint(2)
		if err != nil {
			return err
		}
		if !ok {
			scan = tk
		} else if scan > mask {
			return row.Errorf(2, "tick %d does not fit in --tick-bits %d", scan, p.Config().TickBits)
		}
		p.UpdateScan(r, tk, scan)
		est, valid := p.Corrected(scan)
		w.Stamp(r).Uint(tk).Bool(valid)
		if valid {
			w.Stamp(est)
		} else {
			w.Empty()
		}
		w.EndRow()
	}
	return w.Flush()
}

func writeStatusJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("--status: %w", err)
	}
	return nil
}
