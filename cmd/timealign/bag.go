package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	gosync "sync"
	"time"

	"github.com/timealign/timealign/pkg/bag"
	"github.com/timealign/timealign/pkg/stamp"
)

const bagDoc = `
Recorded rosbag2 bags (MCAP and SQLite .db3; a bag directory with
metadata.yaml and its split files, or one storage file).

Subcommands:
  info    topics, types, counts, duration and rates, like 'ros2 bag info'
  report  timing analysis per topic and across topics (table, --html, --json-out)
  fix     rewrite header stamps with the nodes' algorithms and parameter YAML
  cat     the stamps of its messages as CSV (log, publish and header stamp)

Run 'timealign bag <subcommand> --help' for its flags and exit statuses.

Exit status: 0 success, 1 bad data or I/O failure (or a bag cut off where
messages were lost), 2 bad command line, 130 interrupted.`

// bagCommands are the subcommands of bag.
func bagCommands() []command {
	return []command{
		{"info", "topics, types, counts, duration, rates", runBagInfo},
		{"report", "timing analysis: jitter, gaps, latency, clocks, sync", runBagReport},
		{"fix", "rewrite header stamps (tsest, pll, offset) into a new bag", runBagFix},
		{"cat", "the stamps of its messages as CSV: topic, log and publish time, header stamp", runBagCat},
	}
}

func runBag(e *env, args []string) error {
	if len(args) == 0 {
		fmt.Fprintf(e.stderr, "Usage: timealign bag <info|report|fix|cat> [flags] BAG...\n%s\n", strings.TrimRight(bagDoc, "\n"))
		return usagef("a subcommand is needed: info, report, fix or cat")
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		fmt.Fprintf(e.stdout, "Usage: timealign bag <info|report|fix|cat> [flags] BAG...\n%s\n", strings.TrimRight(bagDoc, "\n"))
		return errHelp
	}
	for _, c := range bagCommands() {
		if c.name == args[0] {
			e.subcommand = "bag " + c.name
			// A SQLite file with a write-ahead log is read from a copy:
			// in a directory that a signal removes too.
			dir, err := e.temps.createDir("", "timealign-bag-*")
			if err != nil {
				return inSubcommand(e.subcommand, err)
			}
			defer e.temps.remove(dir)
			e.bagTemp = dir
			return inSubcommand(e.subcommand, c.run(e, args[1:]))
		}
	}
	return usagef("unknown subcommand %q (want info, report, fix or cat)", cut(args[0]))
}

// definitions returns the type lookup: MCAP schemas, the installed .msg
// files of a sourced ROS 2 (AMENT_PREFIX_PATH), the built-in table.
func definitions() *bag.Definitions {
	d := &bag.Definitions{ReadFile: os.ReadFile}
	if p := os.Getenv("AMENT_PREFIX_PATH"); p != "" {
		d.AmentPrefixPath = strings.Split(p, string(os.PathListSeparator))
	}
	return d
}

// openBags opens every bag argument; the first that fails is the error.
func openBags(paths []string) ([]*bag.Bag, error) {
	var bags []*bag.Bag
	for _, p := range paths {
		b, err := bag.Open(p)
		if err != nil {
			return nil, bagErr(p, err)
		}
		bags = append(bags, b)
	}
	return bags, nil
}

// bagErr words an error opening a bag.
func bagErr(path string, err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) && errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("%s: no such file or directory", path)
	}
	return err
}

// forEachBag runs do on every bag, jobs at a time, and writes each bag's
// output to w in the order of the bags (a failed bag's error goes to
// stderr and the others go on). It returns the first error, naming how
// many bags failed.
func forEachBag(e *env, bags []*bag.Bag, jobs int, w io.Writer, do func(b *bag.Bag, out io.Writer) error) error {
	if jobs < 1 {
		jobs = 1
	}
	for _, b := range bags {
		b.TempDir = e.bagTemp
	}
	if len(bags) == 1 || jobs == 1 {
		var first error
		failed := 0
		for i, b := range bags {
			if i > 0 && len(bags) > 1 {
				fmt.Fprintln(w)
			}
			if err := do(b, w); err != nil {
				if errors.Is(err, e.ctx.Err()) && e.ctx.Err() != nil {
					return err
				}
				if len(bags) == 1 {
					return err
				}
				fmt.Fprintf(e.stderr, "timealign %s: %s: %v\n", e.cmdName("bag"), b.Path, err)
				failed++
				if first == nil {
					first = err
				}
			}
		}
		if failed > 0 {
			return fmt.Errorf("%d of %d bags failed; the first: %w", failed, len(bags), first)
		}
		return nil
	}
	outs := make([]bytes.Buffer, len(bags))
	errs := make([]error, len(bags))
	next := make(chan int)
	var wg gosync.WaitGroup
	for range min(jobs, len(bags)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				errs[i] = do(bags[i], &outs[i])
			}
		}()
	}
	for i := range bags {
		next <- i
	}
	close(next)
	wg.Wait()
	var first error
	failed := 0
	for i := range bags {
		if i > 0 {
			fmt.Fprintln(w)
		}
		w.Write(outs[i].Bytes())
		if errs[i] != nil {
			if e.ctx.Err() != nil {
				return e.ctx.Err()
			}
			fmt.Fprintf(e.stderr, "timealign %s: %s: %v\n", e.cmdName("bag"), bags[i].Path, errs[i])
			failed++
			if first == nil {
				first = errs[i]
			}
		}
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d bags failed; the first: %w", failed, len(bags), first)
	}
	return nil
}

