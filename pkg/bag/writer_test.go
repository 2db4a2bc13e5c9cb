package bag

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/foxglove/mcap/go/mcap"
	"github.com/stretchr/testify/require"

	"github.com/timealign/timealign/internal/testutil/cdrtest"
	"github.com/timealign/timealign/pkg/stamp"
)

type msgCopy struct {
	topic   string
	log     stamp.Time
	publish stamp.Time
	data    []byte
}

func collect(t *testing.T, b *Bag) ([]msgCopy, []*Topic) {
	t.Helper()
	r := b.Records()
	defer r.Close()
	var out []msgCopy
	var rec Record
	for {
		err := r.Next(&rec)
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		if rec.Kind == KindMessage {
			out = append(out, msgCopy{rec.Message.Topic.Name, rec.Message.LogTime, rec.Message.PublishTime, bytes.Clone(rec.Message.Data)})
		}
	}
	return out, r.Topics()
}

// copyBag copies every record of in into a new bag of format st.
func copyBag(t *testing.T, in *Bag, dir string, st Storage, opts WriterOptions, splitEvery int) *Metadata {
	t.Helper()
	w, err := NewDirWriter(dir, "out", st, opts)
	require.NoError(t, err)
	r := in.Records()
	defer r.Close()
	var rec Record
	n := 0
	for {
		err := r.Next(&rec)
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		switch rec.Kind {
		case KindTopic:
			require.NoError(t, w.AddTopic(rec.Topic))
		case KindMessage:
			if splitEvery > 0 && n > 0 && n%splitEvery == 0 {
				w.Split()
			}
			require.NoError(t, w.WriteMessage(&rec.Message))
			n++
		case KindAttachment:
			_ = w.WriteAttachment(rec.Attachment)
		case KindMetadata:
			_ = w.WriteMetadata(rec.Metadata)
		}
	}
	m, err := w.Close()
	require.NoError(t, err)
	return m
}

// TestRoundTrip copies rosbag2's bags into every format and compression and
// reads them back: same topics, same messages byte for byte, a
// metadata.yaml that says so, and MCAP files that an indexed reader seeks.
func TestRoundTrip(t *testing.T) {
	for _, src := range []string{"mcap/talker", "sqlite3/talker", "mcap/wbag", "sqlite3/cdr_test"} {
		in, err := Open(rosbag2Dir(src))
		require.NoError(t, err)
		want, wantTopics := collect(t, in)
		for _, c := range []struct {
			st    Storage
			comp  string
			split int
		}{{MCAP, CompressionNone, 0}, {MCAP, CompressionZSTD, 7}, {MCAP, CompressionLZ4, 0}, {SQLite, "", 5}} {
			t.Run(src+"/"+string(c.st)+"/"+c.comp, func(t *testing.T) {
				dir := t.TempDir()
				var defs Definitions
				split := c.split * (len(want)/40 + 1) // a few files, whatever the bag
				m := copyBag(t, in, dir, c.st, WriterOptions{Compression: c.comp, ChunkSize: 512,
					Schema: func(typ string) *Schema { return defs.LookupType(typ).Schema }}, split)
				require.Equal(t, uint64(len(want)), m.MessageCount)
				out, err := Open(dir)
				require.NoError(t, err)
				require.Equal(t, c.st, out.Storage)
				require.NotNil(t, out.Metadata)
				if split > 0 && len(want) > split {
					require.Greater(t, len(out.Files), 1)
				}
				got, gotTopics := collect(t, out)
				require.Equal(t, want, got)
				require.Equal(t, len(wantTopics), len(gotTopics))
				for i := range wantTopics {
					require.Equal(t, wantTopics[i].Name, gotTopics[i].Name)
					require.Equal(t, wantTopics[i].Type, gotTopics[i].Type)
					require.Equal(t, wantTopics[i].OfferedQoSProfiles, gotTopics[i].OfferedQoSProfiles)
				}
				counts, _, _, _, _ := readAll(t, out)
				for _, ti := range out.Metadata.Topics {
					require.Equal(t, counts[ti.Name], ti.MessageCount, ti.Name)
				}
				var sum uint64
				for _, f := range out.Metadata.Files {
					sum += f.MessageCount
				}
				require.Equal(t, m.MessageCount, sum)
				if c.st == MCAP {
					for _, f := range out.Files {
						checkIndexed(t, f)
					}
				}
			})
		}
	}
}

