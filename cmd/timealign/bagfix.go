package main

import (
	"bytes"
	"container/heap"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/timealign/timealign/nodes/nodeparams"
	"github.com/timealign/timealign/pkg/bag"
	"github.com/timealign/timealign/pkg/cdr"
	"github.com/timealign/timealign/pkg/pll"
	"github.com/timealign/timealign/pkg/stamp"
	tsync "github.com/timealign/timealign/pkg/sync"
	"github.com/timealign/timealign/pkg/tsest"
)

const bagFixDoc = `
Writes a copy of bag IN to OUT with the header stamps of the chosen topics
corrected by the nodes' algorithms, configured by the nodes' parameter YAML
(--params, the files a launch file gives the nodes; repeatable, later files
win). Every other byte of every message, and every other record (topics,
QoS, schemas, attachments, MCAP metadata), is kept; OUT is a bag directory
with a metadata.yaml that 'ros2 bag info' and 'ros2 bag play' accept, in
IN's storage format and MCAP compression unless --storage or --compression
say otherwise (OUT ending in .mcap or .db3: one storage file). Split input
files give split output files.

Which topic gets which correction: --apply TOPIC=KIND[:NODE], repeatable,
or the same strings as the 'apply' string array of the timealign_bag_fix
section of a parameter file:
  TOPIC=timestamp_estimator[:NODE]  pkg/tsest: jitter removed (stamp_source
        header: from header.stamp; receive_time: from the log time)
  TOPIC=clock_sync[:NODE]           pkg/pll: header.stamp is a device clock,
        mapped to host time against the log times (when_invalid applies)
  TOPIC=offset:SECONDS              a constant added (e.g. offset:-0.012)
NODE is the node whose parameters apply: its fully qualified name as the
launch file names it (default /timestamp_estimator, /clock_sync, the names
'ros2 run' gives); its parameters are resolved from the files as that node
would resolve them (its own section, /**, /*), with the node's ranges and
checks: a value the node would reject is an error here.

Log and publish times (--time-policy):
  keep         unchanged: the bag plays as recorded, with corrected stamps
  sensor-time  log and publish times of corrected messages set to their new
               stamps, so that players replay in sensor time; the output is
               reordered by log time (within --reorder-window)
  restamp      header.stamp rebuilt from the log times (the estimator fed
               with the log time, an offset added to it), as restamp tools
               do, but with drift and jitter estimated; log times unchanged

--sync-topics TOPIC,TOPIC,... also writes each set the synchronizer policy matches
on the corrected stamps (the parameters of node --sync-node, default
/synchronizer) as extra channels TOPIC+--sync-suffix, and a
timealign/msg/MatchedSet per set on /timealign/matched.

Messages of a corrected topic whose bytes are not a Header-first message
are passed unchanged and counted; what is skipped or dropped is summarized
on standard error. A recording that was cut off (its recorder killed, no
metadata.yaml) is read to where its files end: a note when that lost no
message (exit status 0), the file, byte and record named when it did
(exit status 1; OUT holds everything readable). OUT is written under a temporary name and renamed when
complete: an interrupted or failed run leaves no OUT, and OUT may not be,
hold or lie inside IN (--overwrite replaces an existing OUT bag). With
--out-dir DIR, every argument is an input and DIR/<bag> its output, --jobs
bags at a time.`

// fixPolicy is what happens to log and publish times.
type fixPolicy int

const (
	policyKeep fixPolicy = iota
	policySensorTime
	policyRestamp
)

var fixPolicyNames = []string{"keep", "sensor-time", "restamp"}

func parseFixPolicy(s string) (fixPolicy, error) {
	for i, n := range fixPolicyNames {
		if n == s {
			return fixPolicy(i), nil
		}
	}
	return 0, fmt.Errorf("policy %q is not keep, sensor-time or restamp", cut(s))
}

// repeated is a repeatable string flag.
type repeated []string

func (r *repeated) String() string     { return strings.Join(*r, " ") }
func (r *repeated) Set(v string) error { *r = append(*r, v); return nil }

