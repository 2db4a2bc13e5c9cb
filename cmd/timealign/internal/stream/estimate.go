package stream

import (
	"errors"
	"fmt"
	"io"
	"math/bits"

	"github.com/timealign/timealign/cmd/timealign/internal/cli"
	"github.com/timealign/timealign/pkg/csvio"
	"github.com/timealign/timealign/pkg/stamp"
	"github.com/timealign/timealign/pkg/tsest"
)

const estimateDoc = `
Removes the jitter from the stamps of a periodic stream (pkg/tsest, Rock's
TimestampEstimator semantics, a lower-envelope fit): each sample's receive
stamp becomes the best estimate of its acquisition time, with zero latency.

Input:  event,stamp_ns,index
  sample     a sample received at stamp_ns; index is empty or the sensor's
             sample counter (wrapping at --index-bits), which gives losses exactly
  loss       the driver announces one lost sample (stamp_ns, index empty)
  reference  a hardware reference stamp (the acquisition time of a sample,
             e.g. a sync pulse): the latency is estimated from it
  reset      restart the estimator
Output: stamp_ns,estimate_ns, one row per sample row. Every sample gets an
estimate, a stamp that went back too (the fit's prediction for it, when it
is early against the fitted line; counted in the status), except a sample
that repeats the previous one's index: its estimate_ns is empty, and it is
counted in the status. A reference that belongs to no sample of the
current fit is ignored and counted in the status.`

func runEstimate(e *cli.Env, args []string) error {
	fs := cli.NewFlags(e, "estimate", "[flags] [input.csv]", estimateDoc)
	cfg := tsest.DefaultConfig()
	fs.DurationVar(&cfg.Window, "window", cfg.Window, "estimation window (receive time spanned by the fit)")
	fs.DurationVar(&cfg.Period, "period", cfg.Period, "expected period, used until the window has samples (0: unknown)")
	fs.DurationVar(&cfg.MinLatency, "min-latency", cfg.MinLatency, "least latency from acquisition to reception")
	fs.IntVar(&cfg.LossThreshold, "loss-threshold", cfg.LossThreshold, "suspect samples in a row that make a loss (0 or 1: the first)")
	fs.BoolVar(&cfg.NeverInferLoss, "never-infer-loss", cfg.NeverInferLoss, "infer no loss from timing (losses are announced or indexed)")
	fs.IntVar(&cfg.IndexBits, "index-bits", cfg.IndexBits, "width of the sensor's sample counter")
	out := fs.String("out", "", "output file (default standard output)")
	statusPath := fs.String("status", "", "write the final status as JSON to this file")
	if err := cli.ParseFlags(e, fs, args); err != nil {
		return err
	}
	est, err := tsest.New(cfg)
	if err != nil {
		return cli.ConfigError(fs, err, nil)
	}
	f, err := cli.OpenFiles(e, fs, cli.Out("--out", *out), cli.Out("--status", *statusPath))
	if err != nil {
		return err
	}
	defer f.Abort()
	maxIndex, err := estimateStream(est, f.In, f.Name, f.Out(0))
	if err != nil {
		return err
	}
	if f.Asked(1) {
		if err := cli.WriteJSON(f.Out(1), est.Status()); err != nil {
			return err
		}
	}
	if err := f.Commit(); err != nil {
		return err
	}
	estimateSummary(e, cfg, est.Status(), maxIndex)
	return nil
}

// maxQuietIndexResets is how many index resets (sensor restarts) pass
// without a word.
const maxQuietIndexResets = 3

// estimateSummary tells, on stderr, what the user should know: samples
// without an estimate, stamps that went back, references ignored, and index
// resets that suggest a narrower counter.
func estimateSummary(e *cli.Env, cfg tsest.Config, st tsest.Status, maxIndex uint64) {
	say := func(format string, args ...any) {
		fmt.Fprintf(e.Stderr, "timealign estimate: "+format+"\n", args...)
	}
	if st.DupIndexes > 0 {
		say("%d samples repeat the previous index and have no estimate (rejected_duplicates in --status)", st.DupIndexes)
	}
	if st.Backward > 0 {
		say("%d receive stamps went back; each still has an estimate (rejected_backward in --status)", st.Backward)
	}
	if st.RejectedReferences > 0 {
		say("%d references matched no sample of the fit and were ignored (rejected_references in --status)", st.RejectedReferences)
	}
	if st.IndexResets > maxQuietIndexResets {
		hint := ""
		if b := bits.Len64(maxIndex); b < cfg.IndexBits {
			hint = fmt.Sprintf("; the largest index is %d: if the counter wraps there, give --index-bits %d", maxIndex, b)
		}
		say("the sample index went back %d times, each a counter reset that restarts the loss count (index_resets in --status)%s", st.IndexResets, hint)
	}
}

// estimateStream runs est over the events of in, writing one row per
// sample; it returns the largest sample index seen.
func estimateStream(est *tsest.Estimator, in io.Reader, name string, w io.Writer) (maxIndex uint64, err error) {
	r, err := csvio.NewReader(in, name, csvio.Columns{Required: []string{"event", "stamp_ns", "index"}})
	if err != nil {
		return 0, err
	}
	// On an error the rows still buffered are not written: input that
	// fails on an early line leaves nothing on standard output.
	cw := csvio.NewWriter(w, "stamp_ns", "estimate_ns")
	for {
		row, err := r.Next()
		if errors.Is(err, io.EOF) {
			return maxIndex, cw.Flush()
		}
		if err != nil {
			return maxIndex, err
		}
		switch ev := row.String(0); ev {
		case "sample":
			t, err := row.Stamp(1)
			if err != nil {
				return maxIndex, err
			}
			idx, hasIdx, err := row.OptUint(2)
			if err != nil {
				return maxIndex, err
			}
			var estimate stamp.Time
			if hasIdx {
				maxIndex = max(maxIndex, idx)
				estimate, err = est.UpdateIndex(t, idx)
			} else {
				estimate, err = est.Update(t)
			}
			cw.Stamp(t)
			if err != nil {
				cw.Empty() // a repeated index: rejected, and counted in the status
			} else {
				cw.Stamp(estimate)
			}
			cw.EndRow()
		case "loss":
			est.UpdateLoss()
		case "reference":
			t, err := row.Stamp(1)
			if err != nil {
				return maxIndex, err
			}
			if err := est.UpdateReference(t); err != nil && !errors.Is(err, tsest.ErrReference) {
				return maxIndex, row.Errorf(1, "%v", err)
			} // a rejected reference is counted in the status
		case "reset":
			est.Reset()
		default:
			return maxIndex, row.Errorf(0, "unknown event %q (want sample, loss, reference or reset)", ev)
		}
	}
}
