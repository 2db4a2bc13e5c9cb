package bag

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/foxglove/mcap/go/mcap"
	"github.com/stretchr/testify/require"

	"github.com/timealign/timealign/internal/testutil/cdrtest"
	"github.com/timealign/timealign/pkg/stamp"
)

// A file cut off anywhere (a recording killed while writing) reads to
// where it ends: the messages of every complete chunk or message record
// before the cut, and the complete messages at the start of a cut
// uncompressed chunk; one Cut says where and whether messages were lost.
// The oracle below works from the uncut file's own records: the outer
// records' offsets and lengths, and the message indexes after each chunk.

// cutKinds are the generated files that are cut: chunked with each
// compression (an attachment and a metadata record among the chunks), and
// unchunked (messages outside chunks, as rosbag2's fastwrite preset
// writes).
var cutKinds = []string{"none", "zstd", "lz4", "unchunked"}

var cutFilesOnce = sync.OnceValues(func() (map[string][]byte, error) {
	files := map[string][]byte{}
	for _, k := range cutKinds {
		data, err := writeCutFile(k)
		if err != nil {
			return nil, err
		}
		files[k] = data
	}
	return files, nil
})

func cutFile(t testing.TB, kind string) []byte {
	t.Helper()
	files, err := cutFilesOnce()
	require.NoError(t, err)
	return files[kind]
}

