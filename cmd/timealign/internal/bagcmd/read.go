package bagcmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/timealign/timealign/cmd/timealign/internal/cli"
	"github.com/timealign/timealign/pkg/bag"
)

// Reading a bag through, as cat, report and fix do: everything readable is
// processed; a file that cannot be read to its end is skipped from there,
// and what was skipped is said.

// readRecords gives do every readable record of r, in order. A file that
// fails is noted and skipped from there (the others go on). Every 4096
// records the context is checked and every, when set, runs (a progress
// bar, a check for a write error). At the end notes.sk is what the reader
// skipped.
func readRecords(ctx context.Context, r *bag.Reader, notes *skipNotes, every func() error, do func(rec *bag.Record) error) error {
	var rec bag.Record
	for n := 0; ; n++ {
		err := r.Next(&rec)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			notes.errs = append(notes.errs, err)
			r.SkipFile(err)
			continue
		}
		if n&4095 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
			if every != nil {
				if err := every(); err != nil {
					return err
				}
			}
		}
		if err := do(&rec); err != nil {
			return err
		}
	}
	notes.sk = r.Skipped()
	notes.sk.Errors = nil
	return nil
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
func (s *skipNotes) say(e *cli.Env, cmd string, b *bag.Bag, done string) {
	for _, n := range s.lines(b, done) {
		note := ""
		if !n.Lost {
			note = "note: "
		}
		fmt.Fprintf(e.Stderr, "timealign bag %s: %s%s\n", cmd, note, n.Text)
	}
}

// end says the notes on stderr and returns errSkipped if reading skipped
// anything.
func (s *skipNotes) end(e *cli.Env, cmd string, b *bag.Bag, done string) error {
	s.say(e, cmd, b, done)
	if s.any() {
		return errSkipped
	}
	return nil
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

// missingTopics returns the names of want that no topic of have has,
// sorted.
func missingTopics(want []string, have []*bag.Topic) []string {
	seen := map[string]bool{}
	for _, t := range have {
		seen[t.Name] = true
	}
	var missing []string
	for _, t := range want {
		if !seen[t] {
			missing = append(missing, t)
		}
	}
	slices.Sort(missing)
	return missing
}
