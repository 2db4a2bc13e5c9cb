package bagcmd

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/timealign/timealign/cmd/timealign/internal/cli"
	"github.com/timealign/timealign/pkg/bag"
	"github.com/timealign/timealign/pkg/stamp"
)

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

func runBagInfo(e *cli.Env, temp string, args []string) error {
	fs := cli.NewFlagsExit(e, "bag info", "[flags] BAG...", bagInfoDoc, lostFailure)
	jobs := jobsFlag(fs, "bags read in parallel")
	asJSON := fs.Bool("json", false, "write JSON instead of text (per topic: type, count, first and last log time, size, rate)")
	if err := cli.ParseFlags(e, fs, args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return cli.Usagef("bag info needs a bag (a directory with metadata.yaml, or a .mcap or .db3 file)")
	}
	if *asJSON {
		bags, err := openBags(temp, fs.Args())
		if err != nil {
			return err
		}
		return bagInfoJSON(e, bags)
	}
	if err := checkJobs(*jobs); err != nil {
		return err
	}
	bags, err := openBags(temp, fs.Args())
	if err != nil {
		return err
	}
	return forEachBag(e, "bag info", bags, *jobs, e.Stdout, func(b *bag.Bag, w io.Writer) error {
		return bagInfo(b, w)
	})
}

// utc formats a stamp as ros2 bag info does, in UTC.
func utc(t stamp.Time) string {
	tm := time.Unix(0, int64(t)).UTC()
	return fmt.Sprintf("%s (%s)", tm.Format("Jan _2 2006 15:04:05.000 UTC"), t.String())
}

// bagInfo writes what b holds, as ros2 bag info does, then what reading
// it found and where metadata.yaml disagrees with its files.
func bagInfo(b *bag.Bag, w io.Writer) error {
	s, err := b.Summarize()
	if err != nil {
		return err
	}
	writeInfoHead(w, b, s)
	writeInfoTopics(w, s)
	for _, n := range summaryNotes(b, s, true) {
		if n.Lost {
			fmt.Fprintf(w, "Lost:              %s\n", n.Text)
		} else {
			fmt.Fprintf(w, "Note:              %s\n", n.Text)
		}
	}
	if diffs := metadataDiffs(b.Metadata, s); len(diffs) > 0 {
		fmt.Fprintf(w, "Warning:           metadata.yaml says %s\n", strings.Join(diffs, "; "))
	}
	if s.Skipped.Any() {
		return errLost
	}
	return nil
}

// writeInfoHead writes the bag's files, size, storage, duration and span.
func writeInfoHead(w io.Writer, b *bag.Bag, s *bag.Summary) {
	var files []string
	for _, f := range b.Files {
		files = append(files, filepath.Base(f))
	}
	fmt.Fprintf(w, "Files:             %s\n", strings.Join(files, "\n                   "))
	fmt.Fprintf(w, "Bag size:          %s\n", cli.HumanSize(b.Size()))
	fmt.Fprintf(w, "Storage id:        %s", b.Storage)
	if s.Compression != "" {
		fmt.Fprintf(w, " (%s chunks)", s.Compression)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "Duration:          %.3fs\n", s.End.Sub(s.Start).Seconds())
	if s.MessageCount > 0 {
		fmt.Fprintf(w, "Start:             %s\n", utc(s.Start))
		fmt.Fprintf(w, "End:               %s\n", utc(s.End))
	}
	fmt.Fprintf(w, "Messages:          %d\n", s.MessageCount)
}

// writeInfoTopics writes a line per topic: type, count, rate, format and
// whether its messages carry a header stamp.
func writeInfoTopics(w io.Writer, s *bag.Summary) {
	defs := definitions()
	dur := s.End.Sub(s.Start)
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
		fmt.Fprintf(w, "%sTopic: %s | Type: %s | Count: %d | Rate: %s | Serialization Format: %s | Header stamp: %s\n",
			prefix, ts.Topic.Name, ts.Topic.Type, ts.Count, rate, ts.Topic.SerializationFormat, headerText(defs.Lookup(ts.Topic)))
	}
	if len(s.Topics) == 0 {
		fmt.Fprintf(w, "Topic information: \n")
	} else {
		fmt.Fprintf(w, "Rate:              per topic, over its own first to last log time: (count − 1) ÷ span, as bag report\n")
	}
}

