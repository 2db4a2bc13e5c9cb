package mavcmd

import (
	"bufio"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/foxglove/mcap/go/mcap"

	"github.com/timealign/timealign/pkg/bag"
)

// mcapWriter writes the merged stream as MCAP on a bag.MCAPFile, whose
// chunks are compressed in a goroutine of its own (Parallel), beside the
// merge, LZ4 in its fast mode: one channel per output channel, each with
// its JSON schema (the schema's id is the channel's), written before its
// first message.
type mcapWriter struct {
	f  *bag.MCAPFile
	bw *bufio.Writer // under f: its records are written in small pieces
	// seq is the last sequence number by channel id; written says
	// whether its schema and channel records are. Kept here, not in the
	// channel, which the merge loop writes as it goes: two goroutines
	// writing one cache line per message slow each other down.
	seq     []uint32
	written []bool
	fixBuf  []byte // a LocationFix's JSON
}

// chunkSize is the size of the merged stream's chunks.
const chunkSize = 2 << 20

// mcapLibrary names the writer in the header, as foxglove's writer did
// when it wrote the merge's header (its name first).
func mcapLibrary(version string) string {
	return "mcap-go/" + strings.TrimPrefix(mcap.Version, "v") + "; timealign " + version
}

func newMCAPWriter(out io.Writer, comp string, run *mavRun, version string) (*mcapWriter, error) {
	// Records are written in pieces (a chunk's header, its message
	// indexes one by one): buffered, a 10 MB merge makes 20 write calls
	// instead of 400.
	bw := bufio.NewWriterSize(out, 256<<10)
	f, err := bag.NewMCAPFile(bw, "", bag.WriterOptions{Compression: comp, FastLZ4: true, ChunkSize: chunkSize, Parallel: true, Library: mcapLibrary(version)})
	if err != nil {
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
	if err := f.WriteMetadata(&bag.MetadataRecord{Name: "timealign.mav", Metadata: md}); err != nil {
		f.Abort()
		return nil, err
	}
	return &mcapWriter{f: f, bw: bw}, nil
}

func (m *mcapWriter) write(o outItem) error {
	it := o.it
	c := it.Ref.ch
	if err := m.writeMessage(c.id, c.schema, c.data, c.topic, uint64(it.T), uint64(it.Pub), it.Data()); err != nil {
		return err
	}
	if o.fix != 0 {
		if fix, ok := locationFix(m.fixBuf[:0], fixKind(it.Ref), it.T, it.Data()); ok {
			m.fixBuf = fix
			topic := c.topic
			if it.Inst >= 0 {
				topic = fmt.Sprintf("%s[%d]", topic, it.Inst)
			}
			return m.writeMessage(o.fix, "foxglove.LocationFix", locationFixSchema, topic+"/fix", uint64(it.T), uint64(it.T), fix)
		}
	}
	return nil
}

// writeMessage writes a message of channel id, with the channel's schema
// and channel records before its first message.
func (m *mcapWriter) writeMessage(id uint16, schema string, schemaData []byte, topic string, t, p uint64, data []byte) error {
	for int(id) >= len(m.seq) {
		m.seq = append(m.seq, 0)
		m.written = append(m.written, false)
	}
	if !m.written[id] {
		if err := m.f.AddSchema(id, &bag.Schema{Name: schema, Encoding: "jsonschema", Data: schemaData}); err != nil {
			return err
		}
		if err := m.f.AddChannel(&bag.MCAPChannel{ID: id, SchemaID: id, Topic: topic, MessageEncoding: "json", Metadata: map[string]string{}}); err != nil {
			return err
		}
		m.written[id] = true
	}
	m.seq[id]++
	return m.f.WriteMessage(id, m.seq[id], t, p, data)
}

func (m *mcapWriter) abort() { m.f.Abort() }

func (m *mcapWriter) close() error {
	if err := m.f.Close(); err != nil {
		return err
	}
	return m.bw.Flush()
}
