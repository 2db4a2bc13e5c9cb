package bagcmd

import (
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/timealign/timealign/cmd/timealign/internal/cli"
	"github.com/timealign/timealign/pkg/bag"
	"github.com/timealign/timealign/pkg/report"
	"github.com/timealign/timealign/pkg/stamp"
)

const bagReportDoc = `
Analyses the timing of a bag's topics and prints a table. Each topic is
first classified from its own stamps: periodic, bursty (event-driven) or
one-off (a handful of messages); the ones that are not periodic get their
count, span and rate of occurrence in a table of their own. Per periodic
topic: the rate and the period the estimator finds, the interval jitter of
the header stamps before and after estimation (std and the larger of |p1|, |p99|), the
latency log time − header stamp (p50 / p99), gaps of two periods or more
with the periods missing in them, duplicate stamps and stamps going back,
and the clock of the stamps (host, or device with its skew and offset
against the log times). Across topics: the offsets between host-stamped
streams, and what message_filters' ApproximateTime would match on them (sets,
spread, drops per topic) with suggested synchronizer parameters. Then what
to do with each topic's stamps, with the 'bag fix --apply' line: keep them,
correct them with timestamp_estimator, or map a device clock with
clock_sync (and where estimates are worse than the stamps, where and why).

--html FILE writes one self-contained page (a summary of every topic's
verdict, then per topic its verdict, figures and SVG plots; readable
offline); --json-out FILE everything as JSON. With several bags,
--html and --json-out name directories that get one <bag>.html / <bag>.json
each, and --jobs bags are analysed at once.

A recording that was cut off (its recorder killed, a crash, a power cut)
is read to where its files end. A file that ends in or after records that
hold no message (indexes, summary, footer; a missing metadata.yaml; a
SQLite write-ahead log left behind) loses no message: that is a note, and
the exit status is 0. A file that ends inside a chunk or a message, and a
part of a bag that cannot be read (a corrupt file), lose messages: the
message names the file, the byte offset and the record, everything
readable is analysed, and the exit status is 1.`

// reportFlags are the flags of bag report.
type reportFlags struct {
	cfg                            report.Config
	topics, syncTopics, html, json string
	jobs                           *int
	quiet                          bool
	rng                            timeRange
}

func (f *reportFlags) define(e *cli.Env, fs *flag.FlagSet) {
	f.cfg = report.DefaultConfig()
	fs.StringVar(&f.topics, "topics", "", "comma-separated topics to analyse (default: all)")
	fs.StringVar(&f.syncTopics, "sync-topics", "", "comma-separated topics to match with ApproximateTime (default: the host-stamped Header topics, up to 6)")
	fs.StringVar(&f.html, "html", "", "write the report as a self-contained HTML page with plots")
	fs.StringVar(&f.json, "json-out", "", "write the report as JSON to this file")
	f.jobs = jobsFlag(fs, "bags analysed in parallel")
	fs.BoolVar(&f.quiet, "quiet", false, cli.QuietUsage)
	cli.Deprecate(e, fs, "json", "json-out")
	fs.DurationVar(&f.cfg.Estimator.Window, "window", f.cfg.Estimator.Window, "estimator window (as timestamp_estimator's window_sec)")
	fs.IntVar(&f.cfg.Sync.QueueSize, "queue-size", f.cfg.Sync.QueueSize, "ApproximateTime queue size for the analysis")
	fs.Float64Var(&f.cfg.Sync.AgePenalty, "age-penalty", f.cfg.Sync.AgePenalty, "ApproximateTime age penalty for the analysis")
	fs.DurationVar(&f.cfg.Sync.MaxInterval, "max-interval", 0, "ApproximateTime max interval for the analysis (0: none)")
	f.rng.addFlags(fs, "")
}

// reportOpts are the settings of a bag report run.
type reportOpts struct {
	topics     map[string]bool
	cfg        report.Config
	html, json string
	multi      bool
}

