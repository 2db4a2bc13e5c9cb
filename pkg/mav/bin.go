package mav

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"time"
)

// Dataflash (.BIN) logs are a sequence of records: two header bytes
// (0xA3 0x95), a type byte, and a payload whose layout the log itself
// declares in FMT records (type 128: the type, the full record length, a
// 4-character name, a format string with one character per column, and the
// column names). FMTU records give each column's unit and multiplier (as
// one-character ids that UNIT and MULT records define). Nearly every other
// record starts with TimeUS, microseconds since the autopilot booted.

const (
	binHead1   = 0xA3
	binHead2   = 0x95
	binFMTType = 128
	binFMTLen  = 89 // 3 header bytes + type, length, name[4], format[16], columns[64]
	binHeadLen = 3
)

// Column is one field of a dataflash record.
type Column struct {
	// Name is the column's name (TimeUS, Roll, ...).
	Name string
	// Kind is the format character (Q, f, Z, ...).
	Kind byte
	// Offset is the column's position in the payload (after the 3 header
	// bytes); Size its width in bytes.
	Offset, Size int
}

// Format is the layout of one record type, from an FMT record.
type Format struct {
	// Type is the record type byte; Name its name (ATT, GPS, ...).
	Type uint8
	Name string
	// Length is the full record length, header included.
	Length int
	// Format is the format string, one character per column.
	Format  string
	Columns []Column
	// TimeIndex is the column of the boot time (TimeUS, or TimeMS in old
	// logs), −1 if the record has none; TimeScale converts it to µs.
	TimeIndex int
	TimeScale int64
	timeUS    bool // column 0 is TimeUS, 8 bytes (the common case, read directly)
	// Err is why the records of this type cannot be decoded (an unknown
	// format character, a length that disagrees with the format); nil if
	// they can. Such records are still skipped by their declared length.
	Err error
	// enc is the JSON encoder of the record (json.go).
	enc *binEncoder
	// meta is set for FMTU, UNIT and MULT, which the reader reads too;
	// role says which records the Aligner reads (by name, decided once).
	meta bool
	role binRole
}

// binRole is what the Aligner reads a record type for.
type binRole uint8

const (
	roleNone binRole = iota
	roleGPS
	roleATT
	roleMSG
	roleVER
	rolePARM
)

var binRoles = map[string]binRole{"GPS": roleGPS, "ATT": roleATT, "MSG": roleMSG, "VER": roleVER, "PARM": rolePARM}

// A Format never changes once [BinReader.Next] has returned a record of
// it (units live in the reader), so records may be encoded in other
// goroutines while the reader goes on.

// Index returns the column named name, or −1.
func (f *Format) Index(name string) int {
	for i := range f.Columns {
		if f.Columns[i].Name == name {
			return i
		}
	}
	return -1
}

// kindSize is the width of each format character ('a' is int16[32]);
// 0 for an unknown character.
var kindSize = [256]uint8{
	'a': 64, 'b': 1, 'B': 1, 'h': 2, 'H': 2, 'i': 4, 'I': 4, 'f': 4, 'd': 8,
	'n': 4, 'N': 16, 'Z': 64, 'c': 2, 'C': 2, 'e': 4, 'E': 4, 'L': 4, 'M': 1,
	'q': 8, 'Q': 8, 'g': 2,
}

// ErrBinFormat is wrapped by [Format.Err].
var ErrBinFormat = errors.New("mav: bad FMT record")

