package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	gosync "sync"
	"sync/atomic"
	"time"

	"github.com/foxglove/mcap/go/mcap"

	"github.com/timealign/timealign/pkg/mav"
	"github.com/timealign/timealign/pkg/stamp"
)

const mavMergeDoc = `
Writes the tlog and the BIN files as one time-ordered stream on the Unix
clock. Each BIN record's TimeUS is mapped through the offset of its boot
(see 'timealign mav align'); tlog messages keep their receive stamps. The
clock is the tlog's unless --source names another source (system_time,
gps_input, gps): then the BIN goes on that clock and the tlog's stamps are
moved onto it through the tlog's offset.

Output (--format, or --out's extension):
  mcap  one channel per message type and sender: /tlog/<sysid>/<compid>/<NAME>
        (MAVLink field names) and /bin/<NAME> (dataflash column names), JSON
        messages with JSON schemas (opens in Foxglove); log_time is the
        merged stamp; publish_time the autopilot's time of sending mapped to
        the same clock, for messages that carry time_boot_ms (else the
        log_time); chunks compressed with --compression
  csv   log_time_ns,publish_time_ns,topic,boot_us,data: data is the message
        as a JSON object, boot_us the autopilot's boot time (empty if none)

Logs that do not belong together (another vehicle, firmware or boot: see
mav align) are refused unless --force. Records arrive in nearly the right
order; --reorder is how far back in time one may come and still be put in
order (memory holds that much of the stream); later ones are written where
they arrive and counted. --report FILE.html writes a timing report:
every source's offset, the tlog's latencies over time and their
histograms, the merged topics.`

func runMavMerge(e *env, args []string) error {
	fs := newFlags(e, "mav merge", "[flags] TLOG BIN... --out FILE.mcap|FILE.csv", mavMergeDoc)
	var mf mavFlags
	mf.add(fs)
	out := fs.String("out", "", "output file, .mcap or .csv (required)")
	format := fs.String("format", "", "mcap or csv (default: from --out's extension)")
	report := fs.String("report", "", "write an HTML timing report to this file")
	force := fs.Bool("force", false, "merge logs that do not belong together")
	compression := fs.String("compression", "lz4", "mcap: chunk compression, lz4 (fast), zstd (smaller) or none")
	reorder := fs.Duration("reorder", 2*time.Second, "how late a record may come and still be put in time order")
	quiet := fs.Bool("quiet", false, "no progress bar and no summary on standard error")
	if err := parseFlags(e, fs, args); err != nil {
		return err
	}
	cfg, err := mf.config(fs)
	if err != nil {
		return err
	}
	if fs.NArg() < 2 {
		return usagef("mav merge needs a tlog and at least one BIN, got %d files", fs.NArg())
	}
	if *out == "" {
		return usagef("mav merge needs --out FILE.mcap or FILE.csv")
	}
	if *format == "" {
		switch strings.ToLower(filepath.Ext(*out)) {
		case ".mcap":
			*format = "mcap"
		case ".csv":
			*format = "csv"
		default:
			return usagef("--out %s: give --format mcap or csv (the extension does not say)", cut(*out))
		}
	}
	if *format != "mcap" && *format != "csv" {
		return usagef("--format: %s is not a format (want mcap or csv)", cut(*format))
	}
	if err := unusedFlags(fs, "--format", *format, map[string][]string{"compression": {"mcap"}}); err != nil {
		return err
	}
	var comp mcap.CompressionFormat
	switch *compression {
	case "zstd":
		comp = mcap.CompressionZSTD
	case "lz4":
		comp = mcap.CompressionLZ4
	case "none":
		comp = mcap.CompressionNone
	default:
		return usagef("--compression: %s is not one (want zstd, lz4 or none)", cut(*compression))
	}
	if *reorder < 0 {
		return usagef("--reorder is %v, want ≥ 0", *reorder)
	}
	f, err := openInputs(e, fs.Args(), outSpec{"--out", *out}, outSpec{"--report", *report})
	if err != nil {
		return err
	}
	defer f.abort()
	e.noProgress = e.noProgress || *quiet
	pr := logProgress(e, f, "merging")
	defer pr.finish()
	run, err := alignLogs(f, cfg, mf.ignoreCRC, pr)
	if err != nil {
		return err
	}
	if err := run.res.Err(); err != nil {
		return err
	}
	if err := checkBelongs(run, *force); err != nil {
		return err
	}
	var w mergeWriter
	if *format == "mcap" {
		w, err = newMCAPWriter(f.out(0), comp, run)
	} else {
		w = newCSVWriter(f.out(0))
	}
	if err != nil {
		return err
	}
	defer w.abort()
	m := &merger{run: run, w: w, reorder: *reorder, channels: map[string]*channel{}}
	if f.asked(1) {
		if m.stats, err = newMavTiming(); err != nil {
			return err
		}
	}
	if err := m.merge(f, pr); err != nil {
		return err
	}
	if err := w.close(); err != nil {
		return err
	}
	if f.asked(1) {
		if err := writeMavReport(f, run, m, pr); err != nil {
			return err
		}
	}
	pr.finish()
	if err := f.commit(); err != nil {
		return err
	}
	if !*quiet {
		run.summary(e, "mav merge")
		m.summary(e)
	}
	return nil
}

