package tsest

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/timealign/timealign/internal/testutil/benchdata"
	"github.com/timealign/timealign/pkg/csvio"
	"github.com/timealign/timealign/pkg/sim"
	"github.com/timealign/timealign/pkg/stamp"
)

// readColumn reads one stamp column of a CSV file.
func readColumn(t *testing.T, path string, cols csvio.Columns, col int) []stamp.Time {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	r, err := csvio.NewReader(f, path, cols)
	require.NoError(t, err)
	var out []stamp.Time
	for {
		row, err := r.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		require.NoError(t, err)
		v, err := row.Stamp(col)
		require.NoError(t, err)
		out = append(out, v)
	}
}

// TestAgainstRock runs the reference scenarios (testdata/reference/tsest at
// the module root) with Rock's arguments and requires at most half of Rock's error std and no
// worse a worst stamp.
func TestAgainstRock(t *testing.T) {
	dir := benchdata.Dir(t, "tsest")
	inputs, err := filepath.Glob(filepath.Join(dir, "*.truth.csv"))
	require.NoError(t, err)
	require.NotEmpty(t, inputs)
	// docs/performance.md quotes the figures: Rock's std, ours, and the spreads.
	var rockStd, ourStd, rockSpread, ourSpread, limits []string
	defer func() {
		if len(ourStd) == 2 {
			benchdata.RequireQuoted(t, "docs/performance.md", rockStd[0]+" µs (uniform 0–2 ms jitter) and "+rockStd[1]+" µs (exponential 1 ms)",
				"`estimate` "+ourStd[0]+" µs and "+ourStd[1]+" µs", "worst stamps of "+ourSpread[0]+" µs and "+ourSpread[1]+" µs",
				"Rock's "+rockSpread[0]+" µs and "+rockSpread[1]+" µs", "the limit "+limits[0]+" µs and "+limits[1]+" µs")
		}
	}()
	for _, truthPath := range inputs {
		name := filepath.Base(truthPath[:len(truthPath)-len(".truth.csv")])
		t.Run(name, func(t *testing.T) {
			base := filepath.Join(dir, name)
			in := readColumn(t, base+".csv", csvio.Columns{Required: []string{"event", "stamp_ns", "index"}}, 1)
			truth := readColumn(t, truthPath, csvio.Columns{Required: []string{"truth_ns"}}, 0)
			rock := readColumn(t, base+".rock.csv", csvio.Columns{Required: []string{"estimate_ns"}}, 0)
			require.Len(t, truth, len(in), "%s: one row per sample of %s", truthPath, base+".csv")
			require.Len(t, rock, len(in), "%s: one row per sample of %s", base+".rock.csv", base+".csv")
			cfg := DefaultConfig() // --window 2s --loss-threshold 2
			e, err := New(cfg)
			require.NoError(t, err)
			got := make([]stamp.Time, len(in))
			for i, r := range in {
				got[i], err = e.Update(r)
				require.NoError(t, err)
			}
			ours := sim.ScoreStamps(got, truth, nil, 200)
			theirs := sim.ScoreStamps(rock, truth, nil, 200)
			lim := limitStd(in, truth, 200)
			require.LessOrEqual(t, float64(ours.Std), 1.2*float64(lim), "within 1.2× of the limit %v", lim)
			limits = append(limits, sim.Micros(lim))
			t.Logf("Rock std %v spread %v; ours std %v spread %v", theirs.Std, theirs.Spread, ours.Std, ours.Spread)
			require.LessOrEqual(t, ours.Std, theirs.Std/2)
			require.LessOrEqual(t, ours.Spread, theirs.Spread)
			rockStd, ourStd = append(rockStd, sim.Micros(theirs.Std)), append(ourStd, sim.Micros(ours.Std))
			rockSpread = append(rockSpread, fmt.Sprintf("%.0f", float64(theirs.Spread)/1e3))
			ourSpread = append(ourSpread, fmt.Sprintf("%.0f", float64(ours.Spread)/1e3))
		})
	}
}
