package mav

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/timealign/timealign/pkg/stamp"
)

// A Pipeline reads logs in goroutines and delivers their messages encoded
// as JSON and placed on one clock, in batches, each log's in order: what a
// merge of the logs on that clock takes in.
//
// Decoding and encoding every BIN record is most of the work. A reader
// goroutine per BIN cuts its records into batches of about 64 KiB (the raw
// bytes copied out of the read buffer); encoder goroutines, one per CPU
// (GOMAXPROCS), stamp each record through its boot's Estimate and encode
// it as JSON; the batches arrive on the BIN's channel in order, each
// encoded once Wait returns. A tlog's reader goroutine stamps and encodes
// its messages itself. Memory is bounded by the batches in flight (two
// per log waiting to be taken, those being encoded, those the caller
// holds), each about 64 KiB of records and four times that of JSON; a
// batch is reused once the caller has released all its items.
//
// Stop, or the end of the Pipeline's context, ends every goroutine: a
// reader blocked on a full channel returns, and Wait returns the
// context's error. A Pipeline is used from one goroutine; a batch's items
// may be released from another.
type Pipeline[R any] struct {
	ctx    context.Context
	cancel context.CancelFunc
	work   chan *Batch[R]
	wg     sync.WaitGroup
	once   sync.Once
}

const (
	batchRaw  = 64 << 10 // bytes of records (BIN) or JSON (tlog) per batch
	pipeDepth = 2        // batches read ahead per log
)

// NewPipeline starts a pipeline that ends with ctx, or Stop.
func NewPipeline[R any](ctx context.Context) *Pipeline[R] {
	ctx, cancel := context.WithCancel(ctx)
	return &Pipeline[R]{ctx: ctx, cancel: cancel, work: make(chan *Batch[R], runtime.GOMAXPROCS(0))}
}

// Stop ends the pipeline's goroutines and waits for them.
func (p *Pipeline[R]) Stop() {
	p.cancel()
	p.wg.Wait()
}

// Item is a message of a log in a Batch: its JSON and its stamps on the
// pipeline's clock.
type Item[R any] struct {
	// T is the message's stamp: a BIN record's TimeUS mapped through the
	// Estimate of its boot (0 for one mapped before 1970); a tlog
	// message's receive stamp on the target clock (Result.TlogStamps).
	T stamp.Time
	// Pub is the autopilot's time of sending on the same clock, for a
	// tlog message with time_boot_ms; else T.
	Pub stamp.Time
	// Ref is the caller's value for the message's type.
	Ref R
	// Boot is the autopilot's boot time in µs (a BIN record's TimeUS, a
	// tlog message's time_boot_ms), −1 for none.
	Boot int64
	// Inst is a BIN record's instance (BinReader.InstanceColumn), −1
	// for none.
	Inst  int16
	off   uint32
	n     uint32
	batch *Batch[R]
}

// Data is the message as JSON, valid until the item is released.
func (it *Item[R]) Data() []byte { return it.batch.json[it.off : it.off+it.n : it.off+it.n] }

// Batch returns the batch that holds the item.
func (it *Item[R]) Batch() *Batch[R] { return it.batch }

// Batch is a run of a log's messages.
type Batch[R any] struct {
	// Items are the messages, once Wait returns nil.
	Items []Item[R]
	// Err ends the log: reading it failed (after the messages before
	// it, which the batch does not hold). io.EOF is no error: the log's
	// channel closes after its last batch.
	Err error
	// Clamped counts the BIN records mapped before 1970 (stamped 0),
	// NoTime those without TimeUS (stamped with the TimeUS before them,
	// 0 at the start).
	Clamped, NoTime int64
	recs            []rawRec[R]
	raw             []byte
	json            []byte
	est             *Estimate
	done            chan struct{}
	ctx             context.Context
	pending         atomic.Int32 // items not yet released
	free            chan *Batch[R]
}

// rawRec is a BIN record of a batch: its type, its payload in the batch's
// raw bytes, its boot time.
type rawRec[R any] struct {
	typ    *binType[R]
	off, n uint32
	us     int64
}

// binType is a BIN record type as a reader met it.
type binType[R any] struct {
	f    *Format
	inst int // offset in the payload of the instance byte, −1 if none
	ref  R
}

// Wait returns once the batch is encoded, or with the pipeline's error
// once it is stopped.
func (b *Batch[R]) Wait() error {
	select {
	case <-b.done:
		return nil
	default:
	}
	select {
	case <-b.done:
		return nil
	case <-b.ctx.Done():
		return b.ctx.Err()
	}
}

// Release is called as n items of the batch are done with (n = 1 for an
// empty batch); the last one returns the batch for reuse.
func (b *Batch[R]) Release(n int) {
	if b.pending.Add(int32(-n)) <= 0 {
		b.recs, b.raw, b.Items, b.json, b.Err, b.Clamped, b.NoTime = b.recs[:0], b.raw[:0], b.Items[:0], b.json[:0], nil, 0, 0
		select {
		case b.free <- b:
		default:
		}
	}
}

