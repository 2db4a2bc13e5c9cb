package bagcmd

import (
	"bytes"
	"cmp"
	"container/heap"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/timealign/timealign/cmd/timealign/internal/bagout"
	"github.com/timealign/timealign/cmd/timealign/internal/cli"
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
	return 0, fmt.Errorf("policy %q is not keep, sensor-time or restamp", cli.Cut(s))
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
	storage       bag.Storage // "": the input's
	compression   string      // as given ("none" too), "": the input's
	overwrite     bool
	reorderWindow time.Duration
	warnings      []string
}

// fixFlags are the flags of bag fix.
type fixFlags struct {
	params, applies                                repeated
	policy, syncList, syncNode, syncSuffix, outDir string
	storage, compression                           string
	overwrite, quiet                               bool
	jobs                                           *int
	rng                                            timeRange
	window                                         time.Duration
}

func (f *fixFlags) define(e *cli.Env, fs *flag.FlagSet) {
	fs.Var(&f.params, "params", "ROS 2 parameter YAML `FILE` of the nodes (repeatable; later files win)")
	fs.Var(&f.applies, "apply", "`TOPIC=KIND[:NODE]`: correct TOPIC with timestamp_estimator, clock_sync or offset:SECONDS (repeatable)")
	fs.StringVar(&f.policy, "time-policy", "", "log and publish times: keep (default), sensor-time or restamp")
	fs.StringVar(&f.syncList, "sync-topics", "", "comma-separated topics whose matched sets are written as extra channels")
	fs.StringVar(&f.syncNode, "sync-node", "", "node whose synchronizer parameters --sync-topics uses (default /synchronizer)")
	fs.StringVar(&f.syncSuffix, "sync-suffix", "/synced", "suffix of the channels --sync-topics writes")
	fs.StringVar(&f.storage, "storage", "", "output storage: mcap or sqlite3 (default: the input's)")
	fs.StringVar(&f.compression, "compression", "", "MCAP chunk compression: zstd, lz4 or none (default: the input's)")
	fs.BoolVar(&f.overwrite, "overwrite", false, "replace an existing OUT bag")
	fs.StringVar(&f.outDir, "out-dir", "", "fix every BAG into DIR/<bag name>")
	f.jobs = jobsFlag(fs, "with --out-dir: bags fixed in parallel")
	fs.BoolVar(&f.quiet, "quiet", false, cli.QuietUsage)
	cli.Deprecate(e, fs, "sync", "sync-topics")
	cli.Deprecate(e, fs, "policy", "time-policy")
	f.rng.addFlags(fs, "; OUT holds only those")
	fs.DurationVar(&f.window, "reorder-window", time.Second, "sensor-time: how far a corrected stamp may precede its log time and still be written in order")
}

// options resolves the flags and the timealign_bag_fix section of the
// parameter files into the settings of the run (a flag wins over a file).
func (f *fixFlags) options() (fixOpts, error) {
	o := fixOpts{syncSuffix: f.syncSuffix, compression: f.compression, overwrite: f.overwrite, reorderWindow: f.window, rng: f.rng}
	var err error
	if o.files, err = loadParamFiles(f.params); err != nil {
		return o, &cli.UsageError{Err: err}
	}
	set := o.files.fixSettings()
	if o.rules, err = applyRules(set, f.applies); err != nil {
		return o, err
	}
	pol := cmp.Or(f.policy, set.policy, "keep")
	if o.policy, err = parseFixPolicy(pol); err != nil {
		return o, cli.Usagef("--time-policy: %v", err)
	}
	o.syncTopics = set.sync
	if f.syncList != "" {
		o.syncTopics = cli.SplitList(f.syncList)
	}
	o.syncNode = cmp.Or(f.syncNode, set.syncNode, "/synchronizer")
	if !strings.HasPrefix(o.syncNode, "/") {
		o.syncNode = "/" + o.syncNode
	}
	if len(o.syncTopics) == 1 {
		return o, cli.Usagef("--sync-topics names one topic; matching needs 2 or more")
	}
	if f.storage != "" {
		if o.storage, err = bag.ParseStorage(f.storage); err != nil {
			return o, cli.Usagef("--storage is %q, want mcap or sqlite3", cli.Cut(f.storage))
		}
	}
	if o.compression != "" {
		if _, err := bag.ParseCompression(o.compression); err != nil {
			return o, cli.Usagef("--compression is %q, want zstd, lz4 or none", cli.Cut(o.compression))
		}
	}
	if f.window <= 0 {
		return o, cli.Usagef("--reorder-window is %v, want > 0", f.window)
	}
	if len(o.rules) == 0 && len(o.syncTopics) == 0 {
		return o, cli.Usagef("nothing to fix: give --apply TOPIC=KIND (or an apply list in the timealign_bag_fix section of --params), or --sync-topics")
	}
	return o, nil
}

