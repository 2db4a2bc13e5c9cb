package bag

import (
	"bufio"
	"bytes"
	"database/sql/driver"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/foxglove/mcap/go/mcap"

	"github.com/timealign/timealign/pkg/stamp"
)

// Bag is an opened bag: where its storage files are and what its
// metadata.yaml says.
type Bag struct {
	// Path is the path given to Open.
	Path string
	// Dir is the bag's directory (for a single file, the file's).
	Dir string
	// Storage is the storage format of every file.
	Storage Storage
	// Files are the storage files in reading order.
	Files []string
	// Metadata is the bag's metadata.yaml, or nil when it has none (a
	// single file, or a directory whose recorder did not write one).
	Metadata *Metadata
	// NoMetadata reports a bag directory without metadata.yaml, or a
	// storage file named as rosbag2 names them (<dir>_<i>) in a directory
	// without one: rosbag2 writes metadata.yaml when a recording ends, so
	// this recording did not end cleanly. Its files are read as `ros2 bag
	// reindex` reads them.
	NoMetadata bool
	// From and To (optional) bound the log times of the messages Records
	// returns: one logged before From or after To is skipped (counted in
	// Reader.OutOfRange). They default to 0: no bound.
	From, To stamp.Time
	// TempDir (optional) is where a SQLite file whose write-ahead log
	// holds transactions is copied to be read (reading never writes
	// beside the bag). It defaults to os.TempDir().
	TempDir string
}

// Name returns the bag's name: its directory's, or the file's without
// extension.
func (b *Bag) Name() string {
	base := filepath.Base(filepath.Clean(b.Path))
	if len(b.Files) == 1 && b.Metadata == nil && filepath.Clean(b.Files[0]) == filepath.Clean(b.Path) {
		return strings.TrimSuffix(base, filepath.Ext(base))
	}
	return base
}

// Size returns the total size of the storage files in bytes.
func (b *Bag) Size() int64 {
	var n int64
	for _, f := range b.Files {
		if fi, err := os.Stat(f); err == nil {
			n += fi.Size()
		}
	}
	return n
}

var mcapMagic = []byte("\x89MCAP0\r\n")

// sniff returns a storage file's format from its first bytes.
func sniff(path string) (Storage, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	head := make([]byte, 16)
	n, _ := io.ReadFull(f, head)
	head = head[:n]
	switch {
	case bytes.HasPrefix(head, mcapMagic):
		return MCAP, nil
	case bytes.HasPrefix(head, []byte(sqliteMagic)):
		return SQLite, nil
	case n == 0:
		return "", &FileError{Path: path, Offset: 0, Row: -1, Err: fmt.Errorf("%w: empty file, not a bag", ErrFormat)}
	}
	if st, ok := storageOf(path); ok {
		return "", &FileError{Path: path, Offset: 0, Row: -1, Err: fmt.Errorf("%w: not a%s %s file (its first bytes are %q)", ErrFormat, article(st), st, head[:min(n, 8)])}
	}
	return "", &FileError{Path: path, Offset: 0, Row: -1, Err: fmt.Errorf("%w: neither MCAP nor SQLite (its first bytes are %q)", ErrFormat, head[:min(n, 8)])}
}

func article(s Storage) string {
	if s == SQLite {
		return ""
	}
	return "n"
}