// writeCutFile writes 60 messages on two topics.
func writeCutFile(kind string) ([]byte, error) {
	var defs Definitions
	topics := []*Topic{
		{Name: "/imu", Type: "sensor_msgs/msg/Imu", SerializationFormat: "cdr", Schema: defs.LookupType("sensor_msgs/msg/Imu").Schema},
		{Name: "/scan", Type: "sensor_msgs/msg/LaserScan", SerializationFormat: "cdr", Schema: defs.LookupType("sensor_msgs/msg/LaserScan").Schema},
	}
	msg := func(i int) *Message {
		ts := stamp.Time(1_700_000_000_000_000_000 + int64(i)*10_000_000)
		return &Message{Topic: topics[i%2], LogTime: ts + 5_000_000, PublishTime: ts + 5_000_000, Data: cdrtest.Message(ts, "imu", 150+i%7*40)}
	}
	var buf bytes.Buffer
	if kind == "unchunked" {
		w, err := mcap.NewWriter(&buf, &mcap.WriterOptions{Chunked: false, IncludeCRC: true})
		if err != nil {
			return nil, err
		}
		if err := w.WriteHeader(&mcap.Header{Profile: "ros2"}); err != nil {
			return nil, err
		}
		for i, tp := range topics {
			s := tp.Schema
			if err := w.WriteSchema(&mcap.Schema{ID: uint16(i + 1), Name: s.Name, Encoding: s.Encoding, Data: s.Data}); err != nil {
				return nil, err
			}
			if err := w.WriteChannel(&mcap.Channel{ID: uint16(i + 1), SchemaID: uint16(i + 1), Topic: tp.Name, MessageEncoding: "cdr"}); err != nil {
				return nil, err
			}
		}
		for i := range 60 {
			m := msg(i)
			if err := w.WriteMessage(&mcap.Message{ChannelID: uint16(i%2 + 1), LogTime: uint64(m.LogTime), PublishTime: uint64(m.PublishTime), Data: m.Data}); err != nil {
				return nil, err
			}
		}
		if err := w.Close(); err != nil {
			return nil, err
		}
		return buf.Bytes(), nil
	}
	comp := kind
	if comp == "none" {
		comp = CompressionNone
	}
	w, err := NewMCAPWriter(&buf, WriterOptions{Compression: comp, ChunkSize: 2048})
	if err != nil {
		return nil, err
	}
	for _, tp := range topics {
		if err := w.AddTopic(tp); err != nil {
			return nil, err
		}
	}
	for i := range 60 {
		if i == 30 {
			if err := w.WriteAttachment(&Attachment{Name: "calib.yaml", MediaType: "text/yaml", Data: []byte("k: 1\n")}); err != nil {
				return nil, err
			}
			if err := w.WriteMetadata(&MetadataRecord{Name: "robot", Metadata: map[string]string{"id": "7"}}); err != nil {
				return nil, err
			}
		}
		if err := w.WriteMessage(msg(i)); err != nil {
			return nil, err
		}
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// outerRecord is a record of the uncut file.
type outerRecord struct {
	op       mcap.OpCode
	off, end int64
}

// cutOracle is what the uncut file says about every cut.
type cutOracle struct {
	records []outerRecord
	// avail[i] is the byte offset the file must reach for its i-th
	// message (file order) to be read: the end of its record outside a
	// chunk or in an uncompressed chunk, the end of its compressed chunk.
	avail []int64
	// chunkOf[i] is the index in records of the i-th message's chunk, -1.
	chunkOf []int
	// inner[i] is the offset of the i-th message in its chunk's records.
	inner []int64
	// dataEnd is the end of the data end record, footer that of the
	// footer.
	dataEnd, footer int64
}

func newCutOracle(t testing.TB, data []byte) *cutOracle {
	t.Helper()
	o := &cutOracle{}
	off := int64(len(mcapMagic))
	for off < int64(len(data)) && o.footer == 0 {
		op := mcap.OpCode(data[off])
		l := int64(binary.LittleEndian.Uint64(data[off+1:]))
		r := outerRecord{op: op, off: off, end: off + 9 + l}
		body := data[off+9 : r.end]
		o.records = append(o.records, r)
		switch op {
		case mcap.OpMessage:
			o.avail = append(o.avail, r.end)
			o.chunkOf = append(o.chunkOf, -1)
			o.inner = append(o.inner, 0)
		case mcap.OpDataEnd:
			o.dataEnd = r.end
		case mcap.OpFooter:
			o.footer = r.end
		case mcap.OpMessageIndex:
			// The message indexes after a chunk: its messages, by their
			// offsets in the chunk's records.
			ci := len(o.records) - 2
			for ci >= 0 && o.records[ci].op == mcap.OpMessageIndex {
				ci--
			}
			require.Equal(t, mcap.OpChunk, o.records[ci].op)
			c := o.records[ci]
			ch, err := mcap.ParseChunk(data[c.off+9 : c.end])
			require.NoError(t, err)
			recStart := c.end - int64(len(ch.Records))
			mi, err := mcap.ParseMessageIndex(body)
			require.NoError(t, err)
			for _, e := range mi.Records {
				a := c.end
				if ch.Compression == "" {
					s := recStart + int64(e.Offset)
					require.Equal(t, byte(mcap.OpMessage), data[s])
					a = s + 9 + int64(binary.LittleEndian.Uint64(data[s+1:]))
				}
				o.avail = append(o.avail, a)
				o.chunkOf = append(o.chunkOf, ci)
				o.inner = append(o.inner, int64(e.Offset))
			}
		}
		off = r.end
	}
	require.NotZero(t, o.footer)
	require.Equal(t, int64(len(data)), o.footer+int64(len(mcapMagic)))
	// File order: by the chunk's or the message record's offset, then by
	// the offset in the chunk.
	idx := make([]int, len(o.avail))
	for i := range idx {
		idx[i] = i
	}
	pos := func(i int) int64 {
		if o.chunkOf[i] >= 0 {
			return o.records[o.chunkOf[i]].off
		}
		return o.avail[i]
	}
	sort.Slice(idx, func(a, b int) bool {
		if pa, pb := pos(idx[a]), pos(idx[b]); pa != pb {
			return pa < pb
		}
		return o.inner[idx[a]] < o.inner[idx[b]]
	})
	av, co := make([]int64, len(idx)), make([]int, len(idx))
	for k, i := range idx {
		av[k], co[k] = o.avail[i], o.chunkOf[i]
	}
	o.avail, o.chunkOf = av, co
	return o
}

// want returns the messages a file cut at p must give, and its Cut (nil:
// the file is complete up to its footer).
func (o *cutOracle) want(p int64) (n int, cut *Cut) {
	for n < len(o.avail) && o.avail[n] <= p {
		n++
	}
	if p >= o.footer {
		return n, nil
	}
	c := &Cut{Size: p, Offset: p, InSummary: p >= o.dataEnd && o.dataEnd > 0}
	for ri, r := range o.records {
		if r.off < p && p < r.end {
			c.Record, c.Offset, c.Have = r.op.String(), r.off, p-r.off
			if c.Have >= 9 {
				c.Want = r.end - r.off
			}
			if r.op == mcap.OpChunk {
				for i, ci := range o.chunkOf {
					if ci == ri && o.avail[i] <= p {
						c.Recovered++
					}
				}
			}
		}
	}
	return n, c
}

// checkCut cuts data at p, reads the file through the Reader and
// Summarize, and checks them against the oracle.
func checkCut(t *testing.T, o *cutOracle, data []byte, p int64, full []Message) {
	t.Helper()
	path := writeFile(t, t.TempDir(), "cut.mcap", data[:p])
	b, err := Open(path)
	if p < int64(len(mcapMagic)) {
		require.Error(t, err, "a lone file shorter than the magic is no MCAP file")
		require.ErrorIs(t, err, ErrFormat)
		return
	}
	require.NoError(t, err)
	wantN, wantCut := o.want(p)
	r := b.Records()
	defer r.Close()
	var got []Message
	var rec Record
	for {
		err := r.Next(&rec)
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err, "cut at %d of %d", p, len(data))
		if rec.Kind == KindMessage {
			m := rec.Message
			m.Data = bytes.Clone(m.Data)
			got = append(got, m)
		}
	}
	require.Len(t, got, wantN, "cut at %d of %d: messages read", p, len(data))
	for i, m := range got {
		require.Equal(t, full[i].LogTime, m.LogTime, "message %d", i)
		require.Equal(t, full[i].Topic.Name, m.Topic.Name, "message %d", i)
		require.Equal(t, full[i].Data, m.Data, "message %d", i)
	}
	sk := r.Skipped()
	if wantCut == nil {
		require.Empty(t, sk.Cuts, "cut at %d, after the footer", p)
		require.False(t, sk.Any())
	} else {
		require.Len(t, sk.Cuts, 1, "cut at %d", p)
		c := sk.Cuts[0]
		require.Equal(t, path, c.Path)
		require.Equal(t, wantCut.Size, c.Size)
		require.Equal(t, wantCut.Record, c.Record, "cut at %d", p)
		require.Equal(t, wantCut.Offset, c.Offset, "cut at %d", p)
		require.Equal(t, wantCut.Have, c.Have, "cut at %d", p)
		require.Equal(t, wantCut.Want, c.Want, "cut at %d", p)
		require.Equal(t, wantCut.InSummary, c.InSummary, "cut at %d", p)
		require.Equal(t, wantCut.Recovered, c.Recovered, "cut at %d", p)
		lost := wantCut.Record == "chunk" || wantCut.Record == "message"
		require.Equal(t, lost, c.Lost(), "cut at %d", p)
		require.Equal(t, lost, sk.Any())
		msg := c.String()
		require.Contains(t, msg, path)
		require.Contains(t, msg, fmt.Sprintf("at byte %d", p))
		if lost {
			require.Contains(t, msg, "lost")
			require.NotContains(t, msg, "every message in it was read")
			if c.Recovered > 0 {
				require.Contains(t, msg, fmt.Sprintf("the %d complete messages at its start were read", c.Recovered))
			}
		} else {
			require.Contains(t, msg, "every message in it was read")
			require.Contains(t, msg, map[bool]string{true: "ends inside its summary section", false: "ends without its summary"}[c.InSummary])
		}
		if c.Record != "" {
			require.Contains(t, msg, fmt.Sprintf("at byte %d", c.Offset))
		}
	}
	// bag info's counts: the same messages, the same cut.
	s, err := b.Summarize()
	require.NoError(t, err)
	require.Equal(t, uint64(wantN), s.MessageCount, "cut at %d: Summarize", p)
	require.Empty(t, s.Skipped.Errors)
	require.Equal(t, sk.Cuts, s.Skipped.Cuts)
}

// cutPositions are where each kind of record is cut: at its start, inside
// its opcode and length, just after them, in its middle, one byte short
// of its end (the first two and the last record of each kind; the middle
// of the others); and in the file's magic.
func cutPositions(o *cutOracle, size int64) []int64 {
	set := map[int64]bool{0: true, 1: true, 7: true, size - 1: true, size: true}
	last := map[mcap.OpCode]int{}
	for i, r := range o.records {
		last[r.op] = i
	}
	seen := map[mcap.OpCode]int{}
	for i, r := range o.records {
		ps := []int64{(r.off + r.end) / 2}
		if seen[r.op] < 2 || last[r.op] == i {
			ps = append(ps, r.off, r.off+1, r.off+8, r.off+9, r.off+10, r.off+30, r.end-1)
		}
		seen[r.op]++
		for _, p := range ps {
			if p >= r.off && p < r.end {
				set[p] = true
			}
		}
	}
	var ps []int64
	for p := range set {
		ps = append(ps, p)
	}
	sort.Slice(ps, func(i, j int) bool { return ps[i] < ps[j] })
	return ps
}

func readAllMessages(t *testing.T, data []byte) []Message {
	t.Helper()
	b, err := Open(writeFile(t, t.TempDir(), "full.mcap", data))
	require.NoError(t, err)
	r := b.Records()
	defer r.Close()
	var out []Message
	var rec Record
	for {
		err := r.Next(&rec)
		if errors.Is(err, io.EOF) {
			return out
		}
		require.NoError(t, err)
		if rec.Kind == KindMessage {
			m := rec.Message
			m.Data = bytes.Clone(m.Data)
			out = append(out, m)
		}
	}
}

// TestCutEverywhere cuts each generated file at every kind of record
// boundary and inside every record.
func TestCutEverywhere(t *testing.T) {
	for _, kind := range cutKinds {
		t.Run(kind, func(t *testing.T) {
			data := cutFile(t, kind)
			full := readAllMessages(t, data)
			require.Len(t, full, 60)
			o := newCutOracle(t, data)
			seen := map[string]bool{}
			for _, p := range cutPositions(o, int64(len(data))) {
				checkCut(t, o, data, p, full)
				if _, c := o.want(p); c != nil {
					seen[c.Record] = true
				}
			}
			// Every kind of record the writer wrote was cut.
			for _, r := range o.records {
				require.True(t, seen[r.op.String()] || r.op == mcap.OpFooter, "no cut inside a %s record", r.op)
			}
			require.True(t, seen[""], "no cut between records")
		})
	}
}

// FuzzCut: a generated file cut anywhere reads as the oracle says. Its
// seeds are the table's positions.
func FuzzCut(f *testing.F) {
	t := &testing.T{}
	for k, kind := range cutKinds {
		data := cutFile(t, kind)
		o := newCutOracle(t, data)
		for i, p := range cutPositions(o, int64(len(data))) {
			if i%5 == 0 {
				f.Add(uint8(k), uint32(p))
			}
		}
	}
	f.Fuzz(func(t *testing.T, kind uint8, p uint32) {
		k := cutKinds[int(kind)%len(cutKinds)]
		data := cutFile(t, k)
		o, full := cutTruth(t, k)
		checkCut(t, o, data, int64(p)%int64(len(data)+1), full)
	})
}

var cutTruths = struct {
	sync.Mutex
	o    map[string]*cutOracle
	full map[string][]Message
}{o: map[string]*cutOracle{}, full: map[string][]Message{}}

// cutTruth returns the oracle and the messages of a generated file, once.
func cutTruth(t *testing.T, kind string) (*cutOracle, []Message) {
	cutTruths.Lock()
	defer cutTruths.Unlock()
	if cutTruths.o[kind] == nil {
		data := cutFile(t, kind)
		cutTruths.full[kind] = readAllMessages(t, data)
		cutTruths.o[kind] = newCutOracle(t, data)
	}
	return cutTruths.o[kind], cutTruths.full[kind]
}

// TestCutEmptyFileInBag: a split file its recorder created but never
// wrote to (stdio had not flushed) is a note; the other files are read.
func TestCutEmptyFileInBag(t *testing.T) {
	for _, st := range []Storage{MCAP, SQLite} {
		t.Run(string(st), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "rec")
			require.NoError(t, os.Mkdir(dir, 0o755))
			src := writeTestBag(t, st, 30)
			require.NoError(t, os.Rename(src, filepath.Join(dir, "rec_0"+st.Ext())))
			writeFile(t, dir, "rec_1"+st.Ext(), nil)
			b, err := Open(dir)
			require.NoError(t, err)
			require.True(t, b.NoMetadata)
			require.Equal(t, st, b.Storage)
			n, sk, err := readCount(t, dir)
			require.NoError(t, err)
			require.Equal(t, 30, n)
			require.Len(t, sk.Cuts, 1)
			require.Equal(t, filepath.Join(dir, "rec_1"+st.Ext()), sk.Cuts[0].Path)
			require.False(t, sk.Cuts[0].Lost())
			require.False(t, sk.Any())
			require.Contains(t, sk.Cuts[0].String(), "is empty: the recording was cut off before anything was written to it")
			s, err := b.Summarize()
			require.NoError(t, err)
			require.Equal(t, uint64(30), s.MessageCount)
			require.Equal(t, sk.Cuts, s.Skipped.Cuts)
		})
	}
}

