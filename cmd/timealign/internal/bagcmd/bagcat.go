package bagcmd

import (
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/timealign/timealign/cmd/timealign/internal/cli"
	"github.com/timealign/timealign/pkg/bag"
	"github.com/timealign/timealign/pkg/csvio"
	"github.com/timealign/timealign/pkg/stamp"
)

const bagCatDoc = `
Prints the stamps of a bag's messages as CSV, to check a recording or a
fix: one row per message, in the order the bag holds them,

  topic,log_time_ns,publish_time_ns,header_stamp_ns

header_stamp_ns is the message's header.stamp, empty for a type that does
not start with a std_msgs/Header (or one whose bytes are too short).
publish_time_ns equals log_time_ns in SQLite bags, which keep one time.
--topics selects topics (default: all); --start and --end a time range.`

func runBagCat(e *cli.Env, temp string, args []string) error {
	fs := cli.NewFlagsExit(e, "bag cat", "[flags] BAG", bagCatDoc, lostFailure)
	topics := fs.String("topics", "", "comma-separated topics to print (default: all)")
	out := fs.String("out", "", "output file (default standard output)")
	var rng timeRange
	rng.addFlags(fs, "")
	if err := cli.ParseFlags(e, fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return cli.Usagef("bag cat takes one bag, got %d arguments", fs.NArg())
	}
	b, err := openBag(temp, fs.Arg(0))
	if err != nil {
		return err
	}
	if err := rng.apply(b); err != nil {
		return err
	}
	want, err := wantTopics(b, *topics)
	if err != nil {
		return err
	}
	f, err := cli.OpenOutputs(e, cli.Out("--out", *out))
	if err != nil {
		return err
	}
	defer f.Abort()
	notes, err := catBag(e, b, want, f.Out(0))
	if err != nil {
		return err
	}
	if err := f.Commit(); err != nil {
		return err
	}
	return notes.end(e, "cat", b, "")
}

// wantTopics returns the set of the --topics list (nil for all), which
// must all be in b: the bag's summary names its topics, and one it lacks
// is an error before anything is written.
func wantTopics(b *bag.Bag, list string) (map[string]bool, error) {
	if list == "" {
		return nil, nil
	}
	s, err := b.Summarize()
	if err != nil {
		return nil, err
	}
	var have []*bag.Topic
	for _, ts := range s.Topics {
		have = append(have, ts.Topic)
	}
	want := map[string]bool{}
	for _, t := range cli.SplitList(list) {
		want[t] = true
	}
	if missing := missingTopics(slices.Collect(maps.Keys(want)), have); len(missing) > 0 {
		return nil, cli.Usagef("--topics: %s not in the bag", strings.Join(missing, ", "))
	}
	return want, nil
}

// catBag writes a row per message of b (of the topics in want, all if nil)
// and returns what reading skipped.
func catBag(e *cli.Env, b *bag.Bag, want map[string]bool, w io.Writer) (*skipNotes, error) {
	defs := definitions()
	r := b.Records()
	defer r.Close()
	hdr := map[*bag.Topic]bool{}
	notes := &skipNotes{}
	cw := csvio.NewWriter(w, "topic", "log_time_ns", "publish_time_ns", "header_stamp_ns")
	err := readRecords(e.Ctx, r, notes, cw.Err, func(rec *bag.Record) error {
		switch rec.Kind {
		case bag.KindTopic:
			hdr[rec.Topic] = defs.Lookup(rec.Topic).HeaderFirst
		case bag.KindMessage:
			m := &rec.Message
			if want != nil && !want[m.Topic.Name] {
				return nil
			}
			cw.String(m.Topic.Name).Stamp(m.LogTime).Stamp(m.PublishTime)
			if hdr[m.Topic] {
				if h, _, err := stamp.Header(m.Data); err == nil {
					cw.Stamp(h).EndRow()
					return nil
				}
			}
			cw.Empty().EndRow()
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return notes, cw.Flush()
}
