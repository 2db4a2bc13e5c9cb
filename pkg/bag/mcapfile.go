package bag

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"maps"
	"math"
	"slices"
	"sync"

	"github.com/foxglove/mcap/go/mcap"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// MCAPFile writes an MCAP file of any profile: its header; schema, channel
// and message records in chunks, each followed by its message indexes;
// attachments and metadata records; and the summary section (schemas,
// channels, statistics, chunk, attachment and metadata indexes, summary
// offsets) with CRCs, so that readers can seek. The caller numbers the
// schemas and channels; [MCAPWriter] writes rosbag2's profile on it.
//
// The chunks are built here and foxglove's writer writes them. A chunk is
// cut once its records reach WriterOptions.ChunkSize bytes after a
// message, and compressed whole: zstd without a frame checksum (the
// chunk's CRC covers the same bytes), LZ4 as one frame of independent
// 256 KiB blocks without checksums (at LZ4 HC's level 3, or in LZ4's fast
// mode with WriterOptions.FastLZ4), a block that does not shrink stored
// as it is. A chunk's message indexes follow it in the order of the channels'
// first messages in it.
//
// With WriterOptions.Parallel, each chunk is compressed in a goroutine of
// the file's own while the next is built, and written once compressed, in
// order: the file's bytes are the same either way. Memory: the chunk being
// built and one in flight (without Parallel: the chunk being built), each
// about ChunkSize, and their compressed copies.
//
// An MCAPFile is not safe for concurrent use. Close or Abort ends its
// goroutine.
type MCAPFile struct {
	w         *mcap.Writer
	comp      string
	fastLZ4   bool
	chunkSize int
	buf       []byte               // the chunk being built
	idx       []*mcap.MessageIndex // by channel id
	order     []uint16             // channels of the chunk, in order of their first message
	start     uint64               // the chunk's first and last log time
	end       uint64
	n         int      // messages in the chunk
	counts    []uint64 // messages by channel id
	// first and last are the file's first and last log time (any when
	// no message was written).
	first, last uint64
	// The chunks: spare is the job of the chunk written last (without
	// Parallel), comp the compressor's state.
	spare *chunkJob
	cc    chunkCompressor
	// With Parallel: the chunks handed to the goroutine, in order, its
	// queue, and the jobs written and free again.
	pending chan *chunkJob
	jobs    chan *chunkJob
	free    chan *chunkJob
	wg      sync.WaitGroup
	err     error
	closed  bool
}

// errClosed is a write after Close or Abort.
var errClosed = errors.New("bag: write to a closed MCAP file")

// chunkDepth is how many chunks are in flight with Parallel.
const chunkDepth = 1

// chunkJob is one chunk: its records, compressed, and its message indexes.
type chunkJob struct {
	raw        []byte
	out        []byte
	crc        uint32
	start, end uint64
	idx        []*mcap.MessageIndex
	own        map[uint16]*mcap.MessageIndex // reused across chunks
	done       chan struct{}                 // closed once compressed (Parallel)
}

// NewMCAPFile starts an MCAP file on w with the header's profile ("ros2")
// and opts.Library (used as it is). It writes small pieces to w: give it a
// buffered writer.
func NewMCAPFile(w io.Writer, profile string, opts WriterOptions) (*MCAPFile, error) {
	comp, err := ParseCompression(opts.Compression)
	if err != nil {
		return nil, err
	}
	size := int(opts.ChunkSize)
	if size <= 0 {
		size = 1 << 20
	}
	mw, err := mcap.NewWriter(w, &mcap.WriterOptions{IncludeCRC: true, OverrideLibrary: true})
	if err != nil {
		return nil, err
	}
	if err := mw.WriteHeader(&mcap.Header{Profile: profile, Library: opts.Library}); err != nil {
		return nil, err
	}
	f := &MCAPFile{w: mw, comp: comp, fastLZ4: opts.FastLZ4, chunkSize: size, buf: make([]byte, 0, size+size/8), first: math.MaxUint64}
	if opts.Parallel {
		f.pending, f.jobs, f.free = make(chan *chunkJob, chunkDepth), make(chan *chunkJob, chunkDepth), make(chan *chunkJob, chunkDepth+2)
		f.wg.Add(1)
		go f.compressor()
	}
	return f, nil
}