// Open opens a bag: a directory with a metadata.yaml and its storage
// files, a directory of storage files without metadata.yaml (read in the
// order of their split index), or one .mcap or .db3 file. It checks that
// every storage file exists and is of the bag's format; it reads no
// messages.
func Open(path string) (*Bag, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		st, err := sniff(path)
		if err != nil {
			return nil, err
		}
		b := &Bag{Path: path, Dir: filepath.Dir(path), Storage: st, Files: []string{path}}
		b.NoMetadata = splitOfDir(path)
		return b, nil
	}
	b := &Bag{Path: path, Dir: path}
	mpath := filepath.Join(path, MetadataFile)
	data, err := os.ReadFile(mpath)
	switch {
	case err == nil:
		m, err := ParseMetadata(mpath, data)
		if err != nil {
			return nil, err
		}
		b.Metadata = m
		switch m.CompressionMode {
		case "", "none", "NONE":
		default:
			return nil, fmt.Errorf("%w: %s: rosbag2 %s compression (%s) of the %s: decompress the bag first (ros2 bag convert)",
				ErrUnsupported, mpath, m.CompressionFormat, strings.ToLower(m.CompressionMode), strings.ToLower(m.CompressionMode)+"s")
		}
		for _, rel := range m.RelativeFilePaths {
			p := filepath.Join(path, rel)
			if _, err := os.Stat(p); err != nil {
				// Old recorders wrote paths relative to the bag's parent.
				alt := filepath.Join(path, filepath.Base(rel))
				if _, err2 := os.Stat(alt); err2 != nil {
					return nil, fmt.Errorf("%w: %s lists %s, which does not exist", ErrFormat, mpath, rel)
				}
				p = alt
			}
			b.Files = append(b.Files, p)
		}
	case errors.Is(err, fs.ErrNotExist):
		b.Files, err = storageFiles(path)
		if err != nil {
			return nil, err
		}
		b.NoMetadata = true
	default:
		return nil, err
	}
	first := ""
	for _, f := range b.Files {
		st, err := sniff(f)
		if err != nil {
			// An empty file in a bag: its recorder was stopped before
			// writing anything to it (reading notes it).
			if fi, serr := os.Stat(f); serr == nil && fi.Size() == 0 {
				if st, ok := storageOf(f); ok && b.Storage == "" {
					b.Storage = st
				}
				continue
			}
			return nil, err
		}
		if first == "" {
			b.Storage, first = st, f
		} else if st != b.Storage {
			return nil, fmt.Errorf("%w: %s is %s, %s is %s: a bag has one storage format", ErrFormat, first, b.Storage, f, st)
		}
	}
	if b.Metadata != nil && b.Metadata.StorageIdentifier != "" && len(b.Files) > 0 && Storage(b.Metadata.StorageIdentifier) != b.Storage {
		return nil, fmt.Errorf("%w: %s says storage %q, but %s is %s", ErrFormat, mpath, b.Metadata.StorageIdentifier, b.Files[0], b.Storage)
	}
	if len(b.Files) > 0 && b.Storage == "" {
		b.Storage = MCAP
	}
	if b.Storage == "" && b.Metadata != nil {
		if st, err := ParseStorage(b.Metadata.StorageIdentifier); err == nil {
			b.Storage = st
		}
	}
	return b, nil
}

// splitOfDir reports whether a storage file is named <dir>_<i>.<ext> in a
// directory <dir> that has no metadata.yaml: a split file of a bag whose
// recorder did not finish.
func splitOfDir(path string) bool {
	dir := filepath.Dir(path)
	name, i := splitIndex(filepath.Base(path))
	if i < 0 || name != filepath.Base(dir) {
		return false
	}
	_, err := os.Stat(filepath.Join(dir, MetadataFile))
	return errors.Is(err, fs.ErrNotExist)
}

// storageFiles lists the .mcap and .db3 files of a directory in the order
// of the split index at the end of their names (name_0, name_1, …,
// name_10).
func storageFiles(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var files []string
	for _, e := range ents {
		if _, ok := storageOf(e.Name()); ok && e.Type().IsRegular() {
			files = append(files, e.Name())
		}
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%w: %s has no %s and no .mcap or .db3 file: not a bag", ErrFormat, dir, MetadataFile)
	}
	sort.SliceStable(files, func(i, j int) bool {
		pi, ni := splitIndex(files[i])
		pj, nj := splitIndex(files[j])
		if pi != pj {
			return pi < pj
		}
		return ni < nj
	})
	for i := range files {
		files[i] = filepath.Join(dir, files[i])
	}
	return files, nil
}

// splitIndex splits "name_12.mcap" into "name" and 12 (-1 without index).
func splitIndex(file string) (string, int) {
	base := strings.TrimSuffix(file, filepath.Ext(file))
	i := strings.LastIndexByte(base, '_')
	if i < 0 {
		return base, -1
	}
	n, err := strconv.Atoi(base[i+1:])
	if err != nil {
		return base, -1
	}
	return base[:i], n
}

