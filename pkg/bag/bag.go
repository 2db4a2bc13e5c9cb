package bag

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/timealign/timealign/pkg/stamp"
)

// Storage is a rosbag2 storage format, named by its storage identifier.
type Storage string

// The storage formats of ROS 2 Humble.
const (
	MCAP   Storage = "mcap"
	SQLite Storage = "sqlite3"
)

// Ext returns the file extension of the format, with its dot.
func (s Storage) Ext() string {
	if s == SQLite {
		return ".db3"
	}
	return ".mcap"
}

// ParseStorage returns the storage named s ("mcap", "sqlite3"; "sqlite" and
// "db3" are accepted too).
func ParseStorage(s string) (Storage, error) {
	switch strings.ToLower(s) {
	case "mcap":
		return MCAP, nil
	case "sqlite3", "sqlite", "db3":
		return SQLite, nil
	}
	return "", fmt.Errorf("%w: storage %q (want mcap or sqlite3)", ErrFormat, s)
}

// storageOf returns the format of a storage file by its extension.
func storageOf(path string) (Storage, bool) {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".mcap":
		return MCAP, true
	case ".db3":
		return SQLite, true
	}
	return "", false
}

// Errors. Every error of the package wraps one of these, or an I/O error.
var (
	// ErrFormat: the input is not a bag, or a part of it is malformed.
	ErrFormat = errors.New("bag: bad format")
	// ErrUnsupported: the input is valid but uses something this package
	// does not read (a compression, a storage plugin).
	ErrUnsupported = errors.New("bag: unsupported")
)

// FileError is an error in one storage file: its path, where reading
// stopped (a byte offset for MCAP, a message row for SQLite), and why.
type FileError struct {
	Path string
	// Offset is the byte offset of the record that failed (MCAP), or -1.
	Offset int64
	// Row is the SQLite message row that failed, or -1.
	Row int64
	Err error
}

func (e *FileError) Error() string {
	switch {
	case e.Offset >= 0:
		return fmt.Sprintf("%s: at byte %d: %v", e.Path, e.Offset, e.Err)
	case e.Row >= 0:
		return fmt.Sprintf("%s: message row %d: %v", e.Path, e.Row, e.Err)
	}
	return fmt.Sprintf("%s: %v", e.Path, e.Err)
}

func (e *FileError) Unwrap() error { return e.Err }

// Schema is a message type's definition as an MCAP file stores it.
type Schema struct {
	// Name is the type, "sensor_msgs/msg/Imu".
	Name string
	// Encoding is "ros2msg", "ros2idl", or "" when the recorder had no
	// definition.
	Encoding string
	Data     []byte
}

// Topic is a recorded topic (an MCAP channel, a SQLite topics row).
type Topic struct {
	// ID numbers the topics of a Reader from 0 in order of appearance; it
	// is the index into Reader.Topics.
	ID int
	// Name is the topic's name, "/imu/data".
	Name string
	// Type is the message type, "sensor_msgs/msg/Imu".
	Type string
	// SerializationFormat is the messages' encoding, "cdr".
	SerializationFormat string
	// OfferedQoSProfiles is rosbag2's YAML list of the publishers' QoS.
	OfferedQoSProfiles string
	// TypeDescriptionHash is rosbag2's type hash (Iron and later), or "".
	TypeDescriptionHash string
	// Schema is the type's definition from an MCAP file; nil for SQLite.
	Schema *Schema
	// Metadata is the MCAP channel's metadata (offered_qos_profiles among
	// them), kept by a rewrite; nil for SQLite.
	Metadata map[string]string
}

// SensorDataQoS is the OfferedQoSProfiles rosbag2 records for one
// publisher with ROS 2's sensor-data profile (best effort, volatile, keep
// last 5, no deadline, lifespan or lease).
const SensorDataQoS = "- history: 1\n  depth: 5\n  reliability: 2\n  durability: 2\n  deadline:\n    sec: 9223372036\n    nsec: 854775807\n  lifespan:\n    sec: 9223372036\n    nsec: 854775807\n  liveliness: 1\n  liveliness_lease_duration:\n    sec: 9223372036\n    nsec: 854775807\n  avoid_ros_namespace_conventions: false"

// same reports whether two topics describe the same stream (a split
// file repeats its topics).
func (t *Topic) same(u *Topic) bool {
	return t.Name == u.Name && t.Type == u.Type && t.SerializationFormat == u.SerializationFormat
}

// Message is one recorded message.
type Message struct {
	Topic *Topic
	// LogTime is when the recorder received the message (rosbag2's
	// timestamp); PublishTime is MCAP's publish time (rosbag2 writes the
	// receive time there too; for SQLite it equals LogTime).
	LogTime     stamp.Time
	PublishTime stamp.Time
	// Sequence is MCAP's sequence number (0 from rosbag2).
	Sequence uint32
	// Data is the serialized message. It is valid until the next call of
	// Reader.Next; copy it to keep it.
	Data []byte
}

// Attachment is an MCAP attachment record, kept by a rewrite.
type Attachment struct {
	LogTime, CreateTime uint64
	Name, MediaType     string
	Data                []byte
}

// MetadataRecord is an MCAP metadata record, kept by a rewrite.
type MetadataRecord struct {
	Name     string
	Metadata map[string]string
}

// Kind says what a Record holds.
type Kind int

// Record kinds.
const (
	KindMessage Kind = iota
	KindTopic
	KindAttachment
	KindMetadata
)

// Record is one item of a bag: a message, the first appearance of a topic,
// or an MCAP attachment or metadata record.
type Record struct {
	Kind       Kind
	Message    Message         // KindMessage
	Topic      *Topic          // KindTopic: the new topic
	Attachment *Attachment     // KindAttachment
	Metadata   *MetadataRecord // KindMetadata
	// File is the index of the storage file the record is in.
	File int
}
