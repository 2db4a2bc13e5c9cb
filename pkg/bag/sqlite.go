package bag

import (
	"bytes"
	"database/sql/driver"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"modernc.org/sqlite"

	"github.com/timealign/timealign/pkg/stamp"
)

// SQLite storage: rosbag2's sqlite3 plugin. A file holds the tables
// topics(id, name, type, serialization_format, offered_qos_profiles
// [, type_description_hash]) and messages(id, topic_id, timestamp, data),
// and from Humble on schema(schema_version, ros_distro) and an empty
// metadata table. Messages are read in timestamp order, as rosbag2 plays
// them. The driver is used directly (no database/sql, whose pool starts a
// goroutine), and a query with no context starts none either.

// sqliteDSN returns the driver's name for a file opened read-only or
// read-write; immutable (read-only) tells SQLite that nothing changes the
// file: it then takes no lock and ignores journals.
func sqliteDSN(path string, readOnly, immutable bool) string {
	u := url.URL{Scheme: "file", Opaque: url.PathEscape(path)}
	q := url.Values{}
	if readOnly {
		q.Set("mode", "ro")
	}
	if immutable {
		q.Set("immutable", "1")
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// sqliteMagic starts every SQLite database file.
const sqliteMagic = "SQLite format 3\x00"

// sqliteDamage returns err, from SQLite on file path, with what a user
// needs when SQLite finds the file damaged (SQLITE_CORRUPT, SQLITE_NOTADB):
// whether the file is shorter than its header says (cut off while it was
// written: the recorder killed, a crash, a power cut). Other errors are
// returned as they are.
func sqliteDamage(path string, err error) error {
	var se *sqlite.Error
	if !errors.As(err, &se) || (se.Code()&0xff != sqliteCorrupt && se.Code()&0xff != sqliteNotADB) {
		return err
	}
	fi, serr := os.Stat(path)
	head := make([]byte, 100)
	fh, oerr := os.Open(path)
	if serr != nil || oerr != nil {
		return fmt.Errorf("%w (the file is damaged)", err)
	}
	_, rerr := io.ReadFull(fh, head)
	fh.Close()
	// The header gives the page size (1 stands for 65536) and, when the
	// change counter matches the one it was written with, the pages.
	pageSize := int64(binary.BigEndian.Uint16(head[16:]))
	if pageSize == 1 {
		pageSize = 65536
	}
	pages := int64(binary.BigEndian.Uint32(head[28:]))
	valid := binary.BigEndian.Uint32(head[24:]) == binary.BigEndian.Uint32(head[92:])
	if rerr == nil && valid && pages > 0 && fi.Size() < pages*pageSize {
		return fmt.Errorf("%w: the file ends at byte %d of the %d its header gives (%d pages of %d bytes): it was cut off "+
			"while it was written (the recorder killed, a crash, a power cut), and SQLite cannot read its messages",
			err, fi.Size(), pages*pageSize, pages, pageSize)
	}
	return fmt.Errorf("%w (the file is damaged)", err)
}

// SQLite's primary result codes for a damaged file.
const (
	sqliteCorrupt = 11
	sqliteNotADB  = 26
)

// sqliteFile reads the records of one .db3 file: its topics, then its
// messages in timestamp order.
type sqliteFile struct {
	path   string
	conn   driver.Conn
	topics []*Topic         // in id order
	byID   map[int64]*Topic // topic_id -> topic
	next_  int              // next topic to return
	rows   driver.Rows
	dest   []driver.Value
	row    int64 // id of the last message row read
	read   int64 // bytes of message data read
	// unknownTopic counts messages whose topic_id has no topics row.
	unknownTopic int
	// cut is set when the recorder left a write-ahead log or a rollback
	// journal.
	cut *Cut
	// tempDir holds the copy read in the place of a file with a
	// write-ahead log ("" if none), removed by close.
	tempDir string
}

// journalMagic starts a SQLite rollback journal that holds a transaction.
var journalMagic = []byte{0xd9, 0xd5, 0x05, 0xf9, 0x20, 0xa1, 0x63, 0xd7}

// hotJournal reports whether path-journal holds the rollback journal of
// a transaction (a journal emptied, truncated or zeroed at commit holds
// none).
func hotJournal(path string) bool {
	f, err := os.Open(path + "-journal")
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, len(journalMagic))
	_, err = io.ReadFull(f, head)
	return err == nil && bytes.Equal(head, journalMagic)
}

// openSQLite opens a .db3 file to read; a copy of a file with a
// write-ahead log goes into a new directory under tempDir ("": the
// system's).
func openSQLite(path, tempDir string) (*sqliteFile, error) {
	fe := func(err error) error { return &FileError{Path: path, Offset: -1, Row: -1, Err: err} }
	// The header: its magic, and the file format versions at 18 and 19
	// (2: WAL mode).
	head := make([]byte, 20)
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	_, err = io.ReadFull(fh, head)
	fh.Close()
	if err != nil || string(head[:len(sqliteMagic)]) != sqliteMagic {
		return nil, fe(fmt.Errorf("%w: not a SQLite database (no SQLite header)", ErrFormat))
	}
	walMode := head[18] == 2 || head[19] == 2
	// Reading never writes beside the bag. A read-only connection to a
	// WAL-mode file creates its -wal and -shm files (and rewrites an
	// -shm it finds), so a WAL-mode file with no log to apply is opened
	// immutable: no lock, no journal, no file created. A write-ahead log
	// that holds transactions (a recorder killed in WAL mode) is read from
	// a copy of the file and its log in a temporary directory, which
	// SQLite may write to; the bag's own files stay as they are. A file
	// in rollback mode is opened read-only, which creates nothing and
	// takes shared locks, so that a recording still being written is read
	// consistently.
	var f *sqliteFile
	switch {
	case walSize(path) > 0:
		f, err = openSQLiteCopy(path, tempDir)
		if err == nil {
			f.cut = &Cut{Path: path, Leftover: path + "-wal"}
		}
	case walMode:
		f, err = openSQLiteConn(path, path, true)
	default:
		f, err = openSQLiteConn(path, path, false)
		if err != nil && hotJournal(path) {
			// A recorder stopped inside a transaction left its rollback
			// journal: a read-only connection may not roll it back
			// (SQLite says "attempt to write a readonly database"), and
			// the input is never written. The file is read as it stands.
			var err2 error
			if f, err2 = openSQLiteConn(path, path, true); err2 == nil {
				err = nil
			}
		}
		if err == nil && hotJournal(path) {
			f.cut = &Cut{Path: path, Leftover: path + "-journal"}
		}
	}
	if err != nil {
		return nil, fe(err)
	}
	return f, nil
}

// walSize returns the bytes of path's write-ahead log beyond its 32-byte
// header: 0 when there is no log, or an empty one (a reader such as
// ros2 bag info leaves one behind; it holds no transaction).
func walSize(path string) int64 {
	fi, err := os.Stat(path + "-wal")
	if err != nil || fi.Size() <= 32 {
		return 0
	}
	return fi.Size() - 32
}

// openSQLiteCopy copies path and its -wal into a new temporary directory
// and opens the copy read-only (SQLite builds the log's index there); the
// directory is removed when the file is closed.
func openSQLiteCopy(path, tempDir string) (_ *sqliteFile, err error) {
	dir, err := os.MkdirTemp(tempDir, "timealign-sqlite-*")
	if err != nil {
		return nil, fmt.Errorf("reading the write-ahead log of %s needs a temporary copy: %w", path, err)
	}
	defer func() {
		if err != nil {
			os.RemoveAll(dir)
		}
	}()
	cp := filepath.Join(dir, "bag.db3")
	for _, suffix := range []string{"", "-wal"} {
		if err := copyFile(cp+suffix, path+suffix); err != nil {
			return nil, fmt.Errorf("reading the write-ahead log of %s needs a temporary copy: %w", path, err)
		}
	}
	f, err := openSQLiteConn(cp, path, false)
	if err != nil {
		return nil, err
	}
	f.tempDir = dir
	return f, nil
}

// copyFile copies src to a new file dst.
func copyFile(dst, src string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// openSQLiteConn opens the file at open read-only; path is the bag's file
// that errors name (open is a temporary copy of it, or path itself).
func openSQLiteConn(open, path string, immutable bool) (*sqliteFile, error) {
	conn, err := (&sqlite.Driver{}).Open(sqliteDSN(open, true, immutable))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrFormat, sqliteDamage(path, err))
	}
	f := &sqliteFile{path: path, conn: conn, byID: map[int64]*Topic{}, row: -1}
	if err := f.readTopics(); err != nil {
		conn.Close()
		return nil, err
	}
	return f, nil
}