// goroutine runs f in a goroutine that Stop waits for.
func (p *Pipeline[R]) goroutine(f func()) {
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		f()
	}()
}

func (p *Pipeline[R]) startWorkers() {
	p.once.Do(func() {
		for range runtime.GOMAXPROCS(0) {
			p.goroutine(func() {
				for {
					select {
					case b := <-p.work:
						b.encode()
						close(b.done)
					case <-p.ctx.Done():
						return
					}
				}
			})
		}
	})
}

// startLog runs read in a log's reader goroutine and returns the channel
// it sends the log's batches on, which closes when read returns; read
// takes the batches to reuse from free.
func (p *Pipeline[R]) startLog(read func(order chan<- *Batch[R], free chan *Batch[R])) <-chan *Batch[R] {
	order := make(chan *Batch[R], pipeDepth)
	// Batches wait in the caller's queues too: keep enough to reuse them
	// all (no more are made than are in flight).
	free := make(chan *Batch[R], 64)
	p.goroutine(func() {
		defer close(order)
		read(order, free)
	})
	return order
}

// send hands b over on c, unless the pipeline stops first.
func (p *Pipeline[R]) send(c chan<- *Batch[R], b *Batch[R]) bool {
	select {
	case c <- b:
		return true
	case <-p.ctx.Done():
		return false
	}
}

// reuse returns a batch to reuse from free, or nil.
func reuse[R any](free chan *Batch[R]) *Batch[R] {
	select {
	case b := <-free:
		return b
	default:
		return nil
	}
}

// StartBin reads the BIN r in a goroutine and returns its batches, in
// order, which closes after the last; est maps its boot times to the
// pipeline's clock, and ref gives the caller's value for each record
// type (called in the reader's goroutine, once per type: a type the log
// declares again with another layout is a new one; r's unit tables are
// the reader's to use there, as BinSchema does). FMT records and records
// of a bad format are left out (r counts those). name names the log in
// errors.
func (p *Pipeline[R]) StartBin(name string, r *BinReader, est *Estimate, ref func(*BinReader, *Format) R) <-chan *Batch[R] {
	p.startWorkers()
	return p.startLog(func(order chan<- *Batch[R], free chan *Batch[R]) {
		br := binBatcher[R]{r: r, ref: ref}
		for {
			b := reuse(free)
			if b == nil {
				// JSON is about 4 times the raw records: sized once (it
				// grows if need be: items hold offsets).
				b = &Batch[R]{free: free, raw: make([]byte, 0, batchRaw+256), json: make([]byte, 0, 4*batchRaw), ctx: p.ctx}
			}
			b.est, b.done = est, make(chan struct{})
			rerr := br.fill(b)
			if rerr != nil && !errors.Is(rerr, io.EOF) && !errors.Is(rerr, ErrNoFormats) {
				b.Err = fmt.Errorf("%s: offset %d: %w", name, r.Stats().Bytes, rerr)
			}
			b.pending.Store(int32(len(b.recs)))
			if !p.send(order, b) {
				return
			}
			if b.Err != nil {
				close(b.done)
				return
			}
			if !p.send(p.work, b) || rerr != nil {
				return
			}
		}
	})
}

// binBatcher cuts a BIN's records into batches; it is its reader
// goroutine's.
type binBatcher[R any] struct {
	r   *BinReader
	ref func(*BinReader, *Format) R
	// The record types met so far, by type byte (a type may be declared
	// again with another layout: then it is a new one).
	types    [256]*binType[R]
	lastUS   int64
	haveLast bool
}

// fill reads records into b until it holds batchRaw bytes of them, and
// returns the error that ended the log, if one did.
func (br *binBatcher[R]) fill(b *Batch[R]) error {
	recs, raw := b.recs, b.raw // in locals, as in encode
	var noTime int64
	var err error
	for len(raw) < batchRaw {
		var rec Record
		if rec, err = br.r.Next(); err != nil {
			break
		}
		fm := rec.Format
		if fm.Err != nil || fm.Name == "FMT" {
			// Bad formats are counted by the reader; FMT records are the
			// schemas.
			continue
		}
		typ := br.types[fm.Type]
		if typ == nil || typ.f != fm {
			typ = &binType[R]{f: fm, inst: -1, ref: br.ref(br.r, fm)}
			if i := br.r.InstanceColumn(fm); i >= 0 {
				typ.inst = fm.Columns[i].Offset
			}
			br.types[fm.Type] = typ
		}
		us, ok := rec.Time()
		switch {
		case ok:
			br.lastUS, br.haveLast = us, true
		case br.haveLast:
			us = br.lastUS
			noTime++
		default:
			us = 0
			noTime++
		}
		recs = append(recs, rawRec[R]{typ, uint32(len(raw)), uint32(len(rec.Payload)), us})
		raw = append(raw, rec.Payload...)
	}
	b.recs, b.raw, b.NoTime = recs, raw, noTime
	return err
}

