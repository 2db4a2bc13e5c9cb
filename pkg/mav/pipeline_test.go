package mav_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timealign/timealign/pkg/mav"
	"github.com/timealign/timealign/pkg/mav/mavsim"
	"github.com/timealign/timealign/pkg/stamp"
)

// pipeItem is an item as a test compares it.
type pipeItem struct {
	t, pub stamp.Time
	ref    string
	boot   int64
	inst   int16
	data   string
}

// pipeLogs are a flight's logs (a BIN of some thirty batches of records,
// with GPS) and their alignment.
func pipeLogs(t *testing.T) (logs, *mav.Result) {
	t.Helper()
	l := write(t, mavsim.Scenario{Seed: 41, Duration: 3 * time.Minute, GPS: true, BinExtra: 20})
	return l, alignBy(t, mav.DefaultConfig(), true, l.tlog, l.bins...)
}

// expectBin is what the pipeline must deliver for a BIN, read one record
// at a time.
func expectBin(t *testing.T, bin []byte, est *mav.Estimate) []pipeItem {
	t.Helper()
	r := mav.NewBinReader(bytes.NewReader(bin))
	var out []pipeItem
	var last int64
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		require.NoError(t, err)
		if rec.Format.Err != nil || rec.Format.Name == "FMT" {
			continue
		}
		us, ok := rec.Time()
		if !ok {
			us = last
		}
		last = us
		ts := est.Unix(time.Duration(us) * time.Microsecond)
		if ts < 0 {
			ts = 0
		}
		inst := int16(-1)
		if i := r.InstanceColumn(rec.Format); i >= 0 {
			inst = int16(rec.Payload[rec.Format.Columns[i].Offset])
		}
		out = append(out, pipeItem{ts, ts, rec.Format.Name, us, inst, string(rec.AppendJSON(nil))})
	}
}

// drain takes every batch of a log, in order, and releases its items.
func drain(t *testing.T, batches <-chan *mav.Batch[string]) ([]pipeItem, map[*mav.Batch[string]]bool, error) {
	t.Helper()
	var out []pipeItem
	seen := map[*mav.Batch[string]]bool{}
	for b := range batches {
		seen[b] = true
		if err := b.Wait(); err != nil {
			return out, seen, err
		}
		if b.Err != nil {
			return out, seen, b.Err
		}
		for k := range b.Items {
			it := &b.Items[k]
			require.Same(t, b, it.Batch())
			out = append(out, pipeItem{it.T, it.Pub, it.Ref, it.Boot, it.Inst, string(it.Data())})
		}
		b.Release(max(1, len(b.Items)))
	}
	return out, seen, nil
}

// TestPipelineBin: a BIN's records come out of the pipeline in the order
// of the file, each stamped through the estimate and encoded as the
// reader and the estimate give them one by one, whatever the number of
// encoders; ref is asked once per record type; the batches are reused
// (memory bounded by those in flight).
func TestPipelineBin(t *testing.T) {
	l, res := pipeLogs(t)
	est := res.BinEstimate(0, -1)
	require.NotNil(t, est)
	want := expectBin(t, l.bins[0], est)
	require.Greater(t, len(want), 30000)
	for _, procs := range []int{1, 4} {
		func() {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
			p := mav.NewPipeline[string](context.Background())
			defer p.Stop()
			refs := map[string]int{}
			batches := p.StartBin("x.BIN", mav.NewBinReader(bytes.NewReader(l.bins[0])), est, func(r *mav.BinReader, f *mav.Format) string {
				refs[f.Name]++
				return f.Name
			})
			got, seen, err := drain(t, batches)
			require.NoError(t, err)
			require.Equal(t, len(want), len(got), "%d encoders", procs)
			for i := range want {
				require.Equal(t, want[i], got[i], "%d encoders: record %d", procs, i)
			}
			for name, n := range refs {
				require.Equal(t, 1, n, "ref asked once for %s", name)
			}
			require.Less(t, len(seen), 16, "%d batches made for %d records: they are reused", len(seen), len(got))
		}()
	}
}