// defaultJobs is --jobs's default: one bag at a time per core, at most 4.
func defaultJobs() int { return max(1, min(4, runtime.NumCPU())) }

const bagInfoDoc = `
Prints what a bag holds, as 'ros2 bag info' does: its files, size, storage,
duration, start and end (UTC), and per topic the type, message count, rate
and serialization format, and whether its messages carry a header stamp
that 'bag report' and 'bag fix' use (decided from the MCAP schema; for
SQLite bags, which hold no definitions, from the installed .msg files when
ROS 2 is sourced, else from timealign's table of the standard types; the
source is named). Counts come from each file's summary (MCAP) or an
aggregate query (SQLite), not from metadata.yaml, which is checked against
them: a difference is reported. A file without a summary (a recording that
was cut off) is read through: where it ends and whether that lost messages
is said (Note: no message lost, exit status 0; Lost: the file ends inside
a chunk or a message, or cannot be read to its end, exit status 1).

A topic's rate is its own: (count − 1) ÷ the time from its first to its
last message, as 'bag report' gives it.

--json writes the same as JSON, one object per bag (an array of them for
several bags): files, size_bytes, storage, compression, start_ns, end_ns,
duration_ns, message_count, and per topic name, type,
serialization_format, count, first_log_ns, last_log_ns, size_bytes (its
messages' data: an MCAP summary holds no sizes per channel, so --json
reads MCAP files through), rate_hz, header_stamp (yes, no, unknown), definition (where that
was decided) and no_header (a schema that cannot carry a ROS Header);
notes and lost list what reading a cut-off bag found.`

func runBagInfo(e *env, args []string) error {
	fs := newFlags(e, "bag info", "[flags] BAG...", bagInfoDoc)
	jobs := fs.Int("jobs", defaultJobs(), "bags read in parallel")
	asJSON := fs.Bool("json", false, "write JSON instead of text (per topic: type, count, first and last log time, size, rate)")
	if err := parseFlags(e, fs, args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return usagef("bag info needs a bag (a directory with metadata.yaml, or a .mcap or .db3 file)")
	}
	if *asJSON {
		bags, err := openBags(fs.Args())
		if err != nil {
			return err
		}
		return bagInfoJSON(e, bags)
	}
	if *jobs < 1 || *jobs > 256 {
		return usagef("--jobs is %d, want 1..256", *jobs)
	}
	bags, err := openBags(fs.Args())
	if err != nil {
		return err
	}
	return forEachBag(e, bags, *jobs, e.stdout, func(b *bag.Bag, w io.Writer) error {
		return bagInfo(b, w)
	})
}

// utc formats a stamp as ros2 bag info does, in UTC.
func utc(t stamp.Time) string {
	tm := time.Unix(0, int64(t)).UTC()
	return fmt.Sprintf("%s (%s)", tm.Format("Jan _2 2006 15:04:05.000 UTC"), t.String())
}

// humanSize formats bytes as ros2 bag info does (KiB, MiB, GiB).
func humanSize(n int64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	f := float64(n)
	i := 0
	for f >= 1024 && i < len(units)-1 {
		f /= 1024
		i++
	}
	if i == 0 {
		return fmt.Sprintf("%d B", n)
	}
	return fmt.Sprintf("%.1f %s", f, units[i])
}