// checkBelongs refuses BINs that do not belong to the tlog (unless
// forced) and BINs that cannot be placed on a clock.
func checkBelongs(run *mavRun, force bool) error {
	r := run.res
	for i, b := range r.Bins {
		if b.Belongs == "no" && !force {
			var why []string
			for _, ev := range b.Evidence {
				if ev.Verdict < 0 {
					why = append(why, ev.Detail)
				}
			}
			return fmt.Errorf("%s does not belong to %s: %s (--force merges it anyway)", run.bins[i], run.tlog, strings.Join(why, "; "))
		}
		if r.BinEstimate(i, run.cfg.Prefer) == nil {
			switch {
			case run.cfg.Prefer >= 0:
				return fmt.Errorf("%s: its boot has no %s offset (mav align shows the sources it has)", run.bins[i], run.cfg.Prefer)
			case b.Boot < 0:
				return fmt.Errorf("%s: matches no boot of the tlog and has no GPS time: it cannot be placed on the Unix clock", run.bins[i])
			}
			return fmt.Errorf("%s: boot %d has no offset", run.bins[i], b.Boot+1)
		}
	}
	return nil
}

// channel is one output topic.
type channel struct {
	id      uint16
	topic   string
	schema  string // schema name
	data    []byte // JSON schema
	written bool
	seq     uint32
	count   int64
	first   stamp.Time
	last    stamp.Time
}

// mergeItem is one message of the merged stream.
type mergeItem struct {
	t, pub stamp.Time
	seq    uint64
	ch     *channel
	fm     *mav.Format // BIN records: the format, for the channel
	tc     *tlogChan   // tlog messages: the channel, as the reader knows it
	boot   int64       // µs, −1 if none
	data   []byte
	own    owner // holds data until the item is written
}

// owner is what holds an item's bytes: an arena slab or a BIN batch.
type owner interface{ release() }

// slab is a block of an arena; refs counts the items in it.
type slab struct {
	buf  []byte
	refs int
	a    *arena
}

func (s *slab) release() { s.a.release(s) }

// arena holds the JSON of buffered items in large blocks, reused once
// every item of a block is written: no allocation per message.
type arena struct {
	mu   gosync.Mutex // items are released by the writer goroutine
	cur  *slab
	free []*slab
}

const slabSize = 1 << 20

func (a *arena) put(p []byte) ([]byte, *slab) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.cur == nil || len(a.cur.buf)+len(p) > cap(a.cur.buf) {
		if a.cur != nil && a.cur.refs == 0 {
			a.cur.buf = a.cur.buf[:0]
			a.free = append(a.free, a.cur)
		}
		if n := len(a.free); n > 0 && len(p) <= slabSize {
			a.cur, a.free = a.free[n-1], a.free[:n-1]
		} else {
			a.cur = &slab{buf: make([]byte, 0, max(slabSize, len(p))), a: a}
		}
	}
	s := a.cur
	start := len(s.buf)
	s.buf = append(s.buf, p...)
	s.refs++
	return s.buf[start:len(s.buf):len(s.buf)], s
}

