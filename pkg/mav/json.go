package mav

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/bluenviron/gomavlib/v3/pkg/message"
)

// JSON encodings of messages and records, and their JSON schemas (what
// Foxglove reads from an MCAP file whose messages are JSON). MAVLink
// messages keep the MAVLink field names (time_boot_ms), dataflash records
// their column names (TimeUS); enums and flags are numbers; c, C, e, E and
// L columns are scaled as the format says (pymavlink does the same);
// NaN and infinities, which JSON cannot hold, are null.

// AppendJSON appends the message's fields as a JSON object, read straight
// from the payload by the message type's encoder (no decoding, no
// reflection, no allocation).
func (m *TlogMessage) AppendJSON(dst []byte) []byte {
	// v2 drops trailing zero bytes, v1 has no extensions: zeros stand
	// for what is missing, as the decoder has them.
	var p [256]byte
	copy(p[:], m.payload)
	return m.info.encoder().append(dst, p[:])
}

// scalar returns the bits of the message's field i (the index of a
// number field of its Go type), read from the payload as the encoder
// places it: the Aligner reads the fields of its frequent messages this
// way instead of decoding them through reflection.
func (m *TlogMessage) scalar(i int) uint64 {
	f := &m.info.encoder().fields[i]
	var b [8]byte
	if f.off < len(m.payload) {
		copy(b[:f.size], m.payload[f.off:]) // v2 drops trailing zero bytes
	}
	return binary.LittleEndian.Uint64(b[:])
}

// Schema returns the JSON schema of the message's type.
func (m *TlogMessage) Schema() []byte { return m.info.encoder().schema }

// msgField is one field of a message: its key, where its value lies in a
// (v2, complete) payload, how wide it is there, how to write it.
type msgField struct {
	key  []byte       // `"name":`
	kind reflect.Kind // of the value, or of an array's elements
	off  int          // position in the payload
	size int          // bytes of one value (of a string: its length)
	n    int          // elements of an array, 0 for one value
}

type msgEncoder struct {
	fields []msgField
	schema []byte
}

func (info *msgInfo) encoder() *msgEncoder {
	info.encOnce.Do(func() { info.enc = newMsgEncoder(info.load()) })
	return info.enc
}

// wireSizes are the widths of MAVLink's types (enums name theirs in the
// mavenum tag).
var wireSizes = map[string]int{"uint8": 1, "int8": 1, "uint16": 2, "int16": 2, "uint32": 4, "int32": 4,
	"uint64": 8, "int64": 8, "float32": 4, "float64": 8}

// newMsgEncoder is called on first use of a message type; the dialect
// table is shared, so the encoder is built from the type alone and the
// result is the same whichever reader builds it. Where each field lies in
// the payload is found by encoding a message whose only non-zero field is
// that one (as for time_boot_ms): MAVLink's field order (by width, then
// extensions) is the encoder's business.
func newMsgEncoder(info *msgInfo) *msgEncoder {
	t := info.rw.Message
	typ := reflect.TypeOf(t).Elem()
	enc := &msgEncoder{}
	props := map[string]any{}
	var order []string
	for i := range typ.NumField() {
		f := typ.Field(i)
		name := f.Tag.Get("mavname")
		if name == "" {
			name = snake(f.Name)
		}
		mf := msgField{key: append(appendJSONString(nil, name), ':'), kind: f.Type.Kind()}
		elem := f.Type
		var prop map[string]any
		if mf.kind == reflect.Array {
			elem = f.Type.Elem()
			mf.kind, mf.n = elem.Kind(), f.Type.Len()
			prop = map[string]any{"type": "array", "items": map[string]any{"type": jsonType(mf.kind)},
				"minItems": f.Type.Len(), "maxItems": f.Type.Len()}
		} else {
			prop = map[string]any{"type": jsonType(mf.kind)}
		}
		switch {
		case f.Tag.Get("mavenum") != "":
			mf.size = wireSizes[f.Tag.Get("mavenum")]
		case mf.kind == reflect.String:
			mf.size = 1 // a char
			if l, err := strconv.Atoi(f.Tag.Get("mavlen")); err == nil {
				mf.size = l
			}
		default:
			mf.size = int(elem.Size())
		}
		mf.off = fieldOffset(info, typ, i, mf)
		props[name] = prop
		order = append(order, name)
		enc.fields = append(enc.fields, mf)
	}
	enc.schema = objectSchema(info.name, props, order)
	return enc
}

