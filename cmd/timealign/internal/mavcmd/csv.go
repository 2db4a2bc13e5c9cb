package mavcmd

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math/bits"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/timealign/timealign/cmd/timealign/internal/cli"
)

// The CSV of mav merge has, after its data column (the message as JSON),
// one column per field of every topic, named <topic>/<field>, in the
// order of the topics' first messages and of the fields in them: a row
// fills its topic's columns and leaves the others empty, as PlotJuggler's
// CSV import reads it (each numeric column a series on the log_time_ns
// axis). A string is written as its text, an array as its JSON, null as
// an empty cell.

// csvChan is a topic of the CSV and its fields.
type csvChan struct {
	idx    uint16
	topic  string
	fields []string
	pos    map[string]int
	off    int // its first field column, among the field columns
}

// newCSVChan makes the columns of a topic from the keys of its first
// message; a key its later messages add has no column (it is in data).
func newCSVChan(idx uint16, topic string, first []byte) *csvChan {
	c := &csvChan{idx: idx, topic: topic, pos: map[string]int{}}
	scanObject(first, func(key, _ []byte, _ byte) {
		k := string(key)
		if _, dup := c.pos[k]; !dup {
			c.pos[k] = len(c.fields)
			c.fields = append(c.fields, k)
		}
	})
	return c
}

// scanObject calls f with each key and raw value of a flat JSON object
// (the merged messages: numbers, strings, arrays of numbers, null), and
// the value's first byte. It stops at what it does not understand.
func scanObject(d []byte, f func(key, val []byte, kind byte)) {
	i := skipSpace(d, 0)
	if i >= len(d) || d[i] != '{' {
		return
	}
	i++
	for {
		i = skipSpace(d, i)
		if i >= len(d) || d[i] != '"' {
			return
		}
		kEnd := stringEnd(d, i)
		if kEnd < 0 {
			return
		}
		key := d[i+1 : kEnd-1]
		i = skipSpace(d, kEnd)
		if i >= len(d) || d[i] != ':' {
			return
		}
		i = skipSpace(d, i+1)
		if i >= len(d) {
			return
		}
		start := i
		switch d[i] {
		case '"':
			i = stringEnd(d, i)
		case '[', '{':
			i = bracketEnd(d, i)
		default:
			for i < len(d) && d[i] != ',' && d[i] != '}' && d[i] != ' ' {
				i++
			}
		}
		if i < 0 || i > len(d) {
			return
		}
		f(key, d[start:i], d[start])
		i = skipSpace(d, i)
		if i >= len(d) || d[i] != ',' {
			return
		}
		i++
	}
}

func skipSpace(d []byte, i int) int {
	for i < len(d) && (d[i] == ' ' || d[i] == '\t' || d[i] == '\n' || d[i] == '\r') {
		i++
	}
	return i
}

