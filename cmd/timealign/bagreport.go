package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

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

// reportFlags are the flags of bag report shared with the analysis.
type reportOpts struct {
	topics     map[string]bool
	cfg        report.Config
	html, json string
	multi      bool
}

func runBagReport(e *env, args []string) error {
	fs := newFlags(e, "bag report", "[flags] BAG...", bagReportDoc)
	cfg := report.DefaultConfig()
	topics := fs.String("topics", "", "comma-separated topics to analyse (default: all)")
	syncTopics := fs.String("sync-topics", "", "comma-separated topics to match with ApproximateTime (default: the host-stamped Header topics, up to 6)")
	htmlOut := fs.String("html", "", "write the report as a self-contained HTML page with plots")
	jsonOut := fs.String("json-out", "", "write the report as JSON to this file")
	jobs := fs.Int("jobs", defaultJobs(), "bags analysed in parallel")
	quiet := fs.Bool("quiet", false, quietUsage)
	deprecate(e, fs, "json", "json-out")
	fs.DurationVar(&cfg.Estimator.Window, "window", cfg.Estimator.Window, "estimator window (as timestamp_estimator's window_sec)")
	fs.IntVar(&cfg.Sync.QueueSize, "queue-size", cfg.Sync.QueueSize, "ApproximateTime queue size for the analysis")
	fs.Float64Var(&cfg.Sync.AgePenalty, "age-penalty", cfg.Sync.AgePenalty, "ApproximateTime age penalty for the analysis")
	fs.DurationVar(&cfg.Sync.MaxInterval, "max-interval", 0, "ApproximateTime max interval for the analysis (0: none)")
	var rng timeRange
	fs.Var(&rng.start, "start", startUsage)
	fs.Var(&rng.end, "end", endUsage)
	if err := parseFlags(e, fs, args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return usagef("bag report needs a bag (a directory with metadata.yaml, or a .mcap or .db3 file)")
	}
	if *jobs < 1 || *jobs > 256 {
		return usagef("--jobs is %d, want 1..256", *jobs)
	}
	e.noProgress = e.noProgress || *quiet
	o := reportOpts{cfg: cfg, html: *htmlOut, json: *jsonOut, multi: fs.NArg() > 1}
	if *topics != "" {
		o.topics = map[string]bool{}
		for _, t := range splitList(*topics) {
			o.topics[t] = true
		}
	}
	if *syncTopics != "" {
		o.cfg.SyncTopics = splitList(*syncTopics)
	}
	for _, p := range []struct{ flag, path string }{{"--html", *htmlOut}, {"--json-out", *jsonOut}} {
		if p.path == "-" {
			return usagef("%s names a file (the table goes to standard output)", p.flag)
		}
	}
	if err := o.cfg.Validate(); err != nil {
		return configError(fs, err, map[string]string{"Estimator.Window": "window", "QueueSize": "queue-size", "AgePenalty": "age-penalty", "MaxInterval": "max-interval", "SyncTopics": "sync-topics"})
	}
	bags, err := openBags(fs.Args())
	if err != nil {
		return err
	}
	for _, b := range bags {
		b.TempDir = e.bagTemp
		if err := rng.apply(b); err != nil {
			return err
		}
		if n := rng.note(b); n != "" && !e.noProgress {
			fmt.Fprintf(e.stderr, "timealign bag report: %s\n", n)
		}
	}
	if o.multi {
		for _, d := range []string{o.html, o.json} {
			if d != "" && !isStdio(d) {
				if err := os.MkdirAll(d, 0o755); err != nil {
					return fmt.Errorf("with several bags, --html and --json-out name directories: %w", err)
				}
			}
		}
	}
	return forEachBag(e, bags, *jobs, e.stdout, func(b *bag.Bag, w io.Writer) error {
		return reportBag(e, b, o, w, len(bags) == 1)
	})
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// skipNotes collects what reading a bag skipped, for the summary on stderr.
type skipNotes struct {
	errs    []error
	sk      bag.Skipped
	schemas []string // topics whose schema did not parse
}

func (s *skipNotes) any() bool { return len(s.errs) > 0 || s.sk.Any() }

// readingNote is one line of what reading a bag found: Lost when messages
// were lost (or a part could not be read), a note otherwise.
type readingNote struct {
	Lost bool   `json:"lost"`
	Text string `json:"text"`
}

// lines returns the notes: what the recorder left unfinished (a note when
// no message was lost), then what was skipped. done is added to the note
// of a file cut without loss (fix says what OUT got).
func (s *skipNotes) lines(b *bag.Bag, done string) []readingNote {
	var out []readingNote
	if b.NoMetadata {
		out = append(out, readingNote{Text: noMetadataNote(b)})
	}
	for _, c := range s.sk.Cuts {
		if c.Lost() {
			out = append(out, readingNote{Lost: true, Text: c.String()})
		} else {
			out = append(out, readingNote{Text: c.String() + done})
		}
	}
	for _, m := range s.schemas {
		out = append(out, readingNote{Text: m})
	}
	for _, err := range s.errs {
		out = append(out, readingNote{Lost: true, Text: fmt.Sprintf("skipped the rest of a file: %v", err)})
	}
	if parts := skippedParts(s.sk); len(parts) > 0 {
		out = append(out, readingNote{Lost: true, Text: fmt.Sprintf("%s: skipped %s", b.Path, strings.Join(parts, ", "))})
	}
	return out
}

// say writes the notes on stderr.
func (s *skipNotes) say(e *env, cmd string, b *bag.Bag, done string) {
	for _, n := range s.lines(b, done) {
		note := ""
		if !n.Lost {
			note = "note: "
		}
		fmt.Fprintf(e.stderr, "timealign bag %s: %s%s\n", cmd, note, n.Text)
	}
}

// noMetadataNote says that a bag has no metadata.yaml.
func noMetadataNote(b *bag.Bag) string {
	what := "its storage files were"
	if len(b.Files) == 1 {
		what = "its storage file was"
	}
	return fmt.Sprintf("%s has no %s (rosbag2 writes it when a recording ends: this one did not end cleanly): %s read as 'ros2 bag reindex' reads them",
		b.Path, bag.MetadataFile, what)
}

// skippedParts words the counts of what was skipped.
func skippedParts(sk bag.Skipped) []string {
	var parts []string
	if sk.BadChunks > 0 {
		parts = append(parts, fmt.Sprintf("%d MCAP chunks whose CRC did not match", sk.BadChunks))
	}
	if sk.UnknownTopic > 0 {
		parts = append(parts, fmt.Sprintf("%d messages on an undefined channel or topic", sk.UnknownTopic))
	}
	if sk.BigAttachments > 0 {
		parts = append(parts, fmt.Sprintf("%d attachments over %d MiB", sk.BigAttachments, bag.MaxAttachmentSize>>20))
	}
	return parts
}

// errSkipped: the bag was processed, but parts of it could not be read.
var errSkipped = errors.New("parts of the bag could not be read (see above); everything readable was processed")

// analyze runs the analysis over every readable record of b.
func analyze(e *env, b *bag.Bag, cfg report.Config, topics map[string]bool, prog *progress) (*report.Report, *skipNotes, error) {
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
	var rec bag.Record
	for n := 0; ; n++ {
		err := r.Next(&rec)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			if e.ctx.Err() != nil {
				return nil, nil, e.ctx.Err()
			}
			notes.errs = append(notes.errs, err)
			r.SkipFile(err)
			continue
		}
		if n&4095 == 0 {
			if err := e.ctx.Err(); err != nil {
				return nil, nil, err
			}
			prog.set(r.Progress())
		}
		switch rec.Kind {
		case bag.KindTopic:
			t := rec.Topic
			if topics != nil && !topics[t.Name] {
				ids[t.ID] = -1
				continue
			}
			def := defs.Lookup(t)
			if def.Err != nil {
				notes.schemas = append(notes.schemas, fmt.Sprintf("%s (%s): the schema does not parse (%v): analysed without header stamps", t.Name, t.Type, def.Err))
			}
			id := len(ids) - countSkipped(ids)
			ids[t.ID] = id
			hdr[t.ID] = def.HeaderFirst
			if err := a.AddTopic(id, t.Name, t.Type, def.HeaderFirst, string(def.Source)); err != nil {
				return nil, nil, err
			}
		case bag.KindMessage:
			m := &rec.Message
			id, ok := ids[m.Topic.ID]
			if !ok || id < 0 {
				continue
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
	}
	notes.sk = r.Skipped()
	notes.sk.Errors = nil
	if topics != nil {
		var missing []string
		seen := map[string]bool{}
		for _, t := range r.Topics() {
			seen[t.Name] = true
		}
		for t := range topics {
			if !seen[t] {
				missing = append(missing, t)
			}
		}
		if len(missing) > 0 {
			return nil, nil, usagef("--topics: %s not in the bag", strings.Join(missing, ", "))
		}
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
func reportBag(e *env, b *bag.Bag, o reportOpts, w io.Writer, single bool) error {
	prog := newProgress(e, "analysing "+filepath.Base(b.Path), b.Size())
	rep, notes, err := analyze(e, b, o.cfg, o.topics, prog)
	prog.finish()
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
	title := fmt.Sprintf("%s (%s, %d file(s), %s)", b.Path, b.Storage, len(b.Files), humanSize(b.Size()))
	fmt.Fprintf(w, "%s: %d messages, %.3f s\n", title, rep.Messages, rep.End.Sub(rep.Start).Seconds())
	if err := rep.WriteTable(w); err != nil {
		return err
	}
	var specs []outSpec
	var writers []func(io.Writer) error
	// What reading the bag found goes into the files too: a report read
	// later must say that its bag was cut off or partly unreadable.
	reading := notes.lines(b, "")
	if htmlPath != "" {
		specs = append(specs, outSpec{"--html", htmlPath})
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
		specs = append(specs, outSpec{"--json-out", jsonPath})
		writers = append(writers, func(w io.Writer) error {
			return writeStatusJSON(w, struct {
				*report.Report
				Reading []readingNote `json:"reading,omitempty"`
			}{rep, reading})
		})
	}
	if len(specs) > 0 {
		f, err := openOutputs(e, specs...)
		if err != nil {
			return err
		}
		defer f.abort()
		for i, write := range writers {
			if err := write(f.out(i)); err != nil {
				return err
			}
		}
		if err := f.commit(); err != nil {
			return err
		}
	}
	notes.say(e, "report", b, "")
	if notes.any() {
		return errSkipped
	}
	return nil
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