// Skipped counts what a Reader skipped.
type Skipped struct {
	// BadChunks are MCAP chunks whose CRC did not match their content.
	BadChunks int `json:"bad_chunks,omitempty"`
	// BigAttachments are attachments larger than MaxAttachmentSize.
	BigAttachments int `json:"big_attachments,omitempty"`
	// UnknownTopic are messages on a channel or topic_id never defined.
	UnknownTopic int `json:"unknown_topic,omitempty"`
	// Errors are the errors that ended a file early (SkipFile).
	Errors []error `json:"-"`
	// Cuts are the files whose recorder did not finish them, where each
	// ends and what that lost (Cut.Lost), if anything.
	Cuts []Cut `json:"-"`
}

// Any reports whether anything was skipped: a file cut without losing a
// message (Cut.Lost false) is no skip.
func (s Skipped) Any() bool {
	if s.BadChunks+s.BigAttachments+s.UnknownTopic > 0 || len(s.Errors) > 0 {
		return true
	}
	for _, c := range s.Cuts {
		if c.Lost() {
			return true
		}
	}
	return false
}

// Reader streams the records of a bag's storage files in order. It is not
// safe for concurrent use.
type Reader struct {
	bag    *Bag
	file   int // index of the open file
	osf    *os.File
	mf     *mcapFile
	sf     *sqliteFile
	topics []*Topic
	byKey  map[string]*Topic
	local  map[uint16]*Topic // MCAP channel ID -> unified topic, this file
	sqlMap map[*Topic]*Topic // SQLite file topic -> unified topic
	raw    rawRecord
	done   int64 // bytes of the files before the open one
	skip   Skipped
	// outOfRange counts the messages skipped for the bag's From and To.
	outOfRange int
	closed     bool
}

// Records returns a reader of the bag's records from its first file.
func (b *Bag) Records() *Reader {
	return &Reader{bag: b, file: -1, byKey: map[string]*Topic{}}
}

// Topics returns the topics met so far, indexed by Topic.ID.
func (r *Reader) Topics() []*Topic { return r.topics }

// Skipped returns what was skipped so far.
func (r *Reader) Skipped() Skipped {
	s := r.skip
	s.Cuts = s.Cuts[:len(s.Cuts):len(s.Cuts)]
	if r.mf != nil {
		s.BadChunks += r.mf.badChunks
		s.BigAttachments += r.mf.bigAttachments
		s.UnknownTopic += r.mf.unknownChannel
		if r.mf.cut != nil {
			s.Cuts = append(s.Cuts, *r.mf.cut)
		}
	}
	if r.sf != nil {
		s.UnknownTopic += r.sf.unknownTopic
		if r.sf.cut != nil {
			s.Cuts = append(s.Cuts, *r.sf.cut)
		}
	}
	return s
}

// Progress returns the bytes of the bag read so far (approximately, for
// SQLite).
func (r *Reader) Progress() int64 {
	switch {
	case r.mf != nil:
		return r.done + r.mf.cr.n
	case r.sf != nil:
		return r.done + r.sf.read
	}
	return r.done
}

// File returns the index of the file being read.
func (r *Reader) File() int { return r.file }

func (r *Reader) closeFile() {
	if r.mf != nil {
		s := r.Skipped()
		r.skip = s
		r.mf.close()
		r.mf = nil
	}
	if r.sf != nil {
		s := r.Skipped()
		r.skip = s
		r.sf.close()
		r.sf = nil
	}
	if r.osf != nil {
		if fi, err := r.osf.Stat(); err == nil {
			r.done += fi.Size()
		}
		r.osf.Close()
		r.osf = nil
	} else if r.file >= 0 && r.file < len(r.bag.Files) {
		if fi, err := os.Stat(r.bag.Files[r.file]); err == nil {
			r.done += fi.Size()
		}
	}
}

// SkipFile records err (from Next) as skipped and moves on to the next
// file: what the failed file held after the error is not read.
func (r *Reader) SkipFile(err error) {
	r.closeFile()
	r.skip.Errors = append(r.skip.Errors, err)
}