// encode stamps and encodes the records of a batch.
//
// The slices grow in locals, stored into the batch once at the end: the
// batches are small structs, side by side in memory, and a store per
// record into one that shares a cache line with a batch another goroutine
// works on makes both goroutines wait on each other (on a 2-core VM a
// merge took a third more CPU with two goroutines than with one, with
// every function slower alike).
func (b *Batch[R]) encode() {
	items, js, raw := b.Items, b.json, b.raw
	if cap(items) < len(b.recs) {
		items = make([]Item[R], 0, len(b.recs))
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
		rec := Record{Format: rr.typ.f, Payload: raw[rr.off : rr.off+rr.n]}
		js = rec.AppendJSON(js)
		inst := int16(-1)
		if o := rr.typ.inst; o >= 0 {
			inst = int16(rec.Payload[o])
		}
		items = append(items, Item[R]{T: t, Pub: t, Ref: rr.typ.ref, Boot: rr.us, Inst: inst, off: uint32(start), n: uint32(len(js) - start), batch: b})
	}
	b.Items, b.json = items, js
	b.Clamped += clamped
}

// StartTlog reads the tlog r in a goroutine and returns its batches, in
// order, encoded (Wait returns at once), which closes after the last. Each
// message is placed on the clock of target (−1: each boot's winner)
// by res.TlogStamps; ref gives the caller's value for each message type of
// each sender (called in the reader's goroutine, once per type). name
// names the log in errors.
func (p *Pipeline[R]) StartTlog(name string, r *TlogReader, res *Result, target Source, ref func(*TlogMessage) R) <-chan *Batch[R] {
	return p.startLog(func(order chan<- *Batch[R], free chan *Batch[R]) {
		// By sender and message id in one word (a map of integers hashes
		// faster than one of structs).
		refs := map[uint64]R{}
		for {
			b := reuse(free)
			if b == nil {
				b = &Batch[R]{free: free, json: make([]byte, 0, batchRaw+batchRaw/4), ctx: p.ctx}
			}
			var rerr error
			items, js := b.Items, b.json // in locals, as in encode
			for len(js) < batchRaw {
				msg, err := r.Next()
				if err != nil {
					rerr = err
					break
				}
				k := uint64(msg.SysID)<<40 | uint64(msg.CompID)<<32 | uint64(msg.ID)
				rf, ok := refs[k]
				if !ok {
					rf = ref(msg)
					refs[k] = rf
				}
				it := Item[R]{Ref: rf, Inst: -1, batch: b}
				it.T, it.Pub, it.Boot = res.TlogStamps(target, msg)
				start := len(js)
				js = msg.AppendJSON(js)
				it.off, it.n = uint32(start), uint32(len(js)-start)
				items = append(items, it)
			}
			b.Items, b.json = items, js
			if rerr != nil && !errors.Is(rerr, io.EOF) {
				b.Err = fmt.Errorf("%s: offset %d: %w", name, r.Stats().Bytes, rerr)
			}
			b.pending.Store(int32(len(b.Items)))
			b.done = make(chan struct{})
			close(b.done) // encoded
			if !p.send(order, b) || rerr != nil {
				return
			}
		}
	})
}

// TlogStamps places a tlog message on the clock of target (−1: its boot's
// winner): t is its receive stamp, moved onto that clock through the
// tlog's estimate of the boot when target is another source's; pub is the
// autopilot's time of sending on the same clock, for a message of the
// autopilot with time_boot_ms (else t); boot is that time_boot_ms in µs
// (−1: none).
func (r *Result) TlogStamps(target Source, msg *TlogMessage) (t, pub stamp.Time, boot int64) {
	t, boot = msg.Receive, -1
	var bt *Boot
	if len(r.Boots) > 0 {
		bt = r.BootOfReceive(msg.Receive)
	}
	var est *Estimate
	if bt != nil {
		if target >= 0 {
			est = bt.Find(target)
		} else {
			est = bt.WinnerEstimate()
		}
		if est != nil && est.Source != SourceTlog {
			// Move the tlog's stamp onto the target clock.
			if bb, ok := bt.ReceiveToBoot(msg.Receive); ok {
				t = est.Unix(bb)
			}
		}
	}
	pub = t
	if ms, ok := msg.TimeBootMs(); ok && bt != nil && int(msg.SysID) == r.SysID && int(msg.CompID) == r.CompID {
		b := time.Duration(ms) * time.Millisecond
		boot = b.Microseconds()
		if est != nil {
			pub = est.Unix(b)
		}
	}
	return t, pub, boot
}
