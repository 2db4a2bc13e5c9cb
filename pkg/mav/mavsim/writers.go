package mavsim

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"strings"
	"sync"

	"github.com/bluenviron/gomavlib/v3/pkg/dialect"
	"github.com/bluenviron/gomavlib/v3/pkg/dialects/ardupilotmega"
	"github.com/bluenviron/gomavlib/v3/pkg/message"
	"github.com/bluenviron/gomavlib/v3/pkg/x25"

	"github.com/timealign/timealign/pkg/stamp"
)

// rw is the dialect's encoder, built on first use: building it takes
// tens of milliseconds, which every timealign command would otherwise
// pay at start-up (the demo links this package).
var rw = sync.OnceValue(func() *dialect.ReadWriter {
	d := &dialect.ReadWriter{Dialect: ardupilotmega.Dialect}
	if err := d.Initialize(); err != nil {
		panic(err)
	}
	return d
})

// Frame encodes msg as a MAVLink frame of version 1 or 2 (unsigned).
func Frame(version int, seq, sys, comp uint8, msg message.Message) []byte {
	mp := rw().GetMessage(msg.GetID())
	if mp == nil {
		panic(fmt.Sprintf("mavsim: message %T is not in the dialect", msg))
	}
	raw := mp.Write(msg, version == 2)
	return RawFrame(version, seq, sys, comp, raw.ID, raw.Payload, mp.CRCExtra())
}

// RawFrame encodes a payload as a frame of message id with the CRC extra
// given (any id: unknown ones too).
func RawFrame(version int, seq, sys, comp uint8, id uint32, payload []byte, crcExtra byte) []byte {
	return RawFrameFlags(version, 0, seq, sys, comp, id, payload, crcExtra)
}

// RawFrameFlags is RawFrame with a v2 incompatibility flag (1: signed; the
// caller appends the 13 signature bytes).
func RawFrameFlags(version int, incompat, seq, sys, comp uint8, id uint32, payload []byte, crcExtra byte) []byte {
	var f []byte
	if version == 1 {
		f = []byte{0xFE, byte(len(payload)), seq, sys, comp, byte(id)}
	} else {
		f = []byte{0xFD, byte(len(payload)), incompat, 0, seq, sys, comp, byte(id), byte(id >> 8), byte(id >> 16)}
	}
	f = append(f, payload...)
	h := x25.New()
	h.Write(f[1:])
	h.Write([]byte{crcExtra})
	return binary.LittleEndian.AppendUint16(f, h.Sum16())
}

// CRCExtra returns the CRC extra of a message of the dialect.
func CRCExtra(id uint32) byte { return rw().GetMessage(id).CRCExtra() }

// TlogWriter writes a telemetry log.
type TlogWriter struct {
	w       io.Writer
	Version int // of the frames written by Write; 2 by default
	seq     map[[2]uint8]uint8
	err     error
}

// NewTlogWriter returns a writer of MAVLink v2 frames to w.
func NewTlogWriter(w io.Writer) *TlogWriter {
	return &TlogWriter{w: w, Version: 2, seq: map[[2]uint8]uint8{}}
}

// Write writes msg from sys/comp received at t.
func (t *TlogWriter) Write(receive stamp.Time, sys, comp uint8, msg message.Message) {
	k := [2]uint8{sys, comp}
	t.WriteRaw(receive, Frame(t.Version, t.seq[k], sys, comp, msg))
	t.seq[k]++
}

// WriteRaw writes a record with the given frame bytes.
func (t *TlogWriter) WriteRaw(receive stamp.Time, frame []byte) {
	if t.err != nil {
		return
	}
	b := binary.BigEndian.AppendUint64(nil, uint64(receive)/1000)
	_, t.err = t.w.Write(append(b, frame...))
}

// Err returns the first write error.
func (t *TlogWriter) Err() error { return t.err }

// BinWriter writes a dataflash log.
type BinWriter struct {
	w     io.Writer
	types map[string]*binType
	next  uint8
	buf   []byte
	err   error
}

type binType struct {
	id     uint8
	format string
	length int
}

var binSizes = map[byte]int{
	'a': 64, 'b': 1, 'B': 1, 'h': 2, 'H': 2, 'i': 4, 'I': 4, 'f': 4, 'd': 8,
	'n': 4, 'N': 16, 'Z': 64, 'c': 2, 'C': 2, 'e': 4, 'E': 4, 'L': 4, 'M': 1,
	'q': 8, 'Q': 8, 'g': 2,
}

// NewBinWriter returns a writer to w; it starts with the FMT record of FMT
// and the FMTU, UNIT and MULT types, as ArduPilot does.
func NewBinWriter(w io.Writer) *BinWriter {
	b := &BinWriter{w: w, types: map[string]*binType{}, next: 129}
	b.types["FMT"] = &binType{id: 128, format: "BBnNZ", length: 89}
	b.fmt(128, 89, "FMT", "BBnNZ", "Type,Length,Name,Format,Columns")
	b.Define("UNIT", "QbZ", "TimeUS,Id,Label")
	b.Define("MULT", "Qbd", "TimeUS,Id,Mult")
	b.Define("FMTU", "QBNN", "TimeUS,FmtType,UnitIds,MultIds")
	return b
}