func (r *Reader) openNext() error {
	r.closeFile()
	for {
		r.file++
		if r.file >= len(r.bag.Files) {
			return io.EOF
		}
		path := r.bag.Files[r.file]
		if fi, err := os.Stat(path); err == nil && fi.Size() == 0 {
			r.skip.Cuts = append(r.skip.Cuts, Cut{Path: path})
			continue
		}
		r.local = map[uint16]*Topic{}
		r.sqlMap = map[*Topic]*Topic{}
		switch r.bag.Storage {
		case SQLite:
			sf, err := openSQLite(path, r.bag.TempDir)
			if err != nil {
				return err
			}
			r.sf = sf
		default:
			f, err := os.Open(path)
			if err != nil {
				return err
			}
			fi, err := f.Stat()
			if err != nil {
				f.Close()
				return err
			}
			mf, err := openMCAP(path, bufio.NewReaderSize(f, 1<<20), f, fi.Size())
			if err != nil {
				f.Close()
				return err
			}
			r.osf, r.mf = f, mf
		}
		return nil
	}
}

// unify returns the bag-wide topic for a file's topic, and whether it is
// new.
func (r *Reader) unify(t *Topic) (*Topic, bool) {
	key := t.Name + "\x00" + t.Type + "\x00" + t.SerializationFormat
	if u, ok := r.byKey[key]; ok {
		if u.Schema == nil && t.Schema != nil {
			u.Schema = t.Schema
		}
		return u, false
	}
	t.ID = len(r.topics)
	r.topics = append(r.topics, t)
	r.byKey[key] = t
	return t, true
}

// Next reads the next record into rec; io.EOF after the last file. An
// error names the file and where in it reading stopped; call SkipFile to
// go on with the next file, or stop.
func (r *Reader) Next(rec *Record) error {
	if r.closed {
		return io.EOF
	}
	for {
		if r.mf == nil && r.sf == nil {
			if err := r.openNext(); err != nil {
				if errors.Is(err, io.EOF) {
					return io.EOF
				}
				// The file cannot be opened: it counts as read.
				return err
			}
		}
		raw := &r.raw
		var err error
		if r.mf != nil {
			err = r.mf.next(raw)
		} else {
			err = r.sf.next(raw)
		}
		if errors.Is(err, io.EOF) {
			r.closeFile()
			continue
		}
		if err != nil {
			return err
		}
		rec.File = r.file
		rec.Kind = raw.kind
		switch raw.kind {
		case KindMessage:
			var t *Topic
			if r.mf != nil {
				t = r.local[raw.channel]
			} else {
				t = r.sqlMap[raw.topic]
			}
			if (r.bag.From != 0 && raw.msg.LogTime < r.bag.From) || (r.bag.To != 0 && raw.msg.LogTime > r.bag.To) {
				r.outOfRange++
				continue
			}
			rec.Message = raw.msg
			rec.Message.Topic = t
			return nil
		case KindTopic:
			u, isNew := r.unify(raw.topic)
			if r.mf != nil {
				r.local[raw.channel] = u
			} else {
				r.sqlMap[raw.topic] = u
			}
			if !isNew {
				continue
			}
			rec.Topic = u
			return nil
		case KindAttachment:
			rec.Attachment = raw.att
			return nil
		case KindMetadata:
			rec.Metadata = raw.meta
			return nil
		}
	}
}

// OutOfRange returns the messages skipped so far because their log time is
// outside the bag's From and To.
func (r *Reader) OutOfRange() int { return r.outOfRange }

// Close closes the open file.
func (r *Reader) Close() {
	r.closeFile()
	r.closed = true
}

// Summary is what a bag's storage files say about it without reading every
// message: per-topic counts and the time range, from each MCAP file's
// summary section or a SQLite aggregate query.
type Summary struct {
	Topics []TopicSummary
	// Start and End are the first and last log times (0 when empty).
	Start, End   stamp.Time
	MessageCount uint64
	Files        []FileInfo
	// Compression is the first MCAP chunk's compression ("" for none or
	// SQLite).
	Compression string
	// Scanned reports that a file had no usable summary and was read
	// message by message.
	Scanned bool
	// CorruptSummaries are the files (base names) whose recorder finished
	// them (the footer is there) but whose summary section could not be
	// parsed, with why: they were read through instead (Scanned).
	CorruptSummaries []string
	// Skipped is what reading a file without a summary skipped, the files
	// whose recorder did not finish them among it (Skipped.Cuts).
	Skipped Skipped
}