// writeTestBag writes one storage file of n messages and returns its path.
func writeTestBag(t *testing.T, st Storage, n int) string {
	t.Helper()
	if st == MCAP {
		return writeFile(t, t.TempDir(), "x.mcap", writeTestMCAP(t, n, CompressionZSTD))
	}
	p := filepath.Join(t.TempDir(), "x.db3")
	w, err := NewSQLiteWriter(p, "")
	require.NoError(t, err)
	tp := &Topic{Name: "/imu", Type: "sensor_msgs/msg/Imu", SerializationFormat: "cdr"}
	require.NoError(t, w.AddTopic(tp))
	for i := range n {
		require.NoError(t, w.WriteMessage(&Message{Topic: tp, LogTime: stamp.Time(1e9 + int64(i)), Data: []byte{0, 1, 0, 0, byte(i)}}))
	}
	require.NoError(t, w.Close())
	return p
}

// TestNoMetadata: a bag directory without metadata.yaml, and a split file
// of one given alone, are read and said to be; a lone file whose name is
// not a split of its directory, or whose directory has a metadata.yaml,
// is not.
func TestNoMetadata(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "rec")
	require.NoError(t, os.Mkdir(dir, 0o755))
	f := filepath.Join(dir, "rec_0.mcap")
	require.NoError(t, os.WriteFile(f, writeTestMCAP(t, 10, CompressionNone), 0o644))
	for _, c := range []struct {
		path string
		want bool
	}{{dir, true}, {f, true}} {
		b, err := Open(c.path)
		require.NoError(t, err)
		require.Equal(t, c.want, b.NoMetadata, c.path)
	}
	other := filepath.Join(root, "x.mcap")
	require.NoError(t, os.WriteFile(other, writeTestMCAP(t, 10, CompressionNone), 0o644))
	b, err := Open(other)
	require.NoError(t, err)
	require.False(t, b.NoMetadata)
	writeFile(t, dir, MetadataFile, []byte("rosbag2_bagfile_information:\n  version: 5\n  storage_identifier: mcap\n  relative_file_paths: [rec_0.mcap]\n"))
	for _, p := range []string{dir, f} {
		b, err := Open(p)
		require.NoError(t, err)
		require.False(t, b.NoMetadata, p)
	}
}