// applyRules are the corrections of the parameter files' apply list, then
// of the --apply flags: a flag replaces a file's rule for the same topic.
// Two corrections of one topic from the same place are an error.
func applyRules(set fixSettings, applies []string) ([]applyRule, error) {
	var rules []applyRule
	for _, a := range set.apply {
		r, err := parseApply(a, set.source["apply"])
		if err != nil {
			return nil, cli.Usagef("%v", err)
		}
		rules = append(rules, r)
	}
	for _, a := range applies {
		r, err := parseApply(a, "--apply")
		if err != nil {
			return nil, cli.Usagef("%v", err)
		}
		rules = slices.DeleteFunc(rules, func(x applyRule) bool { return x.topic == r.topic })
		rules = append(rules, r)
	}
	seen := map[string]string{}
	for _, r := range rules {
		if prev, dup := seen[r.topic]; dup {
			return nil, cli.Usagef("%s: topic %s has two corrections (also in %s)", r.source, r.topic, prev)
		}
		seen[r.topic] = r.source
	}
	return rules, nil
}

func runBagFix(e *cli.Env, temp string, args []string) error {
	fs := cli.NewFlagsExit(e, "bag fix", "[flags] IN OUT  |  --out-dir DIR [flags] BAG...", bagFixDoc, lostFailure)
	var f fixFlags
	f.define(e, fs)
	if err := cli.ParseFlags(e, fs, args); err != nil {
		return err
	}
	e.NoProgress = e.NoProgress || f.quiet
	o, err := f.options()
	if err != nil {
		return err
	}
	if err := checkJobs(*f.jobs); err != nil {
		return err
	}
	if f.outDir == "" {
		if fs.NArg() != 2 {
			return cli.Usagef("bag fix takes IN and OUT (or --out-dir DIR and bags), got %d arguments", fs.NArg())
		}
		in, err := openBag(temp, fs.Arg(0))
		if err != nil {
			return err
		}
		return fixBag(e, in, fs.Arg(1), o)
	}
	if fs.NArg() == 0 {
		return cli.Usagef("--out-dir needs bags to fix")
	}
	return fixAll(e, temp, fs.Args(), f.outDir, *f.jobs, o)
}

// fixAll fixes every bag into dir/<its name>, jobs at a time.
func fixAll(e *cli.Env, temp string, paths []string, dir string, jobs int, o fixOpts) error {
	bags, err := openBags(temp, paths)
	if err != nil {
		return err
	}
	names := map[string]string{}
	for _, b := range bags {
		if prev, dup := names[b.Name()]; dup {
			return cli.Usagef("bags %s and %s would both be written to %s", prev, b.Path, filepath.Join(dir, b.Name()))
		}
		names[b.Name()] = b.Path
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("--out-dir: %w", err)
	}
	return forEachBag(e, "bag fix", bags, jobs, e.Stdout, func(b *bag.Bag, w io.Writer) error {
		return fixBag(e, b, filepath.Join(dir, b.Name()), o)
	})
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
	e     *cli.Env
	o     *fixOpts
	out   *bagout.Bag
	defs  *bag.Definitions
	rules map[string]applyRule // by topic
	corr  map[*bag.Topic]*corrector
	// seen are the topics of the input read so far.
	seen    map[string]bool
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
	return f.out.W.WriteMessage(&bag.Message{Topic: topic, LogTime: log, PublishTime: pub, Sequence: seq, Data: data})
}

// fixBag fixes one bag into out.
func fixBag(e *cli.Env, in *bag.Bag, out string, o fixOpts) error {
	if err := bagout.Check("OUT", out, []*bag.Bag{in}, o.overwrite); err != nil {
		return err
	}
	if err := o.rng.applyNoted(e, "bag fix", in, "; OUT holds only those"); err != nil {
		return err
	}
	defs := definitions()
	st, opts, err := outputFormat(e, in, out, &o, defs)
	if err != nil {
		return err
	}
	ob, err := bagout.Create(e, "OUT", out, st, opts)
	if err != nil {
		return err
	}
	defer ob.Abort()
	f, err := newFixer(e, &o, ob, defs)
	if err != nil {
		return err
	}
	prog := cli.NewProgress(e, "fixing "+filepath.Base(in.Path), in.Size())
	defer prog.Finish()
	notes, err := f.run(in, prog)
	if err != nil {
		return err
	}
	if err := f.checkTopics(in, notes); err != nil {
		return err
	}
	prog.Finish()
	meta, err := ob.Commit()
	if err != nil {
		return err
	}
	if !e.NoProgress || len(o.warnings) > 0 {
		f.summary(e, in, out, meta, ob.W.Dropped())
	} else {
		f.drops(e) // dropped messages are said even with --quiet
	}
	done := "; OUT was written whole"
	if st == bag.MCAP {
		done += ", its indexes and summary rebuilt"
	}
	return notes.end(e, "fix", in, done)
}