func bagInfo(b *bag.Bag, w io.Writer) error {
	s, err := b.Summarize()
	if err != nil {
		return err
	}
	defs := definitions()
	var files []string
	for _, f := range b.Files {
		files = append(files, filepath.Base(f))
	}
	fmt.Fprintf(w, "Files:             %s\n", strings.Join(files, "\n                   "))
	fmt.Fprintf(w, "Bag size:          %s\n", humanSize(b.Size()))
	fmt.Fprintf(w, "Storage id:        %s", b.Storage)
	if s.Compression != "" {
		fmt.Fprintf(w, " (%s chunks)", s.Compression)
	}
	fmt.Fprintln(w)
	dur := s.End.Sub(s.Start)
	fmt.Fprintf(w, "Duration:          %.3fs\n", dur.Seconds())
	if s.MessageCount > 0 {
		fmt.Fprintf(w, "Start:             %s\n", utc(s.Start))
		fmt.Fprintf(w, "End:               %s\n", utc(s.End))
	}
	fmt.Fprintf(w, "Messages:          %d\n", s.MessageCount)
	for i, ts := range s.Topics {
		prefix := "Topic information: "
		if i > 0 {
			prefix = "                   "
		}
		rate := "-"
		switch {
		case ts.Count > 1 && ts.End > ts.Start:
			rate = fmt.Sprintf("%.4g Hz", topicRate(ts))
		case ts.Count > 1 && ts.Start != 0:
			rate = "- (all at one log time)"
		case ts.Count > 1 && dur > 0:
			rate = fmt.Sprintf("%.4g Hz over the bag's span", float64(ts.Count)/dur.Seconds())
		}
		def := defs.Lookup(ts.Topic)
		hdr := "no"
		if def.HeaderFirst {
			hdr = "yes"
		}
		if def.Source != bag.FromSchema {
			hdr += " (" + string(def.Source) + ")"
		}
		if def.Err != nil {
			hdr = fmt.Sprintf("unknown (the schema does not parse: %v)", def.Err)
		}
		if def.NoHeader != "" {
			hdr = "no Header (" + def.NoHeader + ")"
		}
		fmt.Fprintf(w, "%sTopic: %s | Type: %s | Count: %d | Rate: %s | Serialization Format: %s | Header stamp: %s\n",
			prefix, ts.Topic.Name, ts.Topic.Type, ts.Count, rate, ts.Topic.SerializationFormat, hdr)
	}
	if len(s.Topics) == 0 {
		fmt.Fprintf(w, "Topic information: \n")
	} else {
		fmt.Fprintf(w, "Rate:              per topic, over its own first to last log time: (count − 1) ÷ span, as bag report\n")
	}
	if b.NoMetadata {
		fmt.Fprintf(w, "Note:              %s\n", noMetadataNote(b))
	}
	for _, c := range s.Skipped.Cuts {
		if c.Lost() {
			fmt.Fprintf(w, "Lost:              %s\n", c)
		} else {
			fmt.Fprintf(w, "Note:              %s\n", c)
		}
	}
	if s.Scanned && len(s.Skipped.Cuts) == 0 {
		fmt.Fprintf(w, "Note:              a file has no summary section: it was read through\n")
	}
	for _, err := range s.Skipped.Errors {
		fmt.Fprintf(w, "Lost:              reading stopped at an error, the rest of the file is not counted: %v\n", err)
	}
	if parts := skippedParts(s.Skipped); len(parts) > 0 {
		fmt.Fprintf(w, "Lost:              skipped %s\n", strings.Join(parts, ", "))
	}
	if m := b.Metadata; m != nil {
		var diffs []string
		if m.MessageCount != s.MessageCount {
			diffs = append(diffs, fmt.Sprintf("%d messages (the files hold %d)", m.MessageCount, s.MessageCount))
		}
		counts := map[string]uint64{}
		for _, ts := range s.Topics {
			counts[ts.Topic.Name] += ts.Count
		}
		var names []string
		for _, ti := range m.Topics {
			if counts[ti.Name] != ti.MessageCount {
				names = append(names, fmt.Sprintf("%s %d (the files hold %d)", ti.Name, ti.MessageCount, counts[ti.Name]))
			}
		}
		sort.Strings(names)
		diffs = append(diffs, names...)
		if len(diffs) > 0 {
			fmt.Fprintf(w, "Warning:           metadata.yaml says %s\n", strings.Join(diffs, "; "))
		}
	}
	if s.Skipped.Any() {
		return errLost
	}
	return nil
}