// TestCutStringKinds: the wording of each kind of cut, whole.
func TestCutStringKinds(t *testing.T) {
	for _, c := range []struct {
		cut  Cut
		want string
	}{
		{Cut{Path: "b/x.mcap", Size: 4096, Record: "message index", Offset: 3981, Have: 115, Want: 143},
			"b/x.mcap ends without its summary: the recording was cut off at byte 4096, 115 bytes into a 143-byte message index record at byte 3981; every message in it was read"},
		{Cut{Path: "x.mcap", Size: 500, Offset: 500},
			"x.mcap ends without its summary: the recording was cut off at byte 500, between two records; every message in it was read"},
		{Cut{Path: "x.mcap", Size: 905, Record: "chunk index", Offset: 900, Have: 5, InSummary: true},
			"x.mcap ends inside its summary section: the recording was cut off at byte 905, inside the length field of a chunk index record at byte 900; every message in it was read"},
		{Cut{Path: "x.mcap", Size: 700, Record: "attachment", Offset: 600, Have: 100, Want: 300},
			"x.mcap ends without its summary: the recording was cut off at byte 700, 100 bytes into a 300-byte attachment record at byte 600; every message in it was read; that attachment record is lost"},
		{Cut{Path: "x.mcap", Size: 8192, Record: "chunk", Offset: 8067, Have: 125, Want: 427, Compression: "lz4", compKnown: true, From: 1_000_000_000, To: 1_100_000_000},
			"x.mcap was cut off at byte 8192, 125 bytes into a 427-byte lz4 chunk at byte 8067; its messages, logged from 1.000000000 to 1.100000000, are lost"},
		{Cut{Path: "x.mcap", Size: 8080, Record: "chunk", Offset: 8067, Have: 13, Want: 427},
			"x.mcap was cut off at byte 8080, 13 bytes into a 427-byte chunk at byte 8067; its messages are lost"},
		{Cut{Path: "x.mcap", Size: 9000, Record: "chunk", Offset: 8000, Have: 1000, Want: 5000, compKnown: true, From: 1e9, To: 2e9, Recovered: 6, Last: 1_500_000_000},
			"x.mcap was cut off at byte 9000, 1000 bytes into a 5000-byte uncompressed chunk at byte 8000: the 6 complete messages at its start were read (without the chunk's CRC check), the last logged at 1.500000000; its later messages, up to one logged at 2.000000000, are lost"},
		{Cut{Path: "x.mcap", Size: 8100, Record: "chunk", Offset: 8000, Have: 100, Want: 5000, compKnown: true, From: 1e9, To: 2e9},
			"x.mcap was cut off at byte 8100, 100 bytes into a 5000-byte uncompressed chunk at byte 8000: no message in it is complete; its messages, logged from 1.000000000 to 2.000000000, are lost"},
		{Cut{Path: "x.mcap", Size: 53248, Record: "message", Offset: 52319, Have: 929, Want: 1531, Topic: "/scan"},
			"x.mcap was cut off at byte 53248, 929 bytes into a 1531-byte message record of /scan at byte 52319: that message is lost"},
		{Cut{Path: "x_0.mcap"}, "x_0.mcap is empty: the recording was cut off before anything was written to it"},
		{Cut{Path: "x.db3", Leftover: "x.db3-wal"},
			"x.db3 was not closed by its recorder (its write-ahead log x.db3-wal is left): the transactions committed to the log were read too"},
	} {
		require.Equal(t, c.want, c.cut.String())
		require.Equal(t, strings.Contains(c.want, "lost") && !strings.Contains(c.want, "every message in it was read"), c.cut.Lost(), c.want)
	}
}

