// Package csvio reads and writes the CSV stream formats of timealign's
// command-line tool (README.md, "The command-line tool").
//
// Every file has a header row naming its columns. A [Reader] checks the
// header against the columns a format requires (and the optional ones it may
// have), and every error it returns is an [*Error] naming the file, the line,
// the column and what was wrong, so a user can fix the input without reading
// code. A [Writer] writes rows of integers and strings without allocating per
// field.
package csvio

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/timealign/timealign/pkg/stamp"
)

// Sentinel errors wrapped by [*Error].
var (
	ErrLineTooLong = errors.New("line too long")
	ErrEmpty       = errors.New("empty input: no header row")
	ErrHeader      = errors.New("unexpected header")
	ErrColumns     = errors.New("wrong number of columns")
	ErrValue       = errors.New("bad value")
)

// Error locates a problem in a CSV input. Line and Column count from 1;
// Column is 0 when the problem concerns the whole line.
type Error struct {
	File   string // name of the input ("-" or "stdin" for standard input)
	Line   int
	Column int
	Name   string // the column's name from the header, if known
	Err    error
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
		if e.Column > 0 {
			fmt.Fprintf(&b, ":%d", e.Column)
		}
	}
	if e.Name != "" {
		fmt.Fprintf(&b, " (column %q)", e.Name)
	}
	b.WriteString(": ")
	b.WriteString(e.Err.Error())
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// bom is the UTF-8 byte order mark; a Reader skips it.
const bom = "\xef\xbb\xbf"

// MaxLine bounds the length of a line, so that a file without newlines
// cannot take unbounded memory. No row of the formats comes near it.
const MaxLine = 1 << 20

// lineLimit fails a read once a line grows past MaxLine bytes; line counts
// the newlines seen, for the message.
type lineLimit struct {
	r    io.Reader
	n    int // bytes since the last newline
	line int
}

func (l *lineLimit) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	for chunk := p[:n]; ; {
		i := bytes.IndexByte(chunk, '\n')
		if i < 0 {
			l.n += len(chunk)
			break
		}
		if l.n+i > MaxLine {
			return 0, ErrLineTooLong
		}
		l.line++
		l.n = 0
		chunk = chunk[i+1:]
	}
	if l.n > MaxLine {
		return 0, ErrLineTooLong
	}
	return n, err
}

// maxQuoted is the most of a value an error message repeats.
const maxQuoted = 64

// Quote quotes s for a message, cut to its first and last bytes when long:
// a 100 MB field is not echoed in full.
func Quote(s string) string {
	if len(s) <= maxQuoted {
		return strconv.Quote(s)
	}
	head, tail := cutEnds(s)
	return fmt.Sprintf("%q…(%d bytes)…%q", head, len(s), tail)
}

// Cut is Quote without the quotes, for values shown as they are.
func Cut(s string) string {
	if len(s) <= maxQuoted {
		return s
	}
	head, tail := cutEnds(s)
	return fmt.Sprintf("%s…(%d bytes)…%s", head, len(s), tail)
}

// cutEnds returns the first and last bytes of s that a cut value shows,
// whole runes only.
func cutEnds(s string) (head, tail string) {
	return strings.ToValidUTF8(s[:maxQuoted*3/4], ""), strings.ToValidUTF8(s[len(s)-maxQuoted/4:], "")
}

// Columns describes a format's header: the required columns in order,
// optionally followed by some leading part of Optional.
type Columns struct {
	Required []string
	Optional []string
}

func (c Columns) String() string {
	s := strings.Join(c.Required, ",")
	for _, o := range c.Optional {
		s += "[," + o
	}
	return s + strings.Repeat("]", len(c.Optional))
}

// Reader reads the rows of one CSV input.
type Reader struct {
	lim   *lineLimit
	file  string
	cr    *csv.Reader
	names []string
	row   Row
}

