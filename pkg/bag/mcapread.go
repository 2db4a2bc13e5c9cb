package bag

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/foxglove/mcap/go/mcap"
	"github.com/klauspost/compress/zstd"

	"github.com/timealign/timealign/pkg/stamp"
)

// Limits of the MCAP reader: memory stays bounded by them whatever the
// input says.
const (
	// MaxChunkSize is the largest (decompressed) MCAP chunk read; a larger
	// one is an error naming its offset. The reader holds one chunk (twice
	// its size at most).
	MaxChunkSize = 256 << 20
	// MaxAttachmentSize is the largest attachment kept in memory for a
	// rewrite; larger ones are skipped and counted.
	MaxAttachmentSize = 64 << 20
)

// chunkLimit is MaxChunkSize; tests lower it.
var chunkLimit = MaxChunkSize

// countingReader counts the bytes read through it: the offset of the next
// outer record of an MCAP file.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// zstdReader is a zstd decoder with concurrency 1 (no goroutines), as a
// custom MCAP decompressor.
type zstdReader struct{ d *zstd.Decoder }

func (z *zstdReader) Read(p []byte) (int, error) { return z.d.Read(p) }
func (z *zstdReader) Reset(r io.Reader) error {
	if z.d == nil {
		d, err := zstd.NewReader(r, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true),
			zstd.WithDecoderMaxMemory(uint64(chunkLimit)))
		if err != nil {
			return err
		}
		z.d = d
		return nil
	}
	return z.d.Reset(r)
}

// mcapFile reads the records of one MCAP file in file order.
type mcapFile struct {
	path    string
	ra      io.ReaderAt // the file, to find where it was cut
	size    int64
	cr      *countingReader
	lex     *mcap.Lexer
	zstd    *zstdReader
	buf     []byte
	schemas map[uint16]*Schema
	chans   map[uint16]*Topic // by channel ID, before the Reader unifies them
	pending []*Attachment     // attachments met inside Next, returned next
	header  *mcap.Header
	// counters of what was skipped
	badChunks, bigAttachments, unknownChannel int
	ended                                     bool  // DataEnd or Footer seen
	inSummary                                 bool  // after DataEnd
	msgStart                                  int64 // offset before the current Next
	// cut is set when the file ends early; salv then returns the complete
	// records at the start of a cut uncompressed chunk.
	cut  *Cut
	salv *salvage
}

// openMCAP starts reading an MCAP file from r (buffer it: the lexer makes
// small reads); ra reads the same file of size bytes at random, to find
// where it ends when it ends early.
func openMCAP(path string, r io.Reader, ra io.ReaderAt, size int64) (*mcapFile, error) {
	f := &mcapFile{path: path, ra: ra, size: size, cr: &countingReader{r: r}, zstd: &zstdReader{},
		schemas: map[uint16]*Schema{}, chans: map[uint16]*Topic{}}
	lex, err := mcap.NewLexer(f.cr, &mcap.LexerOptions{
		ValidateChunkCRCs:        true,
		EmitInvalidChunks:        true,
		MaxDecompressedChunkSize: chunkLimit,
		MaxRecordSize:            chunkLimit + 1<<20,
		AttachmentCallback:       f.attachment,
		Decompressors:            map[mcap.CompressionFormat]mcap.ResettableReader{mcap.CompressionZSTD: f.zstd},
	})
	if err != nil {
		var bm *mcap.ErrBadMagic
		if errors.As(err, &bm) {
			return nil, &FileError{Path: path, Offset: 0, Row: -1, Err: fmt.Errorf("%w: not an MCAP file (no MCAP magic at its start)", ErrFormat)}
		}
		return nil, &FileError{Path: path, Offset: 0, Row: -1, Err: err}
	}
	f.lex = lex
	return f, nil
}

func (f *mcapFile) attachment(ar *mcap.AttachmentReader) error {
	if ar.DataSize > MaxAttachmentSize {
		f.bigAttachments++
		return nil
	}
	data, err := io.ReadAll(ar.Data())
	if err != nil {
		return err
	}
	f.pending = append(f.pending, &Attachment{LogTime: ar.LogTime, CreateTime: ar.CreateTime,
		Name: ar.Name, MediaType: ar.MediaType, Data: data})
	return nil
}

func (f *mcapFile) errAt(off int64, err error) error {
	return &FileError{Path: f.path, Offset: off, Row: -1, Err: err}
}

// rawRecord is what next returns: one of a message (channel ID and the
// record's bytes), a new channel, an attachment or a metadata record.
type rawRecord struct {
	kind    Kind
	channel uint16
	msg     Message // Topic unset
	topic   *Topic
	att     *Attachment
	meta    *MetadataRecord
}