func (a *arena) release(s *slab) {
	a.mu.Lock()
	defer a.mu.Unlock()
	s.refs--
	if s.refs == 0 && s != a.cur {
		s.buf = s.buf[:0]
		if len(a.free) < 8 {
			a.free = append(a.free, s)
		}
	}
}

// itemQueue holds a source's buffered items in order of stamp (then of
// reading). Sources are nearly in order, so an item is inserted by moving
// it back past the few later ones (O(1) for an item in order, O(k) for
// one k places early), and taken from the front: no allocation per item.
type itemQueue struct {
	buf  []mergeItem
	head int
}

func (q *itemQueue) Len() int { return len(q.buf) - q.head }

func (q *itemQueue) front() *mergeItem { return &q.buf[q.head] }

func itemLess(a, b *mergeItem) bool { return a.t < b.t || a.t == b.t && a.seq < b.seq }

func (q *itemQueue) push(it mergeItem) {
	if q.head > 0 && q.head >= len(q.buf)/2 {
		n := copy(q.buf, q.buf[q.head:])
		clear(q.buf[n:])
		q.buf, q.head = q.buf[:n], 0
	}
	q.buf = append(q.buf, it)
	for i := len(q.buf) - 1; i > q.head && itemLess(&q.buf[i], &q.buf[i-1]); i-- {
		q.buf[i], q.buf[i-1] = q.buf[i-1], q.buf[i]
	}
}

func (q *itemQueue) pop() mergeItem {
	it := q.buf[q.head]
	q.buf[q.head] = mergeItem{}
	q.head++
	return it
}

// mergeSrc is one input of the merge.
type mergeSrc struct {
	name    string
	q       itemQueue
	arena   arena
	maxSeen stamp.Time
	seen    bool
	done    bool
	read    func() error // reads a record and pushes at most one item; io.EOF at the end
}

func (s *mergeSrc) push(it mergeItem, data []byte) {
	var sl *slab
	it.data, sl = s.arena.put(data)
	it.own = sl
	s.add(it)
}

// add queues an item whose bytes are owned already.
func (s *mergeSrc) add(it mergeItem) {
	s.q.push(it)
	if !s.seen || it.t > s.maxSeen {
		s.maxSeen, s.seen = it.t, true
	}
}

// watermark is the stamp below which this source will bring nothing more
// (within the reorder window).
func (s *mergeSrc) watermark(reorder time.Duration) stamp.Time {
	if s.done {
		return stamp.Max
	}
	if !s.seen {
		return stamp.Time(-1 << 63)
	}
	return s.maxSeen.Add(-reorder)
}

type merger struct {
	run      *mavRun
	w        mergeWriter
	reorder  time.Duration
	channels map[string]*channel
	nextID   uint16
	seq      uint64
	stats    *mavTiming // the report's, or nil
	out      *asyncWriter
	// Counters.
	written, late, noTime, clamped int64
	last                           stamp.Time
	started                        bool
}

func (m *merger) channel(key, topic, schema string, data func() []byte) (*channel, error) {
	if c := m.channels[key]; c != nil {
		return c, nil
	}
	if m.nextID == 65535 {
		return nil, fmt.Errorf("more than 65535 topics")
	}
	c := &channel{id: m.nextID + 1, topic: topic, schema: schema, data: data()}
	m.nextID++
	m.channels[key] = c
	return c, nil
}