// fieldOffset finds field i in the payload: set to bytes of 0x5A, the
// only non-zero bytes of the encoded message are its own.
func fieldOffset(info *msgInfo, typ reflect.Type, i int, mf msgField) int {
	probe := reflect.New(typ)
	fv := probe.Elem().Field(i)
	set := func(v reflect.Value) {
		switch mf.kind {
		case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			v.SetUint(0x5A5A5A5A5A5A5A5A >> (64 - 8*mf.size))
		case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			v.SetInt(0x5A5A5A5A5A5A5A5A >> (64 - 8*mf.size))
		case reflect.Float32:
			v.SetFloat(float64(math.Float32frombits(0x5A5A5A5A)))
		case reflect.Float64:
			v.SetFloat(math.Float64frombits(0x5A5A5A5A5A5A5A5A))
		case reflect.String:
			v.SetString(strings.Repeat("Z", mf.size))
		}
	}
	if fv.Kind() == reflect.Array {
		for j := range fv.Len() {
			set(fv.Index(j))
		}
	} else {
		set(fv)
	}
	raw := info.rw.Write(probe.Interface().(message.Message), true).Payload
	width := mf.size * max(mf.n, 1)
	off := 0
	for off < len(raw) && raw[off] == 0 {
		off++
	}
	if off == len(raw) || off+width > len(raw) || bytes.Count(raw, []byte{0}) != len(raw)-width ||
		bytes.ContainsRune(raw[off:off+width], 0) {
		panic(fmt.Sprintf("mav: field %s of %s not found in its encoding", typ.Field(i).Name, info.name)) // a bug, not input
	}
	return off
}

func jsonType(k reflect.Kind) any {
	switch k {
	case reflect.Float32, reflect.Float64:
		return []string{"number", "null"}
	case reflect.String:
		return "string"
	}
	return "integer"
}

// objectSchema marshals a JSON schema of an object with the properties.
func objectSchema(title string, props map[string]any, required []string) []byte {
	b, err := json.Marshal(map[string]any{"title": title, "type": "object", "properties": props, "required": required})
	if err != nil {
		panic("mav: schema of " + title + ": " + err.Error()) // built from static types: a bug
	}
	return b
}

// append writes the message of payload p (complete: 256 bytes) as the
// decoder would have it: enums are unsigned, strings end at their first
// NUL.
func (enc *msgEncoder) append(dst []byte, p []byte) []byte {
	dst = append(dst, '{')
	for i := range enc.fields {
		f := &enc.fields[i]
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, f.key...)
		if f.n == 0 {
			dst = f.appendValue(dst, p[f.off:])
			continue
		}
		dst = append(dst, '[')
		for j := range f.n {
			if j > 0 {
				dst = append(dst, ',')
			}
			dst = f.appendValue(dst, p[f.off+j*f.size:])
		}
		dst = append(dst, ']')
	}
	return append(dst, '}')
}

// appendValue writes the value at the start of q.
func (f *msgField) appendValue(dst []byte, q []byte) []byte {
	switch f.kind {
	case reflect.String:
		return appendJSONString(dst, cbytes(q[:f.size]))
	case reflect.Float32:
		return putFloat32(dst, binary.LittleEndian.Uint32(q))
	case reflect.Float64:
		return appendFloat(dst, math.Float64frombits(binary.LittleEndian.Uint64(q)), 64)
	}
	var u uint64
	switch f.size {
	case 1:
		u = uint64(q[0])
	case 2:
		u = uint64(binary.LittleEndian.Uint16(q))
	case 4:
		u = uint64(binary.LittleEndian.Uint32(q))
	default:
		u = binary.LittleEndian.Uint64(q)
	}
	switch f.kind {
	case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		sh := 64 - 8*f.size // sign-extended from its width
		return putInt(dst, int64(u<<sh)>>sh)
	}
	return putUint(dst, u)
}

