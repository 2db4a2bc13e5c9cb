package bag

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/foxglove/mcap/go/mcap"

	"github.com/timealign/timealign/pkg/stamp"
)

// A recording that is stopped while it writes (the recorder killed, a
// crash, a power cut: the usual end of a robot's bag) leaves storage files
// that end early, and rosbag2 writes metadata.yaml only when a recording
// ends, so there is none. The file's end can fall anywhere:
//
//   - inside or after records that hold no message (an MCAP message index
//     written after its chunk, a chunk index, the statistics, the summary,
//     the footer): every message the file holds was read;
//   - inside an MCAP chunk or a message record outside chunks: that
//     record's messages are lost, except the complete messages at the start
//     of an uncompressed chunk, which are read;
//   - a SQLite file keeps its committed transactions; its recorder may
//     leave a write-ahead log (-wal, read with it) or the rollback journal
//     of a transaction it did not finish (-journal).
//
// Cut describes such a file; Reader.Skipped and Summary list them. Messages
// the recorder still held in memory when it was stopped never reached the
// file: nothing can tell how many.

// Cut describes a storage file its recorder did not finish.
type Cut struct {
	// Path is the storage file.
	Path string
	// Size is the length of an MCAP file in bytes: where it was cut off
	// (0 for an empty file, and for SQLite).
	Size int64
	// Record names the MCAP record the file ends inside ("chunk",
	// "message", "message index", "statistics", ...); it is "" when the
	// file ends between two records, and for SQLite.
	Record string
	// Offset is where that record starts (Size when Record is ""); Have of
	// its Want bytes are in the file (Want is 0 when the record's length
	// field is cut too).
	Offset, Have, Want int64
	// InSummary reports a cut in the MCAP summary section, which comes
	// after every message.
	InSummary bool
	// Compression is the cut chunk's compression ("" for none).
	Compression string
	// From and To are the log times of the cut chunk's first and last
	// messages, from its header (0 when the header is cut too).
	From, To stamp.Time
	// Recovered counts the complete messages read from the start of a cut
	// uncompressed chunk; Last is the log time of the last of them.
	Recovered int
	Last      stamp.Time
	// Topic is the topic of a cut message record, when its channel is
	// known.
	Topic string
	// Leftover is the SQLite write-ahead log (path-wal) or rollback
	// journal (path-journal) the recorder left, or "".
	Leftover string
	// compKnown: the cut chunk's compression was read.
	compKnown bool
}

// Lost reports whether message data in the file was lost: it ends inside
// a chunk or a message record.
func (c Cut) Lost() bool {
	return c.Record == mcap.OpChunk.String() || c.Record == mcap.OpMessage.String()
}

// String says in one sentence where the file was cut and what was lost.
func (c Cut) String() string {
	switch {
	case c.Leftover != "" && strings.HasSuffix(c.Leftover, "-journal"):
		return fmt.Sprintf("%s was not closed by its recorder (the rollback journal of a transaction it did not finish, %s, is left): "+
			"the file was read as it stands, the journal neither applied nor removed: of that transaction, "+
			"the messages that had reached the file were read, the others are missing", c.Path, c.Leftover)
	case c.Leftover != "":
		return fmt.Sprintf("%s was not closed by its recorder (its write-ahead log %s is left): "+
			"the transactions committed to the log were read too", c.Path, c.Leftover)
	case c.Size == 0:
		return fmt.Sprintf("%s is empty: the recording was cut off before anything was written to it", c.Path)
	case c.Record == mcap.OpChunk.String():
		return c.chunkString()
	case c.Record == mcap.OpMessage.String():
		on := "message record"
		if c.Topic != "" {
			on += " of " + c.Topic
		}
		return fmt.Sprintf("%s was cut off at byte %d, %s: that message is lost", c.Path, c.Size, c.into(on))
	}
	where := "between two records"
	if c.Record != "" {
		where = c.into(c.Record + " record")
	}
	also := ""
	if c.Record == mcap.OpAttachment.String() || c.Record == mcap.OpMetadata.String() {
		also = "; that " + c.Record + " record is lost"
	}
	if c.InSummary {
		return fmt.Sprintf("%s ends inside its summary section: the recording was cut off at byte %d, %s; every message in it was read%s", c.Path, c.Size, where, also)
	}
	return fmt.Sprintf("%s ends without its summary: the recording was cut off at byte %d, %s; every message in it was read%s", c.Path, c.Size, where, also)
}

// into says where in the cut record the file ends: "115 bytes into a
// 143-byte message index record at byte 3981".
func (c Cut) into(what string) string {
	if c.Want == 0 {
		return fmt.Sprintf("inside the length field of %s %s at byte %d", aOrAn(what), what, c.Offset)
	}
	return fmt.Sprintf("%d bytes into a %d-byte %s at byte %d", c.Have, c.Want, what, c.Offset)
}

