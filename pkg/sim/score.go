package sim

import (
	"math"
	"strconv"
	"time"

	"gonum.org/v1/gonum/stat"

	"github.com/timealign/timealign/pkg/stamp"
)

// Score summarizes the errors of estimated stamps against ground truth, as
// testdata/reference/README.md (at the module root) defines them.
type Score struct {
	N      int           // scored samples
	Bias   time.Duration // mean error: a constant latency
	Std    time.Duration // standard deviation: the jitter left in the stamps
	Spread time.Duration // max |e − mean|: the worst single stamp around the bias
	RMS    time.Duration // root mean square of the error
	Max    time.Duration // max |e|
}

// ScoreErrors scores errors given in nanoseconds (estimate − truth). The
// standard deviation is the population one. An empty slice scores zero.
func ScoreErrors(errs []float64) Score {
	if len(errs) == 0 {
		return Score{}
	}
	mean, std := stat.PopMeanStdDev(errs, nil)
	var spread, maxAbs, sq float64
	for _, e := range errs {
		spread = math.Max(spread, math.Abs(e-mean))
		maxAbs = math.Max(maxAbs, math.Abs(e))
		sq += e * e
	}
	return Score{
		N:      len(errs),
		Bias:   dur(mean),
		Std:    dur(std),
		Spread: dur(spread),
		RMS:    dur(math.Sqrt(sq / float64(len(errs)))),
		Max:    dur(maxAbs),
	}
}

// ScoreStamps scores estimates against truth, pairwise, skipping the first
// skip pairs (warm-up) and every pair whose estimate is not ok (ok may be
// nil: all are).
func ScoreStamps(est, truth []stamp.Time, ok []bool, skip int) Score {
	errs := make([]float64, 0, len(est))
	for i := skip; i < len(est) && i < len(truth); i++ {
		if ok != nil && !ok[i] {
			continue
		}
		errs = append(errs, float64(est[i].Sub(truth[i])))
	}
	return ScoreErrors(errs)
}

// PoolScores combines the scores of independent runs: N summed, Bias the
// mean of the runs' biases weighted by N, Std and RMS the root mean square
// of the runs' (weighted by N), Spread and Max the largest. Each run keeps
// its own bias, so the pooled Std is the jitter within runs, not the
// difference of their latencies.
func PoolScores(runs []Score) Score {
	var p Score
	var bias, std2, rms2 float64
	for _, r := range runs {
		if r.N == 0 {
			continue
		}
		n := float64(r.N)
		p.N += r.N
		bias += n * float64(r.Bias)
		std2 += n * float64(r.Std) * float64(r.Std)
		rms2 += n * float64(r.RMS) * float64(r.RMS)
		p.Spread, p.Max = max(p.Spread, r.Spread), max(p.Max, r.Max)
	}
	if p.N == 0 {
		return Score{}
	}
	n := float64(p.N)
	p.Bias, p.Std, p.RMS = dur(bias/n), dur(math.Sqrt(std2/n)), dur(math.Sqrt(rms2/n))
	return p
}

func dur(ns float64) time.Duration { return time.Duration(math.Round(ns)) }

// Micros formats d in microseconds with one decimal, for reports.
func Micros(d time.Duration) string {
	return strconv.FormatFloat(float64(d)/1e3, 'f', 1, 64)
}
