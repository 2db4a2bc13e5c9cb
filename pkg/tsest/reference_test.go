package tsest

import (
	"compress/gzip"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timealign/timealign/internal/testutil/benchdata"
	"github.com/timealign/timealign/pkg/csvio"
	"github.com/timealign/timealign/pkg/sim"
	"github.com/timealign/timealign/pkg/stamp"
)

var writeRockInputs = flag.String("rockref.write", "", "write the inputs of testdata/rockref's scenarios (estimate CLI format, and truth) to this directory")

// refScenario is a simulated stream with hardware references: every
// every-th sample's true acquisition time, observed late by a uniform
// jitter of 0..jitter (references are never early).
type refScenario struct {
	name   string
	seed   uint64
	edit   func(*sim.Config)
	every  int
	jitter time.Duration
}

// refEvent is one input row: a sample (received at t, acquired at truth)
// or a reference (t).
type refEvent struct {
	ref   bool
	t     stamp.Time
	truth stamp.Time
}

// rockRefScenarios were run through Rock's TimestampEstimator
// (testdata/rockref/README.md): three seeds of the default stream, an
// exponential one, and sparse references.
var rockRefScenarios = []refScenario{
	{name: "uniform2ms_ref10_jitter50us_s1", seed: 1, every: 10, jitter: 50 * time.Microsecond},
	{name: "uniform2ms_ref10_jitter50us_s2", seed: 2, every: 10, jitter: 50 * time.Microsecond},
	{name: "uniform2ms_ref10_jitter50us_s3", seed: 3, every: 10, jitter: 50 * time.Microsecond},
	{name: "exponential1ms_ref10_jitter50us_s4", seed: 4, every: 10, jitter: 50 * time.Microsecond,
		edit: func(c *sim.Config) { c.Latency.Kind, c.Latency.Scale = sim.Exponential, time.Millisecond }},
	{name: "uniform2ms_ref50_jitter50us_s5", seed: 5, every: 50, jitter: 50 * time.Microsecond},
}

// events generates sc's rows: 4000 samples of the default 100 Hz stream
// (latency 5 ms plus jitter), a reference before every every-th sample.
// Stamps are whole microseconds (Rock's base::Time), so both estimators
// read the same input.
func (sc refScenario) events(t testing.TB, n int) []refEvent {
	t.Helper()
	c := sim.DefaultConfig()
	c.Count, c.Seed = n, sc.seed
	if sc.edit != nil {
		sc.edit(&c)
	}
	s, err := sim.Generate(c)
	require.NoError(t, err)
	g := rand.New(rand.NewPCG(sc.seed, 0x7265665f6a6974)) // "ref_jit"
	us := func(t stamp.Time) stamp.Time { return t / 1000 * 1000 }
	var ev []refEvent
	for _, x := range sim.Delivered(s) {
		if x.Seq%sc.every == 0 {
			j := time.Duration(g.Int64N(int64(sc.jitter) + 1))
			ev = append(ev, refEvent{ref: true, t: us(x.True.Add(j))})
		}
		ev = append(ev, refEvent{t: us(x.Receive), truth: x.True})
	}
	return ev
}

// feed runs the estimator over events and returns the samples' estimates
// and truth.
func feed(t testing.TB, e *Estimator, ev []refEvent) (est, truth []stamp.Time) {
	t.Helper()
	for _, x := range ev {
		if x.ref {
			if err := e.UpdateReference(x.t); err != nil {
				require.ErrorIs(t, err, ErrReference)
			}
			continue
		}
		got, err := e.Update(x.t)
		require.NoError(t, err)
		est, truth = append(est, got), append(truth, x.truth)
	}
	return est, truth
}

// readRockRef reads testdata/rockref/NAME.csv.gz: event,stamp_ns,truth_ns,rock_ns.
func readRockRef(t *testing.T, name string) (ev []refEvent, rock []stamp.Time) {
	t.Helper()
	path := filepath.Join("testdata", "rockref", name+".csv.gz")
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	z, err := gzip.NewReader(f)
	require.NoError(t, err)
	r, err := csvio.NewReader(z, path, csvio.Columns{Required: []string{"event", "stamp_ns", "truth_ns", "rock_ns"}})
	require.NoError(t, err)
	for {
		row, err := r.Next()
		if errors.Is(err, io.EOF) {
			return ev, rock
		}
		require.NoError(t, err)
		ts, err := row.Stamp(1)
		require.NoError(t, err)
		if row.String(0) == "reference" {
			ev = append(ev, refEvent{ref: true, t: ts})
			continue
		}
		require.Equal(t, "sample", row.String(0))
		truth, err := row.Stamp(2)
		require.NoError(t, err)
		r, err := row.Stamp(3)
		require.NoError(t, err)
		ev = append(ev, refEvent{t: ts, truth: truth})
		rock = append(rock, r)
	}
}

