package pll

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timealign/timealign/internal/testutil/benchdata"
	"github.com/timealign/timealign/pkg/csvio"
	"github.com/timealign/timealign/pkg/sim"
	"github.com/timealign/timealign/pkg/stamp"
)

// input is one row of the CLI's input format.
type input struct {
	r    stamp.Time
	t, s uint64
}

// reference is one row of a SICK output file.
type reference struct {
	valid bool
	est   stamp.Time
}

func readInputs(t testing.TB, path string) []input {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	rd, err := csvio.NewReader(f, path, csvio.Columns{Required: []string{"receive_ns", "ticks"}, Optional: []string{"scan_ticks"}})
	require.NoError(t, err)
	var out []input
	for {
		row, err := rd.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		require.NoError(t, err)
		r, err := row.Stamp(0)
		require.NoError(t, err)
		tk, err := row.Uint(1)
		require.NoError(t, err)
		s, ok, err := row.OptUint(2)
		require.NoError(t, err)
		if !ok {
			s = tk
		}
		out = append(out, input{r, tk, s})
	}
}

func readStamps(t testing.TB, path, col string, opt bool) ([]stamp.Time, []bool) {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	cols := csvio.Columns{Required: []string{col}}
	if opt {
		cols.Required = []string{"valid", col}
	}
	rd, err := csvio.NewReader(f, path, cols)
	require.NoError(t, err)
	var st []stamp.Time
	var ok []bool
	for {
		row, err := rd.Next()
		if errors.Is(err, io.EOF) {
			return st, ok
		}
		require.NoError(t, err)
		c := 0
		v := true
		if opt {
			v = row.String(0) == "true"
			c = 1
		}
		var x stamp.Time
		if v {
			x, err = row.Stamp(c)
			require.NoError(t, err)
		}
		st = append(st, x)
		ok = append(ok, v)
	}
}

// run feeds inputs to a PLL for cfg and returns estimate and validity per row.
func run(t testing.TB, cfg Config, in []input) ([]stamp.Time, []bool) {
	t.Helper()
	p, err := New(cfg)
	require.NoError(t, err)
	est := make([]stamp.Time, len(in))
	ok := make([]bool, len(in))
	for i, x := range in {
		p.UpdateScan(x.r, x.t, x.s)
		est[i], ok[i] = p.Corrected(x.s)
	}
	return est, ok
}

// benchScenarios lists the reference scenarios (testdata/reference/pll at
// the module root) by their path without extension.
func benchScenarios(t *testing.T) []string {
	dir := benchdata.Dir(t, "pll")
	m, err := filepath.Glob(filepath.Join(dir, "*.sick.csv"))
	require.NoError(t, err)
	require.NotEmpty(t, m)
	for i := range m {
		m[i] = strings.TrimSuffix(m[i], ".sick.csv")
	}
	return m
}

// compareSick checks SICK mode against a reference file row for row.
func compareSick(t *testing.T, cfg Config, in []input, refEst []stamp.Time, refOK []bool) {
	t.Helper()
	est, ok := run(t, cfg, in)
	require.Len(t, refOK, len(in))
	for i := range in {
		require.Equal(t, refOK[i], ok[i], "row %d validity", i+2)
		if ok[i] {
			d := est[i].Sub(refEst[i])
			require.LessOrEqual(t, max(d, -d).Microseconds(), int64(0), "row %d: ours %v, SICK %v (%v)", i+2, est[i], refEst[i], d)
		}
	}
}

func TestSickMatchesBench(t *testing.T) {
	for _, base := range benchScenarios(t) {
		t.Run(filepath.Base(base), func(t *testing.T) {
			in := readInputs(t, base+".csv")
			refEst, refOK := readStamps(t, base+".sick.csv", "estimate_ns", true)
			require.Len(t, refOK, len(in), "%s: one row per row of %s", base+".sick.csv", base+".csv")
			cfg := SickConfig()
			compareSick(t, cfg, in, refEst, refOK)
		})
	}
}

func score(est, truth []stamp.Time, ok []bool, skip int) sim.Score {
	return sim.ScoreStamps(est, truth, ok, skip)
}

func TestBenchAccuracy(t *testing.T) {
	// std per mode and scenario, as docs/performance.md quotes them.
	std := map[Mode][]string{}
	var gain []float64 // SICK's std over the envelope's
	for _, base := range benchScenarios(t) {
		t.Run(filepath.Base(base), func(t *testing.T) {
			in := readInputs(t, base+".csv")
			truth, _ := readStamps(t, base+".truth.csv", "truth_ns", false)
			refEst, refOK := readStamps(t, base+".sick.csv", "estimate_ns", true)
			require.Len(t, truth, len(in), "%s: one row per row of %s", base+".truth.csv", base+".csv")
			require.Len(t, refOK, len(in), "%s: one row per row of %s", base+".sick.csv", base+".csv")
			sick := score(refEst, truth, refOK, 7)
			for _, m := range []Mode{Sick, Regression, Envelope, Offset} {
				cfg := SickConfig()
				cfg.Mode = m
				est, ok := run(t, cfg, in)
				sc := score(est, truth, ok, cfg.FIFOSize)
				t.Logf("%-10v n=%d bias=%v std=%v spread=%v (SICK std %v) ratio %.3f", m, sc.N, sc.Bias, sc.Std, sc.Spread, sick.Std, float64(sc.Std)/float64(sick.Std))
				switch m {
				case Envelope:
					gain = append(gain, float64(sick.Std)/float64(sc.Std))
					require.LessOrEqual(t, sc.Std, sick.Std/5, "envelope: at most a fifth of SICK's std")
				case Regression:
					require.LessOrEqual(t, sc.Std, sick.Std/2, "regression: at most half of SICK's std")
				case Sick:
					require.InDelta(t, float64(sick.Std), float64(sc.Std), float64(time.Microsecond), "sick: SICK's own figure")
				}
				if sc.Std >= 1000*time.Microsecond {
					std[m] = append(std[m], fmt.Sprintf("%.0f", float64(sc.Std)/1e3))
				} else {
					std[m] = append(std[m], sim.Micros(sc.Std))
				}
			}
		})
	}
	if len(std[Sick]) == 2 {
		benchdata.RequireQuoted(t, "docs/performance.md", "SICK's PLL leaves "+std[Sick][0]+" µs (exponential latency) and "+std[Sick][1]+" µs",
			fmt.Sprintf("its error std is %.0f to %.0f times smaller than SICK's", slices.Min(gain), slices.Max(gain)),
			"`regression` "+std[Regression][0]+" / "+std[Regression][1]+" µs", "`envelope` "+std[Envelope][0]+" / "+std[Envelope][1]+" µs")
	}
}