// options checks the flags of a run over nbags bags.
func (f *reportFlags) options(fs *flag.FlagSet, nbags int) (reportOpts, error) {
	o := reportOpts{cfg: f.cfg, html: f.html, json: f.json, multi: nbags > 1}
	if f.topics != "" {
		o.topics = map[string]bool{}
		for _, t := range cli.SplitList(f.topics) {
			o.topics[t] = true
		}
	}
	if f.syncTopics != "" {
		o.cfg.SyncTopics = cli.SplitList(f.syncTopics)
	}
	for _, p := range []struct{ flag, path string }{{"--html", f.html}, {"--json-out", f.json}} {
		if p.path == "-" {
			return o, cli.Usagef("%s names a file (the table goes to standard output)", p.flag)
		}
	}
	if err := o.cfg.Validate(); err != nil {
		return o, cli.ConfigError(fs, err, map[string]string{"Estimator.Window": "window", "QueueSize": "queue-size", "AgePenalty": "age-penalty", "MaxInterval": "max-interval", "SyncTopics": "sync-topics"})
	}
	return o, nil
}

func runBagReport(e *cli.Env, temp string, args []string) error {
	fs := cli.NewFlagsExit(e, "bag report", "[flags] BAG...", bagReportDoc, lostFailure)
	var f reportFlags
	f.define(e, fs)
	if err := cli.ParseFlags(e, fs, args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return cli.Usagef("bag report needs a bag (a directory with metadata.yaml, or a .mcap or .db3 file)")
	}
	if err := checkJobs(*f.jobs); err != nil {
		return err
	}
	e.NoProgress = e.NoProgress || f.quiet
	o, err := f.options(fs, fs.NArg())
	if err != nil {
		return err
	}
	bags, err := openBags(temp, fs.Args())
	if err != nil {
		return err
	}
	for _, b := range bags {
		if err := f.rng.applyNoted(e, "bag report", b, ""); err != nil {
			return err
		}
	}
	if o.multi {
		for _, d := range []string{o.html, o.json} {
			if d != "" && !cli.IsStdio(d) {
				if err := os.MkdirAll(d, 0o755); err != nil {
					return fmt.Errorf("with several bags, --html and --json-out name directories: %w", err)
				}
			}
		}
	}
	return forEachBag(e, "bag report", bags, *f.jobs, e.Stdout, func(b *bag.Bag, w io.Writer) error {
		return reportBag(e, b, o, w, len(bags) == 1)
	})
}