// fixOpts are the settings of one bag fix run.
type fixOpts struct {
	rng           timeRange // --start, --end
	files         paramFiles
	rules         []applyRule
	policy        fixPolicy
	syncTopics    []string
	syncNode      string
	syncSuffix    string
	storage       string
	compression   string
	overwrite     bool
	reorderWindow time.Duration
	warnings      []string
}

func runBagFix(e *env, args []string) error {
	fs := newFlags(e, "bag fix", "[flags] IN OUT  |  --out-dir DIR [flags] BAG...", bagFixDoc)
	var paramPaths, applies repeated
	fs.Var(&paramPaths, "params", "ROS 2 parameter YAML `FILE` of the nodes (repeatable; later files win)")
	fs.Var(&applies, "apply", "`TOPIC=KIND[:NODE]`: correct TOPIC with timestamp_estimator, clock_sync or offset:SECONDS (repeatable)")
	policy := fs.String("time-policy", "", "log and publish times: keep (default), sensor-time or restamp")
	syncList := fs.String("sync-topics", "", "comma-separated topics whose matched sets are written as extra channels")
	syncNode := fs.String("sync-node", "", "node whose synchronizer parameters --sync-topics uses (default /synchronizer)")
	syncSuffix := fs.String("sync-suffix", "/synced", "suffix of the channels --sync-topics writes")
	storage := fs.String("storage", "", "output storage: mcap or sqlite3 (default: the input's)")
	compression := fs.String("compression", "", "MCAP chunk compression: zstd, lz4 or none (default: the input's)")
	overwrite := fs.Bool("overwrite", false, "replace an existing OUT bag")
	outDir := fs.String("out-dir", "", "fix every BAG into DIR/<bag name>")
	jobs := fs.Int("jobs", defaultJobs(), "with --out-dir: bags fixed in parallel")
	quiet := fs.Bool("quiet", false, quietUsage)
	deprecate(e, fs, "sync", "sync-topics")
	deprecate(e, fs, "policy", "time-policy")
	var rng timeRange
	fs.Var(&rng.start, "start", startUsage+"; OUT holds only those")
	fs.Var(&rng.end, "end", endUsage+"; OUT holds only those")
	window := fs.Duration("reorder-window", time.Second, "sensor-time: how far a corrected stamp may precede its log time and still be written in order")
	if err := parseFlags(e, fs, args); err != nil {
		return err
	}
	e.noProgress = e.noProgress || *quiet
	o := fixOpts{syncNode: *syncNode, syncSuffix: *syncSuffix, storage: *storage, compression: *compression,
		overwrite: *overwrite, reorderWindow: *window, rng: rng}
	var err error
	if o.files, err = loadParamFiles(paramPaths); err != nil {
		return &usageError{err: err}
	}
	set := o.files.fixSettings()
	for _, a := range set.apply {
		r, err := parseApply(a, set.source["apply"])
		if err != nil {
			return usagef("%v", err)
		}
		o.rules = append(o.rules, r)
	}
	for _, a := range applies {
		r, err := parseApply(a, "--apply")
		if err != nil {
			return usagef("%v", err)
		}
		// A flag replaces a file's rule for the same topic.
		o.rules = slicesDeleteTopic(o.rules, r.topic)
		o.rules = append(o.rules, r)
	}
	seen := map[string]string{}
	for _, r := range o.rules {
		if prev, dup := seen[r.topic]; dup {
			return usagef("%s: topic %s has two corrections (also in %s)", r.source, r.topic, prev)
		}
		seen[r.topic] = r.source
	}
	pol := set.policy
	if *policy != "" {
		pol = *policy
	}
	if pol == "" {
		pol = "keep"
	}
	if o.policy, err = parseFixPolicy(pol); err != nil {
		return usagef("--time-policy: %v", err)
	}
	o.syncTopics = set.sync
	if *syncList != "" {
		o.syncTopics = splitList(*syncList)
	}
	if o.syncNode == "" {
		o.syncNode = set.syncNode
	}
	if o.syncNode == "" {
		o.syncNode = "/synchronizer"
	}
	if !strings.HasPrefix(o.syncNode, "/") {
		o.syncNode = "/" + o.syncNode
	}
	if len(o.syncTopics) == 1 {
		return usagef("--sync-topics names one topic; matching needs 2 or more")
	}
	if o.storage != "" {
		if _, err := bag.ParseStorage(o.storage); err != nil {
			return usagef("--storage is %q, want mcap or sqlite3", cut(o.storage))
		}
	}
	if o.compression != "" {
		if _, err := bag.ParseCompression(o.compression); err != nil {
			return usagef("--compression is %q, want zstd, lz4 or none", cut(o.compression))
		}
	}
	if *window <= 0 {
		return usagef("--reorder-window is %v, want > 0", *window)
	}
	if len(o.rules) == 0 && len(o.syncTopics) == 0 {
		return usagef("nothing to fix: give --apply TOPIC=KIND (or an apply list in the timealign_bag_fix section of --params), or --sync-topics")
	}
	if *jobs < 1 || *jobs > 256 {
		return usagef("--jobs is %d, want 1..256", *jobs)
	}
	if *outDir == "" {
		if fs.NArg() != 2 {
			return usagef("bag fix takes IN and OUT (or --out-dir DIR and bags), got %d arguments", fs.NArg())
		}
		in, err := bag.Open(fs.Arg(0))
		if err != nil {
			return bagErr(fs.Arg(0), err)
		}
		in.TempDir = e.bagTemp
		return fixBag(e, in, fs.Arg(1), o, true)
	}
	if fs.NArg() == 0 {
		return usagef("--out-dir needs bags to fix")
	}
	bags, err := openBags(fs.Args())
	if err != nil {
		return err
	}
	names := map[string]string{}
	for _, b := range bags {
		if prev, dup := names[b.Name()]; dup {
			return usagef("bags %s and %s would both be written to %s", prev, b.Path, filepath.Join(*outDir, b.Name()))
		}
		names[b.Name()] = b.Path
	}
	if err := mkdirAll(*outDir); err != nil {
		return err
	}
	return forEachBag(e, bags, *jobs, e.stdout, func(b *bag.Bag, w io.Writer) error {
		return fixBag(e, b, filepath.Join(*outDir, b.Name()), o, false)
	})
}