// TopicSummary is one topic of a Summary.
type TopicSummary struct {
	Topic *Topic
	Count uint64
	// Start and End are the topic's first and last log times (from an
	// MCAP summary, through its chunks' message indexes; 0 when a file
	// has none).
	Start, End stamp.Time
	// Bytes is the size of the topic's messages (their serialized data),
	// from SummarizeSizes; 0 from Summarize on an MCAP summary.
	Bytes uint64
}

// Summarize returns the bag's Summary. No message is read: an MCAP file's
// summary and two message index records per topic, or a SQLite aggregate
// query, give it (a file without a summary is read through).
func (b *Bag) Summarize() (*Summary, error) { return b.summarize(false) }

// SummarizeSizes returns the bag's Summary with each topic's Bytes. An
// MCAP summary has no sizes per channel (and writers put schema and
// channel records between the messages of a chunk, so the message
// indexes' offsets do not give them either): every MCAP file is read
// through.
func (b *Bag) SummarizeSizes() (*Summary, error) { return b.summarize(true) }

func (b *Bag) summarize(sizes bool) (*Summary, error) {
	s := &Summary{}
	byKey := map[string]int{}
	add := func(t *Topic, n uint64, start, end int64, bytes uint64) {
		key := t.Name + "\x00" + t.Type + "\x00" + t.SerializationFormat
		i, ok := byKey[key]
		if !ok {
			i = len(s.Topics)
			t.ID = i
			s.Topics = append(s.Topics, TopicSummary{Topic: t})
			byKey[key] = i
		}
		ts := &s.Topics[i]
		if n > 0 && start != 0 {
			if ts.Count == 0 || stamp.Time(start) < ts.Start {
				ts.Start = stamp.Time(start)
			}
			if stamp.Time(end) > ts.End {
				ts.End = stamp.Time(end)
			}
		}
		ts.Count += n
		ts.Bytes += bytes
	}
	for _, path := range b.Files {
		fi := FileInfo{Path: filepath.Base(path)}
		if st, err := os.Stat(path); err == nil && st.Size() == 0 {
			s.Skipped.Cuts = append(s.Skipped.Cuts, Cut{Path: path})
			s.Files = append(s.Files, fi)
			continue
		}
		var fs fileSummary
		var err error
		switch b.Storage {
		case SQLite:
			fs, err = summarizeSQLite(path, b.TempDir, add, &s.Skipped)
		default:
			fs, err = summarizeMCAP(path, add, &s.Skipped, sizes)
			s.Scanned = s.Scanned || fs.scanned
			if fs.summaryErr != nil {
				s.CorruptSummaries = append(s.CorruptSummaries, fmt.Sprintf("%s: %v", filepath.Base(path), fs.summaryErr))
			}
			if s.Compression == "" {
				s.Compression = fs.compression
			}
		}
		if err != nil {
			return nil, err
		}
		fi.StartingTime, fi.Duration, fi.MessageCount = stamp.Time(fs.start), time.Duration(fs.end-fs.start), fs.count
		s.Files = append(s.Files, fi)
		if fs.count > 0 {
			if s.MessageCount == 0 || stamp.Time(fs.start) < s.Start {
				s.Start = stamp.Time(fs.start)
			}
			if stamp.Time(fs.end) > s.End {
				s.End = stamp.Time(fs.end)
			}
		}
		s.MessageCount += fs.count
	}
	return s, nil
}

// fileSummary is what a storage file's summary says, besides its topics
// (given to an addTopic as they are found).
type fileSummary struct {
	start, end int64 // first and last log time, when count > 0
	count      uint64
	// compression is an MCAP file's first chunk's ("" for none).
	compression string
	// scanned: an MCAP file without a usable summary was read through.
	scanned bool
	// summaryErr: the file is finished (its footer and closing magic are
	// there) but its summary section is corrupt.
	summaryErr error
}

// addTopic adds n messages of topic t, logged from start to end, of
// bytes bytes of data, to a Summary.
type addTopic func(t *Topic, n uint64, start, end int64, bytes uint64)

