package main

import (
	"errors"

	"io"
	"time"

	"github.com/timealign/timealign/pkg/csvio"
	"github.com/timealign/timealign/pkg/stamp"
	tsync "github.com/timealign/timealign/pkg/sync"
)

const alignDoc = `
Replays N streams in time order with Rock's StreamAligner semantics
(pkg/sync): each stream's period is its lookahead, --timeout the longest
playback waits for a stream without data.

Input:  event,stream,stamp_ns (unused columns empty)
  push     a sample arrives on stream at stamp_ns
  step     play at most one ready sample
  drain    play every ready sample
  disable  stop waiting for stream (its data still plays); enable undoes it
  remove   unregister stream, discarding its data
  clear    discard all buffered samples and reset the playback times
  timeout  set a new timeout of stamp_ns nanoseconds
Samples still buffered at the end of the input are not played (add a
drain to play what is ready).
Output: stream,stamp_ns in playback order.
--drops FILE: stream,stamp_ns,reason for rejected samples (late, backward,
full: the oldest sample of a full buffer, bad_stream).
Buffer sizes: negative = automatic (2·⌈timeout/period⌉), 0 = growing.`

func runAlign(e *env, args []string) error {
	fs := newFlags(e, "align", "--timeout D --periods D,D,... [flags] [input.csv]", alignDoc)
	timeout := fs.Duration("timeout", time.Second, "maximum latency: how long playback waits for a stream")
	var periods durationList
	var sizes, prios intList
	fs.Var(&periods, "periods", "period of each stream, D,D,... (0: not periodic); gives the number of streams")
	fs.Var(&sizes, "buffer-sizes", "buffer size of each stream (default automatic, -1)")
	fs.Var(&prios, "priorities", "priority of each stream for equal stamps, lower first (default -1)")
	out := fs.String("out", "", "output file (default standard output)")
	dropsPath := fs.String("drops", "", "write rejected samples to this file")
	statusPath := fs.String("status", "", "write the final status as JSON to this file")
	if err := parseFlags(e, fs, args); err != nil {
		return err
	}
	if len(periods) == 0 {
		return usagef("--periods is required (one period per stream)")
	}
	if len(sizes) != 0 && len(sizes) != len(periods) {
		return usagef("--buffer-sizes has %d entries, --periods %d", len(sizes), len(periods))
	}
	if len(prios) != 0 && len(prios) != len(periods) {
		return usagef("--priorities has %d entries, --periods %d", len(prios), len(periods))
	}
	streams := make([]tsync.StreamConfig, len(periods))
	for i, p := range periods {
		streams[i] = tsync.StreamConfig{Period: p, BufferSize: -1, Priority: -1}
		if len(sizes) > 0 {
			streams[i].BufferSize = sizes[i]
		}
		if len(prios) > 0 {
			streams[i].Priority = prios[i]
		}
	}
	f, err := openFiles(e, fs, *out, *dropsPath)
	if err != nil {
		return err
	}
	cw := csvio.NewWriter(f.out, "stream", "stamp_ns")
	dcw := csvio.NewWriter(f.side, "stream", "stamp_ns", "reason")
	a, err := tsync.NewStreamAligner(*timeout, streams,
		func(stream int, t stamp.Time, _ struct{}) { cw.Int(int64(stream)).Stamp(t).EndRow() },
		func(stream int, t stamp.Time, _ struct{}, why tsync.AlignerDrop) {
			dcw.Int(int64(stream)).Stamp(t).String(why.String()).EndRow()
		})
	if err != nil {
		return errors.Join(&usageError{err: err}, f.close())
	}
	err = alignStream(a, f.in, f.name)
	err = errors.Join(err, cw.Flush(), dcw.Flush(), f.close())
	if *statusPath != "" {
		err = errors.Join(err, writeStatusJSON(*statusPath, a.Status()))
	}
	return err
}

func alignStream(a *tsync.StreamAligner[struct{}], in io.Reader, name string) error {
	r, err := csvio.NewReader(in, name, csvio.Columns{Required: []string{"event", "stream", "stamp_ns"}})
	if err != nil {
		return err
	}
	for {
		row, err := r.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		streamArg := func() (int, error) {
			v, err := row.Int(1)
			return int(v), err
		}
		switch ev := row.String(0); ev {
		case "push":
			i, err := streamArg()
			if err != nil {
				return err
			}
			t, err := row.Stamp(2)
			if err != nil {
				return err
			}
			a.Push(i, t, struct{}{})
		case "step":
			a.Step()
		case "drain":
			a.Drain()
		case "disable", "enable", "remove":
			i, err := streamArg()
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
			if err := a.SetTimeout(time.Duration(t)); err != nil {
				return row.Errorf(2, "%v", err)
			}
		default:
			return row.Errorf(0, "unknown event %q (want push, step, drain, disable, enable, remove, clear or timeout)", ev)
		}
	}
}