func slicesDeleteTopic(rs []applyRule, topic string) []applyRule {
	out := rs[:0]
	for _, r := range rs {
		if r.topic != topic {
			out = append(out, r)
		}
	}
	return out
}

// corrector rewrites one topic's stamps.
type corrector struct {
	rule    applyRule
	est     *tsest.Estimator
	restamp bool // feed the log time
	pll     *pll.PLL
	tickDiv int64
	mask    uint64
	invalid string // clock_sync's when_invalid
	// counters
	in, fixed, dropped, unchanged, malformed uint64
	lastErr                                  error
	// the drops: the log times of the first and last, and how many came
	// before the first corrected stamp (the fit's warm-up)
	dropFirst, dropLast stamp.Time
	dropLeading         uint64
}

// newCorrector binds the rule's node parameters for topic t.
func newCorrector(o *fixOpts, r applyRule, t *bag.Topic) (*corrector, error) {
	c := &corrector{rule: r}
	switch r.kind {
	case kindTsest:
		p, w, err := nodeparams.TimestampEstimator(o.files, r.node)
		o.warnings = append(o.warnings, w...)
		if err != nil {
			return nil, err
		}
		if p.MessageType != "" && p.MessageType != t.Type {
			return nil, fmt.Errorf("node %s: message_type is %s, but %s carries %s", r.node, p.MessageType, t.Name, t.Type)
		}
		if c.est, err = tsest.New(p.Config); err != nil {
			return nil, fmt.Errorf("node %s: %w", r.node, err)
		}
		c.restamp = p.ReceiveTime || o.policy == policyRestamp
	case kindClock:
		p, w, err := nodeparams.ClockSync(o.files, r.node)
		o.warnings = append(o.warnings, w...)
		if err != nil {
			return nil, err
		}
		if p.MessageType != "" && p.MessageType != t.Type {
			return nil, fmt.Errorf("node %s: message_type is %s, but %s carries %s", r.node, p.MessageType, t.Name, t.Type)
		}
		if c.pll, err = pll.New(p.PLL); err != nil {
			return nil, fmt.Errorf("node %s: %w", r.node, err)
		}
		c.tickDiv, c.invalid = int64(p.PLL.TickPeriod), p.WhenInvalid
		c.mask = ^uint64(0)
		if p.PLL.TickBits < 64 {
			c.mask = 1<<uint(p.PLL.TickBits) - 1
		}
	case kindOffset:
		c.restamp = o.policy == policyRestamp
	}
	return c, nil
}