// compressor compresses the chunks of a Parallel file until Close or
// Abort.
func (f *MCAPFile) compressor() {
	defer f.wg.Done()
	var cc chunkCompressor
	for j := range f.jobs {
		cc.compress(f.comp, f.fastLZ4, j)
		close(j.done)
	}
}

func putRecord(b []byte, op mcap.OpCode, n int) []byte {
	b = append(b, byte(op))
	return binary.LittleEndian.AppendUint64(b, uint64(n))
}

func putString(b []byte, s string) []byte {
	b = binary.LittleEndian.AppendUint32(b, uint32(len(s)))
	return append(b, s...)
}

// AddSchema writes schema s with id (1..65535) into the current chunk and
// lists it in the summary.
func (f *MCAPFile) AddSchema(id uint16, s *Schema) error {
	if id == 0 {
		return fmt.Errorf("%w: schema id 0", ErrFormat)
	}
	f.buf = putRecord(f.buf, mcap.OpSchema, 2+4+len(s.Name)+4+len(s.Encoding)+4+len(s.Data))
	f.buf = binary.LittleEndian.AppendUint16(f.buf, id)
	f.buf = putString(f.buf, s.Name)
	f.buf = putString(f.buf, s.Encoding)
	f.buf = binary.LittleEndian.AppendUint32(f.buf, uint32(len(s.Data)))
	f.buf = append(f.buf, s.Data...)
	f.w.AddSchema(&mcap.Schema{ID: id, Name: s.Name, Encoding: s.Encoding, Data: s.Data})
	return nil
}

// MCAPChannel is a channel of an MCAPFile.
type MCAPChannel struct {
	ID       uint16
	SchemaID uint16 // 0: none
	Topic    string
	// MessageEncoding is its messages' encoding ("cdr", "json").
	MessageEncoding string
	Metadata        map[string]string
}

// AddChannel writes channel c into the current chunk and lists it in the
// summary; its schema must have been added.
func (f *MCAPFile) AddChannel(c *MCAPChannel) error {
	meta := 4
	for k, v := range c.Metadata {
		meta += 4 + len(k) + 4 + len(v)
	}
	f.buf = putRecord(f.buf, mcap.OpChannel, 2+2+4+len(c.Topic)+4+len(c.MessageEncoding)+meta)
	f.buf = binary.LittleEndian.AppendUint16(f.buf, c.ID)
	f.buf = binary.LittleEndian.AppendUint16(f.buf, c.SchemaID)
	f.buf = putString(f.buf, c.Topic)
	f.buf = putString(f.buf, c.MessageEncoding)
	f.buf = binary.LittleEndian.AppendUint32(f.buf, uint32(meta-4))
	for _, k := range slices.Sorted(maps.Keys(c.Metadata)) {
		f.buf = putString(f.buf, k)
		f.buf = putString(f.buf, c.Metadata[k])
	}
	f.w.AddChannel(&mcap.Channel{ID: c.ID, SchemaID: c.SchemaID, Topic: c.Topic, MessageEncoding: c.MessageEncoding, Metadata: c.Metadata})
	return nil
}

// WriteMessage adds a message of an added channel to the current chunk,
// and writes the chunk once it is full.
func (f *MCAPFile) WriteMessage(channel uint16, sequence uint32, logTime, publishTime uint64, data []byte) error {
	if f.err != nil {
		return f.err
	}
	if f.closed {
		return errClosed
	}
	for int(channel) >= len(f.idx) {
		f.idx = append(f.idx, nil)
		f.counts = append(f.counts, 0)
	}
	idx := f.idx[channel]
	if idx == nil {
		idx = &mcap.MessageIndex{ChannelID: channel}
		f.idx[channel] = idx
	}
	if idx.IsEmpty() {
		f.order = append(f.order, channel)
	}
	idx.Add(logTime, uint64(len(f.buf)))
	f.buf = putRecord(f.buf, mcap.OpMessage, 2+4+8+8+len(data))
	f.buf = binary.LittleEndian.AppendUint16(f.buf, channel)
	f.buf = binary.LittleEndian.AppendUint32(f.buf, sequence)
	f.buf = binary.LittleEndian.AppendUint64(f.buf, logTime)
	f.buf = binary.LittleEndian.AppendUint64(f.buf, publishTime)
	f.buf = append(f.buf, data...)
	if f.n == 0 || logTime < f.start {
		f.start = logTime
	}
	f.end = max(f.end, logTime)
	f.n++
	f.counts[channel]++
	f.first, f.last = min(f.first, logTime), max(f.last, logTime)
	if len(f.buf) >= f.chunkSize {
		return f.flush()
	}
	return nil
}