// Define declares a record type (an FMT record) and returns its id.
func (b *BinWriter) Define(name, format, columns string) uint8 {
	n := 3
	for i := range len(format) {
		n += binSizes[format[i]]
	}
	t := &binType{id: b.next, format: format, length: n}
	b.next++
	b.types[name] = t
	b.fmt(t.id, n, name, format, columns)
	return t.id
}

// Units writes the FMTU record of a type at boot time us: one unit id and
// one multiplier id per column.
func (b *BinWriter) Units(name string, us uint64, units, mults string) {
	b.Write("FMTU", us, b.types[name].id, units, mults)
}

func (b *BinWriter) fmt(id uint8, length int, name, format, columns string) {
	p := []byte{0xA3, 0x95, 128, id, byte(length)}
	p = append(p, pad(name, 4)...)
	p = append(p, pad(format, 16)...)
	p = append(p, pad(columns, 64)...)
	b.raw(p)
}

func pad(s string, n int) []byte {
	b := make([]byte, n)
	copy(b, s)
	return b
}

// Write writes a record of a declared type; values follow the format
// (integers of any Go type, float32/float64, strings; c/C/e/E/L take the
// scaled value as a float64).
func (b *BinWriter) Write(name string, values ...any) {
	t := b.types[name]
	if t == nil {
		panic("mavsim: undeclared BIN type " + name)
	}
	if len(values) != len(t.format) {
		panic(fmt.Sprintf("mavsim: %s takes %d values, got %d", name, len(t.format), len(values)))
	}
	p := append(b.buf[:0], 0xA3, 0x95, t.id)
	for i, v := range values {
		p = appendBin(p, t.format[i], v)
	}
	b.buf = p
	b.raw(p)
}

// WriteRaw writes bytes as they are (damage, garbage).
func (b *BinWriter) WriteRaw(p []byte) { b.raw(p) }

// Record returns the bytes of a record without writing it.
func (b *BinWriter) Record(name string, values ...any) []byte {
	t := b.types[name]
	p := []byte{0xA3, 0x95, t.id}
	for i, v := range values {
		p = appendBin(p, t.format[i], v)
	}
	return p
}

func (b *BinWriter) raw(p []byte) {
	if b.err == nil {
		_, b.err = b.w.Write(p)
	}
}

// Err returns the first write error.
func (b *BinWriter) Err() error { return b.err }

func toInt(v any) int64 {
	switch x := v.(type) {
	case int:
		return int64(x)
	case int8:
		return int64(x)
	case int16:
		return int64(x)
	case int32:
		return int64(x)
	case int64:
		return x
	case uint8:
		return int64(x)
	case uint16:
		return int64(x)
	case uint32:
		return int64(x)
	case uint64:
		return int64(x)
	case float64:
		return int64(math.Round(x))
	case float32:
		return int64(math.Round(float64(x)))
	}
	panic(fmt.Sprintf("mavsim: %T is not a number", v))
}

func toFloat(v any) float64 {
	switch x := v.(type) {
	case float64:
		return x
	case float32:
		return float64(x)
	}
	return float64(toInt(v))
}

func appendBin(p []byte, k byte, v any) []byte {
	le := binary.LittleEndian
	switch k {
	case 'b', 'B', 'M':
		return append(p, byte(toInt(v)))
	case 'h', 'H':
		return le.AppendUint16(p, uint16(toInt(v)))
	case 'i', 'I':
		return le.AppendUint32(p, uint32(toInt(v)))
	case 'q', 'Q':
		return le.AppendUint64(p, uint64(toInt(v)))
	case 'f':
		return le.AppendUint32(p, math.Float32bits(float32(toFloat(v))))
	case 'd':
		return le.AppendUint64(p, math.Float64bits(toFloat(v)))
	case 'c', 'C':
		return le.AppendUint16(p, uint16(int16(math.Round(toFloat(v)*100))))
	case 'e', 'E':
		return le.AppendUint32(p, uint32(int32(math.Round(toFloat(v)*100))))
	case 'L':
		return le.AppendUint32(p, uint32(int32(math.Round(toFloat(v)*1e7))))
	case 'n', 'N', 'Z':
		s, _ := v.(string)
		return append(p, pad(s, binSizes[k])...)
	case 'a':
		a, _ := v.([32]int16)
		for _, x := range a {
			p = le.AppendUint16(p, uint16(x))
		}
		return p
	case 'g':
		return le.AppendUint16(p, 0)
	}
	panic("mavsim: unknown format character " + strings.TrimSpace(string(k)))
}