// apply corrects m in place. It reports whether to write the message and
// the new stamp when one was written.
func (c *corrector) apply(m *bag.Message) (write bool, t stamp.Time, changed bool) {
	c.in++
	hdr, _, err := stamp.Header(m.Data)
	if err != nil {
		c.malformed++
		c.lastErr = err
		return true, 0, false
	}
	switch c.rule.kind {
	case kindTsest:
		in := hdr
		if c.restamp {
			in = m.LogTime
		}
		est, err := c.est.Update(in)
		if err != nil {
			c.unchanged++
			return true, 0, false
		}
		t = est
	case kindClock:
		if hdr < 0 {
			c.malformed++
			c.lastErr = errors.New("negative device stamp")
			return true, 0, false
		}
		ticks := uint64(int64(hdr)/c.tickDiv) & c.mask
		c.pll.Update(m.LogTime, ticks)
		est, ok := c.pll.Corrected(ticks)
		if !ok {
			switch c.invalid {
			case "drop":
				if c.dropped == 0 {
					c.dropFirst = m.LogTime
				}
				if c.fixed == 0 {
					c.dropLeading++
				}
				c.dropped++
				c.dropLast = m.LogTime
				return false, 0, false
			case "receive_time":
				est = m.LogTime
			default:
				c.unchanged++
				return true, 0, false
			}
		}
		t = est
	case kindOffset:
		base := hdr
		if c.restamp {
			base = m.LogTime
		}
		t = base.Add(c.rule.offset)
	}
	if err := stamp.SetHeaderStamp(m.Data, t); err != nil {
		c.unchanged++
		c.lastErr = err
		return true, 0, false
	}
	c.fixed++
	return true, t, true
}

// pending is a message held for time order (sensor-time policy).
type pending struct {
	topic    *bag.Topic
	log, pub stamp.Time
	seq      uint32
	data     []byte
	order    uint64
}

type pendingHeap []*pending

