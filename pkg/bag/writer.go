package bag

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/timealign/timealign/pkg/stamp"
)

// fileWriter is one storage file being written.
type fileWriter interface {
	AddTopic(*Topic) error
	WriteMessage(*Message) error
	Close() error
}

// mcapFileWriter is an MCAPWriter on a buffered os.File.
type mcapFileWriter struct {
	*MCAPWriter
	f  *os.File
	bw *bufio.Writer
}

func (m *mcapFileWriter) Close() error {
	err := m.MCAPWriter.Close()
	if ferr := m.bw.Flush(); err == nil {
		err = ferr
	}
	if cerr := m.f.Close(); err == nil {
		err = cerr
	}
	return err
}

// createFile creates a storage file of format st at path (which must not
// exist).
func createFile(path string, st Storage, opts WriterOptions) (fileWriter, error) {
	if st == SQLite {
		return NewSQLiteWriter(path, opts.ROSDistro)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, err
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	mw, err := NewMCAPWriter(bw, opts)
	if err != nil {
		f.Close()
		os.Remove(path)
		return nil, err
	}
	return &mcapFileWriter{MCAPWriter: mw, f: f, bw: bw}, nil
}

// Writer writes a bag: a directory with split storage files and a
// metadata.yaml ([NewDirWriter]), or one storage file ([NewFileWriter]).
// Topics are added to every file; messages go to the current file, and
// Split starts a new one. It is not safe for concurrent use.
type Writer struct {
	dir, base string
	single    string // the file of a single-file writer
	storage   Storage
	opts      WriterOptions
	topics    []*Topic
	counts    map[*Topic]uint64
	cur       fileWriter
	curInfo   FileInfo
	files     []FileInfo
	split     bool // start a new file at the next message
	meta      Metadata
	// dropped counts attachments and metadata records a SQLite file
	// cannot hold.
	dropped int
	closed  bool
}

// NewDirWriter writes a bag of format st into the existing, empty
// directory dir; the storage files are named base_0.mcap, base_1.mcap, …
// (base is the bag's name, usually the directory's final name, which can
// differ from dir while dir is a temporary directory to be renamed).
func NewDirWriter(dir, base string, st Storage, opts WriterOptions) (*Writer, error) {
	if base == "" {
		base = filepath.Base(dir)
	}
	return &Writer{dir: dir, base: base, storage: st, opts: opts, counts: map[*Topic]uint64{}}, nil
}

// NewFileWriter writes a single storage file of format st at path, which
// must not exist (no metadata.yaml; Split is ignored).
func NewFileWriter(path string, st Storage, opts WriterOptions) (*Writer, error) {
	return &Writer{single: path, storage: st, opts: opts, counts: map[*Topic]uint64{}}, nil
}

// Storage returns the writer's format.
func (w *Writer) Storage() Storage { return w.storage }

// AddTopic adds a topic to the bag (to the current file and every later
// one). Adding it twice does nothing.
func (w *Writer) AddTopic(t *Topic) error {
	if _, ok := w.counts[t]; ok {
		return nil
	}
	w.counts[t] = 0
	w.topics = append(w.topics, t)
	if w.cur != nil {
		return w.cur.AddTopic(t)
	}
	return nil
}

// Split ends the current file: the next message starts a new one.
func (w *Writer) Split() {
	if w.single == "" && w.cur != nil {
		w.split = true
	}
}

func (w *Writer) open() error {
	path := w.single
	if path == "" {
		name := fmt.Sprintf("%s_%d%s", w.base, len(w.files), w.storage.Ext())
		path = filepath.Join(w.dir, name)
		w.curInfo = FileInfo{Path: name}
	} else {
		w.curInfo = FileInfo{Path: filepath.Base(path)}
	}
	fw, err := createFile(path, w.storage, w.opts)
	if err != nil {
		return err
	}
	w.cur = fw
	for _, t := range w.topics {
		if err := fw.AddTopic(t); err != nil {
			return err
		}
	}
	return nil
}

func (w *Writer) closeFile() error {
	if w.cur == nil {
		return nil
	}
	err := w.cur.Close()
	w.cur = nil
	w.files = append(w.files, w.curInfo)
	return err
}

// WriteMessage writes a message on an added topic.
func (w *Writer) WriteMessage(m *Message) error {
	if _, ok := w.counts[m.Topic]; !ok {
		return fmt.Errorf("%w: message on topic %q that was not added", ErrFormat, m.Topic.Name)
	}
	if w.split {
		w.split = false
		if err := w.closeFile(); err != nil {
			return err
		}
	}
	if w.cur == nil {
		if err := w.open(); err != nil {
			return err
		}
	}
	if err := w.cur.WriteMessage(m); err != nil {
		return err
	}
	w.counts[m.Topic]++
	fi := &w.curInfo
	if fi.MessageCount == 0 || m.LogTime < fi.StartingTime {
		if fi.MessageCount > 0 {
			fi.Duration += time.Duration(fi.StartingTime - m.LogTime)
		}
		fi.StartingTime = m.LogTime
	}
	if end := fi.StartingTime.Add(fi.Duration); m.LogTime > end {
		fi.Duration = m.LogTime.Sub(fi.StartingTime)
	}
	fi.MessageCount++
	return nil
}

// ErrNotStored: the storage format cannot hold the record (an attachment
// or metadata record in SQLite); the caller counts it.
var ErrNotStored = errors.New("bag: record not stored by this storage format")

// WriteAttachment writes an MCAP attachment into the current file.
func (w *Writer) WriteAttachment(a *Attachment) error {
	if w.storage != MCAP {
		w.dropped++
		return ErrNotStored
	}
	if w.cur == nil {
		if err := w.open(); err != nil {
			return err
		}
	}
	return w.cur.(*mcapFileWriter).WriteAttachment(a)
}

// WriteMetadata writes an MCAP metadata record into the current file.
func (w *Writer) WriteMetadata(r *MetadataRecord) error {
	if w.storage != MCAP {
		w.dropped++
		return ErrNotStored
	}
	if w.cur == nil {
		if err := w.open(); err != nil {
			return err
		}
	}
	return w.cur.(*mcapFileWriter).WriteMetadata(r)
}

// Close finishes the last file (a bag without messages still gets one, as
// rosbag2 writes) and, for a directory, writes metadata.yaml. It returns
// the bag's metadata.
func (w *Writer) Close() (*Metadata, error) {
	if w.closed {
		return &w.meta, nil
	}
	w.closed = true
	if w.cur == nil && len(w.files) == 0 {
		if err := w.open(); err != nil {
			return nil, err
		}
	}
	if err := w.closeFile(); err != nil {
		return nil, err
	}
	m := Metadata{Version: MetadataVersion, StorageIdentifier: string(w.storage), Files: w.files}
	var start, end stamp.Time
	for _, f := range w.files {
		m.RelativeFilePaths = append(m.RelativeFilePaths, f.Path)
		if f.MessageCount == 0 {
			continue
		}
		if m.MessageCount == 0 || f.StartingTime < start {
			start = f.StartingTime
		}
		if e := f.StartingTime.Add(f.Duration); m.MessageCount == 0 || e > end {
			end = e
		}
		m.MessageCount += f.MessageCount
	}
	m.StartingTime, m.Duration = start, end.Sub(start)
	for _, t := range w.topics {
		m.Topics = append(m.Topics, TopicInfo{Name: t.Name, Type: t.Type, SerializationFormat: t.SerializationFormat,
			OfferedQoSProfiles: t.OfferedQoSProfiles, TypeDescriptionHash: t.TypeDescriptionHash, MessageCount: w.counts[t]})
	}
	w.meta = m
	if w.single != "" {
		return &w.meta, nil
	}
	data, err := m.Marshal()
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(w.dir, MetadataFile), data, 0o644); err != nil {
		return nil, err
	}
	return &w.meta, nil
}

// Abort closes the current file without finishing the bag (the caller
// removes what was written).
func (w *Writer) Abort() {
	if w.cur != nil {
		w.cur.Close()
		w.cur = nil
	}
	w.closed = true
}

// Dropped returns the number of attachments and metadata records not
// stored (SQLite holds none).
func (w *Writer) Dropped() int { return w.dropped }
