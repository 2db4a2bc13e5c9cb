package main

import (
	"errors"
	"io"
	"sort"
	"strings"

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

func runBagCat(e *env, args []string) error {
	fs := newFlags(e, "bag cat", "[flags] BAG", bagCatDoc)
	topics := fs.String("topics", "", "comma-separated topics to print (default: all)")
	out := fs.String("out", "", "output file (default standard output)")
	var rng timeRange
	fs.Var(&rng.start, "start", startUsage)
	fs.Var(&rng.end, "end", endUsage)
	if err := parseFlags(e, fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usagef("bag cat takes one bag, got %d arguments", fs.NArg())
	}
	b, err := bag.Open(fs.Arg(0))
	if err != nil {
		return bagErr(fs.Arg(0), err)
	}
	b.TempDir = e.bagTemp
	if err := rng.apply(b); err != nil {
		return err
	}
	var want map[string]bool
	if *topics != "" {
		// The bag's summary names its topics: a topic it lacks is an
		// error before anything is written.
		s, err := b.Summarize()
		if err != nil {
			return err
		}
		have := map[string]bool{}
		for _, ts := range s.Topics {
			have[ts.Topic.Name] = true
		}
		want = map[string]bool{}
		var missing []string
		for _, t := range splitList(*topics) {
			want[t] = true
			if !have[t] {
				missing = append(missing, t)
			}
		}
		if len(missing) > 0 {
			sort.Strings(missing)
			return usagef("--topics: %s not in the bag", strings.Join(missing, ", "))
		}
	}
	f, err := openOutputs(e, outSpec{"--out", *out})
	if err != nil {
		return err
	}
	defer f.abort()
	notes, err := catBag(e, b, want, f.out(0))
	if err != nil {
		return err
	}
	if err := f.commit(); err != nil {
		return err
	}
	notes.say(e, "cat", b, "")
	if notes.any() {
		return errSkipped
	}
	return nil
}

// catBag writes a row per message of b (of the topics in want, all if nil)
// and returns what reading skipped.
func catBag(e *env, b *bag.Bag, want map[string]bool, w io.Writer) (*skipNotes, error) {
	defs := definitions()
	r := b.Records()
	defer r.Close()
	hdr := map[*bag.Topic]bool{}
	notes := &skipNotes{}
	cw := csvio.NewWriter(w, "topic", "log_time_ns", "publish_time_ns", "header_stamp_ns")
	var rec bag.Record
	for n := 0; ; n++ {
		err := r.Next(&rec)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			if e.ctx.Err() != nil {
				return nil, e.ctx.Err()
			}
			notes.errs = append(notes.errs, err)
			r.SkipFile(err)
			continue
		}
		if n&4095 == 0 {
			if err := e.ctx.Err(); err != nil {
				return nil, err
			}
			if err := cw.Err(); err != nil {
				return nil, err
			}
		}
		switch rec.Kind {
		case bag.KindTopic:
			hdr[rec.Topic] = defs.Lookup(rec.Topic).HeaderFirst
		case bag.KindMessage:
			m := &rec.Message
			if want != nil && !want[m.Topic.Name] {
				continue
			}
			cw.String(m.Topic.Name).Stamp(m.LogTime).Stamp(m.PublishTime)
			var h stamp.Time
			var herr error = errors.New("no header")
			if hdr[m.Topic] {
				h, _, herr = stamp.Header(m.Data)
			}
			if herr == nil {
				cw.Stamp(h)
			} else {
				cw.Empty()
			}
			cw.EndRow()
		}
	}
	notes.sk = r.Skipped()
	notes.sk.Errors = nil
	return notes, cw.Flush()
}
