package mavcmd

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"path/filepath"
	"runtime"
	"slices"
	"sync"

	"github.com/foxglove/mcap/go/mcap"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// mcapWriter writes the merged stream as MCAP. It builds the chunks itself
// (schema, channel and message records, message indexes) and compresses
// them in a goroutine of its own, so compression runs beside the merge;
// the chunks are written in order through mcap.Writer, which keeps the
// chunk indexes and writes the summary. Memory: the chunk being built plus
// chunkDepth chunks in flight, each about chunkSize.
type mcapWriter struct {
	w     *mcap.Writer
	bw    *bufio.Writer // under w: its records are written in small pieces
	comp  mcap.CompressionFormat
	buf   []byte
	idx   []*mcap.MessageIndex // by channel id
	order []uint16             // channels of the chunk, in order of first message
	start uint64
	end   uint64
	count []uint64 // messages by channel id
	// seq is the last sequence number by channel id; written says
	// whether its schema and channel records are. Kept here, not in the
	// channel, which the merge loop writes as it goes: two goroutines
	// writing one cache line per message slow each other down.
	seq     []uint32
	written []bool
	fixBuf  []byte // a LocationFix's JSON
	n       int
	pending chan *chunkJob
	jobs    chan *chunkJob
	free    chan *chunkJob
	ctx     context.Context
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	err     error
}

const (
	chunkSize  = 2 << 20
	chunkDepth = 1
)

type chunkJob struct {
	raw        []byte
	out        []byte
	crc        uint32
	start, end uint64
	idx        []*mcap.MessageIndex
	own        map[uint16]*mcap.MessageIndex // reused across chunks
	done       chan struct{}
}

func newMCAPWriter(out io.Writer, comp mcap.CompressionFormat, run *mavRun, library string) (*mcapWriter, error) {
	// mcap.Writer writes each record in pieces (a chunk's header, its
	// message indexes one by one): buffered, a 10 MB merge makes 20
	// write calls instead of 400.
	bw := bufio.NewWriterSize(out, 256<<10)
	w, err := mcap.NewWriter(bw, &mcap.WriterOptions{Chunked: true, ChunkSize: chunkSize, Compression: comp,
		CompressionLevel: mcap.CompressionLevelFastest, IncludeCRC: true})
	if err != nil {
		return nil, err
	}
	if err := w.WriteHeader(&mcap.Header{Profile: "", Library: library}); err != nil {
		return nil, err
	}
	md := map[string]string{"tlog": filepath.Base(run.tlog)}
	for i, b := range run.res.Boots {
		if e := b.WinnerEstimate(); e != nil {
			md[fmt.Sprintf("boot%d", i+1)] = fmt.Sprintf("source=%s offset_us=%d ref_boot_us=%d skew_ppm=%.3f uncertainty_us=%d",
				e.Source, e.Offset.Microseconds(), e.Ref.Microseconds(), e.SkewPPM, e.Uncertainty.Microseconds())
		}
	}
	for i, b := range run.res.Bins {
		md[fmt.Sprintf("bin%d", i+1)] = fmt.Sprintf("file=%s boot=%d belongs=%s", filepath.Base(run.bins[i]), b.Boot+1, b.Belongs)
	}
	if err := w.WriteMetadata(&mcap.Metadata{Name: "timealign.mav", Metadata: md}); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	m := &mcapWriter{w: w, bw: bw, comp: comp, buf: make([]byte, 0, chunkSize+chunkSize/8),
		pending: make(chan *chunkJob, chunkDepth), jobs: make(chan *chunkJob, chunkDepth), free: make(chan *chunkJob, chunkDepth+2),
		ctx: ctx, cancel: cancel}
	for range min(runtime.GOMAXPROCS(0), chunkDepth) {
		m.wg.Add(1)
		go m.compressor()
	}
	return m, nil
}

// compressor compresses chunks until the writer is closed.
func (m *mcapWriter) compressor() {
	defer m.wg.Done()
	var zenc *zstd.Encoder
	var lzc *lz4.Compressor
	for {
		var j *chunkJob
		select {
		case j = <-m.jobs:
		case <-m.ctx.Done():
			return
		}
		j.crc = crc32.ChecksumIEEE(j.raw)
		switch m.comp {
		case mcap.CompressionZSTD:
			if zenc == nil {
				// No frame checksum: the chunk's CRC covers the same
				// bytes (a fifth less CPU for zstd).
				zenc, _ = zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1),
					zstd.WithEncoderCRC(false))
			}
			j.out = zenc.EncodeAll(j.raw, j.out[:0])
		case mcap.CompressionLZ4:
			if lzc == nil {
				lzc = new(lz4.Compressor)
			}
			j.out = appendLZ4Frame(j.out[:0], j.raw, lzc)
		default:
			j.out = j.raw // written as it is
		}
		close(j.done)
	}
}