// newFormat builds a Format from an FMT payload (after the header).
func newFormat(p []byte) *Format {
	f := &Format{Type: p[0], Length: int(p[1]), Name: cstring(p[2:6]), Format: cstring(p[6:22]), TimeIndex: -1}
	names := strings.Split(cstring(p[22:86]), ",")
	if len(names) == 1 && names[0] == "" {
		names = nil
	}
	off := binHeadLen
	for i := 0; i < len(f.Format); i++ {
		k := f.Format[i]
		sz := int(kindSize[k])
		if sz == 0 {
			f.Err = fmt.Errorf("%w: %s (type %d) has unknown format character %q", ErrBinFormat, f.Name, f.Type, k)
		}
		name := ""
		if i < len(names) {
			name = names[i]
		}
		f.Columns = append(f.Columns, Column{Name: name, Kind: k, Offset: off - binHeadLen, Size: sz})
		off += sz
	}
	switch {
	case f.Err != nil:
	case len(names) != len(f.Format):
		f.Err = fmt.Errorf("%w: %s (type %d) has %d columns for %d format characters", ErrBinFormat, f.Name, f.Type, len(names), len(f.Format))
	case off != f.Length:
		f.Err = fmt.Errorf("%w: %s (type %d) declares length %d, its format %q makes %d", ErrBinFormat, f.Name, f.Type, f.Length, f.Format, off)
	}
	if f.Length < binHeadLen {
		f.Length = binHeadLen
	}
	if f.Err == nil {
		f.enc = newBinEncoder(f)
		f.meta = f.Name == "FMTU" || f.Name == "UNIT" || f.Name == "MULT"
		f.role = binRoles[f.Name]
	}
	if f.Err == nil && len(f.Columns) > 0 {
		switch c := f.Columns[0]; {
		case c.Name == "TimeUS" && (c.Kind == 'Q' || c.Kind == 'q'):
			f.TimeIndex, f.TimeScale, f.timeUS = 0, 1, true
		case c.Name == "TimeMS" && (c.Kind == 'I' || c.Kind == 'i'):
			f.TimeIndex, f.TimeScale = 0, 1000
		}
	}
	return f
}