func (c Cut) chunkString() string {
	kind := "chunk"
	switch {
	case c.compKnown && c.Compression == "":
		kind = "uncompressed chunk"
	case c.compKnown:
		kind = c.Compression + " chunk"
	}
	head := fmt.Sprintf("%s was cut off at byte %d, %s", c.Path, c.Size, c.into(kind))
	switch {
	case c.Recovered > 0:
		later := "its later messages are lost"
		if c.To != 0 {
			later = fmt.Sprintf("its later messages, up to one logged at %s, are lost", c.To)
		}
		return fmt.Sprintf("%s: the %d complete messages at its start were read (without the chunk's CRC check), the last logged at %s; %s",
			head, c.Recovered, c.Last, later)
	case c.compKnown && c.Compression == "":
		head += ": no message in it is complete"
	}
	if c.To != 0 {
		return fmt.Sprintf("%s; its messages, logged from %s to %s, are lost", head, c.From, c.To)
	}
	return head + "; its messages are lost"
}

// aOrAn returns "a" or "an" for a record name.
func aOrAn(word string) string {
	if word != "" && strings.ContainsRune("aeiou", rune(word[0])) {
		return "an"
	}
	return "a"
}

// eofLike reports an error of reading past the end of the data.
func eofLike(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}

// locateCut walks the outer records of an MCAP file from off, a record
// boundary, to the file's end, and returns the record the file ends
// inside (Record "" when it ends between two records). ok is false when
// the walk meets bytes that are no record (opcode 0, or a length beyond
// the reader's limit): the file is corrupt there, not cut; and, unless
// walk, when the record at off is complete. It reads 9 bytes per record.
func locateCut(ra io.ReaderAt, size, off int64, walk bool) (c Cut, ok bool) {
	var hdr [9]byte
	for first := true; walk || first; first = false {
		if off == size {
			return Cut{Size: size, Offset: size}, true
		}
		if off > size {
			return Cut{}, false
		}
		n, err := ra.ReadAt(hdr[:], off)
		if n < 1 || (err != nil && !eofLike(err)) {
			return Cut{}, false
		}
		op := mcap.OpCode(hdr[0])
		if op == mcap.OpReserved {
			return Cut{}, false
		}
		if n < len(hdr) {
			return Cut{Size: size, Record: op.String(), Offset: off, Have: size - off}, true
		}
		l := binary.LittleEndian.Uint64(hdr[1:])
		if l > uint64(chunkLimit+1<<20) {
			return Cut{}, false
		}
		end := off + 9 + int64(l)
		if end > size {
			return Cut{Size: size, Record: op.String(), Offset: off, Have: size - off, Want: 9 + int64(l)}, true
		}
		off = end
	}
	return Cut{}, false
}

// chunkHeader is the fixed part of a chunk record after its opcode and
// length: message start and end time, uncompressed size and CRC, the
// compression string's length.
const chunkHeader = 8 + 8 + 8 + 4 + 4

// readCutChunk fills in what the available bytes of a cut chunk say (its
// time range and compression) and returns the bytes of its data when it
// is uncompressed (nil otherwise): the records at their start that are
// complete can be read.
func readCutChunk(ra io.ReaderAt, c *Cut) []byte {
	var h [9 + chunkHeader]byte
	n, _ := ra.ReadAt(h[:min(int64(len(h)), c.Have)], c.Offset)
	if n >= 9+16 {
		c.From, c.To = chunkTimes(h[9:])
	}
	if n < len(h) {
		return nil
	}
	compLen := int64(binary.LittleEndian.Uint32(h[9+28:]))
	compStart := int64(len(h))
	if compLen > 64 || compStart+compLen > c.Have {
		return nil // a compression name longer than any there is, or cut
	}
	comp := make([]byte, compLen)
	if _, err := ra.ReadAt(comp, c.Offset+compStart); err != nil {
		return nil
	}
	c.Compression, c.compKnown = string(comp), true
	dataStart := compStart + compLen + 8
	if c.Compression != "" || dataStart > c.Have {
		return nil
	}
	data := make([]byte, c.Have-dataStart)
	if _, err := ra.ReadAt(data, c.Offset+dataStart); err != nil && !eofLike(err) {
		return nil
	}
	return data
}

func chunkTimes(b []byte) (from, to stamp.Time) {
	f, t := binary.LittleEndian.Uint64(b), binary.LittleEndian.Uint64(b[8:])
	if f > 1<<63-1 || t > 1<<63-1 {
		return 0, 0
	}
	return stamp.Time(f), stamp.Time(t)
}

// salvage returns the records at the start of a cut uncompressed chunk's
// data one by one: messages, schemas and channels, as the lexer would;
// io.EOF at the first incomplete record.
type salvage struct{ data []byte }

func (s *salvage) next() (mcap.TokenType, []byte, error) {
	for {
		if len(s.data) < 9 {
			return mcap.TokenError, nil, io.EOF
		}
		op := mcap.OpCode(s.data[0])
		l := binary.LittleEndian.Uint64(s.data[1:])
		if l > uint64(len(s.data)-9) {
			return mcap.TokenError, nil, io.EOF
		}
		rec := s.data[9 : 9+l]
		s.data = s.data[9+l:]
		switch op {
		case mcap.OpMessage:
			return mcap.TokenMessage, rec, nil
		case mcap.OpSchema:
			return mcap.TokenSchema, rec, nil
		case mcap.OpChannel:
			return mcap.TokenChannel, rec, nil
		}
	}
}