// lz4Block is the size of the LZ4 blocks of a chunk: 256 KB blocks took
// 15 % less CPU than 1 MB ones on merged JSON (the block and the match
// table stay in cache) for 2 % more bytes.
const lz4Block = 256 << 10

// lz4Header is the LZ4 frame header of the chunks (independent blocks of
// lz4Block, no checksums), as the lz4 package writes it.
var lz4Header = sync.OnceValue(func() []byte {
	var b bytes.Buffer
	w := lz4.NewWriter(&b)
	if err := w.Apply(lz4.BlockSizeOption(lz4.BlockSize(lz4Block)), lz4.ChecksumOption(false)); err != nil {
		panic(err) // constant options
	}
	_ = w.Close() // a frame with no blocks: header and end mark
	return b.Bytes()[:b.Len()-4]
})

// appendLZ4Frame appends src as an LZ4 frame: the blocks are compressed
// by c straight into dst (the lz4 package's Writer copies each block in
// and out of buffers of its own), a block that does not shrink stored as
// it is.
func appendLZ4Frame(dst, src []byte, c *lz4.Compressor) []byte {
	dst = append(dst, lz4Header()...)
	// Room for what JSON shrinks to (a fifth) and one block that does not shrink:
	// the buffer, reused chunk after chunk, seldom grows.
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

func putRecord(b []byte, op mcap.OpCode, n int) []byte {
	b = append(b, byte(op))
	return binary.LittleEndian.AppendUint64(b, uint64(n))
}

func putString(b []byte, s string) []byte {
	b = binary.LittleEndian.AppendUint32(b, uint32(len(s)))
	return append(b, s...)
}

func (m *mcapWriter) write(it *mergeItem) error {
	if m.err != nil {
		return m.err
	}
	c := it.ref.ch
	if err := m.writeMessage(c.id, c.schema, c.data, c.topic, uint64(it.t), uint64(it.pub), it.data()); err != nil {
		return err
	}
	if it.fix != 0 {
		if fix, ok := locationFix(m.fixBuf[:0], fixKind(it.ref), it.t, it.data()); ok {
			m.fixBuf = fix
			topic := c.topic
			if it.inst >= 0 {
				topic = fmt.Sprintf("%s[%d]", topic, it.inst)
			}
			return m.writeMessage(it.fix, "foxglove.LocationFix", locationFixSchema, topic+"/fix", uint64(it.t), uint64(it.t), fix)
		}
	}
	return nil
}

// writeMessage adds a message of channel id to the chunk, with the
// channel's schema and channel records before its first message.
func (m *mcapWriter) writeMessage(id uint16, schema string, schemaData []byte, topic string, t, p uint64, data []byte) error {
	c := struct {
		id            uint16
		schema, topic string
		data          []byte
	}{id, schema, topic, schemaData}
	for int(c.id) >= len(m.idx) {
		m.idx = append(m.idx, nil)
		m.count = append(m.count, 0)
		m.seq = append(m.seq, 0)
		m.written = append(m.written, false)
	}
	if !m.written[c.id] {
		// The schema and channel records go into the chunk, before the
		// first message of the channel; the writer lists them in the
		// summary.
		s := &mcap.Schema{ID: c.id, Name: c.schema, Encoding: "jsonschema", Data: c.data}
		m.buf = putRecord(m.buf, mcap.OpSchema, 2+4+len(s.Name)+4+len(s.Encoding)+4+len(s.Data))
		m.buf = binary.LittleEndian.AppendUint16(m.buf, s.ID)
		m.buf = putString(m.buf, s.Name)
		m.buf = putString(m.buf, s.Encoding)
		m.buf = putString(m.buf, string(s.Data))
		ch := &mcap.Channel{ID: c.id, SchemaID: c.id, Topic: c.topic, MessageEncoding: "json", Metadata: map[string]string{}}
		m.buf = putRecord(m.buf, mcap.OpChannel, 2+2+4+len(ch.Topic)+4+len(ch.MessageEncoding)+4)
		m.buf = binary.LittleEndian.AppendUint16(m.buf, ch.ID)
		m.buf = binary.LittleEndian.AppendUint16(m.buf, ch.SchemaID)
		m.buf = putString(m.buf, ch.Topic)
		m.buf = putString(m.buf, ch.MessageEncoding)
		m.buf = binary.LittleEndian.AppendUint32(m.buf, 0) // no metadata
		m.w.AddSchema(s)
		m.w.AddChannel(ch)
		m.written[c.id] = true
	}
	m.seq[c.id]++
	seq := m.seq[c.id]
	idx := m.idx[c.id]
	if idx == nil {
		idx = &mcap.MessageIndex{ChannelID: c.id}
		m.idx[c.id] = idx
	}
	if idx.IsEmpty() {
		m.order = append(m.order, c.id)
	}
	idx.Add(t, uint64(len(m.buf)))
	m.buf = putRecord(m.buf, mcap.OpMessage, 2+4+8+8+len(data))
	m.buf = binary.LittleEndian.AppendUint16(m.buf, c.id)
	m.buf = binary.LittleEndian.AppendUint32(m.buf, seq)
	m.buf = binary.LittleEndian.AppendUint64(m.buf, t)
	m.buf = binary.LittleEndian.AppendUint64(m.buf, p)
	m.buf = append(m.buf, data...)
	if m.n == 0 || t < m.start {
		m.start = t
	}
	m.end = max(m.end, t)
	m.n++
	m.count[c.id]++
	if len(m.buf) >= chunkSize {
		return m.flush()
	}
	return nil
}

// flush hands the chunk built so far to the compressors and writes the
// chunks whose compression is done, in order.
func (m *mcapWriter) flush() error {
	if m.n == 0 && len(m.buf) == 0 {
		return nil
	}
	// The chunk before goes out first: its job, buffer and indexes are
	// then free for this one (two chunk buffers in all, not three).
	if len(m.pending) == cap(m.pending) {
		if err := m.writeNext(); err != nil {
			return err
		}
	}
	var j *chunkJob
	select {
	case j = <-m.free:
	default:
		j = &chunkJob{own: map[uint16]*mcap.MessageIndex{}}
	}
	j.raw, m.buf = m.buf, j.raw[:0]
	if cap(m.buf) < chunkSize+chunkSize/8 {
		m.buf = make([]byte, 0, chunkSize+chunkSize/8) // a chunk never grows
	}
	j.start, j.end, j.done = m.start, m.end, make(chan struct{})
	// The chunk's message indexes go with it; the builder takes the
	// job's old ones (or new ones) in their place.
	j.idx = j.idx[:0]
	for _, id := range m.order {
		full := m.idx[id]
		spare := j.own[id]
		if spare == nil {
			spare = &mcap.MessageIndex{ChannelID: id}
		}
		spare.Reset()
		m.idx[id] = spare
		j.own[id] = full
		j.idx = append(j.idx, full)
	}
	m.order, m.n, m.start, m.end = m.order[:0], 0, 0, 0
	m.pending <- j
	m.jobs <- j
	return nil
}

// writeNext writes the oldest pending chunk once compressed.
func (m *mcapWriter) writeNext() error {
	j := <-m.pending
	<-j.done
	err := m.w.WriteChunkWithIndexes(&mcap.Chunk{MessageStartTime: j.start, MessageEndTime: j.end,
		UncompressedSize: uint64(len(j.raw)), UncompressedCRC: j.crc, Compression: string(m.comp), Records: j.out}, j.idx)
	if err != nil {
		m.err = err
		return err
	}
	select {
	case m.free <- j:
	default:
	}
	return nil
}

func (m *mcapWriter) abort() {
	m.cancel()
	m.wg.Wait()
}

func (m *mcapWriter) close() error {
	defer m.abort()
	if m.err != nil {
		return m.err
	}
	if err := m.flush(); err != nil {
		return err
	}
	for len(m.pending) > 0 {
		if err := m.writeNext(); err != nil {
			return err
		}
	}
	st := m.w.Statistics
	for id, n := range m.count {
		if n > 0 {
			st.ChannelMessageCounts[uint16(id)] += n
			st.MessageCount += n
		}
	}
	if err := m.w.Close(); err != nil {
		return err
	}
	return m.bw.Flush()
}