// TestPipelineTlog: a tlog's messages come out in order, stamped by
// TlogStamps and encoded as JSON; ref is asked once per message type and
// sender.
func TestPipelineTlog(t *testing.T) {
	l, res := pipeLogs(t)
	var want []pipeItem
	r := mav.NewTlogReader(bytes.NewReader(l.tlog))
	withBoot := 0
	for {
		m, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		ts, pub, boot := res.TlogStamps(-1, m)
		if boot >= 0 {
			withBoot++
			require.Less(t, ts.Sub(pub), time.Second, "received after it was sent, within the latency")
		}
		want = append(want, pipeItem{ts, pub, m.Name, boot, -1, string(m.AppendJSON(nil))})
	}
	require.Greater(t, withBoot, 1000)
	p := mav.NewPipeline[string](context.Background())
	defer p.Stop()
	refs := map[string]int{}
	got, _, err := drain(t, p.StartTlog("x.tlog", mav.NewTlogReader(bytes.NewReader(l.tlog)), res, -1, func(m *mav.TlogMessage) string {
		refs[fmt.Sprintf("%d/%d/%s", m.SysID, m.CompID, m.Name)]++
		return m.Name
	}))
	require.NoError(t, err)
	require.Equal(t, want, got)
	require.Greater(t, len(refs), 5)
	for key, n := range refs {
		require.Equal(t, 1, n, "ref asked once for %s", key)
	}
}

// failingReader fails after n bytes.
type failingReader struct {
	r io.Reader
	n int
}

var errRead = errors.New("read failed")

func (f *failingReader) Read(p []byte) (int, error) {
	if f.n <= 0 {
		return 0, errRead
	}
	n, err := f.r.Read(p[:min(len(p), f.n)])
	f.n -= n
	return n, err
}

// TestPipelineErrors: a log that cannot be read to its end delivers its
// batches before the error, then a batch whose Err names the log and the
// offset and wraps the error, then closes.
func TestPipelineErrors(t *testing.T) {
	l, res := pipeLogs(t)
	est := res.BinEstimate(0, -1)
	p := mav.NewPipeline[string](context.Background())
	defer p.Stop()
	name := func(*mav.BinReader, *mav.Format) string { return "" }
	got, _, err := drain(t, p.StartBin("x.BIN", mav.NewBinReader(&failingReader{bytes.NewReader(l.bins[0]), len(l.bins[0]) / 2}), est, name))
	require.ErrorIs(t, err, errRead)
	require.ErrorContains(t, err, "x.BIN: offset ")
	require.Greater(t, len(got), 1000, "the batches before the error")

	tgot, _, err := drain(t, p.StartTlog("x.tlog", mav.NewTlogReader(&failingReader{bytes.NewReader(l.tlog), len(l.tlog) / 2}), res, -1,
		func(*mav.TlogMessage) string { return "" }))
	require.ErrorIs(t, err, errRead)
	require.ErrorContains(t, err, "x.tlog: offset ")
	require.NotEmpty(t, tgot)

	// A BIN without FMT ends without an error (the reader says so).
	got, _, err = drain(t, p.StartBin("y.BIN", mav.NewBinReader(bytes.NewReader([]byte("not a dataflash log"))), est, name))
	require.NoError(t, err)
	require.Empty(t, got)
}

// TestPipelineStop: Stop (or the end of its context) ends every goroutine
// of a pipeline whose batches nobody takes or releases, and Wait on a
// batch not encoded returns the context's error.
func TestPipelineStop(t *testing.T) {
	l, res := pipeLogs(t)
	est := res.BinEstimate(0, -1)
	before := runtime.NumGoroutine()
	name := func(*mav.BinReader, *mav.Format) string { return "" }
	for _, how := range []string{"stop", "cancel"} {
		ctx, cancel := context.WithCancel(context.Background())
		p := mav.NewPipeline[string](ctx)
		bins := p.StartBin("x.BIN", mav.NewBinReader(bytes.NewReader(l.bins[0])), est, name)
		tlog := p.StartTlog("x.tlog", mav.NewTlogReader(bytes.NewReader(l.tlog)), res, -1, func(*mav.TlogMessage) string { return "" })
		b := <-bins
		require.NoError(t, b.Wait())
		<-tlog // and nothing released: the readers fill their channels and wait
		if how == "stop" {
			p.Stop()
		} else {
			cancel()
			p.Stop()
		}
		for b := range bins {
			if err := b.Wait(); err != nil {
				require.ErrorIs(t, err, context.Canceled)
			}
		}
		for range tlog {
		}
		cancel()
	}
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	require.LessOrEqual(t, runtime.NumGoroutine(), before, "every goroutine of the pipelines ended")
}