func appendFloat(dst []byte, f float64, bits int) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(dst, "null"...)
	}
	// Integral values (zeros above all, common in logs) need no search
	// for the shortest digits.
	if f == math.Trunc(f) && math.Abs(f) < 1e15 && (f != 0 || !math.Signbit(f)) {
		return strconv.AppendInt(dst, int64(f), 10)
	}
	if bits == 32 {
		return appendFloat32(dst, float32(f))
	}
	return strconv.AppendFloat(dst, f, 'g', -1, bits)
}

// appendScaled appends v/10^decimals as an exact decimal (the c, C, e, E
// and L columns are integers in hundredths or 1e-7 degrees): "-12.34",
// "12.5", "12". It parses to the same float64 as v/10^decimals.
func appendScaled(dst []byte, v int64, decimals int) []byte {
	if cap(dst)-len(dst) < 24 {
		dst = slices.Grow(dst, 24)
	}
	if v < 0 {
		dst = append(dst, '-')
	}
	u := uint64(v)
	if v < 0 {
		u = -u
	}
	pow := uint64(pow10u32[decimals])
	dst = putUint(dst, u/pow)
	frac := uint32(u % pow)
	if frac == 0 {
		return dst
	}
	// The fraction with its leading zeros, without its trailing ones.
	n := len(dst)
	dst = dst[:n+1+decimals]
	dst[n] = '.'
	putDigitsPadded(dst[n+1:], frac)
	for dst[len(dst)-1] == '0' {
		dst = dst[:len(dst)-1]
	}
	return dst
}

const hexDigits = "0123456789abcdef"

func decodeRune[T string | []byte](s T) (rune, int) {
	switch v := any(s).(type) {
	case string:
		return utf8.DecodeRuneInString(v)
	case []byte:
		return utf8.DecodeRune(v)
	}
	return utf8.RuneError, 1
}

// appendJSONString appends s as a JSON string; bytes that are not UTF-8
// become U+FFFD.
func appendJSONString[T string | []byte](dst []byte, s T) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, n := decodeRune(s[i:])
		if r == utf8.RuneError && n == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i++
			start = i
			continue
		}
		i += n
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// binEncoder encodes the records of one Format: what to do with each
// column is decided once, when the FMT record is read, so encoding a
// record is one pass over its columns, writing into room reserved once,
// with no allocation.
type binEncoder struct {
	ops []binOp
	// max is the longest JSON a record can take.
	max int
}

// binOp is one column: its key (`{"Name":` for the first, `,"Name":`
// after), where it is in the payload, how to write it.
type binOp struct {
	key string
	// A key of up to 16 bytes is also kept as two words, written by two
	// stores (kn is its length, 0 for a longer key).
	k0, k1    uint64
	kn        int
	off, size int
	code      binCode
}

type binCode uint8

const (
	opInt8 binCode = iota
	opUint8
	opInt16
	opUint16
	opInt32
	opUint32
	opInt64
	opUint64
	opFloat32
	opFloat64
	opHalf
	opCenti16  // c: int16 hundredths
	opCentiU16 // C
	opCenti32  // e
	opCentiU32 // E
	opDegE7    // L: int32 1e-7 degrees
	opChars    // n, N, Z
	opInt16x32 // a
)

// binCodes maps a format character to its op; binMax is the longest JSON
// of a value of each op (strings: every byte escaped as \u00XX).
var binCodes = [256]binCode{
	'b': opInt8, 'B': opUint8, 'M': opUint8, 'h': opInt16, 'H': opUint16, 'i': opInt32, 'I': opUint32,
	'q': opInt64, 'Q': opUint64, 'f': opFloat32, 'd': opFloat64, 'g': opHalf, 'c': opCenti16,
	'C': opCentiU16, 'e': opCenti32, 'E': opCentiU32, 'L': opDegE7, 'n': opChars, 'N': opChars,
	'Z': opChars, 'a': opInt16x32,
}