// bagInfoTopic is a topic in bag info --json.
type bagInfoTopic struct {
	Name                string  `json:"name"`
	Type                string  `json:"type"`
	SerializationFormat string  `json:"serialization_format"`
	Count               uint64  `json:"count"`
	FirstLogNs          *int64  `json:"first_log_ns"`
	LastLogNs           *int64  `json:"last_log_ns"`
	SizeBytes           uint64  `json:"size_bytes"`
	RateHz              float64 `json:"rate_hz"`
	HeaderStamp         string  `json:"header_stamp"`
	Definition          string  `json:"definition"`
	NoHeader            string  `json:"no_header,omitempty"`
}

// bagInfoOut is one bag in bag info --json.
type bagInfoOut struct {
	Path         string         `json:"path"`
	Files        []string       `json:"files"`
	SizeBytes    int64          `json:"size_bytes"`
	Storage      string         `json:"storage"`
	Compression  string         `json:"compression,omitempty"`
	StartNs      *int64         `json:"start_ns"`
	EndNs        *int64         `json:"end_ns"`
	DurationNs   int64          `json:"duration_ns"`
	MessageCount uint64         `json:"message_count"`
	Topics       []bagInfoTopic `json:"topics"`
	Notes        []string       `json:"notes"`
	Lost         []string       `json:"lost"`
}

// bagInfoJSON writes bag info --json: one object per bag, an array for
// several.
func bagInfoJSON(e *env, bags []*bag.Bag) error {
	var outs []bagInfoOut
	lost := false
	for _, b := range bags {
		b.TempDir = e.bagTemp
		s, err := b.SummarizeSizes()
		if err != nil {
			return fmt.Errorf("%s: %w", b.Path, err)
		}
		o := bagInfoOut{Path: b.Path, SizeBytes: b.Size(), Storage: string(b.Storage), Compression: s.Compression,
			MessageCount: s.MessageCount, Topics: []bagInfoTopic{}, Notes: []string{}, Lost: []string{}}
		for _, f := range b.Files {
			o.Files = append(o.Files, filepath.Base(f))
		}
		if s.MessageCount > 0 {
			st, en := int64(s.Start), int64(s.End)
			o.StartNs, o.EndNs, o.DurationNs = &st, &en, en-st
		}
		defs := definitions()
		for _, ts := range s.Topics {
			def := defs.Lookup(ts.Topic)
			t := bagInfoTopic{Name: ts.Topic.Name, Type: ts.Topic.Type, SerializationFormat: ts.Topic.SerializationFormat,
				Count: ts.Count, SizeBytes: ts.Bytes, RateHz: topicRate(ts), Definition: string(def.Source), NoHeader: def.NoHeader}
			switch {
			case def.NoHeader != "":
				t.HeaderStamp = "no"
			case def.Err != nil || (def.Source == bag.Unknown):
				t.HeaderStamp = "unknown"
			case def.HeaderFirst:
				t.HeaderStamp = "yes"
			default:
				t.HeaderStamp = "no"
			}
			if ts.Count > 0 && ts.Start != 0 {
				st, en := int64(ts.Start), int64(ts.End)
				t.FirstLogNs, t.LastLogNs = &st, &en
			}
			o.Topics = append(o.Topics, t)
		}
		if b.NoMetadata {
			o.Notes = append(o.Notes, noMetadataNote(b))
		}
		for _, c := range s.Skipped.Cuts {
			if c.Lost() {
				o.Lost = append(o.Lost, c.String())
			} else {
				o.Notes = append(o.Notes, c.String())
			}
		}
		for _, err := range s.Skipped.Errors {
			o.Lost = append(o.Lost, "reading stopped at an error, the rest of the file is not counted: "+err.Error())
		}
		if parts := skippedParts(s.Skipped); len(parts) > 0 {
			o.Lost = append(o.Lost, "skipped "+strings.Join(parts, ", "))
		}
		lost = lost || s.Skipped.Any()
		outs = append(outs, o)
	}
	var v any = outs
	if len(outs) == 1 {
		v = outs[0]
	}
	if err := writeStatusJSON(e.stdout, v); err != nil {
		return err
	}
	if lost {
		return errLost
	}
	return nil
}

// topicRate is a topic's rate over its own first to last log time, as
// bag report computes it: (count − 1) ÷ span (0 if unknown).
func topicRate(ts bag.TopicSummary) float64 {
	if ts.Count < 2 || ts.End <= ts.Start {
		return 0
	}
	return float64(ts.Count-1) / ts.End.Sub(ts.Start).Seconds()
}

// errLost: bag info counted everything readable, but a file lost messages
// or could not be read to its end.
var errLost = errors.New("messages of the bag were lost or could not be read (the lines Lost: above say which); the rest was counted")