func (h pendingHeap) Len() int { return len(h) }
func (h pendingHeap) Less(i, j int) bool {
	if h[i].log != h[j].log {
		return h[i].log < h[j].log
	}
	return h[i].order < h[j].order
}
func (h pendingHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *pendingHeap) Push(x any)   { *h = append(*h, x.(*pending)) }
func (h *pendingHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// maxHeldBytes bounds the messages held for reordering.
const maxHeldBytes = 64 << 20

// fixer is one bag fix run over one bag.
type fixer struct {
	e       *env
	o       *fixOpts
	out     *outBag
	corr    map[*bag.Topic]*corrector
	held    pendingHeap
	bytes   int
	order   uint64
	lastOut stamp.Time
	wrote   bool
	// counters
	outOfOrder, written uint64
	syncer              *fixSync
	pool                [][]byte
}

// emit writes a message, or holds it for time order.
func (f *fixer) emit(topic *bag.Topic, log, pub stamp.Time, seq uint32, data []byte) error {
	if f.o.policy != policySensorTime {
		return f.write(topic, log, pub, seq, data)
	}
	buf := f.get(len(data))
	buf = append(buf, data...)
	f.order++
	heap.Push(&f.held, &pending{topic: topic, log: log, pub: pub, seq: seq, data: buf, order: f.order})
	f.bytes += len(buf)
	return nil
}

func (f *fixer) get(n int) []byte {
	if k := len(f.pool); k > 0 {
		b := f.pool[k-1]
		f.pool = f.pool[:k-1]
		if cap(b) >= n {
			return b[:0]
		}
	}
	return make([]byte, 0, n)
}

// release writes the held messages older than horizon (all with force),
// and the oldest while too much is held.
func (f *fixer) release(horizon stamp.Time, force bool) error {
	for len(f.held) > 0 && (force || f.held[0].log <= horizon || f.bytes > maxHeldBytes) {
		p := heap.Pop(&f.held).(*pending)
		f.bytes -= len(p.data)
		if err := f.write(p.topic, p.log, p.pub, p.seq, p.data); err != nil {
			return err
		}
		if len(f.pool) < 256 {
			f.pool = append(f.pool, p.data)
		}
	}
	return nil
}

func (f *fixer) write(topic *bag.Topic, log, pub stamp.Time, seq uint32, data []byte) error {
	if f.wrote && log < f.lastOut && f.o.policy == policySensorTime {
		f.outOfOrder++
	}
	if !f.wrote || log > f.lastOut {
		f.lastOut = log
	}
	f.wrote = true
	f.written++
	return f.out.w.WriteMessage(&bag.Message{Topic: topic, LogTime: log, PublishTime: pub, Sequence: seq, Data: data})
}

// fixBag fixes one bag into out.
func fixBag(e *env, in *bag.Bag, out string, o fixOpts, single bool) error {
	if err := checkBagOutput("OUT", out, []*bag.Bag{in}, o.overwrite); err != nil {
		return err
	}
	if err := o.rng.apply(in); err != nil {
		return err
	}
	if n := o.rng.note(in); n != "" && !e.noProgress {
		fmt.Fprintf(e.stderr, "timealign bag fix: %s; OUT holds only those\n", n)
	}
	st := in.Storage
	if o.storage != "" {
		st, _ = bag.ParseStorage(o.storage)
	}
	if fst, ok := singleFile(out); ok {
		st = fst
	}
	comp := o.compression
	if comp == "" && in.Storage == bag.MCAP {
		if s, err := in.Summarize(); err == nil {
			comp = s.Compression
		}
	}
	if st == bag.SQLite {
		if o.compression != "" && o.compression != "none" {
			return usagef("--compression applies to MCAP chunks; the output is SQLite")
		}
		comp = ""
	}
	defs := definitions()
	distro := "humble"
	if in.Metadata != nil && in.Metadata.ROSDistro != "" {
		distro = in.Metadata.ROSDistro
	}
	ob, err := createBag(e, "OUT", out, st, bag.WriterOptions{Compression: comp, ROSDistro: distro,
		Schema: func(typ string) *bag.Schema { return defs.LookupType(typ).Schema }})
	if err != nil {
		return err
	}
	defer ob.abort()
	f := &fixer{e: e, o: &o, out: ob, corr: map[*bag.Topic]*corrector{}}
	rules := map[string]applyRule{}
	for _, r := range o.rules {
		rules[r.topic] = r
	}
	if len(o.syncTopics) > 0 {
		if f.syncer, err = newFixSync(&o, ob.w); err != nil {
			return err
		}
	}
	prog := newProgress(e, "fixing "+filepath.Base(in.Path), in.Size())
	defer prog.finish()
	r := in.Records()
	defer r.Close()
	notes := &skipNotes{}
	seenTopic := map[string]bool{}
	lastFile := 0
	var rec bag.Record
	for n := 0; ; n++ {
		err := r.Next(&rec)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			if e.ctx.Err() != nil {
				return e.ctx.Err()
			}
			notes.errs = append(notes.errs, err)
			r.SkipFile(err)
			continue
		}
		if n&4095 == 0 {
			if err := e.ctx.Err(); err != nil {
				return err
			}
			prog.set(r.Progress())
		}
		if rec.File != lastFile {
			lastFile = rec.File
			ob.w.Split()
		}
		switch rec.Kind {
		case bag.KindTopic:
			t := rec.Topic
			seenTopic[t.Name] = true
			if err := ob.w.AddTopic(t); err != nil {
				return err
			}
			if rule, ok := rules[t.Name]; ok {
				def := defs.Lookup(t)
				if def.Err != nil {
					return fmt.Errorf("%s (%s): its schema does not parse (%v): its stamps cannot be corrected", t.Name, t.Type, def.Err)
				}
				if !def.HeaderFirst {
					return fmt.Errorf("%s (%s) does not start with a std_msgs/Header (definition: %s): its stamps cannot be corrected", t.Name, t.Type, def.Source)
				}
				c, err := newCorrector(&o, rule, t)
				if err != nil {
					return &usageError{err: err}
				}
				f.corr[t] = c
			}
			if f.syncer != nil {
				if err := f.syncer.addTopic(t); err != nil {
					return err
				}
			}
		case bag.KindMessage:
			m := &rec.Message
			logIn := m.LogTime
			log, pub := m.LogTime, m.PublishTime
			newStamp, changed := stamp.Time(0), false
			if c := f.corr[m.Topic]; c != nil {
				var write bool
				write, newStamp, changed = c.apply(m)
				if !write {
					continue
				}
				if changed && o.policy == policySensorTime {
					log, pub = newStamp, newStamp
				}
			}
			if err := f.emit(m.Topic, log, pub, m.Sequence, m.Data); err != nil {
				return err
			}
			if f.syncer != nil {
				if err := f.syncer.add(f, m, log); err != nil {
					return err
				}
			}
			if o.policy == policySensorTime {
				if err := f.release(logIn.Add(-o.reorderWindow), false); err != nil {
					return err
				}
			}
		case bag.KindAttachment:
			if err := ob.w.WriteAttachment(rec.Attachment); err != nil && !errors.Is(err, bag.ErrNotStored) {
				return err
			}
		case bag.KindMetadata:
			if err := ob.w.WriteMetadata(rec.Metadata); err != nil && !errors.Is(err, bag.ErrNotStored) {
				return err
			}
		}
	}
	if err := f.release(0, true); err != nil {
		return err
	}
	var missing []string
	for _, rl := range o.rules {
		if !seenTopic[rl.topic] {
			missing = append(missing, rl.topic)
		}
	}
	for _, t := range o.syncTopics {
		if !seenTopic[t] {
			missing = append(missing, t)
		}
	}
	notes.sk = r.Skipped()
	notes.sk.Errors = nil
	if len(missing) > 0 {
		sort.Strings(missing)
		if notes.any() {
			// The topic may be in what could not be read: say that first.
			notes.say(e, "fix", in, "")
			return fmt.Errorf("%s: no topic %s in what could be read of the bag", in.Path, strings.Join(missing, ", "))
		}
		return usagef("%s: no topic %s in the bag", in.Path, strings.Join(missing, ", "))
	}
	prog.finish()
	meta, err := ob.commit()
	if err != nil {
		return err
	}
	if !e.noProgress || len(o.warnings) > 0 {
		f.summary(e, in, out, meta, ob.w.Dropped())
	} else {
		f.drops(e) // dropped messages are said even with --quiet
	}
	done := "; OUT was written whole"
	if st == bag.MCAP {
		done += ", its indexes and summary rebuilt"
	}
	notes.say(e, "fix", in, done)
	if notes.any() {
		return errSkipped
	}
	return nil
}