func summarizeSQLite(path, tempDir string, add addTopic, sk *Skipped) (fileSummary, error) {
	var fs fileSummary
	f, err := openSQLite(path, tempDir)
	if err != nil {
		return fs, err
	}
	defer f.close()
	if f.cut != nil {
		sk.Cuts = append(sk.Cuts, *f.cut)
	}
	rows, err := f.query("SELECT topic_id, COUNT(*), MIN(timestamp), MAX(timestamp), SUM(LENGTH(data)) FROM messages GROUP BY topic_id")
	if err != nil {
		return fs, &FileError{Path: path, Offset: -1, Row: -1, Err: fmt.Errorf("%w: %v", ErrFormat, err)}
	}
	defer rows.Close()
	counts := map[int64][4]int64{}
	dest := make([]driver.Value, 5)
	for {
		err := rows.Next(dest)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fs, &FileError{Path: path, Offset: -1, Row: -1, Err: fmt.Errorf("%w: %v", ErrFormat, err)}
		}
		id, _ := dest[0].(int64)
		n, _ := dest[1].(int64)
		lo, _ := dest[2].(int64)
		hi, _ := dest[3].(int64)
		size, _ := dest[4].(int64)
		counts[id] = [4]int64{n, lo, hi, size}
	}
	ids := make([]int64, 0, len(f.byID))
	for id := range f.byID {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	for _, id := range ids {
		c := counts[id]
		add(f.byID[id], uint64(c[0]), c[1], c[2], uint64(c[3]))
		fs.addSpan(uint64(c[0]), c[1], c[2])
	}
	return fs, nil
}

// addSpan counts n messages logged from start to end.
func (fs *fileSummary) addSpan(n uint64, start, end int64) {
	if n == 0 {
		return
	}
	if fs.count == 0 || start < fs.start {
		fs.start = start
	}
	if fs.count == 0 || end > fs.end {
		fs.end = end
	}
	fs.count += n
}

// readMessageIndex reads the message index record at off.
func readMessageIndex(ra io.ReaderAt, off int64) (*mcap.MessageIndex, bool) {
	var head [9]byte
	if _, err := ra.ReadAt(head[:], off); err != nil || mcap.OpCode(head[0]) != mcap.OpMessageIndex {
		return nil, false
	}
	n := binary.LittleEndian.Uint64(head[1:])
	if n > 1<<31 {
		return nil, false
	}
	// Read, not allocated by the length: a damaged one (up to 2 GiB) costs
	// no more than the file holds.
	buf, err := io.ReadAll(io.NewSectionReader(ra, off+9, int64(n)))
	if err != nil || uint64(len(buf)) != n {
		return nil, false
	}
	mi, err := mcap.ParseMessageIndex(buf)
	if err != nil {
		return nil, false
	}
	return mi, true
}

// channelTimes returns the first and last log time of channel id from the
// message index records of the chunks that hold it: for each end, the
// chunks are visited from the earliest start (latest end) on, until no
// other chunk can hold an earlier (later) message, so a channel costs one
// or two index reads at each end. ok is false when a chunk index lacks
// the channel's message index (an unindexed file).
func channelTimes(ra io.ReaderAt, chunks []*mcap.ChunkIndex, id uint16) (first, last int64, ok bool) {
	var with []*mcap.ChunkIndex
	for _, ci := range chunks {
		if _, has := ci.MessageIndexOffsets[id]; has {
			with = append(with, ci)
		}
	}
	if len(with) == 0 {
		return 0, 0, false
	}
	times := func(ci *mcap.ChunkIndex) (lo, hi uint64, ok bool) {
		mi, ok := readMessageIndex(ra, int64(ci.MessageIndexOffsets[id]))
		if !ok || len(mi.Records) == 0 {
			return 0, 0, false
		}
		lo, hi = mi.Records[0].Timestamp, mi.Records[0].Timestamp
		for _, r := range mi.Records {
			lo, hi = min(lo, r.Timestamp), max(hi, r.Timestamp)
		}
		return lo, hi, true
	}
	sort.Slice(with, func(i, j int) bool { return with[i].MessageStartTime < with[j].MessageStartTime })
	lo, found := uint64(math.MaxUint64), false
	for _, ci := range with {
		if found && ci.MessageStartTime >= lo {
			break
		}
		l, _, ok := times(ci)
		if !ok {
			return 0, 0, false
		}
		lo, found = min(lo, l), true
	}
	sort.Slice(with, func(i, j int) bool { return with[i].MessageEndTime > with[j].MessageEndTime })
	hi := uint64(0)
	found = false
	for _, ci := range with {
		if found && ci.MessageEndTime <= hi {
			break
		}
		_, h, ok := times(ci)
		if !ok {
			return 0, 0, false
		}
		hi, found = max(hi, h), true
	}
	return int64(lo), int64(hi), true
}