// checkIndexed reads an MCAP file through its summary and indexes, as
// players that seek do.
func checkIndexed(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	r, err := mcap.NewReader(f)
	require.NoError(t, err)
	info, err := r.Info()
	require.NoError(t, err)
	require.NotNil(t, info.Statistics)
	require.Equal(t, "ros2", info.Header.Profile)
	it, err := r.Messages(mcap.UsingIndex(true))
	require.NoError(t, err)
	n := uint64(0)
	for {
		_, _, _, err := it.NextInto(nil)
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		n++
	}
	require.Equal(t, info.Statistics.MessageCount, n)
	for _, c := range info.Channels {
		require.Contains(t, c.Metadata, "offered_qos_profiles")
	}
}

// writeTestMCAP writes n Imu-sized messages on two topics with the given
// compression and returns the file's bytes.
func writeTestMCAP(t *testing.T, n int, comp string) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewMCAPWriter(&buf, WriterOptions{Compression: comp, ChunkSize: 4096})
	require.NoError(t, err)
	var defs Definitions
	topics := []*Topic{
		{Name: "/imu", Type: "sensor_msgs/msg/Imu", SerializationFormat: "cdr", Schema: defs.LookupType("sensor_msgs/msg/Imu").Schema},
		{Name: "/scan", Type: "sensor_msgs/msg/LaserScan", SerializationFormat: "cdr", Schema: defs.LookupType("sensor_msgs/msg/LaserScan").Schema},
	}
	for _, tp := range topics {
		require.NoError(t, w.AddTopic(tp))
	}
	for i := range n {
		ts := stamp.Time(1_700_000_000_000_000_000 + int64(i)*10_000_000)
		require.NoError(t, w.WriteMessage(&Message{Topic: topics[i%2], LogTime: ts + 5_000_000, PublishTime: ts + 5_000_000,
			Data: cdrtest.Message(ts, "imu", 300)}))
	}
	require.NoError(t, w.Close())
	return buf.Bytes()
}

func writeFile(t *testing.T, dir, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(p, data, 0o644))
	return p
}

// readCount reads a bag to its end or first error.
func readCount(t *testing.T, path string) (int, Skipped, error) {
	t.Helper()
	b, err := Open(path)
	if err != nil {
		return 0, Skipped{}, err
	}
	r := b.Records()
	defer r.Close()
	n := 0
	var rec Record
	for {
		err := r.Next(&rec)
		if errors.Is(err, io.EOF) {
			return n, r.Skipped(), nil
		}
		if err != nil {
			return n, r.Skipped(), err
		}
		if rec.Kind == KindMessage {
			n++
		}
	}
}