// summary says on stderr what was done.
func (f *fixer) summary(e *env, in *bag.Bag, out string, meta *bag.Metadata, dropped int) {
	for _, w := range uniq(f.o.warnings) {
		fmt.Fprintf(e.stderr, "timealign bag fix: %s\n", w)
	}
	if e.noProgress {
		return
	}
	var ts []*bag.Topic
	for t := range f.corr {
		ts = append(ts, t)
	}
	sort.Slice(ts, func(i, j int) bool { return ts[i].Name < ts[j].Name })
	for _, t := range ts {
		c := f.corr[t]
		msg := fmt.Sprintf("%s: %s", t.Name, c.rule.kind)
		if c.rule.node != "" {
			msg += " (" + c.rule.node + ")"
		}
		msg += fmt.Sprintf(": %d of %d stamps corrected", c.fixed, c.in)
		var extra []string
		if c.dropped > 0 {
			extra = append(extra, fmt.Sprintf("%d dropped (below)", c.dropped))
		}
		if c.unchanged > 0 {
			extra = append(extra, fmt.Sprintf("%d left unchanged", c.unchanged))
		}
		if c.malformed > 0 {
			extra = append(extra, fmt.Sprintf("%d not Header-first bytes, passed unchanged (%v)", c.malformed, c.lastErr))
		}
		if c.est != nil {
			st := c.est.Status()
			extra = append(extra, fmt.Sprintf("period %v, %d lost samples estimated", st.Period.Round(time.Microsecond), st.LostSamplesTotal))
		}
		if c.pll != nil {
			st := c.pll.Status()
			if st.Valid {
				extra = append(extra, fmt.Sprintf("device clock %+.2f ppm", -st.SlopePPM))
			}
		}
		if len(extra) > 0 {
			msg += "; " + strings.Join(extra, "; ")
		}
		fmt.Fprintf(e.stderr, "timealign bag fix: %s\n", msg)
	}
	f.drops(e)
	if f.syncer != nil {
		fmt.Fprintf(e.stderr, "timealign bag fix: --sync-topics: %d matched sets written\n", f.syncer.sets)
	}
	if f.outOfOrder > 0 {
		fmt.Fprintf(e.stderr, "timealign bag fix: %d messages written out of log-time order (a corrected stamp more than --reorder-window %v before its log time)\n", f.outOfOrder, f.o.reorderWindow)
	}
	if dropped > 0 {
		fmt.Fprintf(e.stderr, "timealign bag fix: %d MCAP attachments and metadata records not kept: SQLite has no place for them\n", dropped)
	}
	fmt.Fprintf(e.stderr, "timealign bag fix: wrote %s: %d messages in %d file(s)\n", out, meta.MessageCount, len(meta.Files))
}

