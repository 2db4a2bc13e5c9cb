package bag

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/foxglove/mcap/go/mcap"
	"github.com/pierrec/lz4/v4"
	"github.com/stretchr/testify/require"
)

// fileMessage is a message written to an MCAPFile or read back.
type fileMessage struct {
	channel  uint16
	seq      uint32
	log, pub uint64
	data     string
}

// testMessages are n messages on three channels, of sizes from a few
// bytes to a few KiB, half of them compressible, log times nearly in
// order (some earlier than the one before), one of them at 0.
func testMessages(n int) []fileMessage {
	r := rand.New(rand.NewPCG(1, 2))
	var out []fileMessage
	for i := range n {
		d := make([]byte, 8+r.IntN(4000))
		if i%2 == 0 {
			for k := range d {
				d[k] = byte(r.IntN(256))
			}
		} else {
			copy(d, fmt.Sprintf(`{"i":%d,"x":[1,2,3,4,5,6,7,8]}`, i))
		}
		log := uint64(1_700_000_000_000_000_000 + i*1_000_000 - r.IntN(3)*1_500_000)
		if i == n/3 {
			log = 0
		}
		out = append(out, fileMessage{uint16(1 + i%3), uint32(i / 3), log, log + 7, string(d)})
	}
	return out
}

// writeMCAPFile writes msgs on an MCAPFile with opts and returns its bytes.
func writeMCAPFile(t *testing.T, opts WriterOptions, msgs []fileMessage) []byte {
	t.Helper()
	var buf bytes.Buffer
	f, err := NewMCAPFile(&buf, "test", opts)
	require.NoError(t, err)
	require.NoError(t, f.WriteMetadata(&MetadataRecord{Name: "m", Metadata: map[string]string{"k": "v"}}))
	added := map[uint16]bool{}
	for i, m := range msgs {
		if !added[m.channel] {
			require.NoError(t, f.AddSchema(m.channel, &Schema{Name: fmt.Sprintf("s%d", m.channel), Encoding: "jsonschema", Data: []byte("{}")}))
			require.NoError(t, f.AddChannel(&MCAPChannel{ID: m.channel, SchemaID: m.channel, Topic: fmt.Sprintf("/t%d", m.channel),
				MessageEncoding: "json", Metadata: map[string]string{"b": "2", "a": "1"}}))
			added[m.channel] = true
		}
		require.NoError(t, f.WriteMessage(m.channel, m.seq, m.log, m.pub, []byte(m.data)))
		if i == len(msgs)/2 {
			require.NoError(t, f.WriteAttachment(&Attachment{Name: "calib.yaml", MediaType: "text/yaml", Data: []byte("a: 1\n")}))
		}
	}
	require.NoError(t, f.Close())
	require.NoError(t, f.Close(), "a second Close does nothing")
	return buf.Bytes()
}

// TestMCAPFile: an MCAPFile reads back, with foxglove's reader, as written:
// every message in order, the chunks' CRCs and message indexes sound, the
// summary's statistics right (the first log time 0 too); with Parallel the
// bytes are the same, in every compression.
func TestMCAPFile(t *testing.T) {
	msgs := testMessages(3000)
	for _, c := range []struct {
		comp string
		fast bool
	}{{CompressionNone, false}, {CompressionLZ4, false}, {CompressionLZ4, true}, {CompressionZSTD, false}} {
		comp := c.comp
		t.Run(fmt.Sprintf("%s fast=%v", cmp.Or(comp, "none"), c.fast), func(t *testing.T) {
			data := writeMCAPFile(t, WriterOptions{Compression: comp, FastLZ4: c.fast, ChunkSize: 64 << 10, Library: "lib"}, msgs)
			par := writeMCAPFile(t, WriterOptions{Compression: comp, FastLZ4: c.fast, ChunkSize: 64 << 10, Library: "lib", Parallel: true}, msgs)
			require.True(t, bytes.Equal(data, par), "Parallel writes the same bytes")

			r, err := mcap.NewReader(bytes.NewReader(data))
			require.NoError(t, err)
			info, err := r.Info()
			require.NoError(t, err)
			require.Equal(t, "test", info.Header.Profile)
			require.Equal(t, "lib", info.Header.Library)
			require.Greater(t, len(info.ChunkIndexes), 10)
			for _, ci := range info.ChunkIndexes {
				require.Equal(t, comp, string(ci.Compression))
			}
			st := info.Statistics
			require.Equal(t, uint64(len(msgs)), st.MessageCount)
			require.Equal(t, uint64(0), st.MessageStartTime, "the first log time is 0")
			var last uint64
			counts := map[uint16]uint64{}
			for _, m := range msgs {
				last = max(last, m.log)
				counts[m.channel]++
			}
			require.Equal(t, last, st.MessageEndTime)
			require.Equal(t, counts, st.ChannelMessageCounts)
			require.Equal(t, uint32(3), st.ChannelCount)
			require.Equal(t, uint16(3), st.SchemaCount)
			require.Equal(t, uint32(1), st.AttachmentCount)
			require.Equal(t, uint32(1), st.MetadataCount)
			require.Equal(t, map[string]string{"a": "1", "b": "2"}, info.Channels[2].Metadata)

			for _, index := range []bool{false, true} {
				r, err := mcap.NewReader(bytes.NewReader(data))
				require.NoError(t, err)
				it, err := r.Messages(mcap.UsingIndex(index), mcap.InOrder(mcap.FileOrder))
				require.NoError(t, err)
				var got []fileMessage
				for {
					_, ch, m, err := it.NextInto(nil)
					if errors.Is(err, io.EOF) {
						break
					}
					require.NoError(t, err)
					got = append(got, fileMessage{ch.ID, m.Sequence, m.LogTime, m.PublishTime, string(m.Data)})
				}
				require.Equal(t, msgs, got, "index %v", index)
			}
		})
	}
}