// WriteAttachment writes an attachment record, after the chunks written
// so far (outside them: the chunk being built goes on after it).
func (f *MCAPFile) WriteAttachment(a *Attachment) error {
	if err := f.drain(); err != nil {
		return err
	}
	return f.w.WriteAttachment(&mcap.Attachment{LogTime: a.LogTime, CreateTime: a.CreateTime, Name: a.Name,
		MediaType: a.MediaType, DataSize: uint64(len(a.Data)), Data: bytes.NewReader(a.Data)})
}

// WriteMetadata writes a metadata record, as WriteAttachment.
func (f *MCAPFile) WriteMetadata(r *MetadataRecord) error {
	if err := f.drain(); err != nil {
		return err
	}
	return f.w.WriteMetadata(&mcap.Metadata{Name: r.Name, Metadata: r.Metadata})
}

// take makes the chunk built so far a job (j, or a new one), and starts
// the next chunk with the job's old buffer and message indexes.
func (f *MCAPFile) take(j *chunkJob) *chunkJob {
	if j == nil {
		j = &chunkJob{own: map[uint16]*mcap.MessageIndex{}}
	}
	j.raw, f.buf = f.buf, j.raw[:0]
	if cap(f.buf) < f.chunkSize+f.chunkSize/8 {
		f.buf = make([]byte, 0, f.chunkSize+f.chunkSize/8) // a chunk seldom grows
	}
	j.start, j.end = f.start, f.end
	// The chunk's message indexes go with it; the builder takes the job's
	// old ones (or new ones) in their place.
	j.idx = j.idx[:0]
	for _, id := range f.order {
		full := f.idx[id]
		spare := j.own[id]
		if spare == nil {
			spare = &mcap.MessageIndex{ChannelID: id}
		}
		spare.Reset()
		f.idx[id] = spare
		j.own[id] = full
		j.idx = append(j.idx, full)
	}
	f.order, f.n, f.start, f.end = f.order[:0], 0, 0, 0
	return j
}

// flush writes the chunk built so far: at once without Parallel; else it
// goes to the compressor, and the chunk before it is written (two chunk
// buffers in all, not three).
func (f *MCAPFile) flush() error {
	if f.n == 0 && len(f.buf) == 0 {
		return nil
	}
	if f.jobs == nil {
		j := f.take(f.spare)
		f.cc.compress(f.comp, f.fastLZ4, j)
		f.spare = j
		return f.writeChunk(j)
	}
	if len(f.pending) == cap(f.pending) {
		if err := f.writeNext(); err != nil {
			return err
		}
	}
	var j *chunkJob
	select {
	case j = <-f.free:
	default:
	}
	j = f.take(j)
	j.done = make(chan struct{})
	f.pending <- j
	f.jobs <- j
	return nil
}

// drain writes the chunks in flight (Parallel), so that a record written
// now comes after them, as it does without Parallel.
func (f *MCAPFile) drain() error {
	if f.err != nil {
		return f.err
	}
	if f.closed {
		return errClosed
	}
	for f.pending != nil && len(f.pending) > 0 {
		if err := f.writeNext(); err != nil {
			return err
		}
	}
	return nil
}

// writeNext writes the oldest pending chunk once compressed.
func (f *MCAPFile) writeNext() error {
	j := <-f.pending
	<-j.done
	if err := f.writeChunk(j); err != nil {
		return err
	}
	select {
	case f.free <- j:
	default:
	}
	return nil
}

func (f *MCAPFile) writeChunk(j *chunkJob) error {
	err := f.w.WriteChunkWithIndexes(&mcap.Chunk{MessageStartTime: j.start, MessageEndTime: j.end,
		UncompressedSize: uint64(len(j.raw)), UncompressedCRC: j.crc, Compression: f.comp, Records: j.out}, j.idx)
	if err != nil {
		f.err = err
	}
	return err
}