// drops says on stderr, per topic, which messages were dropped and why.
func (f *fixer) drops(e *env) {
	var ts []*bag.Topic
	for t, c := range f.corr {
		if c.dropped > 0 {
			ts = append(ts, t)
		}
	}
	sort.Slice(ts, func(i, j int) bool { return ts[i].Name < ts[j].Name })
	for _, t := range ts {
		c := f.corr[t]
		where := fmt.Sprintf("logged %s to %s", fmtLogTime(c.dropFirst), fmtLogTime(c.dropLast))
		switch {
		case c.dropLeading == c.dropped:
			where += fmt.Sprintf(", the topic's first %d, while the fit gathered samples that agree", c.dropped)
		case c.dropLeading > 0:
			where += fmt.Sprintf(", %d of them the topic's first, while the fit gathered samples that agree", c.dropLeading)
		}
		node := c.rule.node
		if node == "" {
			node = "/clock_sync"
		}
		fmt.Fprintf(e.stderr, "timealign bag fix: %s: DROPPED %d of %d messages (%s): the device clock fit could not vouch for their stamps, "+
			"and %s's when_invalid is drop; when_invalid: receive_time keeps them stamped with their log time, passthrough with their device stamp\n",
			t.Name, c.dropped, c.in, where, node)
	}
}

// fmtLogTime writes a log time as seconds.nanoseconds.
func fmtLogTime(t stamp.Time) string {
	ns := int64(t)
	sign := ""
	if ns < 0 {
		sign, ns = "-", -ns
	}
	return fmt.Sprintf("%s%d.%09d", sign, ns/1e9, ns%1e9)
}