// mcapInfo is rd.Info, with a panic of the MCAP library on a corrupt
// summary section turned into an error (errLexerPanic, as when reading):
// the file is then read through instead. The library (v1.9.0) slices its
// 32-byte buffer by a chunk's compression length in the summary section
// unchecked; FuzzMCAP found it.
func mcapInfo(rd *mcap.Reader) (info *mcap.Info, err error) {
	defer func() {
		if r := recover(); r != nil {
			info, err = nil, fmt.Errorf("summary section: %w (%v)", errLexerPanic, r)
		}
	}()
	return rd.Info()
}

// MCAP's framing, as checkMCAPLengths reads it: a record is an opcode
// byte and a little-endian uint64 length, then that many bytes; a file
// ends with the footer record (20 bytes) and the magic (8 bytes).
const (
	mcapRecordHead = 1 + 8
	mcapFooterLen  = 20
	mcapMagicLen   = 8
	mcapOpFooter   = 0x02
	mcapOpChunk    = 0x06
)

// checkMCAPLengths checks, by their headers alone, the records of an MCAP
// file that the MCAP library's NewReader and Info read whole: the MCAP
// library allocates what a record claims, up to 2 GiB, before it finds
// the file too short, so a few damaged bytes would cost that much memory
// (a 19-byte file made bag info allocate 1 GB; under a memory limit, a
// crash). The header record (after the magic) must fit in the file: if it
// does not, the file is as good as cut off there (an error wrapping
// io.ErrUnexpectedEOF), and reading it through says where. Then the
// records of the summary section (from the footer's summary start to the
// footer) must each fit, and none be a chunk (a summary never holds one,
// and the library would decompress it): if not, an ErrFormat error, a
// corrupt summary. A file without a footer or summary passes the second
// check: Info reports those itself.
func checkMCAPLengths(f *os.File) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	size := fi.Size()
	var head [mcapRecordHead]byte
	if _, err := f.ReadAt(head[:], mcapMagicLen); err == nil {
		if n, left := binary.LittleEndian.Uint64(head[1:]), uint64(size-mcapMagicLen-mcapRecordHead); n > left {
			return fmt.Errorf("header record claims %d bytes, %d are left in the file: %w", n, left, io.ErrUnexpectedEOF)
		}
	}
	tail := int64(mcapMagicLen + mcapRecordHead + mcapFooterLen + mcapMagicLen)
	if size < tail {
		return nil
	}
	var foot [mcapFooterLen]byte
	if _, err := f.ReadAt(foot[:], size-mcapMagicLen-mcapFooterLen); err != nil {
		return nil
	}
	start := binary.LittleEndian.Uint64(foot[:8])
	if start == 0 || start >= uint64(size) {
		return nil // no summary; or an offset Info rejects itself
	}
	for pos := int64(start); pos < size; {
		if _, err := f.ReadAt(head[:], pos); err != nil {
			return fmt.Errorf("summary section: record at byte %d: %w", pos, ErrFormat)
		}
		op, n := head[0], binary.LittleEndian.Uint64(head[1:])
		if left := uint64(size - pos - mcapRecordHead); n > left {
			return fmt.Errorf("summary section: record at byte %d (opcode 0x%02x) claims %d bytes, %d are left in the file: %w", pos, op, n, left, ErrFormat)
		}
		switch op {
		case mcapOpFooter:
			return nil
		case mcapOpChunk:
			return fmt.Errorf("summary section: a chunk at byte %d: %w", pos, ErrFormat)
		}
		pos += mcapRecordHead + int64(n)
	}
	return nil
}