// Abort ends the compressor goroutine without finishing the file (after a
// failure). It does nothing after Close.
func (f *MCAPFile) Abort() {
	if f.closed {
		return
	}
	f.closed = true
	if f.jobs != nil {
		close(f.jobs)
		f.wg.Wait()
	}
}

// Close writes the last chunk and the summary section and footer. It does
// not close or flush w.
func (f *MCAPFile) Close() error {
	if f.closed {
		return f.err
	}
	defer f.Abort()
	if f.err != nil {
		return f.err
	}
	if err := f.flush(); err != nil {
		return err
	}
	if err := f.drain(); err != nil {
		return err
	}
	st := f.w.Statistics
	for id, n := range f.counts {
		if n > 0 {
			st.ChannelMessageCounts[uint16(id)] += n
			st.MessageCount += n
		}
	}
	if st.MessageCount > 0 {
		st.MessageStartTime, st.MessageEndTime = f.first, f.last
	}
	if err := f.w.Close(); err != nil {
		f.err = err
	}
	return f.err
}

// chunkCompressor compresses chunks; it keeps its encoders from chunk to
// chunk.
type chunkCompressor struct {
	zenc *zstd.Encoder
	lzc  blockCompressor
}

// blockCompressor compresses an LZ4 block (lz4.Compressor,
// lz4.CompressorHC).
type blockCompressor interface {
	CompressBlock(src, dst []byte) (int, error)
}

// compress sets j.out (the chunk's records compressed as comp says, LZ4 in
// its fast mode with fastLZ4) and j.crc.
func (c *chunkCompressor) compress(comp string, fastLZ4 bool, j *chunkJob) {
	j.crc = crc32.ChecksumIEEE(j.raw)
	switch comp {
	case CompressionZSTD:
		if c.zenc == nil {
			// No frame checksum: the chunk's CRC covers the same bytes
			// (a fifth less CPU). Options that cannot fail.
			c.zenc, _ = zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1),
				zstd.WithEncoderCRC(false))
		}
		j.out = c.zenc.EncodeAll(j.raw, j.out[:0])
	case CompressionLZ4:
		if c.lzc == nil {
			c.lzc = &lz4.CompressorHC{Level: lz4.Level3}
			if fastLZ4 {
				c.lzc = new(lz4.Compressor)
			}
		}
		j.out = appendLZ4Frame(j.out[:0], j.raw, c.lzc)
	default:
		j.out = j.raw // written as it is
	}
}

// lz4Block is the size of the LZ4 blocks of a chunk: 256 KiB blocks took
// 15 % less CPU than 1 MiB ones on JSON messages (the block and the match
// table stay in cache) for 2 % more bytes.
const lz4Block = 256 << 10

// lz4Header is the header of the LZ4 frames of the chunks: magic, then
// FLG 0x60 (version 1, independent blocks, no checksums, no content
// size), BD 0x50 (blocks of at most 256 KiB) and the header checksum.
var lz4Header = [7]byte{0x04, 0x22, 0x4d, 0x18, 0x60, 0x50, 0xfb}

// appendLZ4Frame appends src as an LZ4 frame: the blocks are compressed by
// c straight into dst (the lz4 package's Writer copies each block in and
// out of buffers of its own), a block that does not shrink stored as it
// is.
func appendLZ4Frame(dst, src []byte, c blockCompressor) []byte {
	dst = append(dst, lz4Header[:]...)
	// Room for what JSON shrinks to (a fifth) and one block that does not
	// shrink: the buffer, reused chunk after chunk, seldom grows.
	dst = slices.Grow(dst, len(src)/5+8+lz4.CompressBlockBound(lz4Block))
	for len(src) > 0 {
		blk := src[:min(len(src), lz4Block)]
		src = src[len(blk):]
		n0 := len(dst)
		dst = slices.Grow(dst, 4+lz4.CompressBlockBound(len(blk)))
		n, err := c.CompressBlock(blk, dst[n0+4:n0+4+lz4.CompressBlockBound(len(blk))])
		if err != nil || n == 0 || n >= len(blk) {
			dst = binary.LittleEndian.AppendUint32(dst, uint32(len(blk))|1<<31)
			dst = append(dst, blk...)
			continue
		}
		dst = binary.LittleEndian.AppendUint32(dst, uint32(n))
		dst = dst[:n0+4+n]
	}
	return binary.LittleEndian.AppendUint32(dst, 0) // end mark
}