var binMax = [...]int{
	opInt8: 4, opUint8: 3, opInt16: 6, opUint16: 5, opInt32: 11, opUint32: 10, opInt64: 20, opUint64: 20,
	opFloat32: 24, opFloat64: 24, opHalf: 24, opCenti16: 7, opCentiU16: 6, opCenti32: 12, opCentiU32: 11,
	opDegE7: 12, opChars: 2 + 6*64, opInt16x32: 2 + 32*7,
}

func newBinEncoder(f *Format) *binEncoder {
	enc := &binEncoder{max: 2}
	for i, c := range f.Columns {
		k := []byte{','}
		if i == 0 {
			k[0] = '{'
		}
		k = appendJSONString(k, c.Name)
		k = append(k, ':')
		op := binOp{key: string(k), off: c.Offset, size: c.Size, code: binCodes[c.Kind]}
		if len(k) <= 16 {
			var w [16]byte
			copy(w[:], k)
			op.k0, op.k1, op.kn = binary.LittleEndian.Uint64(w[:]), binary.LittleEndian.Uint64(w[8:]), len(k)
		}
		enc.ops = append(enc.ops, op)
		enc.max += len(op.key) + binMax[op.code]
	}
	enc.max += 16 // the words of the last key may go beyond it
	return enc
}

// AppendJSON appends the record's columns as a JSON object. Records of a
// type with a bad format (Format.Err) encode as {}.
func (r Record) AppendJSON(dst []byte) []byte {
	f := r.Format
	if f.Err != nil {
		return append(dst, '{', '}')
	}
	enc := f.enc
	if len(enc.ops) == 0 {
		return append(dst, '{', '}')
	}
	dst = slices.Grow(dst, enc.max)
	p := r.Payload
	for i := range enc.ops {
		op := &enc.ops[i]
		if op.kn > 0 {
			// Within the room reserved: enc.max counts 16 bytes more.
			n := len(dst)
			o := dst[n : n+16]
			binary.LittleEndian.PutUint64(o, op.k0)
			binary.LittleEndian.PutUint64(o[8:], op.k1)
			dst = dst[:n+op.kn]
		} else {
			dst = append(dst, op.key...)
		}
		q := p[op.off:]
		switch op.code {
		case opInt8:
			dst = putInt(dst, int64(int8(q[0])))
		case opUint8:
			dst = putUint(dst, uint64(q[0]))
		case opInt16:
			dst = putInt(dst, int64(int16(binary.LittleEndian.Uint16(q))))
		case opUint16:
			dst = putUint(dst, uint64(binary.LittleEndian.Uint16(q)))
		case opInt32:
			dst = putInt(dst, int64(int32(binary.LittleEndian.Uint32(q))))
		case opUint32:
			dst = putUint(dst, uint64(binary.LittleEndian.Uint32(q)))
		case opInt64:
			dst = putInt(dst, int64(binary.LittleEndian.Uint64(q)))
		case opUint64:
			dst = putUint(dst, binary.LittleEndian.Uint64(q))
		case opFloat32:
			dst = putFloat32(dst, binary.LittleEndian.Uint32(q))
		case opFloat64:
			dst = appendFloat(dst, math.Float64frombits(binary.LittleEndian.Uint64(q)), 64)
		case opHalf:
			dst = putFloat32(dst, math.Float32bits(halfFloat(binary.LittleEndian.Uint16(q))))
		case opCenti16:
			dst = appendScaled(dst, int64(int16(binary.LittleEndian.Uint16(q))), 2)
		case opCentiU16:
			dst = appendScaled(dst, int64(binary.LittleEndian.Uint16(q)), 2)
		case opCenti32:
			dst = appendScaled(dst, int64(int32(binary.LittleEndian.Uint32(q))), 2)
		case opCentiU32:
			dst = appendScaled(dst, int64(binary.LittleEndian.Uint32(q)), 2)
		case opDegE7:
			dst = appendScaled(dst, int64(int32(binary.LittleEndian.Uint32(q))), 7)
		case opChars:
			dst = appendJSONString(dst, cbytes(q[:op.size]))
		case opInt16x32:
			dst = append(dst, '[')
			for j := 0; j < 32; j++ {
				if j > 0 {
					dst = append(dst, ',')
				}
				dst = putInt(dst, int64(int16(binary.LittleEndian.Uint16(q[2*j:]))))
			}
			dst = append(dst, ']')
		}
	}
	return append(dst, '}')
}