// summarizeMCAP summarizes an MCAP file from its summary section, or
// reads it through when it has none (or sizes asks for the topics' sizes,
// which a summary does not hold).
func summarizeMCAP(path string, add addTopic, sk *Skipped, sizes bool) (fileSummary, error) {
	fh, err := os.Open(path)
	if err != nil {
		return fileSummary{}, err
	}
	defer fh.Close()
	var info *mcap.Info
	err = checkMCAPLengths(fh)
	if err == nil {
		var rd *mcap.Reader
		if rd, err = mcap.NewReader(fh); err == nil {
			info, err = mcapInfo(rd)
		}
	}
	if err == nil && info.Statistics != nil && !sizes {
		return mcapSummary(fh, info, add), nil
	}
	// No summary (the recorder did not finish the file), or sizes asked
	// for: read it.
	fs := fileSummary{scanned: info == nil || info.Statistics == nil}
	var unfinished *mcap.ErrBadMagic
	if err != nil && !errors.As(err, &unfinished) && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		// The footer is there (a file cut off while it was written has
		// no closing magic): what follows it is damaged.
		fs.summaryErr = err
	}
	if info != nil && len(info.ChunkIndexes) > 0 {
		fs.compression = string(info.ChunkIndexes[0].Compression)
	}
	if _, err := fh.Seek(0, io.SeekStart); err != nil {
		return fileSummary{scanned: true}, err
	}
	fi, err := fh.Stat()
	if err != nil {
		return fileSummary{scanned: true}, err
	}
	mf, err := openMCAP(path, bufio.NewReaderSize(fh, 1<<20), fh, fi.Size())
	if err != nil {
		return fileSummary{scanned: true}, err
	}
	defer mf.close()
	scanMCAP(mf, add, sk, &fs)
	return fs, nil
}

// mcapSummary is what an MCAP file's summary section says: the topics
// (their first and last log times from the chunks' message indexes) and
// the statistics.
func mcapSummary(ra io.ReaderAt, info *mcap.Info, add addTopic) fileSummary {
	schemas := map[uint16]*Schema{}
	for id, s := range info.Schemas {
		schemas[id] = &Schema{Name: s.Name, Encoding: s.Encoding, Data: s.Data}
	}
	ids := make([]int, 0, len(info.Channels))
	for id := range info.Channels {
		ids = append(ids, int(id))
	}
	sort.Ints(ids)
	for _, id := range ids {
		c := info.Channels[uint16(id)]
		t := &Topic{Name: c.Topic, SerializationFormat: c.MessageEncoding, Metadata: c.Metadata,
			OfferedQoSProfiles: c.Metadata["offered_qos_profiles"], TypeDescriptionHash: c.Metadata["topic_type_hash"]}
		if s := schemas[c.SchemaID]; s != nil {
			t.Schema, t.Type = s, s.Name
		}
		first, last, ok := channelTimes(ra, info.ChunkIndexes, c.ID)
		if !ok {
			first, last = 0, 0
		}
		add(t, info.Statistics.ChannelMessageCounts[c.ID], first, last, 0)
	}
	var fs fileSummary
	if len(info.ChunkIndexes) > 0 {
		fs.compression = string(info.ChunkIndexes[0].Compression)
	}
	st := info.Statistics
	if st.MessageCount > 0 {
		fs.start, fs.end = int64(st.MessageStartTime), int64(st.MessageEndTime)
	}
	fs.count = st.MessageCount
	return fs
}

// scanMCAP reads every record of mf into fs (and the topics it finds, with
// their sizes, into add); what it cannot read goes into sk.
func scanMCAP(mf *mcapFile, add addTopic, sk *Skipped, fs *fileSummary) {
	type acc struct {
		t          *Topic
		n, bytes   uint64
		start, end int64
	}
	var order []*acc
	byChan := map[uint16]*acc{}
	var rec rawRecord
	for {
		err := mf.next(&rec)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			// Keep what was read, and say where reading stopped.
			sk.Errors = append(sk.Errors, err)
			break
		}
		switch rec.kind {
		case KindTopic:
			a := &acc{t: rec.topic}
			byChan[rec.channel] = a
			order = append(order, a)
		case KindMessage:
			a := byChan[rec.channel]
			lt := int64(rec.msg.LogTime)
			if a.n == 0 || lt < a.start {
				a.start = lt
			}
			if lt > a.end {
				a.end = lt
			}
			a.n++
			a.bytes += uint64(len(rec.msg.Data))
			fs.addSpan(1, lt, lt)
		}
	}
	for _, a := range order {
		add(a.t, a.n, a.start, a.end, a.bytes)
	}
	sk.BadChunks += mf.badChunks
	sk.UnknownTopic += mf.unknownChannel
	if mf.cut != nil {
		sk.Cuts = append(sk.Cuts, *mf.cut)
	}
}