// TestReferencesAgainstRock: on streams whose references jitter by
// 0–50 µs (uniform), the estimates' RMS error is at most half of Rock's
// (its estimates on the same input are in testdata/rockref: 131–555 µs),
// and with a reference every 10 samples at most 10 µs: well under the
// 25 µs that any mean of the references would be off by, and under half
// of the 29 µs issue #12 quotes for Rock.
func TestReferencesAgainstRock(t *testing.T) {
	if *writeRockInputs != "" {
		writeRockRefInputs(t, *writeRockInputs)
	}
	// docs/performance.md quotes the range of the RMS errors with a reference every
	// 10 samples, ours and Rock's, and the figures with one every 50.
	var ours10, rock10 []time.Duration
	var quoted50 []string
	defer func() {
		if len(ours10) == 0 || len(quoted50) == 0 {
			return
		}
		benchdata.RequireQuoted(t, "docs/performance.md", fmt.Sprintf("error is %s–%s µs against Rock's %.0f–%.0f µs",
			sim.Micros(slices.Min(ours10)), sim.Micros(slices.Max(ours10)),
			float64(slices.Min(rock10))/1e3, float64(slices.Max(rock10))/1e3), quoted50[0])
	}()
	for _, sc := range rockRefScenarios {
		t.Run(sc.name, func(t *testing.T) {
			ev, rock := readRockRef(t, sc.name)
			require.Equal(t, sc.events(t, 4000), ev, "the scenario generates the stored input")
			e, err := New(DefaultConfig())
			require.NoError(t, err)
			est, truth := feed(t, e, ev)
			ours := sim.ScoreStamps(est, truth, nil, 200)
			theirs := sim.ScoreStamps(rock, truth, nil, 200)
			t.Logf("Rock RMS %v (bias %v, std %v); ours RMS %v (bias %v, std %v)", theirs.RMS, theirs.Bias, theirs.Std, ours.RMS, ours.Bias, ours.Std)
			require.LessOrEqual(t, ours.RMS, theirs.RMS/2)
			if sc.every <= 10 {
				require.LessOrEqual(t, ours.RMS, 10*time.Microsecond)
				ours10, rock10 = append(ours10, ours.RMS), append(rock10, theirs.RMS)
			} else {
				quoted50 = append(quoted50, fmt.Sprintf("%s µs against %.0f µs", sim.Micros(ours.RMS), float64(theirs.RMS)/1e3))
			}
		})
	}
}

// writeRockRefInputs writes each scenario's input in the estimate CLI's
// format (NAME.csv) and its truth (NAME.truth.csv), for Rock.
func writeRockRefInputs(t *testing.T, dir string) {
	for _, sc := range rockRefScenarios {
		var in, tr []byte
		in = append(in, "event,stamp_ns,index\n"...)
		tr = append(tr, "truth_ns\n"...)
		for _, x := range sc.events(t, 4000) {
			if x.ref {
				in = fmt.Appendf(in, "reference,%d,\n", x.t)
				continue
			}
			in = fmt.Appendf(in, "sample,%d,\n", x.t)
			tr = fmt.Appendf(tr, "%d\n", x.truth)
		}
		require.NoError(t, os.WriteFile(filepath.Join(dir, sc.name+".csv"), in, 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(dir, sc.name+".truth.csv"), tr, 0o644))
	}
}

// TestReferenceAccuracy: the estimates' absolute RMS error with references
// of several jitters and rates, on three seeds each. The references'
// lower envelope lies about jitter/(n+1) above the truth for n references
// in the fit, so the error scales with the jitter and shrinks with the
// rate; a mean of the references would be off by half the jitter.
func TestReferenceAccuracy(t *testing.T) {
	for _, tc := range []struct {
		every  int
		jitter time.Duration
		max    time.Duration // RMS
	}{
		{10, 0, time.Microsecond},
		{10, 5 * time.Microsecond, 2 * time.Microsecond},
		{10, 50 * time.Microsecond, 10 * time.Microsecond},
		{10, 500 * time.Microsecond, 50 * time.Microsecond},
		{50, 0, time.Microsecond},
		{50, 5 * time.Microsecond, 4 * time.Microsecond},
		{50, 50 * time.Microsecond, 25 * time.Microsecond},
		{50, 500 * time.Microsecond, 170 * time.Microsecond},
		{1, 500 * time.Microsecond, 15 * time.Microsecond},
	} {
		t.Run(fmt.Sprintf("every %d jitter %v", tc.every, tc.jitter), func(t *testing.T) {
			for seed := uint64(11); seed <= 13; seed++ {
				sc := refScenario{seed: seed, every: tc.every, jitter: tc.jitter}
				e, err := New(DefaultConfig())
				require.NoError(t, err)
				est, truth := feed(t, e, sc.events(t, 3000))
				got := sim.ScoreStamps(est, truth, nil, 200)
				t.Logf("seed %d: RMS %v bias %v std %v max %v", seed, got.RMS, got.Bias, got.Std, got.Max)
				require.LessOrEqual(t, got.RMS, tc.max, "seed %d", seed)
				require.Zero(t, e.Status().RejectedReferences)
			}
		})
	}
}
