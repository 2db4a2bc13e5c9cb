package mavcmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	gosync "sync"
	"sync/atomic"
	"time"

	"github.com/timealign/timealign/pkg/mav"
	"github.com/timealign/timealign/pkg/stamp"
)

// The BIN side of a merge is most of its work: every record decoded and
// encoded as JSON. A reader goroutine per BIN cuts the records into
// batches (raw bytes copied out of the read buffer); encoder goroutines,
// one per CPU, encode batches into JSON items stamped on the Unix clock;
// the merge loop takes each BIN's batches in order. Memory is bounded by
// the batches in flight (pipeDepth per BIN, each about batchRaw of records
// and four times that of JSON), and batches are reused once written.

const (
	batchRaw  = 64 << 10
	pipeDepth = 2
)

// rawRec is one record of a batch: its type, its payload in the batch's
// raw bytes, its boot time.
type rawRec struct {
	ref    *chanRef
	off, n uint32
	us     int64
}

// binBatch is a batch of records, then of encoded items (a tlog's
// batches have items only).
type binBatch struct {
	recs    []rawRec
	raw     []byte
	items   []mergeItem
	json    []byte
	est     *mav.Estimate
	done    chan struct{}
	err     error
	clamped int64        // stamps before 1970, set to 0
	pending atomic.Int32 // items not yet written
	free    chan *binBatch
}

// release is called as n items of the batch are written; the last one
// returns the batch for reuse.
func (b *binBatch) release(n int) {
	if b.pending.Add(int32(-n)) <= 0 {
		b.recs, b.raw, b.items, b.json, b.err, b.clamped = b.recs[:0], b.raw[:0], b.items[:0], b.json[:0], nil, 0
		select {
		case b.free <- b:
		default:
		}
	}
}

// binPipeline runs the goroutines of a merge's BINs; stop ends them and
// waits for them.
type binPipeline struct {
	ctx    context.Context
	cancel context.CancelFunc
	work   chan *binBatch
	wg     gosync.WaitGroup
	once   gosync.Once
}

func newBinPipeline(parent context.Context) *binPipeline {
	ctx, cancel := context.WithCancel(parent)
	p := &binPipeline{ctx: ctx, cancel: cancel, work: make(chan *binBatch, runtime.GOMAXPROCS(0))}
	return p
}

func (p *binPipeline) startWorkers() {
	p.once.Do(func() {
		for range runtime.GOMAXPROCS(0) {
			p.wg.Add(1)
			go func() {
				defer p.wg.Done()
				for {
					select {
					case b := <-p.work:
						encodeBatch(b)
						close(b.done)
					case <-p.ctx.Done():
						return
					}
				}
			}()
		}
	})
}

func (p *binPipeline) stop() {
	p.cancel()
	p.wg.Wait()
}

// start reads a BIN in a goroutine; its batches arrive in order on the
// channel returned, each encoded once its done channel is closed. noTime
// and clamped count records without TimeUS and stamps before 1970.
func (p *binPipeline) start(name string, r *mav.BinReader, est *mav.Estimate, noTime *int64) <-chan *binBatch {
	p.startWorkers()
	order := make(chan *binBatch, pipeDepth)
	// Batches wait in the reorder queue and the writer's queue too: keep
	// enough to reuse them all (no more are made than are in flight).
	free := make(chan *binBatch, 64)
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		defer close(order)
		// The record types seen so far, by type byte (a type may be
		// declared again with another layout: then it is a new one),
		// with their JSON schemas (made here: this goroutine owns the
		// BinReader's unit tables).
		var refs [256]*chanRef
		var lastUS int64
		haveLast := false
		var nt int64
		defer func() { atomic.AddInt64(noTime, nt) }()
		for {
			var b *binBatch
			select {
			case b = <-free:
			default:
				// JSON is about 4 times the raw records: sized once (it
				// grows if need be: items hold offsets).
				b = &binBatch{free: free, raw: make([]byte, 0, batchRaw+256), json: make([]byte, 0, 4*batchRaw)}
			}
			b.est, b.done = est, make(chan struct{})
			var rerr error
			recs, raw := b.recs, b.raw // in locals, as in encodeBatch
			for len(raw) < batchRaw {
				rec, err := r.Next()
				if err != nil {
					rerr = err
					break
				}
				fm := rec.Format
				if fm.Err != nil || fm.Name == "FMT" {
					// Bad formats are counted by the reader (summarized
					// after the first pass); FMT records are the schemas.
					continue
				}
				ref := refs[fm.Type]
				if ref == nil || ref.f != fm {
					ref = &chanRef{key: "b" + fm.Name + "/" + fm.Format + "/" + strings.Join(columnNames(fm), ","), topic: "/bin/" + fm.Name, inst: -1,
						name: fm.Name, schema: r.BinSchema(fm), f: fm}
					if i := r.InstanceColumn(fm); i >= 0 {
						ref.inst = fm.Columns[i].Offset
					}
					refs[fm.Type] = ref
				}
				us, ok := rec.Time()
				switch {
				case ok:
					lastUS, haveLast = us, true
				case haveLast:
					us = lastUS
					nt++
				default:
					us = 0
					nt++
				}
				recs = append(recs, rawRec{ref, uint32(len(raw)), uint32(len(rec.Payload)), us})
				raw = append(raw, rec.Payload...)
			}
			b.recs, b.raw = recs, raw
			last := rerr != nil
			if rerr != nil && !errors.Is(rerr, io.EOF) && !errors.Is(rerr, mav.ErrNoFormats) {
				b.err = fmt.Errorf("%s: offset %d: %w", name, r.Stats().Bytes, rerr)
			}
			b.pending.Store(int32(len(b.recs)))
			select {
			case order <- b:
			case <-p.ctx.Done():
				return
			}
			if b.err != nil {
				close(b.done)
				return
			}
			select {
			case p.work <- b:
			case <-p.ctx.Done():
				return
			}
			if last {
				return
			}
		}
	}()
	return order
}