func uniq(s []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range s {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

// fixSync writes matched sets as extra channels.
type fixSync struct {
	topics   []string
	index    map[string]int
	out      []*bag.Topic // the extra channels, by sync index
	inputs   []*bag.Topic
	matched  *bag.Topic
	s        tsync.Synchronizer[syncMember]
	w        *bag.Writer
	f        *fixer
	sets     uint64
	err      error
	buf      []byte
	syncType string
}

type syncMember struct {
	data []byte
	log  stamp.Time
	seq  uint32
}

// matchedSetSchema is timealign/msg/MatchedSet (msg/MatchedSet.msg) with
// its dependencies, as a ros2msg schema.
const matchedSetSchema = `std_msgs/Header header
uint64 sequence
builtin_interfaces/Time[] stamps
builtin_interfaces/Duration spread
================================================================================
MSG: std_msgs/Header
builtin_interfaces/Time stamp
string frame_id
================================================================================
MSG: builtin_interfaces/Time
int32 sec
uint32 nanosec
================================================================================
MSG: builtin_interfaces/Duration
int32 sec
uint32 nanosec
`

func newFixSync(o *fixOpts, w *bag.Writer) (*fixSync, error) {
	p, warns, err := nodeparams.Synchronizer(o.files, o.syncNode, len(o.syncTopics))
	o.warnings = append(o.warnings, warns...)
	if err != nil {
		return nil, &usageError{err: err}
	}
	if p.Config.Topics != len(o.syncTopics) {
		return nil, usagef("node %s: inputs is %d, but --sync-topics names %d topics", o.syncNode, p.Config.Topics, len(o.syncTopics))
	}
	fs := &fixSync{topics: o.syncTopics, index: map[string]int{}, w: w, out: make([]*bag.Topic, len(o.syncTopics)),
		inputs: make([]*bag.Topic, len(o.syncTopics))}
	for i, t := range o.syncTopics {
		if _, dup := fs.index[t]; dup {
			return nil, usagef("--sync-topics names %s twice", t)
		}
		fs.index[t] = i
	}
	fs.s, err = tsync.New[syncMember](p.Config, fs.onSet, nil)
	if err != nil {
		return nil, &usageError{err: fmt.Errorf("node %s: %w", o.syncNode, err)}
	}
	fs.matched = &bag.Topic{Name: "/timealign/matched", Type: "timealign/msg/MatchedSet", SerializationFormat: "cdr",
		OfferedQoSProfiles: sensorQoS, Schema: &bag.Schema{Name: "timealign/msg/MatchedSet", Encoding: "ros2msg", Data: []byte(matchedSetSchema)}}
	fs.syncType = o.syncSuffix
	return fs, nil
}

func (s *fixSync) addTopic(t *bag.Topic) error {
	i, ok := s.index[t.Name]
	if !ok {
		return nil
	}
	s.inputs[i] = t
	cp := *t
	cp.ID = -1
	cp.Name = t.Name + s.syncType
	s.out[i] = &cp
	return s.w.AddTopic(&cp)
}

// add offers a written message (its corrected bytes) to the synchronizer.
func (s *fixSync) add(f *fixer, m *bag.Message, log stamp.Time) error {
	i, ok := s.index[m.Topic.Name]
	if !ok || s.inputs[i] != m.Topic {
		return nil
	}
	h, err := stamp.HeaderStamp(m.Data)
	if err != nil {
		return nil
	}
	s.f = f
	s.s.Add(tsync.Message[syncMember]{Topic: i, Stamp: h, Arrival: m.LogTime,
		Value: syncMember{data: bytes.Clone(m.Data), log: log, seq: m.Sequence}})
	return s.err
}

func (s *fixSync) onSet(set []tsync.Message[syncMember]) {
	if s.err != nil {
		return
	}
	var at stamp.Time
	lo, hi := set[0].Stamp, set[0].Stamp
	for _, m := range set {
		at = max(at, m.Value.log)
		lo, hi = min(lo, m.Stamp), max(hi, m.Stamp)
	}
	for i, m := range set {
		if err := s.f.emit(s.out[i], at, at, m.Value.seq, m.Value.data); err != nil {
			s.err = err
			return
		}
	}
	e := cdr.NewEncoder(s.buf)
	e.Header(hi, "")
	e.Uint64(s.sets)
	e.Uint32(uint32(len(set)))
	for _, m := range set {
		e.Time(m.Stamp)
	}
	e.Duration(hi.Sub(lo))
	s.buf = e.B
	if s.sets == 0 {
		if err := s.w.AddTopic(s.matched); err != nil {
			s.err = err
			return
		}
	}
	if err := s.f.emit(s.matched, at, at, 0, e.B); err != nil {
		s.err = err
		return
	}
	s.sets++
}