// NewReader reads the header row of r and checks it against cols. file names
// the input in error messages.
func NewReader(r io.Reader, file string, cols Columns) (*Reader, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	if b, err := br.Peek(len(bom)); err == nil && string(b) == bom {
		br.Discard(len(bom)) // a UTF-8 byte order mark, as spreadsheets write
	}
	lim := &lineLimit{r: br, line: 1}
	cr := csv.NewReader(lim)
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	cr.TrimLeadingSpace = true
	rd := &Reader{file: file, cr: cr, lim: lim}
	hdr, err := cr.Read()
	if errors.Is(err, io.EOF) {
		return nil, &Error{File: file, Err: ErrEmpty}
	}
	if err != nil {
		return nil, rd.parseError(err)
	}
	n := len(hdr)
	ok := n >= len(cols.Required) && n <= len(cols.Required)+len(cols.Optional)
	if ok {
		for i, h := range hdr {
			want := ""
			if i < len(cols.Required) {
				want = cols.Required[i]
			} else {
				want = cols.Optional[i-len(cols.Required)]
			}
			if strings.TrimSpace(h) != want {
				return nil, &Error{File: file, Line: 1, Column: i + 1,
					Err: fmt.Errorf("%w: column %d is %s, want %q (header %s)", ErrHeader, i+1, Quote(h), want, cols)}
			}
		}
	}
	if !ok {
		return nil, &Error{File: file, Line: 1,
			Err: fmt.Errorf("%w: %s, want %s", ErrHeader, Quote(strings.Join(hdr, ",")), cols)}
	}
	rd.names = append([]string(nil), hdr...)
	rd.row.r = rd
	return rd, nil
}

// Columns returns the names of the input's columns, from its header.
func (r *Reader) Columns() []string { return r.names }

// File returns the input's name, as used in errors.
func (r *Reader) File() string { return r.file }

func (r *Reader) parseError(err error) error {
	if errors.Is(err, ErrLineTooLong) {
		return &Error{File: r.file, Line: r.lim.line, Err: fmt.Errorf("%w (more than %d bytes without a newline)", ErrLineTooLong, MaxLine)}
	}
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return &Error{File: r.file, Line: pe.Line, Column: pe.Column, Err: pe.Err}
	}
	return &Error{File: r.file, Err: err}
}

// Next returns the next data row, or io.EOF after the last. The row is valid
// until the next call. Blank lines are skipped. A row with a number of
// columns other than the header's is an error.
func (r *Reader) Next() (*Row, error) {
	rec, err := r.cr.Read()
	if errors.Is(err, io.EOF) {
		return nil, io.EOF
	}
	if err != nil {
		return nil, r.parseError(err)
	}
	line, _ := r.cr.FieldPos(0)
	if len(rec) != len(r.names) {
		return nil, &Error{File: r.file, Line: line,
			Err: fmt.Errorf("%w: %d, the header has %d", ErrColumns, len(rec), len(r.names))}
	}
	r.row.fields = rec
	r.row.line = line
	return &r.row, nil
}

// Row is one data row of a [Reader]. Column indexes count from 0.
type Row struct {
	r      *Reader
	fields []string
	line   int
}

// Line returns the row's line number in the input.
func (w *Row) Line() int { return w.line }

// Len returns the number of columns.
func (w *Row) Len() int { return len(w.fields) }

// String returns the text of column col, or "" if the input has no such column.
func (w *Row) String(col int) string {
	if col >= len(w.fields) {
		return ""
	}
	return w.fields[col]
}

// Empty reports whether column col is empty or absent.
func (w *Row) Empty(col int) bool { return w.String(col) == "" }

// Errorf returns an [*Error] locating column col of this row; its message is
// built from format and args, and wraps ErrValue unless args hold an error
// wrapped with %w.
func (w *Row) Errorf(col int, format string, args ...any) error {
	err := fmt.Errorf(format, args...)
	if errors.Unwrap(err) == nil {
		err = fmt.Errorf("%w: %s", ErrValue, err.Error())
	}
	e := &Error{File: w.r.file, Line: w.line, Err: err}
	if col >= 0 && col < len(w.fields) {
		e.Column = col + 1
		e.Name = w.r.names[col]
	}
	return e
}

// Int parses column col as a decimal int64.
func (w *Row) Int(col int) (int64, error) {
	s := w.String(col)
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, w.Errorf(col, "%s is not an integer", Quote(s))
	}
	return v, nil
}