// fmtFormat is the layout of FMT records, known before any FMT is read.
var fmtFormat = newFormat(append([]byte{binFMTType, binFMTLen, 'F', 'M', 'T', 0, 'B', 'B', 'n', 'N', 'Z', 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
	append([]byte("Type,Length,Name,Format,Columns"), make([]byte, 64-31)...)...))

// cstring returns b up to its first NUL.
func cstring(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}

// Record is one dataflash record. Its Payload (the bytes after the header)
// is valid only until the next call of [BinReader.Next].
type Record struct {
	Format  *Format
	Payload []byte
	// Offset is the record's position in the file.
	Offset int64
}

// Time returns the record's boot time in µs, and false for a record
// without one (FMT, and a few others in old logs).
func (r Record) Time() (int64, bool) {
	f := r.Format
	if f.TimeIndex < 0 {
		return 0, false
	}
	c := &f.Columns[f.TimeIndex]
	return int64(r.uint(c)) * f.TimeScale, true
}

func (r Record) uint(c *Column) uint64 {
	p := r.Payload[c.Offset:]
	switch c.Size {
	case 1:
		return uint64(p[0])
	case 2:
		return uint64(binary.LittleEndian.Uint16(p))
	case 4:
		return uint64(binary.LittleEndian.Uint32(p))
	case 8:
		return binary.LittleEndian.Uint64(p)
	}
	return 0
}

// Float returns column i as a number, scaled as the format says (c, C, e,
// E: hundredths; L: 1e-7 degrees), NaN for strings and arrays.
func (r Record) Float(i int) float64 {
	c := &r.Format.Columns[i]
	p := r.Payload[c.Offset:]
	switch c.Kind {
	case 'b':
		return float64(int8(p[0]))
	case 'B', 'M':
		return float64(p[0])
	case 'h':
		return float64(int16(binary.LittleEndian.Uint16(p)))
	case 'H':
		return float64(binary.LittleEndian.Uint16(p))
	case 'i':
		return float64(int32(binary.LittleEndian.Uint32(p)))
	case 'I':
		return float64(binary.LittleEndian.Uint32(p))
	case 'q':
		return float64(int64(binary.LittleEndian.Uint64(p)))
	case 'Q':
		return float64(binary.LittleEndian.Uint64(p))
	case 'f':
		return float64(math.Float32frombits(binary.LittleEndian.Uint32(p)))
	case 'd':
		return math.Float64frombits(binary.LittleEndian.Uint64(p))
	case 'g':
		return float64(halfFloat(binary.LittleEndian.Uint16(p)))
	case 'c':
		return float64(int16(binary.LittleEndian.Uint16(p))) / 100
	case 'C':
		return float64(binary.LittleEndian.Uint16(p)) / 100
	case 'e':
		return float64(int32(binary.LittleEndian.Uint32(p))) / 100
	case 'E':
		return float64(binary.LittleEndian.Uint32(p)) / 100
	case 'L':
		return float64(int32(binary.LittleEndian.Uint32(p))) * 1e-7
	}
	return math.NaN()
}

// Int returns an integer column i unscaled (the raw count of c, C, e, E,
// L); 0 for other kinds.
func (r Record) Int(i int) int64 {
	c := &r.Format.Columns[i]
	p := r.Payload[c.Offset:]
	switch c.Kind {
	case 'b':
		return int64(int8(p[0]))
	case 'h', 'c':
		return int64(int16(binary.LittleEndian.Uint16(p)))
	case 'i', 'e', 'L':
		return int64(int32(binary.LittleEndian.Uint32(p)))
	case 'B', 'M', 'H', 'C', 'I', 'E', 'q', 'Q':
		return int64(r.uint(c))
	}
	return 0
}

// String returns a character column (n, N, Z) up to its first NUL.
func (r Record) String(i int) string {
	c := &r.Format.Columns[i]
	switch c.Kind {
	case 'n', 'N', 'Z':
		return cstring(r.Payload[c.Offset : c.Offset+c.Size])
	}
	return ""
}

// halfFloat converts an IEEE 754 binary16 to float32.
func halfFloat(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	frac := uint32(h) & 0x3ff
	switch {
	case exp == 0x1f: // Inf, NaN
		return math.Float32frombits(sign | 0xff<<23 | frac<<13)
	case exp == 0:
		if frac == 0 {
			return math.Float32frombits(sign)
		}
		v := float32(frac) / (1 << 24) // subnormal: frac · 2^-24
		if sign != 0 {
			v = -v
		}
		return v
	}
	return math.Float32frombits(sign | (exp+112)<<23 | frac<<13)
}

// BinStats counts what a [BinReader] read and what it skipped.
type BinStats struct {
	// Records counts the records returned (FMT, FMTU, UNIT, MULT included).
	Records int64 `json:"records"`
	// Bytes is the number of bytes consumed.
	Bytes int64 `json:"bytes"`
	// Formats counts FMT records.
	Formats int `json:"formats"`
	// SkippedBytes counts bytes that belong to no record (garbage, records
	// of a type no FMT declared); Resyncs the places where reading lost the
	// record boundary and searched for the next header.
	SkippedBytes int64 `json:"skipped_bytes"`
	Resyncs      int   `json:"resyncs"`
	// UnknownType counts headers of a type that no FMT declared (their
	// length is unknown, so the reader searches for the next header);
	// UnknownTypes has the count per type.
	UnknownType  int            `json:"unknown_type"`
	UnknownTypes map[uint8]int  `json:"unknown_types,omitempty"`
	BadFormat    int            `json:"bad_format"`
	BadFormats   map[string]int `json:"bad_formats,omitempty"`
	// Truncated is 1 when the file ends inside a record.
	Truncated int `json:"truncated"`
	// BadTime counts records skipped because their boot time is damaged:
	// more than MaxTimeStep from the records around them (a BIN has no
	// checksum: a damaged byte of TimeUS would put the record hours or
	// years away). TimeJumps counts jumps of the boot time that the
	// record after confirmed (logging paused and resumed), which are kept.
	BadTime   int `json:"bad_time"`
	TimeJumps int `json:"time_jumps"`
}

// MaxTimeStep is the largest step of the boot time between consecutive
// timed records that a [BinReader] takes without a second record to
// confirm it. An autopilot logs many records a second; a longer step is a
// pause of logging, which the next record confirms, or a damaged record,
// which it does not.
const MaxTimeStep = 10 * time.Second

// BinReader reads dataflash records from a stream. It is not safe for
// concurrent use.
type BinReader struct {
	br      *bufio.Reader
	formats [256]*Format
	// units and mults map FMTU ids to UNIT labels and MULT factors.
	units map[byte]string
	mults map[byte]float64
	// fmtu holds the unit and multiplier ids of each type (FMTU).
	fmtu  map[uint8][2]string
	off   int64
	stats BinStats
	// lost is set while searching for a header after garbage.
	lost bool
	// win is the read buffer's content, of which pos bytes are read but
	// not yet discarded: records are cut from it without a call into
	// the buffer each.
	win []byte
	pos int

	// The boot time guard (see Next): last is the boot time of the last
	// timed record returned (µs), have is false until one is; a record
	// whose time steps more than MaxTimeStep from last is held (copied:
	// the window moves on) until the next timed record tells whether the
	// time really jumped or the record is damaged. out holds a record
	// to return before reading on.
	last       int64
	have       bool
	held, out  Record
	hasHeld    bool
	hasOut     bool
	heldBuf    [2][]byte
	heldBufIdx int
}

// BinBufferSize is the read buffer of a [BinReader].
const BinBufferSize = 256 << 10

// NewBinReader returns a reader of the dataflash log in r.
func NewBinReader(r io.Reader) *BinReader {
	b := &BinReader{br: bufio.NewReaderSize(r, BinBufferSize), units: map[byte]string{}, mults: map[byte]float64{}, fmtu: map[uint8][2]string{}}
	b.formats[binFMTType] = fmtFormat
	return b
}

// Stats returns the counters so far.
func (b *BinReader) Stats() BinStats {
	s := b.stats
	s.Bytes = b.off
	return s
}

// Formats returns the record types declared so far, by type.
func (b *BinReader) Formats() []*Format {
	var out []*Format
	for _, f := range b.formats {
		if f != nil {
			out = append(out, f)
		}
	}
	return out
}

// InstanceColumn returns the column of f that numbers the instances of a
// sensor or estimator logged under one type (two compasses in MAG, the
// EKF cores in XKF1): the one-byte column whose unit the log's FMTU gives
// as '#' (ArduPilot's id of the unit "instance") or, in a log without
// units for f, a one-byte column named I or Instance. It returns -1 if f
// has none. Records of two instances can share a TimeUS.
func (b *BinReader) InstanceColumn(f *Format) int {
	u, haveUnits := b.fmtu[f.Type]
	for i, c := range f.Columns {
		if c.Size != 1 || i == f.TimeIndex {
			continue
		}
		if haveUnits && i < len(u[0]) && u[0][i] == '#' {
			return i
		}
		if !haveUnits && (c.Name == "I" || c.Name == "Instance") {
			return i
		}
	}
	return -1
}

// Unit returns the unit label and multiplier of column i of f from the
// log's FMTU, UNIT and MULT records so far ("" and 0 when unknown).
func (b *BinReader) Unit(f *Format, i int) (string, float64) {
	u, ok := b.fmtu[f.Type]
	if !ok {
		return "", 0
	}
	var unit string
	var mult float64
	if i < len(u[0]) {
		unit = b.units[u[0][i]]
	}
	if i < len(u[1]) {
		mult = b.mults[u[1][i]]
	}
	return unit, mult
}

// ErrNoFormats is returned by [BinReader.Next] at the end of a stream in
// which no record could be decoded because no FMT record was found.
var ErrNoFormats = errors.New("mav: no FMT records: not a dataflash log, or its start is missing")

// Next returns the next record, skipping and counting what is not one. It
// returns io.EOF at the end (after a truncated last record too, counted in
// Stats().Truncated), or ErrNoFormats at the end of a stream that had
// headers but no FMT record. Records of a type whose format is bad are
// returned (their Format.Err says why they cannot be decoded).
//
// A timed record whose boot time lies more than MaxTimeStep from the
// previous one's is returned only if the next timed record lies within
// MaxTimeStep of it (the time jumped: logging paused); otherwise it is
// skipped and counted in Stats().BadTime, and so is a boot time below 0
// (a TimeUS of 2⁶³ µs or more). The first timed record waits for the
// second in the same way. Untimed records are never held back.
func (b *BinReader) Next() (Record, error) {
	if b.hasOut {
		b.hasOut = false
		return b.out, nil
	}
	var rec Record
	err := b.next(&rec)
	// The common case first: a TimeUS within MaxTimeStep of the last.
	if err == nil && b.have && !b.hasHeld && rec.Format.timeUS {
		if d := int64(binary.LittleEndian.Uint64(rec.Payload)) - b.last; uint64(d+maxStepUS) <= uint64(2*maxStepUS) {
			b.last += d
			return rec, nil
		}
	}
	for {
		if err != nil {
			if b.hasHeld { // nothing after it confirms it
				b.hasHeld = false
				b.stats.BadTime++
			}
			return rec, err
		}
		t, ok := rec.Time()
		if !ok || rec.Format.Err != nil {
			return rec, nil
		}
		switch {
		case t < 0:
			b.stats.BadTime++
		case b.hasHeld && near(t, b.held):
			// The held record's jump is confirmed (or, for the first
			// timed record, its time): it goes first.
			if b.have {
				b.stats.TimeJumps++
			}
			b.hasHeld, b.have, b.last = false, true, t
			b.out, b.hasOut = b.keep(rec), true
			return b.held, nil
		case b.have && absI64(t-b.last) <= maxStepUS:
			if b.hasHeld { // the held one disagreed with both sides
				b.hasHeld = false
				b.stats.BadTime++
			}
			b.last = t
			return rec, nil
		default:
			if b.hasHeld {
				b.stats.BadTime++
			}
			b.held, b.hasHeld = b.keep(rec), true
		}
		err = b.next(&rec)
	}
}

// maxStepUS is MaxTimeStep in µs.
const maxStepUS = int64(MaxTimeStep / time.Microsecond)

// near reports whether boot time t lies within MaxTimeStep of r's.
func near(t int64, r Record) bool {
	u, _ := r.Time()
	return absI64(t-u) <= maxStepUS
}

func absI64(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// keep returns r with its payload copied out of the read window, into
// one of two buffers used in turn (a held record and the one after it).
func (b *BinReader) keep(r Record) Record {
	i := b.heldBufIdx
	b.heldBufIdx ^= 1
	b.heldBuf[i] = append(b.heldBuf[i][:0], r.Payload...)
	r.Payload = b.heldBuf[i]
	return r
}

// next reads the next record, as the file has it, into rec.
func (b *BinReader) next(rec *Record) error {
	for {
		if len(b.win)-b.pos < binHeadLen {
			if err := b.fill(binHeadLen); err != nil {
				return err
			}
		}
		h := b.win[b.pos:]
		if h[0] != binHead1 || h[1] != binHead2 {
			if err := b.seek(); err != nil {
				return err
			}
			continue
		}
		f := b.formats[h[2]]
		if f == nil {
			b.stats.UnknownType++
			if b.stats.UnknownTypes == nil {
				b.stats.UnknownTypes = map[uint8]int{}
			}
			if len(b.stats.UnknownTypes) < 256 {
				b.stats.UnknownTypes[h[2]]++
			}
			if err := b.seek(); err != nil {
				return err
			}
			continue
		}
		if b.lost && !b.confirm(f.Length) {
			// A header inside garbage: look further.
			if err := b.seek(); err != nil {
				return err
			}
			continue
		}
		if len(b.win)-b.pos < f.Length {
			if err := b.fill(f.Length); err != nil {
				return err
			}
		}
		p := b.win[b.pos : b.pos+f.Length]
		b.lost = false
		*rec = Record{Format: f, Payload: p[binHeadLen:], Offset: b.off}
		if f.Type == binFMTType {
			b.addFormat(rec.Payload)
		} else if f.Err != nil {
			b.stats.BadFormat++
			if b.stats.BadFormats == nil {
				b.stats.BadFormats = map[string]int{}
			}
			if len(b.stats.BadFormats) < 256 {
				b.stats.BadFormats[f.Name]++
			}
		} else if f.meta {
			b.meta(*rec)
		}
		b.stats.Records++
		// The window stays valid until the next fill, which is in a
		// later call of Next.
		b.pos += f.Length
		b.off += int64(f.Length)
		return nil
	}
}

// sync discards what was read of the window from the read buffer: the
// slow paths (seek, confirm, the end) work on the buffer itself.
func (b *BinReader) sync() {
	if b.pos > 0 {
		_, _ = b.br.Discard(b.pos) // buffered: cannot fail
	}
	b.win, b.pos = nil, 0
}

// fill makes the window hold at least n bytes (as many as are buffered),
// or handles the end of the stream.
func (b *BinReader) fill(n int) error {
	b.sync()
	p, err := b.br.Peek(n)
	if len(p) < n {
		return b.end(len(p), err)
	}
	b.win, _ = b.br.Peek(b.br.Buffered())
	return nil
}

// confirm reports whether a record of length n at the current position is
// followed by another header (or the end of the stream): after garbage, a
// lone 0xA3 0x95 is not trusted on its own.
func (b *BinReader) confirm(n int) bool {
	b.sync()
	p, _ := b.br.Peek(n + 2)
	if len(p) < n+2 {
		return true // the end of the stream (or of the buffer)
	}
	return p[n] == binHead1 && p[n+1] == binHead2
}

// end handles the end of the stream with n bytes left over.
func (b *BinReader) end(n int, err error) error {
	if err != nil && err != io.EOF {
		return err
	}
	if n > 0 {
		b.stats.Truncated = 1
		b.skip(n)
	}
	if b.stats.Formats == 0 && b.stats.UnknownType > 0 {
		return ErrNoFormats
	}
	return io.EOF
}

// seek skips bytes up to the next header, counting them.
func (b *BinReader) seek() error {
	b.sync()
	if !b.lost {
		b.stats.Resyncs++
		b.lost = true
	}
	for {
		p, err := b.br.Peek(b.br.Buffered())
		if len(p) < binHeadLen {
			p, err = b.br.Peek(binHeadLen)
			if len(p) < binHeadLen {
				if err != nil && err != io.EOF {
					return err
				}
				b.skip(len(p))
				return nil // Next sees the end
			}
			continue
		}
		// Start after the first byte: the current position is not a
		// record.
		i := bytes.Index(p[1:], []byte{binHead1, binHead2})
		if i >= 0 {
			b.skip(i + 1)
			return nil
		}
		// Keep a trailing 0xA3 that may start a header.
		n := len(p) - 1
		b.skip(n)
	}
}

func (b *BinReader) skip(n int) {
	d, _ := b.br.Discard(n)
	b.off += int64(d)
	b.stats.SkippedBytes += int64(d)
}

// addFormat declares the type of an FMT payload.
func (b *BinReader) addFormat(p []byte) {
	b.stats.Formats++
	f := newFormat(p)
	if f.Type == binFMTType {
		return // FMT's own layout is fixed
	}
	if old := b.formats[f.Type]; old != nil && old.Format != f.Format {
		// A type redefined: its units were for the old layout.
		delete(b.fmtu, f.Type)
	}
	b.formats[f.Type] = f
}

// meta records FMTU, UNIT and MULT definitions.
func (b *BinReader) meta(r Record) {
	switch r.Format.Name {
	case "FMTU":
		t, u, m := r.Format.Index("FmtType"), r.Format.Index("UnitIds"), r.Format.Index("MultIds")
		if t < 0 || u < 0 || m < 0 {
			return
		}
		if len(b.fmtu) < 256 {
			b.fmtu[uint8(r.Int(t))] = [2]string{r.String(u), r.String(m)}
		}
	case "UNIT", "MULT":
		id, v := r.Format.Index("Id"), r.Format.Index("Label")
		if r.Format.Name == "MULT" {
			v = r.Format.Index("Mult")
		}
		if id < 0 || v < 0 || len(b.units)+len(b.mults) > 512 {
			return
		}
		k := byte(r.Int(id))
		if r.Format.Name == "UNIT" {
			b.units[k] = r.String(v)
		} else {
			b.mults[k] = r.Float(v)
		}
	}
}
