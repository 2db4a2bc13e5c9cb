package bag

import (
	"bytes"
	"fmt"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/timealign/timealign/pkg/stamp"
)

// MetadataFile is the name of a bag directory's metadata.
const MetadataFile = "metadata.yaml"

// MetadataVersion is the version of metadata.yaml that this package
// writes: ROS 2 Humble's (it reads every version up to 9).
const MetadataVersion = 5

// Metadata is the content of a bag's metadata.yaml
// (rosbag2_bagfile_information).
type Metadata struct {
	Version           int
	StorageIdentifier string
	// Duration is the last message's log time minus the first's.
	Duration time.Duration
	// StartingTime is the first message's log time.
	StartingTime stamp.Time
	MessageCount uint64
	Topics       []TopicInfo
	// CompressionFormat and CompressionMode are rosbag2's whole-file or
	// per-message compression ("" when none).
	CompressionFormat, CompressionMode string
	// RelativeFilePaths are the storage files in order.
	RelativeFilePaths []string
	// Files describe each storage file (version 5 and later).
	Files []FileInfo
	// CustomData (version 6 and later) is kept as read.
	CustomData map[string]string
	// ROSDistro (version 8 and later) is kept as read.
	ROSDistro string
}

// TopicInfo is a topic of metadata.yaml with its message count.
type TopicInfo struct {
	Name, Type, SerializationFormat, OfferedQoSProfiles, TypeDescriptionHash string
	MessageCount                                                             uint64
}

// FileInfo describes one storage file in metadata.yaml.
type FileInfo struct {
	Path         string
	StartingTime stamp.Time
	Duration     time.Duration
	MessageCount uint64
}

// The YAML layout, in the field order rosbag2 writes.
type yamlDoc struct {
	Info yamlInfo `yaml:"rosbag2_bagfile_information"`
}

type yamlNanos struct {
	Nanoseconds int64 `yaml:"nanoseconds"`
}

type yamlEpoch struct {
	Nanos int64 `yaml:"nanoseconds_since_epoch"`
}

type yamlTopicMeta struct {
	Name                string  `yaml:"name"`
	Type                string  `yaml:"type"`
	SerializationFormat string  `yaml:"serialization_format"`
	OfferedQoSProfiles  string  `yaml:"offered_qos_profiles"`
	TypeDescriptionHash *string `yaml:"type_description_hash,omitempty"`
}

type yamlTopic struct {
	Meta  yamlTopicMeta `yaml:"topic_metadata"`
	Count uint64        `yaml:"message_count"`
}

type yamlFile struct {
	Path         string    `yaml:"path"`
	StartingTime yamlEpoch `yaml:"starting_time"`
	Duration     yamlNanos `yaml:"duration"`
	MessageCount uint64    `yaml:"message_count"`
}

type yamlInfo struct {
	Version           int               `yaml:"version"`
	StorageIdentifier string            `yaml:"storage_identifier"`
	Duration          yamlNanos         `yaml:"duration"`
	StartingTime      yamlEpoch         `yaml:"starting_time"`
	MessageCount      uint64            `yaml:"message_count"`
	Topics            []yamlTopic       `yaml:"topics_with_message_count"`
	CompressionFormat string            `yaml:"compression_format"`
	CompressionMode   string            `yaml:"compression_mode"`
	RelativeFilePaths []string          `yaml:"relative_file_paths"`
	Files             []yamlFile        `yaml:"files,omitempty"`
	CustomData        map[string]string `yaml:"custom_data,omitempty"`
	ROSDistro         string            `yaml:"ros_distro,omitempty"`
}

// ParseMetadata parses the content of a metadata.yaml; name is used in
// messages.
func ParseMetadata(name string, data []byte) (*Metadata, error) {
	var doc yamlDoc
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrFormat, name, err)
	}
	in := doc.Info
	if in.Version == 0 && in.StorageIdentifier == "" && len(in.RelativeFilePaths) == 0 {
		return nil, fmt.Errorf("%w: %s: no rosbag2_bagfile_information", ErrFormat, name)
	}
	if in.Version < 1 {
		return nil, fmt.Errorf("%w: %s: version %d", ErrFormat, name, in.Version)
	}
	m := &Metadata{
		Version:           in.Version,
		StorageIdentifier: in.StorageIdentifier,
		Duration:          time.Duration(in.Duration.Nanoseconds),
		StartingTime:      stamp.Time(in.StartingTime.Nanos),
		MessageCount:      in.MessageCount,
		CompressionFormat: in.CompressionFormat,
		CompressionMode:   in.CompressionMode,
		RelativeFilePaths: in.RelativeFilePaths,
		CustomData:        in.CustomData,
		ROSDistro:         in.ROSDistro,
	}
	for _, t := range in.Topics {
		ti := TopicInfo{Name: t.Meta.Name, Type: t.Meta.Type, SerializationFormat: t.Meta.SerializationFormat,
			OfferedQoSProfiles: t.Meta.OfferedQoSProfiles, MessageCount: t.Count}
		if t.Meta.TypeDescriptionHash != nil {
			ti.TypeDescriptionHash = *t.Meta.TypeDescriptionHash
		}
		m.Topics = append(m.Topics, ti)
	}
	for _, f := range in.Files {
		m.Files = append(m.Files, FileInfo{Path: f.Path, StartingTime: stamp.Time(f.StartingTime.Nanos),
			Duration: time.Duration(f.Duration.Nanoseconds), MessageCount: f.MessageCount})
	}
	return m, nil
}

// Marshal returns m as a metadata.yaml of m.Version (MetadataVersion when
// 0), in the layout rosbag2 writes.
func (m *Metadata) Marshal() ([]byte, error) {
	v := m.Version
	if v == 0 {
		v = MetadataVersion
	}
	in := yamlInfo{
		Version:           v,
		StorageIdentifier: m.StorageIdentifier,
		Duration:          yamlNanos{int64(m.Duration)},
		StartingTime:      yamlEpoch{int64(m.StartingTime)},
		MessageCount:      m.MessageCount,
		CompressionFormat: m.CompressionFormat,
		CompressionMode:   m.CompressionMode,
		RelativeFilePaths: m.RelativeFilePaths,
		Topics:            []yamlTopic{},
	}
	if in.RelativeFilePaths == nil {
		in.RelativeFilePaths = []string{}
	}
	for _, t := range m.Topics {
		yt := yamlTopic{Meta: yamlTopicMeta{Name: t.Name, Type: t.Type, SerializationFormat: t.SerializationFormat,
			OfferedQoSProfiles: t.OfferedQoSProfiles}, Count: t.MessageCount}
		if v >= 7 {
			h := t.TypeDescriptionHash
			yt.Meta.TypeDescriptionHash = &h
		}
		in.Topics = append(in.Topics, yt)
	}
	if v >= 5 {
		for _, f := range m.Files {
			in.Files = append(in.Files, yamlFile{Path: f.Path, StartingTime: yamlEpoch{int64(f.StartingTime)},
				Duration: yamlNanos{int64(f.Duration)}, MessageCount: f.MessageCount})
		}
	}
	if v >= 6 {
		in.CustomData = m.CustomData
	}
	if v >= 8 {
		in.ROSDistro = m.ROSDistro
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(yamlDoc{Info: in}); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
