package mavcmd

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/timealign/timealign/cmd/timealign/internal/cli"
	"github.com/timealign/timealign/pkg/bag"
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
        as a JSON object, boot_us the autopilot's boot time (empty if none);
        then one column per field of every topic, <topic>/<field>, which
        a row fills for its topic (PlotJuggler's CSV import plots them)

GPS positions (BIN GPS, GLOBAL_POSITION_INT, GPS_RAW_INT, GPS_INPUT) are
also written to the MCAP as foxglove.LocationFix on <topic>/fix, so that
Foxglove's map shows the track.

Logs that do not belong together (another vehicle, firmware or boot: see
mav align) are refused unless --allow-mismatch. Records arrive in nearly the right
order; --reorder-window is how far back in time one may come and still be put in
order (memory holds that much of the stream); later ones are written where
they arrive and counted. --types ATT,GPS,... writes only those message
types (BIN or MAVLink names). --report FILE.html writes a timing report:
every source's offset, the tlog's latencies over time and their
histograms, the merged topics.`

// mergeFlags are the flags of mav merge.
type mergeFlags struct {
	mav                                     mavFlags
	out, format, report, compression, types string
	force, quiet                            bool
	reorder                                 time.Duration
	comp                                    string // --compression, checked
}

func (f *mergeFlags) define(e *cli.Env, fs *flag.FlagSet) {
	f.mav.add(fs)
	fs.StringVar(&f.out, "out", "", "output file, .mcap or .csv (required)")
	fs.StringVar(&f.format, "format", "", "mcap or csv (default: from --out's extension)")
	fs.StringVar(&f.report, "report", "", "write an HTML timing report to this file")
	fs.BoolVar(&f.force, "allow-mismatch", false, "merge logs that do not belong together (a BIN of another vehicle, board or boot)")
	fs.StringVar(&f.compression, "compression", "lz4", "mcap: chunk compression, lz4 (fast), zstd (smaller) or none")
	fs.DurationVar(&f.reorder, "reorder-window", 2*time.Second, "how late a record may come and still be put in time order")
	fs.StringVar(&f.types, "types", "", "comma-separated message types to write, BIN (ATT, GPS) or MAVLink (ATTITUDE) names (default: all)")
	fs.BoolVar(&f.quiet, "quiet", false, cli.QuietUsage)
	cli.Deprecate(e, fs, "window", "window-samples")
	cli.Deprecate(e, fs, "force", "allow-mismatch")
	cli.Deprecate(e, fs, "reorder", "reorder-window")
}

// check validates the flags and the number of logs, and decides --format
// from --out's extension when it is not given.
func (f *mergeFlags) check(fs *flag.FlagSet) (mav.Config, error) {
	cfg, err := f.mav.config(fs)
	if err != nil {
		return cfg, err
	}
	if fs.NArg() < 2 {
		return cfg, cli.Usagef("mav merge needs a tlog and at least one BIN, got %d files", fs.NArg())
	}
	if f.out == "" {
		return cfg, cli.Usagef("mav merge needs --out FILE.mcap or FILE.csv")
	}
	if f.format == "" {
		switch strings.ToLower(filepath.Ext(f.out)) {
		case ".mcap":
			f.format = "mcap"
		case ".csv":
			f.format = "csv"
		default:
			return cfg, cli.Usagef("--out %s: give --format mcap or csv (the extension does not say)", cli.Cut(f.out))
		}
	}
	if f.format != "mcap" && f.format != "csv" {
		return cfg, cli.Usagef("--format: %s is not a format (want mcap or csv)", cli.Cut(f.format))
	}
	if err := cli.UnusedFlags(fs, "--format", f.format, map[string][]string{"compression": {"mcap"}}); err != nil {
		return cfg, err
	}
	switch f.compression {
	case "zstd":
		f.comp = bag.CompressionZSTD
	case "lz4":
		f.comp = bag.CompressionLZ4
	case "none":
		f.comp = bag.CompressionNone
	default:
		return cfg, cli.Usagef("--compression: %s is not one (want zstd, lz4 or none)", cli.Cut(f.compression))
	}
	if f.reorder < 0 {
		return cfg, cli.Usagef("--reorder-window is %v, want ≥ 0", f.reorder)
	}
	return cfg, nil
}

func runMavMerge(e *cli.Env, args []string) error {
	fs := cli.NewFlagsExit(e, "mav merge", "[flags] TLOG BIN... --out FILE.mcap|FILE.csv", mavMergeDoc, noTimeFailure)
	var mf mergeFlags
	mf.define(e, fs)
	if err := cli.ParseFlags(e, fs, args); err != nil {
		return err
	}
	cfg, err := mf.check(fs)
	if err != nil {
		return err
	}
	f, err := cli.OpenInputs(e, fs.Args(), cli.Out("--out", mf.out), cli.Out("--report", mf.report))
	if err != nil {
		return err
	}
	defer f.Abort()
	e.NoProgress = e.NoProgress || mf.quiet
	pr := logProgress(e, f, "merging")
	defer pr.Finish()
	run, err := alignLogs(e, f, cfg, mf.mav.ignoreCRC, pr)
	if err != nil {
		return err
	}
	if err := run.res.Err(); err != nil {
		return err
	}
	if err := checkBelongs(run, mf.force); err != nil {
		return err
	}
	m, err := newMerger(e, f, run, &mf)
	if err != nil {
		return err
	}
	defer m.w.abort()
	if err := m.merge(e.Ctx, f, pr); err != nil {
		return err
	}
	if err := m.checkTypes(); err != nil {
		return err
	}
	if err := m.w.close(); err != nil {
		return err
	}
	if f.Asked(1) {
		if err := writeMavReport(f, run, m, pr); err != nil {
			return err
		}
	}
	pr.Finish()
	if err := f.Commit(); err != nil {
		return err
	}
	if !mf.quiet {
		run.summary(e, "mav merge")
		m.summary(e)
	}
	return nil
}

// newMerger starts the merge of run's logs into output 0 of f (and
// gathers the report's data when output 1 is asked for).
func newMerger(e *cli.Env, f *cli.Files, run *mavRun, mf *mergeFlags) (*merger, error) {
	var w mergeWriter
	var err error
	if mf.format == "mcap" {
		w, err = newMCAPWriter(f.Out(0), mf.comp, run, e.Version)
	} else {
		w, err = newCSVWriter(f.Out(0), e.Temps)
	}
	if err != nil {
		return nil, err
	}
	m := &merger{run: run, w: w, reorder: mf.reorder, channels: map[string]*channel{}}
	if mf.format == "mcap" {
		m.fixes = map[fixKey]uint16{}
	}
	if mf.types != "" {
		m.types, m.seenTypes = map[string]bool{}, map[string]bool{}
		for _, t := range cli.SplitList(mf.types) {
			m.types[t] = true
		}
	}
	if f.Asked(1) {
		if m.stats, err = newMavTiming(); err != nil {
			w.abort()
			return nil, err
		}
	}
	return m, nil
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
			return fmt.Errorf("%s does not belong to %s: %s (--allow-mismatch merges it anyway)", run.bins[i], run.tlog, strings.Join(why, "; "))
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
	id     uint16
	topic  string
	schema string // schema name
	data   []byte // JSON schema
	tlog   bool   // of tlog messages (else of BIN records)
	// The writer goroutine reads the fields above for every message,
	// the merge loop writes those below: kept in different cache lines.
	_      [64]byte
	count  int64
	first  stamp.Time
	last   stamp.Time
	report int // the topic's id in the report, −1 before its first message
	// byInst has the report's ids of the instances of a BIN type with
	// an instance column: each is a topic of its own there (two
	// compasses share their stamps, and each has its own rate).
	byInst map[int16]int
}

// chanRef is a channel as a reader goroutine knows it: a tlog message
// type of a sender, or a BIN's record type. The merge loop, the only one
// to touch ch, resolves it to the output channel (BINs of the same
// vehicle share channels) when its first item is emitted.
type chanRef struct {
	key, topic, name string
	schema           []byte
	tlog             bool
	ch               *channel
	// keep is the merge loop's decision under --types: 0 not yet made,
	// 1 written, 2 left out.
	keep int8
}

// mergeItem is one message of the merged stream. Items live in the batch
// of the pipeline that made them until written; queues hold pointers to
// them (the merge loop reads them and writes nothing into them).
type mergeItem = mav.Item[*chanRef]

// queued is an item in a queue, with its stamp and its seq: items of
// equal t go by seq, the source's index (the tlog first, then the BINs as
// given) in the top 16 bits, then the order of reading within the source;
// so the merged order depends on nothing but the inputs (not on how they
// were cut into batches).
type queued struct {
	t   stamp.Time
	seq uint64
	it  *mergeItem
}

func queuedLess(a, b *queued) bool { return a.t < b.t || a.t == b.t && a.seq < b.seq }

// itemQueue holds a source's buffered items in order of stamp (then of
// reading). Sources are nearly in order, so an item is inserted by moving
// it back past the few later ones (O(1) for an item in order, O(k) for
// one k places early), and taken from the front: no allocation per item.
type itemQueue struct {
	buf  []queued
	head int
}

func (q *itemQueue) Len() int { return len(q.buf) - q.head }

func (q *itemQueue) front() *queued { return &q.buf[q.head] }

func (q *itemQueue) push(e queued) {
	if q.head > 0 && q.head >= len(q.buf)/2 {
		n := copy(q.buf, q.buf[q.head:])
		clear(q.buf[n:])
		q.buf, q.head = q.buf[:n], 0
	}
	q.buf = append(q.buf, e)
	for i := len(q.buf) - 1; i > q.head && queuedLess(&q.buf[i], &q.buf[i-1]); i-- {
		q.buf[i], q.buf[i-1] = q.buf[i-1], q.buf[i]
	}
}

func (q *itemQueue) pop() *mergeItem {
	it := q.buf[q.head].it
	q.buf[q.head] = queued{}
	q.head++
	return it
}

// mergeSrc is one input of the merge.
type mergeSrc struct {
	name    string
	seq     uint64 // the next item's seq
	q       itemQueue
	maxSeen stamp.Time
	seen    bool
	done    bool
	read    func() error // reads a batch and queues its items; io.EOF at the end
}

// add queues an item, the next of the source.
func (s *mergeSrc) add(it *mergeItem) {
	t := it.T
	s.q.push(queued{t, s.seq, it})
	s.seq++
	if !s.seen || t > s.maxSeen {
		s.maxSeen, s.seen = t, true
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
	stats    *mavTiming // the report's, or nil
	out      *asyncWriter[outItem]
	// types are the message types --types keeps (nil: all); seenTypes
	// every type met, and leftOut the messages of the others.
	types     map[string]bool
	seenTypes map[string]bool
	leftOut   int64
	// fixes, when set (MCAP), numbers the LocationFix channel of each
	// position channel and instance.
	fixes map[fixKey]uint16
	// Counters.
	written, late, noTime, clamped int64
	last                           stamp.Time
	started                        bool
}

// resolve sets the output channel of a reader's channel.
func (m *merger) resolve(r *chanRef) error {
	if c := m.channels[r.key]; c != nil {
		r.ch = c
		return nil
	}
	if m.nextID == 65535 {
		return fmt.Errorf("more than 65535 topics")
	}
	c := &channel{id: m.nextID + 1, topic: r.topic, schema: r.name, data: r.schema, tlog: r.tlog, report: -1}
	m.nextID++
	m.channels[r.key] = c
	r.ch = c
	return nil
}

// merge reads every input again and writes the merged stream. The logs
// are read and encoded by goroutines (mav.Pipeline); they end with merge.
func (m *merger) merge(ctx context.Context, f *cli.Files, pr *cli.Progress) error {
	pl := mav.NewPipeline[*chanRef](ctx)
	defer pl.Stop()
	m.out = newAsyncWriter(m.w.write, releaseItems)
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
			if s.q.Len() > 0 && (best == nil || queuedLess(s.q.front(), best.q.front())) {
				best = s
			}
			if w := s.watermark(m.reorder); w < safe {
				safe, lag = w, s
			}
		}
		if best != nil && best.q.front().t <= safe {
			// Emit best's items while they come before every other
			// source's first and the safe stamp.
			var next *queued
			for _, s := range srcs {
				if s != best && s.q.Len() > 0 && (next == nil || queuedLess(s.q.front(), next)) {
					next = s.q.front()
				}
			}
			for {
				if err := m.emit(best.q.pop()); err != nil {
					return err
				}
				if best.q.Len() == 0 {
					break
				}
				if f := best.q.front(); f.t > safe || next != nil && !queuedLess(f, next) {
					break
				}
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

func (m *merger) emit(it *mergeItem) error {
	if m.types != nil {
		if it.Ref.keep == 0 {
			m.seenTypes[it.Ref.name] = true
			it.Ref.keep = 2
			if m.types[it.Ref.name] {
				it.Ref.keep = 1
			}
		}
		if it.Ref.keep == 2 {
			m.leftOut++
			it.Batch().Release(1)
			return nil
		}
	}
	if m.started && it.T < m.last {
		m.late++
	} else {
		m.last, m.started = it.T, true
	}
	if it.Ref.ch == nil {
		// Channels are numbered in the order of their first message.
		if err := m.resolve(it.Ref); err != nil {
			return err
		}
	}
	c := it.Ref.ch
	var fix uint16
	if m.fixes != nil && fixKind(it.Ref) != 0 {
		k := fixKey{c.id, it.Inst}
		id, ok := m.fixes[k]
		if !ok && m.nextID < 65535 {
			m.nextID++
			id = m.nextID
			m.fixes[k] = id
		}
		fix = id
	}
	if c.count == 0 {
		c.first = it.T
	}
	c.count++
	c.last = max(c.last, it.T)
	m.written++
	if m.stats != nil {
		m.stats.add(c, it.Inst, it.T, it.Pub, it.Boot >= 0, len(it.Data()))
	}
	return m.out.add(outItem{it, fix})
}

// sources opens the second pass over the inputs.
func (m *merger) sources(f *cli.Files, pr *cli.Progress, pl *mav.Pipeline[*chanRef]) ([]*mergeSrc, error) {
	run := m.run
	if len(run.bins) >= 1<<16-1 {
		return nil, fmt.Errorf("%d BINs: at most %d can be merged at once", len(run.bins), 1<<16-2)
	}
	in, err := f.Input(0)
	if err != nil {
		return nil, err
	}
	tr := mav.NewTlogReader(pr.Reader(in))
	tr.IgnoreCRC = run.ignoreCRC
	target := run.cfg.Prefer
	tl := &mergeSrc{name: run.tlog}
	tl.read = m.reader(tl, pl.StartTlog(run.tlog, tr, run.res, target, tlogRef))
	srcs := []*mergeSrc{tl}
	for i, name := range run.bins {
		in, err := f.Input(i + 1)
		if err != nil {
			return nil, err
		}
		src := &mergeSrc{name: name, seq: uint64(i+1) << 48}
		src.read = m.reader(src, pl.StartBin(name, mav.NewBinReader(pr.Reader(in)), run.res.BinEstimate(i, target), binRef))
		srcs = append(srcs, src)
	}
	return srcs, nil
}

// reader returns the read function of src, whose batches come from
// batches: it queues the items of the next batch, and returns io.EOF at
// the end.
func (m *merger) reader(src *mergeSrc, batches <-chan *mav.Batch[*chanRef]) func() error {
	return func() error {
		b, ok := <-batches
		if !ok {
			return io.EOF
		}
		if err := b.Wait(); err != nil {
			return err
		}
		if b.Err != nil {
			return b.Err
		}
		m.clamped += b.Clamped
		m.noTime += b.NoTime
		if len(b.Items) == 0 {
			b.Release(1) // an empty last batch
			return nil
		}
		for k := range b.Items {
			src.add(&b.Items[k])
		}
		return nil
	}
}

// tlogRef is the channel of the tlog's messages of a type and sender.
func tlogRef(msg *mav.TlogMessage) *chanRef {
	return &chanRef{key: fmt.Sprintf("t%d/%d/%d", msg.SysID, msg.CompID, msg.ID),
		topic: fmt.Sprintf("/tlog/%d/%d/%s", msg.SysID, msg.CompID, msg.Name), name: msg.Name, schema: msg.Schema(), tlog: true}
}

// binRef is the channel of a BIN's records of a format: BINs of the same
// vehicle share their channels.
func binRef(r *mav.BinReader, f *mav.Format) *chanRef {
	return &chanRef{key: "b" + f.Name + "/" + f.Format + "/" + strings.Join(columnNames(f), ","), topic: "/bin/" + f.Name,
		name: f.Name, schema: r.BinSchema(f)}
}

func columnNames(f *mav.Format) []string {
	s := make([]string, len(f.Columns))
	for i, c := range f.Columns {
		s[i] = c.Name
	}
	return s
}

// checkTypes refuses a --types name that matched no message: a typo would
// otherwise leave a file without what was asked for.
func (m *merger) checkTypes() error {
	var missing []string
	for t := range m.types {
		if !m.seenTypes[t] {
			missing = append(missing, t)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	slices.Sort(missing)
	have := slices.Sorted(maps.Keys(m.seenTypes))
	return cli.Usagef("--types: no message of type %s in the logs (they hold %s)", strings.Join(missing, ", "), strings.Join(have, ", "))
}

func (m *merger) summary(e *cli.Env) {
	var parts []string
	if m.leftOut > 0 {
		parts = append(parts, fmt.Sprintf("%d of other types than --types left out", m.leftOut))
	}
	if m.late > 0 {
		parts = append(parts, fmt.Sprintf("%d came more than --reorder-window %v late and were written out of order", m.late, m.reorder))
	}
	if m.noTime > 0 {
		parts = append(parts, fmt.Sprintf("%d BIN records without TimeUS took the time of the record before", m.noTime))
	}
	if m.clamped > 0 {
		parts = append(parts, fmt.Sprintf("%d mapped before 1970 and were stamped 0", m.clamped))
	}
	if len(parts) > 0 {
		fmt.Fprintf(e.Stderr, "timealign mav merge: %d messages on %d topics; %s\n", m.written, len(m.channels), strings.Join(parts, "; "))
	}
}