// TestBadInput: not a bag, truncated files, a corrupt chunk, an unknown
// compression, a broken metadata.yaml: a clear error naming the file and
// the offset, and every message before it.
func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	good := writeTestMCAP(t, 400, CompressionNone)

	_, _, err := readCount(t, writeFile(t, dir, "text.mcap", []byte("hello, world\n")))
	require.ErrorIs(t, err, ErrFormat)
	require.Contains(t, err.Error(), "not an mcap file")
	_, _, err = readCount(t, writeFile(t, dir, "empty.mcap", nil))
	require.ErrorContains(t, err, "empty file")
	_, _, err = readCount(t, writeFile(t, dir, "text.db3", []byte("SQLite format 2\x00 but not really")))
	require.ErrorContains(t, err, "not a sqlite3 file")

	// Truncated anywhere: no error; the messages of whole chunks before
	// the cut are read (and, the chunks being uncompressed, the complete
	// messages of the cut one), and the Cut names the file and offset
	// (TestCutEverywhere checks every kind of cut).
	for _, cut := range []int{len(good) / 3, len(good) / 2, len(good) - 100, len(good) - 1} {
		p := writeFile(t, dir, "cut.mcap", good[:cut])
		n, sk, err := readCount(t, p)
		require.NoError(t, err)
		if cut > len(good)-8 {
			// In the magic after the footer: nothing is missing.
			require.Empty(t, sk.Cuts)
			require.Equal(t, 400, n)
			continue
		}
		require.Len(t, sk.Cuts, 1)
		c := sk.Cuts[0]
		require.Equal(t, p, c.Path)
		require.Equal(t, int64(cut), c.Size)
		require.LessOrEqual(t, c.Offset, int64(cut))
		if !c.Lost() {
			// Cut after the last chunk: every message was read.
			require.Equal(t, 400, n, "cut at %d", cut)
			require.Greater(t, cut, len(good)*9/10)
			continue
		}
		require.Greater(t, n, 0, "cut at %d", cut)
		require.Less(t, n, 400)
	}

	// A flipped byte inside a chunk: that chunk is skipped and counted,
	// the others are read.
	bad := bytes.Clone(good)
	bad[len(bad)/2] ^= 0xff
	n, sk, err := readCount(t, writeFile(t, dir, "flip.mcap", bad))
	require.NoError(t, err)
	require.Equal(t, 1, sk.BadChunks)
	require.Less(t, n, 400)
	require.Greater(t, n, 300)

	// An unknown chunk compression.
	lz := writeTestMCAP(t, 50, CompressionLZ4)
	i := bytes.Index(lz, []byte("\x03\x00\x00\x00lz4"))
	require.Greater(t, i, 0)
	copy(lz[i+4:], "xz9")
	_, _, err = readCount(t, writeFile(t, dir, "xz.mcap", lz))
	require.ErrorIs(t, err, ErrUnsupported)
	require.ErrorContains(t, err, "xz9")

	// Garbage where a record should start.
	g := bytes.Clone(good)
	start := bytes.Index(g, []byte{byte(mcap.OpChunk)})
	require.Greater(t, start, 0)
	for k := start; k < start+9; k++ {
		g[k] = 0xee
	}
	_, _, err = readCount(t, writeFile(t, dir, "garbage.mcap", g))
	require.ErrorIs(t, err, ErrFormat)

	// metadata.yaml that is not YAML, and one naming a missing file.
	bd := filepath.Join(dir, "bagdir")
	require.NoError(t, os.Mkdir(bd, 0o755))
	writeFile(t, bd, "metadata.yaml", []byte("rosbag2_bagfile_information: [unclosed"))
	_, err = Open(bd)
	require.ErrorIs(t, err, ErrFormat)
	require.ErrorContains(t, err, "metadata.yaml")
	writeFile(t, bd, "metadata.yaml", []byte("rosbag2_bagfile_information:\n  version: 5\n  storage_identifier: mcap\n  relative_file_paths: [gone_0.mcap]\n"))
	_, err = Open(bd)
	require.ErrorContains(t, err, "gone_0.mcap")

	// A SQLite file that is not a rosbag2 database.
	sq := filepath.Join(dir, "other.db3")
	w, err := NewSQLiteWriter(sq, "")
	require.NoError(t, err)
	require.NoError(t, w.exec("DROP TABLE topics"))
	require.NoError(t, w.Close())
	_, _, err = readCount(t, sq)
	require.ErrorContains(t, err, "no topics table")
}

// TestUnknownChannelCounted: a message whose channel was never defined is
// skipped and counted.
func TestUnknownChannelCounted(t *testing.T) {
	var buf bytes.Buffer
	mw, err := mcap.NewWriter(&buf, &mcap.WriterOptions{Chunked: false, IncludeCRC: true})
	require.NoError(t, err)
	require.NoError(t, mw.WriteHeader(&mcap.Header{Profile: "ros2"}))
	require.NoError(t, mw.WriteSchema(&mcap.Schema{ID: 1, Name: "std_msgs/msg/String", Encoding: "ros2msg", Data: []byte("string data")}))
	require.NoError(t, mw.WriteChannel(&mcap.Channel{ID: 1, SchemaID: 1, Topic: "/a", MessageEncoding: "cdr"}))
	payload := []byte("\x00\x01\x00\x00unique payload")
	require.NoError(t, mw.WriteMessage(&mcap.Message{ChannelID: 1, LogTime: 1, Data: payload}))
	require.NoError(t, mw.Close())
	data := buf.Bytes()
	// Move the message to channel 7, which is never defined.
	i := bytes.Index(data, payload)
	require.Greater(t, i, 22)
	data[i-22] = 7
	n, sk, err := readCount(t, writeFile(t, t.TempDir(), "u.mcap", data))
	require.NoError(t, err)
	require.Equal(t, 0, n)
	require.Equal(t, 1, sk.UnknownTopic)
}