// outputFormat decides OUT's storage (OUT's extension, else --storage,
// else IN's) and the writer's options: MCAP chunks compressed as
// --compression says, else as IN's.
func outputFormat(e *cli.Env, in *bag.Bag, out string, o *fixOpts, defs *bag.Definitions) (bag.Storage, bag.WriterOptions, error) {
	st := cmp.Or(o.storage, in.Storage)
	if fst, ok := bagout.SingleFile(out); ok {
		st = fst
	}
	comp := o.compression
	switch {
	case st == bag.SQLite:
		if o.compression != "" && o.compression != "none" {
			return st, bag.WriterOptions{}, cli.Usagef("--compression applies to MCAP chunks; the output is SQLite")
		}
		comp = ""
	case comp == "" && in.Storage == bag.MCAP:
		comp = inputCompression(e, in)
	}
	distro := "humble"
	if in.Metadata != nil && in.Metadata.ROSDistro != "" {
		distro = in.Metadata.ROSDistro
	}
	return st, bag.WriterOptions{Compression: comp, ROSDistro: distro,
		Schema: func(typ string) *bag.Schema { return defs.LookupType(typ).Schema }}, nil
}

// inputCompression is the compression of IN's MCAP chunks, from its
// summary. A summary that cannot be read leaves OUT's chunks uncompressed,
// and that is said (reading IN's records says what is wrong with it).
func inputCompression(e *cli.Env, in *bag.Bag) string {
	s, err := in.Summarize()
	if err != nil {
		fmt.Fprintf(e.Stderr, "timealign bag fix: note: %s: the compression of its chunks is unknown (%v): OUT's are not compressed (--compression chooses)\n", in.Path, err)
		return ""
	}
	return s.Compression
}