// Uint parses column col as a decimal uint64.
func (w *Row) Uint(col int) (uint64, error) {
	s := w.String(col)
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, w.Errorf(col, "%s is not a non-negative integer", Quote(s))
	}
	return v, nil
}

// Stamp parses column col as integer nanoseconds.
func (w *Row) Stamp(col int) (stamp.Time, error) {
	s := w.String(col)
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, w.Errorf(col, "%s is not a stamp in integer nanoseconds", Quote(s))
	}
	return stamp.Time(v), nil
}

// OptUint parses column col as a uint64 if it is present and not empty.
func (w *Row) OptUint(col int) (v uint64, ok bool, err error) {
	if w.Empty(col) {
		return 0, false, nil
	}
	v, err = w.Uint(col)
	return v, err == nil, err
}

// OptInt parses column col as an int64 if it is present and not empty.
func (w *Row) OptInt(col int) (v int64, ok bool, err error) {
	if w.Empty(col) {
		return 0, false, nil
	}
	v, err = w.Int(col)
	return v, err == nil, err
}

// Writer writes CSV rows. Fields are separated automatically; call EndRow
// after each row and Flush at the end. The first write error sticks and is
// returned by Flush.
type Writer struct {
	w     *bufio.Writer
	buf   []byte
	first bool
	err   error
}

// NewWriter returns a Writer on w that has written the header row.
func NewWriter(w io.Writer, header ...string) *Writer {
	cw := &Writer{w: bufio.NewWriterSize(w, 64<<10), first: true, buf: make([]byte, 0, 64)}
	for _, h := range header {
		cw.String(h)
	}
	cw.EndRow()
	return cw
}

func (w *Writer) sep() {
	if !w.first {
		w.buf = append(w.buf, ',')
	}
	w.first = false
}

// Int writes an integer field.
func (w *Writer) Int(v int64) *Writer {
	w.sep()
	w.buf = strconv.AppendInt(w.buf, v, 10)
	return w
}

// Uint writes an unsigned integer field.
func (w *Writer) Uint(v uint64) *Writer {
	w.sep()
	w.buf = strconv.AppendUint(w.buf, v, 10)
	return w
}

// Stamp writes a stamp as integer nanoseconds.
func (w *Writer) Stamp(t stamp.Time) *Writer {
	w.sep()
	w.buf = t.AppendNanos(w.buf)
	return w
}

// Bool writes true or false.
func (w *Writer) Bool(b bool) *Writer {
	w.sep()
	w.buf = strconv.AppendBool(w.buf, b)
	return w
}

// Float writes a float with the shortest exact representation.
func (w *Writer) Float(f float64) *Writer {
	w.sep()
	w.buf = strconv.AppendFloat(w.buf, f, 'g', -1, 64)
	return w
}

// Empty writes an empty field.
func (w *Writer) Empty() *Writer {
	w.sep()
	return w
}

// String writes a text field, quoted if it needs to be.
func (w *Writer) String(s string) *Writer {
	w.sep()
	if strings.ContainsAny(s, ",\"\r\n") || strings.TrimSpace(s) != s {
		w.buf = append(w.buf, '"')
		for i := 0; i < len(s); i++ {
			if s[i] == '"' {
				w.buf = append(w.buf, '"')
			}
			w.buf = append(w.buf, s[i])
		}
		w.buf = append(w.buf, '"')
		return w
	}
	w.buf = append(w.buf, s...)
	return w
}

// EndRow ends the current row.
// Err returns the first write error, if any: a long producer can stop at
// once instead of computing rows nobody will see.
func (w *Writer) Err() error { return w.err }

func (w *Writer) EndRow() {
	w.buf = append(w.buf, '\n')
	if w.err == nil {
		_, w.err = w.w.Write(w.buf)
	}
	w.buf = w.buf[:0]
	w.first = true
}

// Flush writes buffered rows and returns the first error met.
func (w *Writer) Flush() error {
	if w.err != nil {
		return w.err
	}
	return w.w.Flush()
}