// stringEnd returns the index after the JSON string starting at d[i], or
// −1 if it does not end.
func stringEnd(d []byte, i int) int {
	for j := i + 1; j < len(d); j++ {
		switch d[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return -1
}

// bracketEnd returns the index after the array or object starting at
// d[i], or −1.
func bracketEnd(d []byte, i int) int {
	depth := 0
	for j := i; j < len(d); j++ {
		switch d[j] {
		case '"':
			e := stringEnd(d, j)
			if e < 0 {
				return -1
			}
			j = e - 1
		case '[', '{':
			depth++
		case ']', '}':
			depth--
			if depth == 0 {
				return j + 1
			}
		}
	}
	return -1
}

// appendCell appends a JSON value as a CSV cell.
func appendCell(b, val []byte, kind byte) []byte {
	switch kind {
	case 'n': // null
		return b
	case '"':
		s := string(val[1 : len(val)-1])
		if strings.IndexByte(s, '\\') >= 0 {
			var u string
			if json.Unmarshal(val, &u) == nil {
				s = u
			}
		}
		if strings.ContainsAny(s, ",\"\r\n") || strings.TrimSpace(s) != s {
			b = append(b, '"')
			b = append(b, strings.ReplaceAll(s, `"`, `""`)...)
			return append(b, '"')
		}
		return append(b, s...)
	case '[', '{':
		b = append(b, '"')
		b = append(b, strings.ReplaceAll(string(val), `"`, `""`)...)
		return append(b, '"')
	}
	return append(b, val...)
}

// close writes the header and the spooled rows with their field columns.
func (c *csvWriter) close() error {
	defer c.abort()
	if err := c.w.Flush(); err != nil {
		return err
	}
	if _, err := c.spool.Seek(0, io.SeekStart); err != nil {
		return err
	}
	out := bufio.NewWriterSize(c.out, 1<<20)
	hb := []byte("log_time_ns,publish_time_ns,topic,boot_us,data")
	ncol := 0
	for _, cc := range c.order {
		cc.off = ncol
		ncol += len(cc.fields)
		for _, f := range cc.fields {
			hb = append(hb, ',')
			hb = appendCell(hb, []byte(fmt.Sprintf("%q", cc.topic+"/"+f)), '"')
		}
	}
	if _, err := out.Write(append(hb, '\n')); err != nil {
		return err
	}
	commas := []byte(strings.Repeat(",", ncol))
	in := bufio.NewReaderSize(c.spool, 1<<20)
	var head [6]byte
	var rec, row []byte
	cells := make([][]byte, 0, 64)
	kinds := make([]byte, 0, 64)
	for {
		if _, err := io.ReadFull(in, head[:]); err == io.EOF {
			break
		} else if err != nil {
			return fmt.Errorf("reading the spooled rows: %w", err)
		}
		cc := c.order[binary.LittleEndian.Uint16(head[:])]
		n := int(binary.LittleEndian.Uint32(head[2:]))
		rec = grow(rec, n+4)
		if _, err := io.ReadFull(in, rec[:n+4]); err != nil {
			return fmt.Errorf("reading the spooled rows: %w", err)
		}
		row = append(row[:0], rec[:n]...)
		m := int(binary.LittleEndian.Uint32(rec[n:]))
		rec = grow(rec, m)
		if _, err := io.ReadFull(in, rec[:m]); err != nil {
			return fmt.Errorf("reading the spooled rows: %w", err)
		}
		cells, kinds = cells[:0], kinds[:0]
		for range cc.fields {
			cells, kinds = append(cells, nil), append(kinds, 'n')
		}
		next := 0
		scanObject(rec[:m], func(key, val []byte, kind byte) {
			j := -1
			if next < len(cc.fields) && cc.fields[next] == string(key) {
				j = next
			} else if p, ok := cc.pos[string(key)]; ok {
				j = p
			}
			if j >= 0 {
				cells[j], kinds[j] = val, kind
				next = j + 1
			}
		})
		row = append(row, commas[:cc.off]...)
		for j := range cells {
			row = append(row, ',')
			row = appendCell(row, cells[j], kinds[j])
		}
		row = append(row, commas[:ncol-cc.off-len(cc.fields)]...)
		row = append(row, '\n')
		if _, err := out.Write(row); err != nil {
			return err
		}
	}
	return out.Flush()
}

// grow returns b with room for n bytes.
func grow(b []byte, n int) []byte {
	if cap(b) < n {
		return make([]byte, n, 2*n)
	}
	return b[:n]
}

// csvWriter writes the merged stream as CSV: the rows go to a spool file
// first, since the per-field columns (one per field of every topic) are
// known only once every topic has been met; close writes the header and
// the rows with their field columns.
type csvWriter struct {
	out   io.Writer
	temps *cli.Temps
	spool *os.File
	w     *bufio.Writer // on spool
	buf   []byte
	chans map[*channel]*csvChan
	order []*csvChan
}

func newCSVWriter(out io.Writer, t *cli.Temps) (*csvWriter, error) {
	f, err := t.Create("", "timealign-merge-*.spool")
	if err != nil {
		return nil, fmt.Errorf("the CSV's rows are spooled before its header: %w", err)
	}
	return &csvWriter{out: out, temps: t, spool: f, w: bufio.NewWriterSize(f, 1<<20), chans: map[*channel]*csvChan{}}, nil
}

func (c *csvWriter) write(o outItem) error {
	it := o.it
	d := it.Data()
	ch := it.Ref.ch
	cc := c.chans[ch]
	if cc == nil {
		if len(c.order) == 1<<16-1 {
			return fmt.Errorf("more than %d topics", 1<<16-1)
		}
		cc = newCSVChan(uint16(len(c.order)), ch.topic, d)
		c.chans[ch] = cc
		c.order = append(c.order, cc)
	}
	topic := ch.topic
	// The record goes straight into the buffer's free space when it fits
	// (Write then copies nothing): its channel and lengths, 3 stamps, the
	// topic, d with its quotes doubled, and room for doubleQuotes' last
	// word; then d as it is.
	b := c.w.AvailableBuffer()
	own := false
	if need := 10 + 3*20 + len(topic) + 3*len(d) + 16; cap(b) < need {
		b, own = slices.Grow(c.buf[:0], need), true
	}
	b = binary.LittleEndian.AppendUint16(b, cc.idx)
	b = append(b, 0, 0, 0, 0) // the row's length
	row := len(b)
	b = strconv.AppendInt(b, int64(it.T), 10)
	b = append(b, ',')
	if it.Pub == it.T {
		b = append(b, b[row:len(b)-1]...) // the same digits
	} else {
		b = strconv.AppendInt(b, int64(it.Pub), 10)
	}
	b = append(b, ',')
	b = append(b, topic...)
	b = append(b, ',')
	if it.Boot >= 0 {
		b = strconv.AppendInt(b, it.Boot, 10)
	}
	b = append(b, ',', '"')
	b = doubleQuotes(b, d)
	b = append(b, '"')
	binary.LittleEndian.PutUint32(b[row-4:], uint32(len(b)-row))
	b = binary.LittleEndian.AppendUint32(b, uint32(len(d)))
	b = append(b, d...)
	if own {
		c.buf = b[:0] // kept for the next row that does not fit
	}
	_, err := c.w.Write(b)
	return err
}

// doubleQuotes appends d with every '"' doubled (a CSV field's quoting).
// b must have room for 2·len(d)+8 more bytes. Eight bytes at a time: a
// word is stored whole, then the position moves past it, or past its
// first quote, after which a second quote goes.
func doubleQuotes(b, d []byte) []byte {
	n := len(b)
	o := b[:cap(b)]
	i := 0
	for i+8 <= len(d) {
		w := binary.LittleEndian.Uint64(d[i:])
		binary.LittleEndian.PutUint64(o[n:], w)
		// The lowest byte of w that is '"' has the top bit of its byte set
		// in m (bytes above it may be set falsely: only the lowest is used).
		x := w ^ 0x2222222222222222
		m := (x - 0x0101010101010101) &^ x & 0x8080808080808080
		if m == 0 {
			i, n = i+8, n+8
			continue
		}
		k := bits.TrailingZeros64(m)/8 + 1
		i, n = i+k, n+k
		o[n] = '"'
		n++
	}
	for ; i < len(d); i++ {
		o[n] = d[i]
		n++
		if d[i] == '"' {
			o[n] = '"'
			n++
		}
	}
	return b[:n]
}

func (c *csvWriter) abort() {
	if c.spool != nil {
		c.spool.Close()
		c.temps.Remove(c.spool.Name())
		c.spool = nil
	}
}