// merge reads every input again and writes the merged stream. The BINs
// are read and encoded by goroutines (binPipeline); they end with merge.
func (m *merger) merge(f *files, pr *progress) error {
	pl := newBinPipeline(f.e.ctx)
	defer pl.stop()
	m.out = newAsyncWriter(m.w)
	defer m.out.abort()
	srcs, err := m.sources(f, pr, pl)
	if err != nil {
		return err
	}
	for {
		// The earliest buffered item, and the stamp up to which every
		// source has brought what it has.
		var best *mergeSrc
		safe := stamp.Max
		var lag *mergeSrc
		for _, s := range srcs {
			if s.q.Len() > 0 && (best == nil || itemLess(s.q.front(), best.q.front())) {
				best = s
			}
			if w := s.watermark(m.reorder); w < safe {
				safe, lag = w, s
			}
		}
		if best != nil && best.q.front().t <= safe {
			if err := m.emit(best.q.pop()); err != nil {
				return err
			}
			continue
		}
		if lag == nil {
			return m.out.finish() // every source done and drained
		}
		if err := lag.read(); err != nil {
			if !errors.Is(err, io.EOF) {
				return err
			}
			lag.done = true
		}
	}
}

func (m *merger) emit(it mergeItem) error {
	if m.started && it.t < m.last {
		m.late++
	} else {
		m.last, m.started = it.t, true
	}
	c := it.ch
	if c.count == 0 {
		c.first = it.t
	}
	c.count++
	c.last = max(c.last, it.t)
	m.written++
	if m.stats != nil {
		m.stats.add(c.topic, c.schema, it.fm == nil, it.t, it.pub, it.boot >= 0, len(it.data))
	}
	return m.out.add(it)
}

// sources opens the second pass over the inputs.
func (m *merger) sources(f *files, pr *progress, pl *binPipeline) ([]*mergeSrc, error) {
	run := m.run
	res := run.res
	in, err := f.input(0)
	if err != nil {
		return nil, err
	}
	tr := mav.NewTlogReader(pr.reader(in))
	tr.IgnoreCRC = run.ignoreCRC
	target := run.cfg.Prefer
	torder := pl.startTlog(run, tr)
	tl := &mergeSrc{name: run.tlog}
	tl.read = func() error {
		b, ok := <-torder
		if !ok {
			return io.EOF
		}
		if b.err != nil {
			return b.err
		}
		if len(b.items) == 0 {
			b.release()
			return nil
		}
		for k := range b.items {
			it := b.items[k]
			tc := it.tc
			if tc.ch == nil {
				c, err := m.channel(tc.key, tc.topic, tc.name, func() []byte { return tc.schema })
				if err != nil {
					return err
				}
				tc.ch = c
			}
			it.ch, it.tc = tc.ch, nil
			it.seq = m.seq
			m.seq++
			tl.add(it)
		}
		return nil
	}
	srcs := []*mergeSrc{tl}
	for i := range run.bins {
		name := run.bins[i]
		est := res.BinEstimate(i, target)
		in, err := f.input(i + 1)
		if err != nil {
			return nil, err
		}
		order := pl.start(name, mav.NewBinReader(pr.reader(in)), est, &m.noTime)
		chans := map[*mav.Format]*channel{}
		src := &mergeSrc{name: name}
		src.read = func() error {
			b, ok := <-order
			if !ok {
				return io.EOF
			}
			select {
			case <-b.done:
			case <-pl.ctx.Done():
				return pl.ctx.Err()
			}
			if b.err != nil {
				return b.err
			}
			m.clamped += b.clamped
			for _, ns := range b.schemas {
				c, err := m.channel("b"+ns.f.Name+"/"+ns.f.Format+"/"+strings.Join(columnNames(ns.f), ","), "/bin/"+ns.f.Name, ns.f.Name,
					func() []byte { return ns.schema })
				if err != nil {
					return err
				}
				chans[ns.f] = c
			}
			if len(b.items) == 0 {
				b.release() // an empty last batch
				return nil
			}
			for k := range b.items {
				it := b.items[k]
				it.ch = chans[it.fm]
				it.seq = m.seq
				m.seq++
				src.add(it)
			}
			return nil
		}
		srcs = append(srcs, src)
	}
	return srcs, nil
}

func columnNames(f *mav.Format) []string {
	s := make([]string, len(f.Columns))
	for i, c := range f.Columns {
		s[i] = c.Name
	}
	return s
}