// next returns the next record, io.EOF at the end of the data section.
func (f *mcapFile) next(rec *rawRecord) error {
	for {
		if len(f.pending) > 0 {
			rec.kind, rec.att = KindAttachment, f.pending[0]
			f.pending = f.pending[1:]
			return nil
		}
		var tok mcap.TokenType
		var data []byte
		var err error
		switch {
		case f.salv != nil:
			tok, data, err = f.salv.next()
			if err != nil {
				f.salv = nil
				return io.EOF
			}
		case f.cut != nil:
			return io.EOF
		default:
			f.msgStart = f.cr.n
			tok, data, err = f.lexNext()
			if err != nil && tok != mcap.TokenInvalidChunk && f.findCut(err) {
				// The file ends early: what it holds before that has been
				// read, and the complete records of a cut uncompressed
				// chunk come next.
				continue
			}
		}
		if f.inSummary {
			if err != nil || tok == mcap.TokenFooter {
				// Every message has been read: a summary that is
				// corrupt loses only the channels defined nowhere else.
				return io.EOF
			}
			if tok != mcap.TokenSchema && tok != mcap.TokenChannel {
				continue
			}
		}
		if tok == mcap.TokenInvalidChunk {
			// A chunk whose content does not match its CRC: skipped,
			// counted; the lexer goes on after it.
			f.badChunks++
			continue
		}
		if err != nil {
			return f.errAt(f.msgStart, f.wrapLexErr(err))
		}
		if cap(data) > cap(f.buf) {
			f.buf = data[:0]
		}
		if done, err := f.decode(tok, data, rec); done {
			return err
		}
	}
}

// decode takes one record of the data section (or a schema or channel of
// the summary) and reports whether it filled rec (done, err nil) or ends
// the reading (done, err io.EOF or the record's error); records of no
// interest, and messages of channels never defined, are passed over.
func (f *mcapFile) decode(tok mcap.TokenType, data []byte, rec *rawRecord) (done bool, err error) {
	switch tok {
	case mcap.TokenMessage:
		return f.message(data, rec)
	case mcap.TokenSchema:
		s, err := mcap.ParseSchema(data)
		if err != nil {
			return true, f.errAt(f.msgStart, fmt.Errorf("%w: schema record: %v", ErrFormat, err))
		}
		if _, dup := f.schemas[s.ID]; !dup || !f.inSummary {
			f.schemas[s.ID] = &Schema{Name: s.Name, Encoding: s.Encoding, Data: bytes.Clone(s.Data)}
		}
	case mcap.TokenChannel:
		return f.channel(data, rec)
	case mcap.TokenMetadata:
		m, err := mcap.ParseMetadata(data)
		if err != nil {
			return true, f.errAt(f.msgStart, fmt.Errorf("%w: metadata record: %v", ErrFormat, err))
		}
		rec.kind, rec.meta = KindMetadata, &MetadataRecord{Name: m.Name, Metadata: m.Metadata}
		return true, nil
	case mcap.TokenHeader:
		if h, err := mcap.ParseHeader(data); err == nil {
			f.header = h
		}
	case mcap.TokenDataEnd:
		// After DataEnd comes the summary. Its schemas and channels
		// repeat the data section's, except those of topics that got
		// no message: rosbag2's MCAP writer (libmcap) writes a
		// channel into the data section only with its first message,
		// so a recorded topic without messages (/parameter_events,
		// often) is defined in the summary alone. Those are read
		// there; nothing else of the summary is wanted.
		f.ended, f.inSummary = true, true
	case mcap.TokenFooter:
		f.ended = true
		return true, io.EOF
	}
	return false, nil
}

// message decodes a message record into rec; a message of a channel not
// defined before it is counted and passed over (done false).
func (f *mcapFile) message(data []byte, rec *rawRecord) (done bool, err error) {
	if len(data) < 22 {
		return true, f.errAt(f.msgStart, fmt.Errorf("%w: message record of %d bytes", ErrFormat, len(data)))
	}
	rec.kind = KindMessage
	rec.channel = binary.LittleEndian.Uint16(data)
	rec.msg.Sequence = binary.LittleEndian.Uint32(data[2:])
	lt, pt := binary.LittleEndian.Uint64(data[6:]), binary.LittleEndian.Uint64(data[14:])
	if lt > math.MaxInt64 || pt > math.MaxInt64 {
		return true, f.errAt(f.msgStart, fmt.Errorf("%w: message log time %d beyond year 2262", ErrFormat, lt))
	}
	rec.msg.LogTime, rec.msg.PublishTime = stamp.Time(lt), stamp.Time(pt)
	rec.msg.Data = data[22:]
	if _, ok := f.chans[rec.channel]; !ok {
		f.unknownChannel++
		return false, nil
	}
	if f.salv != nil {
		f.cut.Recovered++
		f.cut.Last = rec.msg.LogTime
	}
	return true, nil
}