// query runs a query with the deprecated context-free interface, which
// starts no goroutine.
func (f *sqliteFile) query(q string) (driver.Rows, error) {
	qr, ok := f.conn.(driver.Queryer) //nolint:staticcheck // the context-free call starts no goroutine
	if !ok {
		return nil, fmt.Errorf("%w: SQLite driver without Query", ErrUnsupported)
	}
	return qr.Query(q, nil)
}

// columns returns the column names of a table (none if it does not exist).
func (f *sqliteFile) columns(table string) ([]string, error) {
	rows, err := f.query("PRAGMA table_info(" + table + ")")
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrFormat, sqliteDamage(f.path, err))
	}
	defer rows.Close()
	cols := rows.Columns()
	nameCol := -1
	for i, c := range cols {
		if c == "name" {
			nameCol = i
		}
	}
	dest := make([]driver.Value, len(cols))
	var names []string
	for {
		err := rows.Next(dest)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrFormat, sqliteDamage(f.path, err))
		}
		if nameCol >= 0 {
			names = append(names, asString(dest[nameCol]))
		}
	}
	return names, nil
}

func asString(v driver.Value) string {
	switch x := v.(type) {
	case string:
		return x
	case []byte:
		return string(x)
	case nil:
		return ""
	}
	return fmt.Sprint(v)
}