func (m *merger) summary(e *env) {
	var parts []string
	if m.late > 0 {
		parts = append(parts, fmt.Sprintf("%d came more than --reorder %v late and were written out of order", m.late, m.reorder))
	}
	if m.noTime > 0 {
		parts = append(parts, fmt.Sprintf("%d BIN records without TimeUS took the time of the record before", m.noTime))
	}
	if m.clamped > 0 {
		parts = append(parts, fmt.Sprintf("%d mapped before 1970 and were stamped 0", m.clamped))
	}
	if len(parts) > 0 {
		fmt.Fprintf(e.stderr, "timealign mav merge: %d messages on %d topics; %s\n", m.written, len(m.channels), strings.Join(parts, "; "))
	}
}

// asyncWriter writes the merged stream in a goroutine of its own, in
// batches of items, while the merge goes on; each item's bytes are
// released once written.
type asyncWriter struct {
	w      mergeWriter
	cur    []mergeItem
	ch     chan []mergeItem
	free   chan []mergeItem
	done   chan struct{}
	err    error
	failed atomic.Bool
	closed bool
}

const writeBatch = 2048

func newAsyncWriter(w mergeWriter) *asyncWriter {
	a := &asyncWriter{w: w, ch: make(chan []mergeItem, 4), free: make(chan []mergeItem, 6), done: make(chan struct{})}
	go func() {
		defer close(a.done)
		for batch := range a.ch {
			for i := range batch {
				if a.err == nil {
					if a.err = a.w.write(&batch[i]); a.err != nil {
						a.failed.Store(true)
					}
				}
				batch[i].own.release()
				batch[i] = mergeItem{}
			}
			select {
			case a.free <- batch[:0]:
			default:
			}
		}
	}()
	return a
}

// add queues an item; it fails once a write has failed.
func (a *asyncWriter) add(it mergeItem) error {
	if a.failed.Load() {
		return a.finish()
	}
	if a.cur == nil {
		select {
		case a.cur = <-a.free:
		default:
			a.cur = make([]mergeItem, 0, writeBatch)
		}
	}
	a.cur = append(a.cur, it)
	if len(a.cur) == writeBatch {
		a.ch <- a.cur
		a.cur = nil
	}
	return nil
}

// finish writes what is queued and waits for the writer.
func (a *asyncWriter) finish() error {
	if !a.closed {
		if len(a.cur) > 0 {
			a.ch <- a.cur
			a.cur = nil
		}
		a.closed = true
		close(a.ch)
	}
	<-a.done
	return a.err
}

// abort ends the writer goroutine (after an error elsewhere).
func (a *asyncWriter) abort() { _ = a.finish() }

// mergeWriter writes the merged stream.
type mergeWriter interface {
	write(it *mergeItem) error
	close() error
	// abort ends the writer's goroutines without finishing the output
	// (after a failure; a no-op after close).
	abort()
}

type csvWriter struct {
	w   *bufio.Writer
	buf []byte
}

func newCSVWriter(out io.Writer) *csvWriter {
	w := &csvWriter{w: bufio.NewWriterSize(out, 1<<20)}
	w.w.WriteString("log_time_ns,publish_time_ns,topic,boot_us,data\n")
	return w
}

func (c *csvWriter) write(it *mergeItem) error {
	b := strconv.AppendInt(c.buf[:0], int64(it.t), 10)
	b = append(b, ',')
	b = strconv.AppendInt(b, int64(it.pub), 10)
	b = append(b, ',')
	b = append(b, it.ch.topic...)
	b = append(b, ',')
	if it.boot >= 0 {
		b = strconv.AppendInt(b, it.boot, 10)
	}
	b = append(b, ',', '"')
	for d := it.data; len(d) > 0; {
		i := bytes.IndexByte(d, '"')
		if i < 0 {
			b = append(b, d...)
			break
		}
		b = append(b, d[:i+1]...)
		b = append(b, '"')
		d = d[i+1:]
	}
	b = append(b, '"', '\n')
	c.buf = b
	_, err := c.w.Write(b)
	return err
}

func (c *csvWriter) close() error { return c.w.Flush() }

func (c *csvWriter) abort() {}