// TestSQLiteLeftovers: a .db3 whose recorder was stopped leaves a
// write-ahead log (rosbag2's resilient preset) or the rollback journal of
// an unfinished transaction (a journal_mode of its storage config): the
// copies of the files taken while the writer is inside a transaction are
// what a killed recorder leaves. They are read without being changed, and
// said so; no message counts as lost.
func TestSQLiteLeftovers(t *testing.T) {
	for _, c := range []struct {
		mode, leftover string
		// min and max of the messages read: the WAL's committed ones
		// exactly; with a hot journal, the committed ones and whatever of
		// the unfinished transaction reached the file.
		min, max int
	}{
		{"WAL", "-wal", 100, 100},
		{"DELETE", "-journal", 100, 300},
		{"PERSIST", "-journal", 100, 300},
	} {
		t.Run(c.mode, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, "w.db3")
			w, err := NewSQLiteWriter(p, "")
			require.NoError(t, err)
			require.NoError(t, w.exec("PRAGMA journal_mode="+c.mode))
			require.NoError(t, w.exec("PRAGMA cache_size=2")) // the transaction spills into the file
			tp := &Topic{Name: "/imu", Type: "sensor_msgs/msg/Imu", SerializationFormat: "cdr"}
			require.NoError(t, w.AddTopic(tp))
			write := func(from, to int) {
				for i := from; i < to; i++ {
					require.NoError(t, w.WriteMessage(&Message{Topic: tp, LogTime: stamp.Time(1e9 + int64(i)), Data: make([]byte, 500)}))
				}
			}
			write(0, 100)
			require.NoError(t, w.exec("COMMIT"))
			w.inTx = 0
			write(100, 300) // not committed
			killed := filepath.Join(t.TempDir(), "rec")
			require.NoError(t, os.Mkdir(killed, 0o755))
			ents, err := os.ReadDir(dir)
			require.NoError(t, err)
			copied := map[string][]byte{}
			for _, e := range ents {
				data, err := os.ReadFile(filepath.Join(dir, e.Name()))
				require.NoError(t, err)
				name := strings.Replace(e.Name(), "w.db3", "rec_0.db3", 1)
				writeFile(t, killed, name, data)
				copied[name] = data
			}
			require.NoError(t, w.Close())
			require.Contains(t, copied, "rec_0.db3"+c.leftover)

			n, sk, err := readCount(t, killed)
			require.NoError(t, err)
			require.GreaterOrEqual(t, n, c.min)
			require.LessOrEqual(t, n, c.max)
			require.Len(t, sk.Cuts, 1)
			cut := sk.Cuts[0]
			require.Equal(t, filepath.Join(killed, "rec_0.db3"+c.leftover), cut.Leftover)
			require.False(t, cut.Lost())
			require.False(t, sk.Any())
			require.Contains(t, cut.String(), "was not closed by its recorder")
			b, err := Open(killed)
			require.NoError(t, err)
			s, err := b.Summarize()
			require.NoError(t, err)
			require.Equal(t, uint64(n), s.MessageCount)
			require.Equal(t, sk.Cuts, s.Skipped.Cuts)
			// Reading changed no data, and left nothing behind (SQLite's
			// shared-memory index, -shm, is SQLite's to rebuild, as any
			// reader of a WAL file does).
			ents, err = os.ReadDir(killed)
			require.NoError(t, err)
			require.Len(t, ents, len(copied))
			for name, data := range copied {
				if strings.HasSuffix(name, "-shm") {
					continue
				}
				now, err := os.ReadFile(filepath.Join(killed, name))
				require.NoError(t, err)
				require.True(t, bytes.Equal(data, now), "%s changed", name)
			}
		})
	}
}