// analyze runs the analysis over every readable record of b.
func analyze(e *cli.Env, b *bag.Bag, cfg report.Config, topics map[string]bool, prog *cli.Progress) (*report.Report, *skipNotes, error) {
	a, err := report.New(cfg)
	if err != nil {
		return nil, nil, err
	}
	defs := definitions()
	r := b.Records()
	defer r.Close()
	ids := map[int]int{} // bag topic ID -> analyzer ID
	hdr := map[int]bool{}
	notes := &skipNotes{}
	progress := func() error { prog.Set(r.Progress()); return nil }
	err = readRecords(e.Ctx, r, notes, progress, func(rec *bag.Record) error {
		switch rec.Kind {
		case bag.KindTopic:
			t := rec.Topic
			if topics != nil && !topics[t.Name] {
				ids[t.ID] = -1
				return nil
			}
			def := defs.Lookup(t)
			if def.Err != nil {
				notes.schemas = append(notes.schemas, fmt.Sprintf("%s (%s): the schema does not parse (%v): analysed without header stamps", t.Name, t.Type, def.Err))
			}
			id := len(ids) - countSkipped(ids)
			ids[t.ID] = id
			hdr[t.ID] = def.HeaderFirst
			return a.AddTopic(id, t.Name, t.Type, def.HeaderFirst, string(def.Source))
		case bag.KindMessage:
			m := &rec.Message
			id, ok := ids[m.Topic.ID]
			if !ok || id < 0 {
				return nil
			}
			var h stamp.Time
			has, bad := false, false
			if hdr[m.Topic.ID] {
				var err error
				h, _, err = stamp.Header(m.Data)
				has, bad = err == nil, err != nil
			}
			a.Add(report.Message{Topic: id, LogTime: m.LogTime, Header: h, HasHeader: has, Malformed: bad, Size: len(m.Data)})
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	if missing := missingTopics(slices.Collect(maps.Keys(topics)), r.Topics()); len(missing) > 0 {
		return nil, nil, cli.Usagef("--topics: %s not in the bag", strings.Join(missing, ", "))
	}
	return a.Report(), notes, nil
}

func countSkipped(ids map[int]int) int {
	n := 0
	for _, v := range ids {
		if v < 0 {
			n++
		}
	}
	return n
}

// reportBag analyses one bag and writes its table to w and its files.
func reportBag(e *cli.Env, b *bag.Bag, o reportOpts, w io.Writer, single bool) error {
	prog := cli.NewProgress(e, "analysing "+filepath.Base(b.Path), b.Size())
	rep, notes, err := analyze(e, b, o.cfg, o.topics, prog)
	prog.Finish()
	if err != nil {
		return err
	}
	htmlPath, jsonPath := o.html, o.json
	if o.multi {
		if htmlPath != "" {
			htmlPath = filepath.Join(htmlPath, b.Name()+".html")
		}
		if jsonPath != "" {
			jsonPath = filepath.Join(jsonPath, b.Name()+".json")
		}
	}
	rep.SetFixCommand(func(apply []string) string { return fixCommand(b, apply) })
	title := fmt.Sprintf("%s (%s, %d file(s), %s)", b.Path, b.Storage, len(b.Files), cli.HumanSize(b.Size()))
	fmt.Fprintf(w, "%s: %d messages, %.3f s\n", title, rep.Messages, rep.End.Sub(rep.Start).Seconds())
	if err := rep.WriteTable(w); err != nil {
		return err
	}
	var specs []cli.OutSpec
	var writers []func(io.Writer) error
	// What reading the bag found goes into the files too: a report read
	// later must say that its bag was cut off or partly unreadable.
	reading := notes.lines(b, "")
	if htmlPath != "" {
		specs = append(specs, cli.Out("--html", htmlPath))
		pg := report.Page{Title: title}
		if len(reading) > 0 {
			sec := &report.Section{Title: "Reading the bag"}
			for _, n := range reading {
				level := report.Plain
				if n.Lost {
					level = report.Bad
				}
				sec.Note(level, "%s", n.Text)
			}
			pg.Sections = append(pg.Sections, sec)
		}
		writers = append(writers, func(w io.Writer) error { return rep.WritePage(w, pg) })
	}
	if jsonPath != "" {
		specs = append(specs, cli.Out("--json-out", jsonPath))
		writers = append(writers, func(w io.Writer) error {
			return cli.WriteJSON(w, struct {
				*report.Report
				Reading []readingNote `json:"reading,omitempty"`
			}{rep, reading})
		})
	}
	if len(specs) > 0 {
		f, err := cli.OpenOutputs(e, specs...)
		if err != nil {
			return err
		}
		defer f.Abort()
		for i, write := range writers {
			if err := write(f.Out(i)); err != nil {
				return err
			}
		}
		if err := f.Commit(); err != nil {
			return err
		}
	}
	return notes.end(e, "report", b, "")
}

// fixCommand is the bag fix command line that applies the corrections
// apply (--apply arguments) to b, into a bag beside it.
func fixCommand(b *bag.Bag, apply []string) string {
	out := filepath.Join(filepath.Dir(filepath.Clean(b.Path)), b.Name()+"-fixed")
	args := []string{"timealign", "bag", "fix", shellWord(b.Path), shellWord(out)}
	for _, a := range apply {
		args = append(args, "--apply", shellWord(a))
	}
	return strings.Join(args, " ")
}

// shellWord quotes s for a POSIX shell where it needs quoting.
func shellWord(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=:,+@%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
