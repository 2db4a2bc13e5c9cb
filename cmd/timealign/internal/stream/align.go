package stream

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/timealign/timealign/cmd/timealign/internal/cli"
	"github.com/timealign/timealign/pkg/csvio"
	tsync "github.com/timealign/timealign/pkg/sync"
)

const alignDoc = `
Replays N streams in time order with the semantics of Rock's
aggregator::StreamAligner (pkg/sync): each stream's period is its
lookahead, --timeout the longest playback waits for a stream without data
(the maximum latency, measured in stamps).

Input:  event,stream,stamp_ns (unused columns empty), in arrival order
  push     a sample arrives on stream at stamp_ns
  step     play at most one ready sample
  drain    play every ready sample
  disable  stop waiting for stream (its data still plays); enable undoes
           it, and so does a push onto the stream
  remove   unregister stream, discarding its data (later pushes onto it
           are bad_stream drops)
  clear    discard all buffered samples and reset the playback times
  timeout  set a new timeout of stamp_ns nanoseconds
Playback happens only at step and drain events, as in Rock, where the
caller decides when to step: samples still buffered at the end of the
input are not played (end the input with a drain to play what is ready).
Output: stream,stamp_ns per played sample, in playback order.
--drops FILE: stream,stamp_ns,reason per dropped sample, in the order of
the drops: late (older than the last played sample), backward (older than
the previous sample of its stream), full (the oldest sample of a full
buffer, pushed out), bad_stream (a stream that was removed). A stream outside 0..N-1 (N: the
number of --periods) is an error.
A summary of dropped and unplayed samples goes to standard error (-quiet:
none).
Buffer sizes: negative = automatic (2·⌈timeout/period⌉), 0 = growing.`

func runAlign(e *cli.Env, args []string) error {
	fs := cli.NewFlags(e, "align", "--periods D,D,... [--timeout D] [flags] [input.csv]", alignDoc)
	timeout := fs.Duration("timeout", time.Second, "maximum latency: how long playback waits for a stream without data")
	var periods cli.DurationList
	var sizes, prios cli.IntList
	fs.Var(&periods, "periods", "period (lookahead) of each stream, D,D,... (0: not periodic); gives the number of streams")
	fs.Var(&sizes, "buffer-sizes", "buffer size of each stream, N,N,... (negative: automatic, 0: growing; default -1)")
	fs.Var(&prios, "priorities", "priority of each stream for equal stamps, lower first (default -1)")
	out := fs.String("out", "", "output file (default standard output)")
	dropsPath := fs.String("drops", "", "write dropped samples (stream,stamp_ns,reason) to this file")
	statusPath := fs.String("status", "", "write the final status as JSON to this file")
	quiet := fs.Bool("quiet", false, cli.QuietUsage)
	if err := cli.ParseFlags(e, fs, args); err != nil {
		return err
	}
	if len(periods) == 0 {
		return cli.Usagef("--periods is required (one period per stream)")
	}
	if len(sizes) != 0 && len(sizes) != len(periods) {
		return cli.Usagef("--buffer-sizes has %d values, --periods %d (one per stream)", len(sizes), len(periods))
	}
	if len(prios) != 0 && len(prios) != len(periods) {
		return cli.Usagef("--priorities has %d values, --periods %d (one per stream)", len(prios), len(periods))
	}
	for i, p := range periods {
		if p < 0 {
			return cli.Usagef("value %d of --periods is %v, want ≥ 0 (0: not periodic)", i+1, p)
		}
	}
	cfg := tsync.DefaultAlignerConfig()
	cfg.Timeout = *timeout
	for i, p := range periods {
		s := tsync.DefaultStreamConfig(p)
		if len(sizes) > 0 {
			s.BufferSize = sizes[i]
		}
		if len(prios) > 0 {
			s.Priority = prios[i]
		}
		cfg.Streams = append(cfg.Streams, s)
	}
	a, err := tsync.NewStreamAligner[struct{}](cfg)
	if err != nil {
		return cli.ConfigError(fs, err, map[string]string{"Streams.Period": "periods", "Streams.BufferSize": "buffer-sizes",
			"Streams.Priority": "priorities"})
	}
	f, err := cli.OpenFiles(e, fs, cli.Out("--out", *out), cli.Out("--drops", *dropsPath), cli.Out("--status", *statusPath))
	if err != nil {
		return err
	}
	defer f.Abort()
	cw := csvio.NewWriter(f.Out(0), "stream", "stamp_ns")
	var dcw *csvio.Writer
	if f.Asked(1) {
		dcw = csvio.NewWriter(f.Out(1), "stream", "stamp_ns", "reason")
	}
	if err := alignRun(a, f.In, f.Name, cw, dcw); err != nil {
		return err
	}
	if err := cw.Flush(); err != nil {
		return err
	}
	if dcw != nil {
		if err := dcw.Flush(); err != nil {
			return err
		}
	}
	if f.Asked(2) {
		if err := cli.WriteJSON(f.Out(2), a.Status()); err != nil {
			return err
		}
	}
	if err := f.Commit(); err != nil {
		return err
	}
	if !*quiet {
		alignSummary(e, a.Status(), f.Asked(1))
	}
	return nil
}