// TestKilledRecordings reads recordings that `ros2 bag record` wrote on
// Humble until it was killed with SIGKILL (testdata/rosbag2, see its
// README). The counts per topic are what `ros2 bag reindex` found in the
// same files, except in killed_chunk, where the complete messages at the
// start of the cut uncompressed chunk are read too (rosbag2 drops them).
func TestKilledRecordings(t *testing.T) {
	for _, c := range []struct {
		name   string
		counts map[string]uint64
		record string // the record the file ends in; "" for SQLite
		lost   bool
		// recovered: messages read from the cut chunk beyond rosbag2's
		recovered map[string]uint64
		leftover  string
	}{
		{name: "mcap/killed_index", counts: map[string]uint64{"/chatter": 2, "/imu": 21, "/scan": 3}, record: "message index"},
		{name: "mcap/killed_chunk", counts: map[string]uint64{"/chatter": 2, "/imu": 21, "/scan": 3}, record: "chunk", lost: true,
			recovered: map[string]uint64{"/chatter": 1, "/imu": 3}},
		{name: "mcap/killed_lz4", counts: map[string]uint64{"/chatter": 1, "/imu": 11, "/scan": 1}, record: "chunk", lost: true},
		{name: "mcap/killed_fastwrite", counts: map[string]uint64{"/chatter": 4, "/imu": 33, "/scan": 4}, record: "message", lost: true},
		{name: "sqlite3/killed", counts: map[string]uint64{"/chatter": 4, "/imu": 40, "/scan": 4}},
		{name: "sqlite3/killed_wal", counts: map[string]uint64{"/chatter": 1, "/imu": 6, "/scan": 1}, leftover: "-wal"},
	} {
		t.Run(c.name, func(t *testing.T) {
			// A copy: SQLite may rewrite a WAL file's shared-memory index.
			dir := filepath.Join(t.TempDir(), filepath.Base(c.name))
			require.NoError(t, os.CopyFS(dir, os.DirFS(rosbag2Dir(c.name))))
			b, err := Open(dir)
			require.NoError(t, err)
			require.Nil(t, b.Metadata)
			require.True(t, b.NoMetadata)
			want := map[string]uint64{}
			for k, v := range c.counts {
				want[k] = v + c.recovered[k]
			}
			s, err := b.Summarize()
			require.NoError(t, err)
			require.Empty(t, s.Skipped.Errors)
			for _, ts := range s.Topics {
				require.Equal(t, want[ts.Topic.Name], ts.Count, ts.Topic.Name)
			}
			var cuts []Cut
			if b.Storage == MCAP {
				cuts = s.Skipped.Cuts
				require.Len(t, cuts, 1)
				require.Equal(t, c.record, cuts[0].Record)
				require.Equal(t, c.lost, cuts[0].Lost())
				require.Equal(t, 4096*(cuts[0].Size/4096), cuts[0].Size, "the recorder wrote through a 4 KiB stdio buffer")
				var n uint64
				for _, v := range c.recovered {
					n += v
				}
				require.Equal(t, int(n), cuts[0].Recovered)
			} else if c.leftover != "" {
				require.Len(t, s.Skipped.Cuts, 1)
				require.Equal(t, filepath.Join(dir, filepath.Base(c.name)+"_0.db3"+c.leftover), s.Skipped.Cuts[0].Leftover)
				require.False(t, s.Skipped.Cuts[0].Lost())
			} else {
				require.Empty(t, s.Skipped.Cuts, "a killed default SQLite recording leaves a consistent file")
			}
			// Reading gives the same counts and cut; the messages recovered
			// from the cut chunk are whole: every Imu carries a header
			// stamp within a second of its log time.
			r := b.Records()
			defer r.Close()
			counts := map[string]uint64{}
			var rec Record
			for {
				err := r.Next(&rec)
				if errors.Is(err, io.EOF) {
					break
				}
				require.NoError(t, err)
				if rec.Kind != KindMessage {
					continue
				}
				counts[rec.Message.Topic.Name]++
				if rec.Message.Topic.Name == "/imu" {
					require.Equal(t, "sensor_msgs/msg/Imu", rec.Message.Topic.Type)
					h, _, err := stamp.Header(rec.Message.Data)
					require.NoError(t, err)
					require.InDelta(t, float64(rec.Message.LogTime), float64(h), 1e9)
				}
			}
			require.Equal(t, want, counts)
			require.Equal(t, s.Skipped.Cuts, r.Skipped().Cuts)
			require.Equal(t, c.lost, r.Skipped().Any())
		})
	}
}