// channel decodes a channel record: a new one fills rec as a topic with
// its schema; one defined before (repeated in the summary, or in a later
// chunk) is passed over (done false).
func (f *mcapFile) channel(data []byte, rec *rawRecord) (done bool, err error) {
	c, err := mcap.ParseChannel(data)
	if err != nil {
		return true, f.errAt(f.msgStart, fmt.Errorf("%w: channel record: %v", ErrFormat, err))
	}
	if _, dup := f.chans[c.ID]; dup {
		return false, nil
	}
	t := &Topic{Name: c.Topic, SerializationFormat: c.MessageEncoding, Metadata: c.Metadata}
	if s := f.schemas[c.SchemaID]; s != nil {
		t.Schema, t.Type = s, s.Name
	} else if c.SchemaID != 0 {
		return true, f.errAt(f.msgStart, fmt.Errorf("%w: channel %d (%s) names schema %d, which is not defined before it", ErrFormat, c.ID, c.Topic, c.SchemaID))
	}
	t.OfferedQoSProfiles = c.Metadata["offered_qos_profiles"]
	t.TypeDescriptionHash = c.Metadata["topic_type_hash"]
	f.chans[c.ID] = t
	rec.kind, rec.topic, rec.channel = KindTopic, t, c.ID
	return true, nil
}

// findCut reports whether the lexer's error err means that the file ends
// early, and if so records where (f.cut) and prepares the salvage of a cut
// uncompressed chunk. The file is cut when the lexer ran out of bytes at
// the file's end (the records walked from where the failed call started
// tell which one is cut), or when the record the call started at runs
// past the file's end (decompressing a cut chunk fails in other ways too).
// A record that fails inside the file is corruption, not a cut.
func (f *mcapFile) findCut(err error) bool {
	if f.ra == nil {
		return false
	}
	c, ok := locateCut(f.ra, f.size, f.msgStart, eofLike(err) && f.cr.n == f.size)
	if !ok {
		return false
	}
	c.Path, c.InSummary = f.path, f.inSummary
	switch c.Record {
	case mcap.OpChunk.String():
		if data := readCutChunk(f.ra, &c); len(data) > 0 {
			f.salv = &salvage{data: data}
		}
	case mcap.OpMessage.String():
		if c.Have >= 9+2 {
			var id [2]byte
			if _, err := f.ra.ReadAt(id[:], c.Offset+9); err == nil {
				if t := f.chans[binary.LittleEndian.Uint16(id[:])]; t != nil {
					c.Topic = t.Name
				}
			}
		}
	}
	f.cut = &c
	return true
}

// errLexerPanic: the MCAP library panicked on the bytes (it does on some
// corrupt chunk headers); the panic is turned into an error here, at the
// boundary, because bad input must never crash timealign.
var errLexerPanic = errors.New("corrupt record: the MCAP library could not parse it")

// lexNext calls the lexer, turning a panic on corrupt bytes into an error.
func (f *mcapFile) lexNext() (tok mcap.TokenType, data []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			tok, data, err = mcap.TokenError, nil, fmt.Errorf("%w (%v)", errLexerPanic, r)
		}
	}()
	return f.lex.Next(f.buf)
}

func (f *mcapFile) wrapLexErr(err error) error {
	if errors.Is(err, errLexerPanic) {
		return fmt.Errorf("%w: %v", ErrFormat, err)
	}
	var tr *mcap.ErrTruncatedRecord
	switch {
	// A file that ends early is a Cut (findCut): these are records whose
	// content ends before their length says, inside the file.
	case errors.As(err, &tr):
		return fmt.Errorf("%w: corrupt record: %v", ErrFormat, err)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Errorf("%w: corrupt chunk: its data ends early (%v); the chunk's messages are lost", ErrFormat, err)
	case errors.Is(err, mcap.ErrRecordTooLarge), errors.Is(err, mcap.ErrChunkTooLarge):
		return fmt.Errorf("%w: record or chunk larger than %d MiB (corrupt length?): %v", ErrFormat, MaxChunkSize>>20, err)
	case errors.Is(err, mcap.ErrInvalidZeroOpcode), errors.Is(err, mcap.ErrNestedChunk):
		return fmt.Errorf("%w: corrupt record: %v", ErrFormat, err)
	}
	msg := err.Error()
	if bytes.Contains([]byte(msg), []byte("unsupported compression")) {
		return fmt.Errorf("%w: chunk %v (this reader knows zstd, lz4 and none)", ErrUnsupported, err)
	}
	return fmt.Errorf("%w: %v", ErrFormat, err)
}

func (f *mcapFile) close() {
	f.lex.Close()
}