// newFixer starts a run that writes into ob.
func newFixer(e *cli.Env, o *fixOpts, ob *bagout.Bag, defs *bag.Definitions) (*fixer, error) {
	f := &fixer{e: e, o: o, out: ob, defs: defs, rules: map[string]applyRule{}, corr: map[*bag.Topic]*corrector{}, seen: map[string]bool{}}
	for _, r := range o.rules {
		f.rules[r.topic] = r
	}
	if len(o.syncTopics) > 0 {
		var err error
		if f.syncer, err = newFixSync(o, ob.W); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// run copies every readable record of in, corrected, and returns what
// reading skipped.
func (f *fixer) run(in *bag.Bag, prog *cli.Progress) (*skipNotes, error) {
	r := in.Records()
	defer r.Close()
	notes := &skipNotes{}
	lastFile := 0
	progress := func() error { prog.Set(r.Progress()); return nil }
	err := readRecords(f.e.Ctx, r, notes, progress, func(rec *bag.Record) error {
		if rec.File != lastFile {
			lastFile = rec.File
			f.out.W.Split()
		}
		switch rec.Kind {
		case bag.KindTopic:
			return f.addTopic(rec.Topic)
		case bag.KindMessage:
			return f.message(&rec.Message)
		case bag.KindAttachment:
			if err := f.out.W.WriteAttachment(rec.Attachment); err != nil && !errors.Is(err, bag.ErrNotStored) {
				return err
			}
		case bag.KindMetadata:
			if err := f.out.W.WriteMetadata(rec.Metadata); err != nil && !errors.Is(err, bag.ErrNotStored) {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return notes, f.release(0, true)
}

// addTopic writes a topic of the input, with its corrector when a rule
// names it.
func (f *fixer) addTopic(t *bag.Topic) error {
	f.seen[t.Name] = true
	if err := f.out.W.AddTopic(t); err != nil {
		return err
	}
	if rule, ok := f.rules[t.Name]; ok {
		def := f.defs.Lookup(t)
		if def.Err != nil {
			return fmt.Errorf("%s (%s): its schema does not parse (%v): its stamps cannot be corrected", t.Name, t.Type, def.Err)
		}
		if !def.HeaderFirst {
			return fmt.Errorf("%s (%s) does not start with a std_msgs/Header (definition: %s): its stamps cannot be corrected", t.Name, t.Type, def.Source)
		}
		c, err := newCorrector(f.o, rule, t)
		if err != nil {
			return &cli.UsageError{Err: err}
		}
		f.corr[t] = c
	}
	if f.syncer != nil {
		return f.syncer.addTopic(t)
	}
	return nil
}

// message writes a message of the input, corrected.
func (f *fixer) message(m *bag.Message) error {
	logIn := m.LogTime
	log, pub := m.LogTime, m.PublishTime
	if c := f.corr[m.Topic]; c != nil {
		write, newStamp, changed := c.apply(m)
		if !write {
			return nil
		}
		if changed && f.o.policy == policySensorTime {
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
	if f.o.policy == policySensorTime {
		return f.release(logIn.Add(-f.o.reorderWindow), false)
	}
	return nil
}

// checkTopics refuses a run where a topic to correct or to match is not in
// the input; when reading skipped parts of it, the topic may be there:
// that is said first.
func (f *fixer) checkTopics(in *bag.Bag, notes *skipNotes) error {
	var missing []string
	for _, rl := range f.o.rules {
		if !f.seen[rl.topic] {
			missing = append(missing, rl.topic)
		}
	}
	for _, t := range f.o.syncTopics {
		if !f.seen[t] {
			missing = append(missing, t)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	sort.Strings(missing)
	if notes.any() {
		notes.say(f.e, "fix", in, "")
		return fmt.Errorf("%s: no topic %s in what could be read of the bag", in.Path, strings.Join(missing, ", "))
	}
	return cli.Usagef("%s: no topic %s in the bag", in.Path, strings.Join(missing, ", "))
}

// summary says on stderr what was done.
func (f *fixer) summary(e *cli.Env, in *bag.Bag, out string, meta *bag.Metadata, dropped int) {
	for _, w := range uniq(f.o.warnings) {
		fmt.Fprintf(e.Stderr, "timealign bag fix: %s\n", w)
	}
	if e.NoProgress {
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
		fmt.Fprintf(e.Stderr, "timealign bag fix: %s\n", msg)
	}
	f.drops(e)
	if f.syncer != nil {
		fmt.Fprintf(e.Stderr, "timealign bag fix: --sync-topics: %d matched sets written\n", f.syncer.sets)
	}
	if f.outOfOrder > 0 {
		fmt.Fprintf(e.Stderr, "timealign bag fix: %d messages written out of log-time order (a corrected stamp more than --reorder-window %v before its log time)\n", f.outOfOrder, f.o.reorderWindow)
	}
	if dropped > 0 {
		fmt.Fprintf(e.Stderr, "timealign bag fix: %d MCAP attachments and metadata records not kept: SQLite has no place for them\n", dropped)
	}
	fmt.Fprintf(e.Stderr, "timealign bag fix: wrote %s: %d messages in %d file(s)\n", out, meta.MessageCount, len(meta.Files))
}

// drops says on stderr, per topic, which messages were dropped and why.
func (f *fixer) drops(e *cli.Env) {
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
		fmt.Fprintf(e.Stderr, "timealign bag fix: %s: DROPPED %d of %d messages (%s): the device clock fit could not vouch for their stamps, "+
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
		return nil, &cli.UsageError{Err: err}
	}
	if p.Config.Topics != len(o.syncTopics) {
		return nil, cli.Usagef("node %s: inputs is %d, but --sync-topics names %d topics", o.syncNode, p.Config.Topics, len(o.syncTopics))
	}
	fs := &fixSync{topics: o.syncTopics, index: map[string]int{}, w: w, out: make([]*bag.Topic, len(o.syncTopics)),
		inputs: make([]*bag.Topic, len(o.syncTopics))}
	for i, t := range o.syncTopics {
		if _, dup := fs.index[t]; dup {
			return nil, cli.Usagef("--sync-topics names %s twice", t)
		}
		fs.index[t] = i
	}
	fs.s, err = tsync.New[syncMember](p.Config, fs.onSet, nil)
	if err != nil {
		return nil, &cli.UsageError{Err: fmt.Errorf("node %s: %w", o.syncNode, err)}
	}
	fs.matched = &bag.Topic{Name: "/timealign/matched", Type: "timealign/msg/MatchedSet", SerializationFormat: "cdr",
		OfferedQoSProfiles: bag.SensorDataQoS, Schema: &bag.Schema{Name: "timealign/msg/MatchedSet", Encoding: "ros2msg", Data: []byte(matchedSetSchema)}}
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