// TestSQLiteCutShort: a .db3 file cut short (a power cut, a disk that
// filled up) is an error that says so, with where the file ends and how
// long its header says it is; a file that is damaged otherwise says that.
// A cut that SQLite can read around (the last page's unused bytes) reads
// every message; no cut reads as a shorter bag without an error.
func TestSQLiteCutShort(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "w.db3")
	w, err := NewSQLiteWriter(p, "")
	require.NoError(t, err)
	tp := &Topic{Name: "/imu", Type: "sensor_msgs/msg/Imu", SerializationFormat: "cdr"}
	require.NoError(t, w.AddTopic(tp))
	const total = 300
	for i := range total {
		require.NoError(t, w.WriteMessage(&Message{Topic: tp, LogTime: stamp.Time(1e9 + int64(i)), Data: make([]byte, 500)}))
	}
	require.NoError(t, w.Close())
	whole, err := os.ReadFile(p)
	require.NoError(t, err)
	sizes := []int{100, len(whole) - 1}
	for at := 4096; at < len(whole); at += 4096 { // every page's start and middle
		sizes = append(sizes, at, at+2048)
	}
	cutOff := 0
	for _, size := range sizes {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			cut := filepath.Join(t.TempDir(), "cut.db3")
			require.NoError(t, os.WriteFile(cut, whole[:size], 0o644))
			n, _, err := readCount(t, cut)
			if err == nil {
				require.Equal(t, total, n, "a cut file read as a shorter bag, without an error")
				return
			}
			require.ErrorIs(t, err, ErrFormat)
			require.Contains(t, err.Error(), fmt.Sprintf("the file ends at byte %d of the %d its header gives", size, len(whole)))
			require.Contains(t, err.Error(), "it was cut off while it was written")
			cutOff++
		})
	}
	require.Greater(t, cutOff, len(sizes)/2, "most cuts are errors")
	t.Run("damaged", func(t *testing.T) {
		bad := slices.Clone(whole)
		for i := 100; i < len(bad); i++ {
			bad[i] ^= 0x5a
		}
		p := filepath.Join(t.TempDir(), "bad.db3")
		require.NoError(t, os.WriteFile(p, bad, 0o644))
		_, _, err := readCount(t, p)
		require.ErrorIs(t, err, ErrFormat)
		require.Contains(t, err.Error(), "(the file is damaged)")
		require.NotContains(t, err.Error(), "cut off")
	})
}

// TestSummaryTopicTimes: a topic's first and last log time from an MCAP
// summary (through its chunks' message indexes) equal those found by
// reading every message, and SummarizeSizes gives each topic's bytes.
func TestSummaryTopicTimes(t *testing.T) {
	for _, name := range []string{"mcap/recorded", "mcap/talker", "mcap/wbag", "mcap/cdr_test", "sqlite3/recorded", "sqlite3/wbag"} {
		t.Run(name, func(t *testing.T) {
			b, err := Open(rosbag2Dir(name))
			require.NoError(t, err)
			fast, err := b.Summarize()
			require.NoError(t, err)
			full, err := b.SummarizeSizes()
			require.NoError(t, err)
			require.False(t, fast.Scanned)
			require.Equal(t, len(full.Topics), len(fast.Topics))
			bytes := map[string]uint64{}
			r := b.Records()
			defer r.Close()
			var rec Record
			for {
				err := r.Next(&rec)
				if errors.Is(err, io.EOF) {
					break
				}
				require.NoError(t, err)
				if rec.Kind == KindMessage {
					bytes[rec.Message.Topic.Name] += uint64(len(rec.Message.Data))
				}
			}
			byName := map[string]TopicSummary{}
			for _, fs := range full.Topics {
				byName[fs.Topic.Name] = fs
			}
			for _, ts := range fast.Topics {
				fs, ok := byName[ts.Topic.Name]
				require.True(t, ok, ts.Topic.Name)
				require.Equal(t, fs.Count, ts.Count, ts.Topic.Name)
				require.Equal(t, fs.Start, ts.Start, ts.Topic.Name)
				require.Equal(t, fs.End, ts.End, ts.Topic.Name)
				require.Equal(t, bytes[ts.Topic.Name], fs.Bytes, ts.Topic.Name)
				if ts.Count > 0 {
					require.NotZero(t, ts.Start, ts.Topic.Name)
				}
			}
		})
	}
}

// TestCorruptSummary: a finished MCAP file whose summary section is
// damaged is read through, its messages all counted, and said to have a
// corrupt summary; a file without any summary is not said to.
// summarizeWithin is b.Summarize, which must allocate less than limit
// bytes in all (what is what names the cost).
func summarizeWithin(t *testing.T, b *Bag, limit uint64, what string) *Summary {
	t.Helper()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	s, err := b.Summarize()
	runtime.ReadMemStats(&m1)
	require.NoError(t, err)
	require.Less(t, m1.TotalAlloc-m0.TotalAlloc, limit, what)
	return s
}