// cbytes returns b up to its first NUL.
func cbytes(b []byte) []byte {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		return b[:i]
	}
	return b
}

// putUint appends v in decimal, like strconv.AppendUint.
func putUint(dst []byte, v uint64) []byte {
	if v < 10 {
		return append(dst, byte('0'+v))
	}
	if cap(dst)-len(dst) < 20 {
		dst = slices.Grow(dst, 20)
	}
	n := len(dst)
	if v>>32 == 0 {
		nd := decimalLen32(uint32(v))
		dst = dst[:n+nd]
		putDigits(dst[n:], uint32(v))
		return dst
	}
	// Above 2^32 (TimeUS after 71 minutes): the top digits, then the
	// last eight.
	hi, lo := v/1e8, uint32(v%1e8)
	dst = putUint(dst, hi)
	n = len(dst)
	dst = dst[:n+8]
	putDigitsPadded(dst[n:], lo)
	return dst
}

// putInt appends v in decimal, like strconv.AppendInt.
func putInt(dst []byte, v int64) []byte {
	if v < 0 {
		dst = append(dst, '-')
		return putUint(dst, -uint64(v))
	}
	return putUint(dst, uint64(v))
}

// putFloat32 appends the float32 with bits b as appendFloat(dst, ·, 32)
// does: null for NaN and infinities, integers below 1e15 as integers,
// else the shortest decimal.
func putFloat32(dst []byte, b uint32) []byte {
	ef := b >> 23 & 0xff
	switch {
	case ef == 0xff:
		return append(dst, "null"...)
	case b == 0:
		return append(dst, '0')
	case ef >= 127 && ef <= 176:
		// |v| ≥ 1: an integer when no bit of c is below the point (and
		// then below 2^50, so below 1e15 only if checked).
		c := uint64(b&(1<<23-1) | 1<<23)
		var v uint64
		if ef >= 150 {
			v = c << (ef - 150)
		} else if c&(1<<(150-ef)-1) == 0 {
			v = c >> (150 - ef)
		} else {
			break
		}
		if v >= 1e15 {
			break
		}
		if b>>31 != 0 {
			dst = append(dst, '-')
		}
		return putUint(dst, v)
	}
	return appendFloat32(dst, math.Float32frombits(b))
}

// BinSchema returns the JSON schema of the records of f; each column's
// unit and multiplier, where the log gives them (b's FMTU, UNIT and MULT
// records so far), are in its description: the multiplier only for a value
// written unscaled (the JSON holds c, C, e, E and L columns scaled).
func (b *BinReader) BinSchema(f *Format) []byte {
	props := map[string]any{}
	var order []string
	for i, c := range f.Columns {
		var p map[string]any
		switch c.Kind {
		case 'n', 'N', 'Z':
			p = map[string]any{"type": "string"}
		case 'a':
			p = map[string]any{"type": "array", "items": map[string]any{"type": "integer"}, "minItems": 32, "maxItems": 32}
		case 'f', 'd', 'g', 'c', 'C', 'e', 'E', 'L':
			p = map[string]any{"type": []string{"number", "null"}}
		default:
			p = map[string]any{"type": "integer"}
		}
		unit, mult := b.Unit(f, i)
		desc := ""
		if unit != "" {
			desc = "unit: " + unit
		}
		switch c.Kind {
		case 'c', 'C', 'e', 'E', 'L':
			// Written scaled (centi-units, 1e-7 degrees): the log's
			// multiplier is already applied to the value.
			mult = 0
		}
		if mult != 0 && mult != 1 {
			if desc != "" {
				desc += ", "
			}
			desc += "multiplier: " + strconv.FormatFloat(mult, 'g', -1, 64)
		}
		if desc != "" {
			p["description"] = desc
		}
		props[c.Name] = p
		order = append(order, c.Name)
	}
	return objectSchema(f.Name, props, order)
}
