package mavcmd

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"strings"
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
	out.WriteString("log_time_ns,publish_time_ns,topic,boot_us,data")
	ncol := 0
	var hb []byte
	for _, cc := range c.order {
		cc.off = ncol
		ncol += len(cc.fields)
		for _, f := range cc.fields {
			hb = append(hb[:0], ',')
			hb = appendCell(hb, []byte(fmt.Sprintf("%q", cc.topic+"/"+f)), '"')
			out.Write(hb)
		}
	}
	out.WriteByte('\n')
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