// TestMCAPHeaderClaimsTooMuch: a file whose header record claims more bytes
// than the file has (19 bytes claiming 1 GB: found by FuzzMCAP, whose
// worker ran out of memory; bag info allocated the 1 GB, and crashed under
// a memory limit) costs no such memory: it is read through, and the
// reading stops at that record, said in Skipped.Errors.
func TestMCAPHeaderClaimsTooMuch(t *testing.T) {
	for _, whole := range [][]byte{
		[]byte("\x89MCAP0\r\n\x0500\x05A\x00\x00\x00\x00@K"), // the fuzzer's
		writeTestMCAP(t, 10, CompressionNone),                // a whole file, its header's length damaged
	} {
		bad := slices.Clone(whole)
		binary.LittleEndian.PutUint64(bad[8+1:], 1<<30)
		b, err := Open(writeFile(t, t.TempDir(), "x.mcap", bad))
		require.NoError(t, err)
		s := summarizeWithin(t, b, 64<<20, "what a header's damaged length costs")
		require.True(t, s.Scanned)
		require.Empty(t, s.CorruptSummaries, "the file does not get as far as its summary")
		require.Len(t, s.Skipped.Errors, 1, "where reading stopped")
		require.Zero(t, s.MessageCount)
	}
}

// TestMCAPMessageIndexClaimsTooMuch: a message index whose length claims
// 1 GiB (the summary reads the first and last ones of each topic for its
// times) costs no such memory; the summary still counts every message.
func TestMCAPMessageIndexClaimsTooMuch(t *testing.T) {
	bad := writeTestMCAP(t, 10, CompressionNone)
	damaged := 0
	for pos := 8; pos+9 <= len(bad); { // the records, by their headers
		op, n := bad[pos], binary.LittleEndian.Uint64(bad[pos+1:])
		if op == 0x07 { // a message index
			binary.LittleEndian.PutUint64(bad[pos+1:], 1<<30)
			damaged++
		}
		if op == 0x02 { // the footer
			break
		}
		pos += 9 + int(n)
	}
	require.Positive(t, damaged)
	b, err := Open(writeFile(t, t.TempDir(), "x.mcap", bad))
	require.NoError(t, err)
	s := summarizeWithin(t, b, 64<<20, "what the damaged lengths cost")
	require.Equal(t, uint64(10), s.MessageCount)
}

func TestCorruptSummary(t *testing.T) {
	whole := writeTestMCAP(t, 40, CompressionZSTD)
	// The footer: opcode, length, summary start, summary offset start,
	// CRC, then the closing magic.
	const footerLen, magicLen = 1 + 8 + 8 + 8 + 4, 8
	start := binary.LittleEndian.Uint64(whole[len(whole)-magicLen-20:])
	require.NotZero(t, start, "the writer writes a summary")
	for _, damage := range []struct {
		name string
		at   func(b []byte) // damages the summary section b
	}{
		{"flipped", func(b []byte) {
			for i := range b {
				b[i] ^= 0x5a
			}
		}},
		{"zeroed", func(b []byte) { clear(b) }},
		{"lengths", func(b []byte) { // each record's length says it runs past the file
			for i := 1; i+8 <= len(b); i += 37 {
				binary.LittleEndian.PutUint64(b[i:], 1<<40)
			}
		}},
		// The first record claims 1 GiB, which the MCAP library would
		// allocate (it refuses only 2 GiB and more) before finding the
		// file short (found by FuzzMCAP: 2 s of CPU for a 4 kB file).
		{"a GiB", func(b []byte) { binary.LittleEndian.PutUint64(b[1:], 1<<30) }},
		{"a chunk", func(b []byte) { b[0] = 0x06 }},
	} {
		t.Run(damage.name, func(t *testing.T) {
			bad := slices.Clone(whole)
			damage.at(bad[start : len(bad)-magicLen-footerLen])
			b, err := Open(writeFile(t, t.TempDir(), "x.mcap", bad))
			require.NoError(t, err)
			s := summarizeWithin(t, b, 64<<20, "what a summary's damaged lengths cost")
			require.True(t, s.Scanned)
			require.Len(t, s.CorruptSummaries, 1)
			require.Contains(t, s.CorruptSummaries[0], "x.mcap: ")
			require.Equal(t, uint64(40), s.MessageCount, "every message counted, read through")
		})
	}
	t.Run("none", func(t *testing.T) {
		var buf bytes.Buffer
		w, err := NewMCAPWriter(&buf, WriterOptions{Compression: CompressionNone, ChunkSize: 4096})
		require.NoError(t, err)
		tp := &Topic{Name: "/imu", Type: "sensor_msgs/msg/Imu", SerializationFormat: "cdr"}
		require.NoError(t, w.AddTopic(tp))
		require.NoError(t, w.WriteMessage(&Message{Topic: tp, LogTime: 1e9, Data: []byte{0, 1, 0, 0, 7}}))
		require.NoError(t, w.Close())
		// Cut off after its last chunk: no summary, no footer.
		cut := buf.Bytes()[:binary.LittleEndian.Uint64(buf.Bytes()[buf.Len()-magicLen-20:])]
		b, err := Open(writeFile(t, t.TempDir(), "x.mcap", cut))
		require.NoError(t, err)
		s, err := b.Summarize()
		require.NoError(t, err)
		require.True(t, s.Scanned)
		require.Empty(t, s.CorruptSummaries, "a file cut off is not a corrupt summary")
	})
}