// encodeBatch stamps and encodes the records of a batch.
//
// The slices grow in locals, stored into the batch once at the end: the
// batches are small structs, side by side in memory, and a store per
// record into one that shares a cache line with a batch another
// goroutine works on makes both goroutines wait on each other (on this
// project's 2-core VM the merge took a third more CPU with two
// goroutines than with one, with every function slower alike).
func encodeBatch(b *binBatch) {
	items, js, raw := b.items, b.json, b.raw
	if cap(items) < len(b.recs) {
		items = make([]mergeItem, 0, len(b.recs))
	}
	var clamped int64
	unix := b.est.Mapper() // the records are nearly in time order
	for _, rr := range b.recs {
		t := unix(time.Duration(rr.us) * time.Microsecond)
		if t < 0 {
			t = 0
			clamped++
		}
		start := len(js)
		rec := mav.Record{Format: rr.ref.f, Payload: raw[rr.off : rr.off+rr.n]}
		js = rec.AppendJSON(js)
		inst := int16(-1)
		if o := rr.ref.inst; o >= 0 {
			inst = int16(rec.Payload[o])
		}
		items = append(items, mergeItem{t: t, pub: t, boot: rr.us, ref: rr.ref, off: uint32(start), n: uint32(len(js) - start), inst: inst, own: b})
	}
	b.items, b.json = items, js
	b.clamped += clamped
}

// tlogStamps places a tlog message on the merged clock: t is its receive
// stamp (moved onto the target source's clock when that is not the
// tlog's), pub the autopilot's time of sending on the same clock for the
// autopilot's messages with time_boot_ms (else t), boot that time_boot_ms
// in µs (−1: none).
func tlogStamps(res *mav.Result, target mav.Source, msg *mav.TlogMessage) (t, pub stamp.Time, boot int64) {
	t, boot = msg.Receive, -1
	var bt *mav.Boot
	if len(res.Boots) > 0 {
		bt = res.BootOfReceive(msg.Receive)
	}
	var est *mav.Estimate
	if bt != nil {
		if target >= 0 {
			est = bt.Find(target)
		} else {
			est = bt.WinnerEstimate()
		}
		if est != nil && est.Source != mav.SourceTlog {
			// Move the tlog's stamp onto the target clock.
			if bb, ok := bt.ReceiveToBoot(msg.Receive); ok {
				t = est.Unix(bb)
			}
		}
	}
	pub = t
	if ms, ok := msg.TimeBootMs(); ok && bt != nil && int(msg.SysID) == res.SysID && int(msg.CompID) == res.CompID {
		b := time.Duration(ms) * time.Millisecond
		boot = b.Microseconds()
		if est != nil {
			pub = est.Unix(b)
		}
	}
	return t, pub, boot
}

// startTlog reads the tlog in a goroutine: messages stamped on the merged
// clock and encoded as JSON, in batches, in order.
func (p *binPipeline) startTlog(run *mavRun, tr *mav.TlogReader) <-chan *binBatch {
	order := make(chan *binBatch, pipeDepth)
	free := make(chan *binBatch, 64)
	res, target := run.res, run.cfg.Prefer
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		defer close(order)
		// By sender and message id in one word (a map of integers hashes
		// faster than one of structs).
		chans := map[uint64]*chanRef{}
		for {
			var b *binBatch
			select {
			case b = <-free:
			default:
				b = &binBatch{free: free, json: make([]byte, 0, batchRaw+batchRaw/4)}
			}
			var rerr error
			items, js := b.items, b.json // in locals, as in encodeBatch
			for len(js) < batchRaw {
				msg, err := tr.Next()
				if err != nil {
					rerr = err
					break
				}
				k := uint64(msg.SysID)<<40 | uint64(msg.CompID)<<32 | uint64(msg.ID)
				ref := chans[k]
				if ref == nil {
					ref = &chanRef{key: fmt.Sprintf("t%d/%d/%d", msg.SysID, msg.CompID, msg.ID),
						topic: fmt.Sprintf("/tlog/%d/%d/%s", msg.SysID, msg.CompID, msg.Name), name: msg.Name, schema: msg.Schema(), tlog: true}
					chans[k] = ref
				}
				it := mergeItem{ref: ref, inst: -1, own: b}
				it.t, it.pub, it.boot = tlogStamps(res, target, msg)
				start := len(js)
				js = msg.AppendJSON(js)
				it.off, it.n = uint32(start), uint32(len(js)-start)
				items = append(items, it)
			}
			b.items, b.json = items, js
			if rerr != nil && !errors.Is(rerr, io.EOF) {
				b.err = fmt.Errorf("%s: offset %d: %w", run.tlog, tr.Stats().Bytes, rerr)
			}
			b.pending.Store(int32(len(b.items)))
			select {
			case order <- b:
			case <-p.ctx.Done():
				return
			}
			if rerr != nil {
				return
			}
		}
	}()
	return order
}