// alignSummary tells, on stderr, how many samples were dropped or never
// played.
func alignSummary(e *cli.Env, st tsync.AlignerStatus, dropsFile bool) {
	var received, late, backward, full uint64
	held := 0
	for _, s := range st.Streams {
		received += s.Received
		late += s.Late
		backward += s.Backward
		full += s.Full
		held += s.BufferFill
	}
	var parts []string
	for _, c := range []struct {
		n    uint64
		what string
	}{{late, "late"}, {backward, "backward"}, {full, "full"}, {st.BadStream, "bad_stream"}} {
		if c.n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", c.what, c.n))
		}
	}
	if len(parts) == 0 && held == 0 {
		return
	}
	msg := fmt.Sprintf("timealign align: %d samples pushed, %d played", received+st.BadStream, st.Played)
	if len(parts) > 0 {
		msg += "; dropped: " + strings.Join(parts, ", ")
		if !dropsFile {
			msg += " (--drops FILE lists them)"
		}
	}
	if held > 0 {
		msg += fmt.Sprintf("; %d still buffered at the end of the input, not played (end the input with a drain event to play what is ready)", held)
	}
	fmt.Fprintln(e.Stderr, msg)
}

// alignRun feeds the events of in to a, writing played samples to cw and
// drops to dcw (if not nil).
func alignRun(a *tsync.StreamAligner[struct{}], in io.Reader, name string, cw, dcw *csvio.Writer) error {
	r, err := csvio.NewReader(in, name, csvio.Columns{Required: []string{"event", "stream", "stamp_ns"}})
	if err != nil {
		return err
	}
	play := func(x tsync.StreamSample[struct{}]) { cw.Int(int64(x.Stream)).Stamp(x.Stamp).EndRow() }
	nStreams := len(a.Status().Streams)
	for {
		row, err := r.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		stream := func() (int, error) {
			v, err := row.Int(1)
			if err == nil && (v < 0 || v >= int64(nStreams)) {
				err = row.Errorf(1, "stream %d is out of range 0..%d (one stream per --periods value)", v, nStreams-1)
			}
			return int(v), err
		}
		switch ev := row.String(0); ev {
		case "push":
			i, err := stream()
			if err != nil {
				return err
			}
			t, err := row.Stamp(2)
			if err != nil {
				return err
			}
			if x, why := a.Push(i, t, struct{}{}); why != tsync.AlignerNoDrop && dcw != nil {
				dcw.Int(int64(x.Stream)).Stamp(x.Stamp).String(why.String()).EndRow()
			}
		case "step":
			if x, ok := a.Step(); ok {
				play(x)
			}
		case "drain":
			a.Drain(play)
		case "disable", "enable", "remove":
			i, err := stream()
			if err != nil {
				return err
			}
			if ev == "remove" {
				err = a.Remove(i)
			} else {
				err = a.SetActive(i, ev == "enable")
			}
			if err != nil {
				return row.Errorf(1, "%v", err)
			}
		case "clear":
			a.Clear()
		case "timeout":
			t, err := row.Stamp(2)
			if err != nil {
				return err
			}
			if t < 0 {
				return row.Errorf(2, "timeout %d ns is negative", t)
			}
			if err := a.SetTimeout(time.Duration(t)); err != nil {
				return row.Errorf(2, "%v", err)
			}
		default:
			return row.Errorf(0, "unknown event %q (want push, step, drain, disable, enable, remove, clear or timeout)", ev)
		}
	}
}
