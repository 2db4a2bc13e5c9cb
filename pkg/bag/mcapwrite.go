package bag

import (
	"fmt"
	"io"
	"maps"
	"math"
)

// MCAP chunk compressions.
const (
	CompressionNone = ""
	CompressionZSTD = "zstd"
	CompressionLZ4  = "lz4"
)

// ParseCompression returns the MCAP chunk compression named s: "zstd",
// "lz4", or "none" (also "").
func ParseCompression(s string) (string, error) {
	switch s {
	case "none", "":
		return CompressionNone, nil
	case CompressionZSTD, CompressionLZ4:
		return s, nil
	}
	return "", fmt.Errorf("%w: compression %q (want zstd, lz4 or none)", ErrUnsupported, s)
}

// WriterOptions configure the writers.
type WriterOptions struct {
	// Compression is the MCAP chunk compression (CompressionZSTD,
	// CompressionLZ4 or CompressionNone). It defaults to none.
	Compression string
	// ChunkSize is the MCAP chunk size in bytes. It defaults to 1 MiB.
	ChunkSize int64
	// FastLZ4 compresses LZ4 chunks in LZ4's fast mode rather than at
	// LZ4 HC's level 3 (foxglove's writer's default): less CPU for more
	// bytes (on simulate --bag's camera, IMU and lidar messages, 12 times
	// faster for a quarter more compressed bytes). It defaults to false.
	FastLZ4 bool
	// Parallel compresses each MCAP chunk in a goroutine while the next is
	// built (see MCAPFile). It defaults to false: a chunk is compressed
	// when it is full, in the writer's goroutine.
	Parallel bool
	// Schema returns the definition of a type for a topic that has none
	// (one read from SQLite), or nil: the schema is then written with an
	// empty encoding, as rosbag2 does for a type it has no definition of.
	// It defaults to nil.
	Schema func(typ string) *Schema
	// ROSDistro is written into SQLite files. It defaults to "humble".
	ROSDistro string
	// Library names the writer in the MCAP header. It defaults to
	// "timealign" (NewMCAPFile writes it as it is).
	Library string
}

// MCAPWriter writes one MCAP file of the ros2 profile on an [MCAPFile]:
// schemas (one per distinct definition), channels with rosbag2's metadata,
// messages.
type MCAPWriter struct {
	f        *MCAPFile
	opts     WriterOptions
	channels map[*Topic]uint16
	schemas  map[string]uint16 // name + encoding + data -> id
	closed   bool
}

// NewMCAPWriter starts an MCAP file on w, which it writes in small pieces
// (give it a buffered writer).
func NewMCAPWriter(w io.Writer, opts WriterOptions) (*MCAPWriter, error) {
	if opts.Library == "" {
		opts.Library = "timealign"
	}
	f, err := NewMCAPFile(w, "ros2", opts)
	if err != nil {
		return nil, err
	}
	return &MCAPWriter{f: f, opts: opts, channels: map[*Topic]uint16{}, schemas: map[string]uint16{}}, nil
}

// AddTopic writes the topic's schema (once per distinct definition) and
// channel. Adding a topic twice does nothing.
func (m *MCAPWriter) AddTopic(t *Topic) error {
	if _, ok := m.channels[t]; ok {
		return nil
	}
	if len(m.channels) >= math.MaxUint16-1 {
		return fmt.Errorf("%w: more than %d topics", ErrUnsupported, math.MaxUint16-1)
	}
	s := t.Schema
	if s == nil && m.opts.Schema != nil {
		s = m.opts.Schema(t.Type)
	}
	if s == nil {
		s = &Schema{Name: t.Type}
	}
	key := s.Name + "\x00" + s.Encoding + "\x00" + string(s.Data)
	sid, ok := m.schemas[key]
	if !ok {
		sid = uint16(len(m.schemas) + 1)
		if err := m.f.AddSchema(sid, s); err != nil {
			return err
		}
		m.schemas[key] = sid
	}
	meta := maps.Clone(t.Metadata)
	if meta == nil {
		meta = map[string]string{}
	}
	meta["offered_qos_profiles"] = t.OfferedQoSProfiles
	if t.TypeDescriptionHash != "" {
		meta["topic_type_hash"] = t.TypeDescriptionHash
	}
	cid := uint16(len(m.channels) + 1)
	if err := m.f.AddChannel(&MCAPChannel{ID: cid, SchemaID: sid, Topic: t.Name, MessageEncoding: t.SerializationFormat, Metadata: meta}); err != nil {
		return err
	}
	m.channels[t] = cid
	return nil
}

// WriteMessage writes a message on an added topic.
func (m *MCAPWriter) WriteMessage(msg *Message) error {
	cid, ok := m.channels[msg.Topic]
	if !ok {
		return fmt.Errorf("%w: message on topic %q that was not added", ErrFormat, msg.Topic.Name)
	}
	if msg.LogTime < 0 || msg.PublishTime < 0 {
		return fmt.Errorf("%w: negative log time %d on %s", ErrFormat, msg.LogTime, msg.Topic.Name)
	}
	return m.f.WriteMessage(cid, msg.Sequence, uint64(msg.LogTime), uint64(msg.PublishTime), msg.Data)
}

// WriteAttachment writes an attachment record.
func (m *MCAPWriter) WriteAttachment(a *Attachment) error { return m.f.WriteAttachment(a) }

// WriteMetadata writes a metadata record.
func (m *MCAPWriter) WriteMetadata(r *MetadataRecord) error { return m.f.WriteMetadata(r) }

// Close flushes the last chunk and writes the summary section and footer.
// It does not close the underlying writer.
func (m *MCAPWriter) Close() error {
	if m.closed {
		return nil
	}
	m.closed = true
	return m.f.Close()
}

// Abort ends the writer's goroutine (Parallel) without finishing the file.
func (m *MCAPWriter) Abort() { m.f.Abort() }