func (f *sqliteFile) readTopics() error {
	cols, err := f.columns("topics")
	if err != nil {
		return err
	}
	if len(cols) == 0 {
		return fmt.Errorf("%w: no topics table (not a rosbag2 SQLite file)", ErrFormat)
	}
	mcols, err := f.columns("messages")
	if err != nil {
		return err
	}
	for _, want := range []string{"topic_id", "timestamp", "data"} {
		if !contains(mcols, want) {
			return fmt.Errorf("%w: the messages table has no %s column (not a rosbag2 SQLite file)", ErrFormat, want)
		}
	}
	sel := []string{"id", "name", "type", "serialization_format"}
	for _, opt := range []string{"offered_qos_profiles", "type_description_hash"} {
		if contains(cols, opt) {
			sel = append(sel, opt)
		}
	}
	for _, want := range sel[:4] {
		if !contains(cols, want) {
			return fmt.Errorf("%w: the topics table has no %s column", ErrFormat, want)
		}
	}
	rows, err := f.query("SELECT " + strings.Join(sel, ", ") + " FROM topics ORDER BY id")
	if err != nil {
		return fmt.Errorf("%w: reading topics: %v", ErrFormat, sqliteDamage(f.path, err))
	}
	defer rows.Close()
	dest := make([]driver.Value, len(sel))
	for {
		err := rows.Next(dest)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("%w: reading topics: %v", ErrFormat, sqliteDamage(f.path, err))
		}
		id, ok := dest[0].(int64)
		if !ok {
			return fmt.Errorf("%w: topics row with id %v", ErrFormat, dest[0])
		}
		t := &Topic{Name: asString(dest[1]), Type: asString(dest[2]), SerializationFormat: asString(dest[3])}
		for i := 4; i < len(sel); i++ {
			switch sel[i] {
			case "offered_qos_profiles":
				t.OfferedQoSProfiles = asString(dest[i])
			case "type_description_hash":
				t.TypeDescriptionHash = asString(dest[i])
			}
		}
		f.topics = append(f.topics, t)
		f.byID[id] = t
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// next returns the next record: the topics first, then the messages.
func (f *sqliteFile) next(rec *rawRecord) error {
	if f.next_ < len(f.topics) {
		rec.kind, rec.topic = KindTopic, f.topics[f.next_]
		f.next_++
		return nil
	}
	if f.rows == nil {
		rows, err := f.query("SELECT id, topic_id, timestamp, data FROM messages ORDER BY timestamp, id")
		if err != nil {
			return &FileError{Path: f.path, Offset: -1, Row: -1, Err: fmt.Errorf("%w: reading messages: %v", ErrFormat, sqliteDamage(f.path, err))}
		}
		f.rows = rows
		f.dest = make([]driver.Value, 4)
	}
	for {
		err := f.rows.Next(f.dest)
		if errors.Is(err, io.EOF) {
			return io.EOF
		}
		if err != nil {
			return &FileError{Path: f.path, Offset: -1, Row: f.row + 1, Err: fmt.Errorf("%w: %v", ErrFormat, sqliteDamage(f.path, err))}
		}
		id, _ := f.dest[0].(int64)
		f.row = id
		tid, ok1 := f.dest[1].(int64)
		ts, ok2 := f.dest[2].(int64)
		if !ok1 || !ok2 {
			return &FileError{Path: f.path, Offset: -1, Row: id, Err: fmt.Errorf("%w: topic_id %v, timestamp %v: not integers", ErrFormat, f.dest[1], f.dest[2])}
		}
		var data []byte
		switch d := f.dest[3].(type) {
		case []byte:
			data = d
		case string:
			data = []byte(d)
		case nil:
		default:
			return &FileError{Path: f.path, Offset: -1, Row: id, Err: fmt.Errorf("%w: data is a %T, not a blob", ErrFormat, f.dest[3])}
		}
		f.read += int64(len(data)) + 32
		t := f.byID[tid]
		if t == nil {
			f.unknownTopic++
			continue
		}
		rec.kind = KindMessage
		rec.topic = t
		rec.msg = Message{LogTime: stamp.Time(ts), PublishTime: stamp.Time(ts), Data: data}
		return nil
	}
}

func (f *sqliteFile) close() {
	if f.rows != nil {
		f.rows.Close()
	}
	f.conn.Close()
	if f.tempDir != "" {
		os.RemoveAll(f.tempDir)
	}
}

// SQLiteWriter writes one rosbag2 .db3 file as Humble's sqlite3 plugin
// does (schema version 3, the same tables and index). Messages are
// inserted in one transaction per 10000 messages; the file is not safe to
// read until Close.
type SQLiteWriter struct {
	path   string
	conn   driver.Conn
	insert driver.Stmt
	topics map[*Topic]int64
	inTx   int
	closed bool
}

// NewSQLiteWriter creates the .db3 file path (it must not exist) for ROS
// distribution distro ("humble" when empty).
func NewSQLiteWriter(path, distro string) (*SQLiteWriter, error) {
	if _, err := os.Lstat(path); err == nil {
		return nil, fmt.Errorf("%s: %w", path, os.ErrExist)
	}
	if distro == "" {
		distro = "humble"
	}
	conn, err := (&sqlite.Driver{}).Open(sqliteDSN(path, false, false))
	if err != nil {
		return nil, err
	}
	w := &SQLiteWriter{path: path, conn: conn, topics: map[*Topic]int64{}}
	stmts := []string{
		// The output is written to a temporary place and renamed: no
		// journal is needed for safety, and none makes writing fast.
		"PRAGMA journal_mode=OFF",
		"PRAGMA synchronous=OFF",
		"PRAGMA page_size=4096",
		"CREATE TABLE schema(schema_version INTEGER PRIMARY KEY,ros_distro TEXT NOT NULL);",
		"CREATE TABLE metadata(id INTEGER PRIMARY KEY,metadata_version INTEGER NOT NULL,metadata TEXT NOT NULL);",
		"CREATE TABLE topics(id INTEGER PRIMARY KEY,name TEXT NOT NULL,type TEXT NOT NULL,serialization_format TEXT NOT NULL,offered_qos_profiles TEXT NOT NULL);",
		"CREATE TABLE messages(id INTEGER PRIMARY KEY,topic_id INTEGER NOT NULL,timestamp INTEGER NOT NULL, data BLOB NOT NULL);",
	}
	for _, s := range stmts {
		if err := w.exec(s); err != nil {
			conn.Close()
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	if err := w.exec("INSERT INTO schema (schema_version, ros_distro) VALUES (?, ?)", int64(3), distro); err != nil {
		conn.Close()
		return nil, err
	}
	ins, err := conn.Prepare("INSERT INTO messages (timestamp, topic_id, data) VALUES (?, ?, ?);")
	if err != nil {
		conn.Close()
		return nil, err
	}
	w.insert = ins
	return w, nil
}

func (w *SQLiteWriter) exec(q string, args ...driver.Value) error {
	ex, ok := w.conn.(driver.Execer) //nolint:staticcheck // the context-free call starts no goroutine
	if !ok {
		return fmt.Errorf("%w: SQLite driver without Exec", ErrUnsupported)
	}
	_, err := ex.Exec(q, args)
	return err
}

// AddTopic registers a topic (idempotent).
func (w *SQLiteWriter) AddTopic(t *Topic) error {
	if _, ok := w.topics[t]; ok {
		return nil
	}
	id := int64(len(w.topics) + 1)
	if err := w.exec("INSERT INTO topics (id, name, type, serialization_format, offered_qos_profiles) VALUES (?, ?, ?, ?, ?)",
		id, t.Name, t.Type, t.SerializationFormat, t.OfferedQoSProfiles); err != nil {
		return fmt.Errorf("%s: %w", w.path, err)
	}
	w.topics[t] = id
	return nil
}

// WriteMessage inserts a message; its topic must have been added. SQLite
// keeps one time per message: m.LogTime.
func (w *SQLiteWriter) WriteMessage(m *Message) error {
	id, ok := w.topics[m.Topic]
	if !ok {
		return fmt.Errorf("%w: message on topic %q that was not added", ErrFormat, m.Topic.Name)
	}
	if w.inTx == 0 {
		if err := w.exec("BEGIN"); err != nil {
			return fmt.Errorf("%s: %w", w.path, err)
		}
	}
	if _, err := w.insert.Exec([]driver.Value{int64(m.LogTime), id, m.Data}); err != nil { //nolint:staticcheck
		return fmt.Errorf("%s: %w", w.path, err)
	}
	w.inTx++
	if w.inTx >= 10000 {
		w.inTx = 0
		if err := w.exec("COMMIT"); err != nil {
			return fmt.Errorf("%s: %w", w.path, err)
		}
	}
	return nil
}

// Close commits, creates the timestamp index and closes the file.
func (w *SQLiteWriter) Close() error {
	if w.closed {
		return nil
	}
	w.closed = true
	var err error
	if w.inTx > 0 {
		err = w.exec("COMMIT")
	}
	w.insert.Close()
	if err == nil {
		err = w.exec("CREATE INDEX timestamp_idx ON messages (timestamp ASC);")
	}
	if cerr := w.conn.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("%s: %w", w.path, err)
	}
	return nil
}