// TestMCAPFileLibrary: MCAPWriter's header names timealign unless told
// otherwise, and has the ros2 profile.
func TestMCAPFileLibrary(t *testing.T) {
	r, err := mcap.NewReader(bytes.NewReader(writeTestMCAP(t, 10, CompressionLZ4)))
	require.NoError(t, err)
	info, err := r.Info()
	require.NoError(t, err)
	require.Equal(t, "ros2", info.Header.Profile)
	require.Equal(t, "timealign", info.Header.Library)
}

// failWriter fails every write after the first n bytes.
type failWriter struct{ n int }

var errDiskFull = errors.New("disk full")

func (w *failWriter) Write(p []byte) (int, error) {
	if len(p) > w.n {
		n := w.n
		w.n = 0
		return n, errDiskFull
	}
	w.n -= len(p)
	return len(p), nil
}

// TestMCAPFileErrors: a write error comes back from WriteMessage or Close
// (and stays), a write after Close or Abort is refused, and the
// compressor's goroutine ends either way.
func TestMCAPFileErrors(t *testing.T) {
	msgs := testMessages(400)
	before := runtime.NumGoroutine()
	for _, parallel := range []bool{false, true} {
		for _, failAt := range []int{100, 50 << 10, 200 << 10} {
			t.Run(fmt.Sprintf("parallel=%v/fail at %d", parallel, failAt), func(t *testing.T) {
				f, err := NewMCAPFile(&failWriter{failAt}, "", WriterOptions{Compression: CompressionLZ4, ChunkSize: 16 << 10, Parallel: parallel})
				require.NoError(t, err)
				require.NoError(t, f.AddSchema(1, &Schema{Name: "s"}))
				require.NoError(t, f.AddChannel(&MCAPChannel{ID: 1, SchemaID: 1, Topic: "/t"}))
				var werr error
				for _, m := range msgs {
					if werr = f.WriteMessage(1, m.seq, m.log, m.pub, []byte(m.data)); werr != nil {
						break
					}
				}
				cerr := f.Close()
				require.ErrorIs(t, errors.Join(werr, cerr), errDiskFull)
				require.ErrorIs(t, cerr, errDiskFull, "Close says it too")
				require.Error(t, f.WriteMessage(1, 0, 1, 1, []byte("x")))
			})
		}
	}
	f, err := NewMCAPFile(io.Discard, "", WriterOptions{Compression: CompressionZSTD, ChunkSize: 4 << 10, Parallel: true})
	require.NoError(t, err)
	require.NoError(t, f.AddSchema(1, &Schema{Name: "s"}))
	require.NoError(t, f.AddChannel(&MCAPChannel{ID: 1, SchemaID: 1, Topic: "/t"}))
	for _, m := range msgs[:100] {
		require.NoError(t, f.WriteMessage(1, m.seq, m.log, m.pub, []byte(m.data)))
	}
	f.Abort()
	f.Abort()
	require.ErrorIs(t, f.WriteMessage(1, 0, 1, 1, []byte("x")), errClosed)
	require.NoError(t, f.Close(), "nothing to say after Abort")
	_, err = NewMCAPFile(io.Discard, "", WriterOptions{Compression: "brotli"})
	require.ErrorIs(t, err, ErrUnsupported)
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	require.LessOrEqual(t, runtime.NumGoroutine(), before, "every compressor goroutine ended")
}

// TestLZ4Frame: the chunks' LZ4 frames decode, with the lz4 package's
// reader, to their source: empty, incompressible (blocks stored as they
// are), compressible, and block sizes on and around 256 KiB; the frame
// header is the one the lz4 package writes for its options.
func TestLZ4Frame(t *testing.T) {
	var hb bytes.Buffer
	w := lz4.NewWriter(&hb)
	require.NoError(t, w.Apply(lz4.BlockSizeOption(lz4.BlockSize(lz4Block)), lz4.ChecksumOption(false)))
	require.NoError(t, w.Close())
	require.Equal(t, lz4Header[:], hb.Bytes()[:hb.Len()-4], "the frame header of independent 256 KiB blocks without checksums")

	r := rand.New(rand.NewPCG(3, 4))
	random := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(r.IntN(256))
		}
		return b
	}
	text := bytes.Repeat([]byte(`{"roll":0.125,"pitch":-0.5,"yaw":3.25},`), 30000)
	var dst []byte
	for name, src := range map[string][]byte{
		"empty": nil, "one byte": {7}, "random": random(700 << 10), "text": text,
		"one block": text[:lz4Block], "block and a byte": text[:lz4Block+1], "mixed": append(random(lz4Block-3), text[:lz4Block+5]...),
	} {
		for _, c := range []blockCompressor{new(lz4.Compressor), &lz4.CompressorHC{Level: lz4.Level3}} {
			dst = appendLZ4Frame(dst[:0], src, c)
			got, err := io.ReadAll(lz4.NewReader(bytes.NewReader(dst)))
			require.NoError(t, err, name)
			require.True(t, bytes.Equal(src, got), "%s %T", name, c)
			if name == "text" {
				require.Less(t, len(dst), len(src)/5, "compressible data shrinks")
			}
			if name == "random" {
				require.Less(t, len(dst), len(src)+64, "a block that does not shrink is stored as it is")
			}
		}
	}
}