// headerText says in bag info's text whether a topic's messages carry a
// header stamp, and where that was decided.
func headerText(def *bag.Definition) string {
	switch {
	case def.NoHeader != "":
		return "no Header (" + def.NoHeader + ")"
	case def.Err != nil:
		return fmt.Sprintf("unknown (the schema does not parse: %v)", def.Err)
	}
	hdr := "no"
	if def.HeaderFirst {
		hdr = "yes"
	}
	if def.Source != bag.FromSchema {
		hdr += " (" + string(def.Source) + ")"
	}
	return hdr
}

// headerJSON is bag info --json's header_stamp: yes, no or unknown.
func headerJSON(def *bag.Definition) string {
	switch {
	case def.NoHeader != "":
		return "no"
	case def.Err != nil || (def.Source == bag.Unknown):
		return "unknown"
	case def.HeaderFirst:
		return "yes"
	}
	return "no"
}

// summaryNotes are what summarizing b found: a missing metadata.yaml, files
// cut off (lost messages or not), where reading stopped at an error, what
// was skipped; with scanned, that a file without a summary was read
// through.
func summaryNotes(b *bag.Bag, s *bag.Summary, scanned bool) []readingNote {
	var out []readingNote
	if b.NoMetadata {
		out = append(out, readingNote{Text: noMetadataNote(b)})
	}
	for _, c := range s.Skipped.Cuts {
		out = append(out, readingNote{Lost: c.Lost(), Text: c.String()})
	}
	for _, c := range s.CorruptSummaries {
		out = append(out, readingNote{Text: "a corrupt summary section, the file was read through instead: " + c})
	}
	if scanned && s.Scanned && len(s.Skipped.Cuts) == 0 && len(s.CorruptSummaries) == 0 {
		out = append(out, readingNote{Text: "a file has no summary section: it was read through"})
	}
	for _, err := range s.Skipped.Errors {
		out = append(out, readingNote{Lost: true, Text: "reading stopped at an error, the rest of the file is not counted: " + err.Error()})
	}
	if parts := skippedParts(s.Skipped); len(parts) > 0 {
		out = append(out, readingNote{Lost: true, Text: "skipped " + strings.Join(parts, ", ")})
	}
	return out
}

// metadataDiffs lists where metadata.yaml's counts differ from what the
// files hold (nil without metadata.yaml).
func metadataDiffs(m *bag.Metadata, s *bag.Summary) []string {
	if m == nil {
		return nil
	}
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
	return append(diffs, names...)
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
func bagInfoJSON(e *cli.Env, bags []*bag.Bag) error {
	var outs []bagInfoOut
	lost := false
	for _, b := range bags {
		s, err := b.SummarizeSizes()
		if err != nil {
			return fmt.Errorf("%s: %w", b.Path, err)
		}
		outs = append(outs, infoJSON(b, s))
		lost = lost || s.Skipped.Any()
	}
	var v any = outs
	if len(outs) == 1 {
		v = outs[0]
	}
	if err := cli.WriteJSON(e.Stdout, v); err != nil {
		return err
	}
	if lost {
		return errLost
	}
	return nil
}

// infoJSON is bag info --json of b, summarized as s.
func infoJSON(b *bag.Bag, s *bag.Summary) bagInfoOut {
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
			Count: ts.Count, SizeBytes: ts.Bytes, RateHz: topicRate(ts), HeaderStamp: headerJSON(def),
			Definition: string(def.Source), NoHeader: def.NoHeader}
		if ts.Count > 0 && ts.Start != 0 {
			st, en := int64(ts.Start), int64(ts.End)
			t.FirstLogNs, t.LastLogNs = &st, &en
		}
		o.Topics = append(o.Topics, t)
	}
	for _, n := range summaryNotes(b, s, false) {
		if n.Lost {
			o.Lost = append(o.Lost, n.Text)
		} else {
			o.Notes = append(o.Notes, n.Text)
		}
	}
	return o
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
