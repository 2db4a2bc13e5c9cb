package mav

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"reflect"
	"strconv"
	"unicode/utf8"
)

// JSON encodings of messages and records, and their JSON schemas (what
// Foxglove reads from an MCAP file whose messages are JSON). MAVLink
// messages keep the MAVLink field names (time_boot_ms), dataflash records
// their column names (TimeUS); enums and flags are numbers; c, C, e, E and
// L columns are scaled as the format says (pymavlink does the same);
// NaN and infinities, which JSON cannot hold, are null.

// AppendJSON appends the message's fields as a JSON object.
func (m *TlogMessage) AppendJSON(dst []byte) []byte {
	enc := m.info.encoder()
	return enc.append(dst, reflect.ValueOf(m.Message()).Elem())
}

// Schema returns the JSON schema of the message's type.
func (m *TlogMessage) Schema() []byte { return m.info.encoder().schema }

type msgField struct {
	key   []byte // `"name":`
	index int
	kind  reflect.Kind
	elem  reflect.Kind // of arrays
}

type msgEncoder struct {
	fields []msgField
	schema []byte
}

func (info *msgInfo) encoder() *msgEncoder {
	info.encOnce.Do(func() { info.enc = newMsgEncoder(info) })
	return info.enc
}

// newMsgEncoder is called on first use of a message type; the dialect
// table is shared, so the encoder is built from the type alone and the
// result is the same whichever reader builds it.
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
		mf := msgField{key: append(appendJSONString(nil, name), ':'), index: i, kind: f.Type.Kind()}
		var prop map[string]any
		if mf.kind == reflect.Array {
			mf.elem = f.Type.Elem().Kind()
			prop = map[string]any{"type": "array", "items": map[string]any{"type": jsonType(mf.elem)},
				"minItems": f.Type.Len(), "maxItems": f.Type.Len()}
		} else {
			prop = map[string]any{"type": jsonType(mf.kind)}
		}
		props[name] = prop
		order = append(order, name)
		enc.fields = append(enc.fields, mf)
	}
	enc.schema = objectSchema(info.name, props, order)
	return enc
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

func (enc *msgEncoder) append(dst []byte, v reflect.Value) []byte {
	dst = append(dst, '{')
	for i, f := range enc.fields {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, f.key...)
		fv := v.Field(f.index)
		if f.kind == reflect.Array {
			dst = append(dst, '[')
			for j := range fv.Len() {
				if j > 0 {
					dst = append(dst, ',')
				}
				dst = appendValue(dst, fv.Index(j), f.elem)
			}
			dst = append(dst, ']')
			continue
		}
		dst = appendValue(dst, fv, f.kind)
	}
	return append(dst, '}')
}

func appendValue(dst []byte, v reflect.Value, k reflect.Kind) []byte {
	switch k {
	case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return strconv.AppendUint(dst, v.Uint(), 10)
	case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.AppendInt(dst, v.Int(), 10)
	case reflect.Float32:
		return appendFloat(dst, v.Float(), 32)
	case reflect.Float64:
		return appendFloat(dst, v.Float(), 64)
	case reflect.String:
		return appendJSONString(dst, v.String())
	}
	return append(dst, "null"...)
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
	if v < 0 {
		dst = append(dst, '-')
	}
	u := uint64(v)
	if v < 0 {
		u = -u
	}
	var pow uint64 = 1
	for range decimals {
		pow *= 10
	}
	dst = strconv.AppendUint(dst, u/pow, 10)
	frac := u % pow
	if frac == 0 {
		return dst
	}
	for frac%10 == 0 {
		frac /= 10
		decimals--
	}
	dst = append(dst, '.')
	n := len(dst)
	dst = strconv.AppendUint(dst, frac, 10)
	if pad := decimals - (len(dst) - n); pad > 0 {
		// Leading zeros of the fraction: shift the digits right.
		dst = append(dst, make([]byte, pad)...)
		copy(dst[n+pad:], dst[n:len(dst)-pad])
		for i := range pad {
			dst[n+i] = '0'
		}
	}
	return dst
}

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string; bytes that are not UTF-8
// become U+FFFD.
func appendJSONString(dst []byte, s string) []byte {
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
		r, n := utf8.DecodeRuneInString(s[i:])
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

// binEncoder encodes the records of one Format.
type binEncoder struct {
	keys [][]byte // `"Name":` with the leading comma for all but the first
}

// AppendJSON appends the record's columns as a JSON object. Records of a
// type with a bad format (Format.Err) encode as {}.
func (r Record) AppendJSON(dst []byte) []byte {
	f := r.Format
	if f.Err != nil {
		return append(dst, '{', '}')
	}
	enc := f.enc
	dst = append(dst, '{')
	p := r.Payload
	for i := range f.Columns {
		c := &f.Columns[i]
		dst = append(dst, enc.keys[i]...)
		q := p[c.Offset : c.Offset+c.Size]
		switch c.Kind {
		case 'b':
			dst = strconv.AppendInt(dst, int64(int8(q[0])), 10)
		case 'B', 'M':
			dst = strconv.AppendUint(dst, uint64(q[0]), 10)
		case 'h':
			dst = strconv.AppendInt(dst, int64(int16(binary.LittleEndian.Uint16(q))), 10)
		case 'H':
			dst = strconv.AppendUint(dst, uint64(binary.LittleEndian.Uint16(q)), 10)
		case 'i':
			dst = strconv.AppendInt(dst, int64(int32(binary.LittleEndian.Uint32(q))), 10)
		case 'I':
			dst = strconv.AppendUint(dst, uint64(binary.LittleEndian.Uint32(q)), 10)
		case 'q':
			dst = strconv.AppendInt(dst, int64(binary.LittleEndian.Uint64(q)), 10)
		case 'Q':
			dst = strconv.AppendUint(dst, binary.LittleEndian.Uint64(q), 10)
		case 'f':
			dst = appendFloat(dst, float64(math.Float32frombits(binary.LittleEndian.Uint32(q))), 32)
		case 'd':
			dst = appendFloat(dst, math.Float64frombits(binary.LittleEndian.Uint64(q)), 64)
		case 'g':
			dst = appendFloat(dst, float64(halfFloat(binary.LittleEndian.Uint16(q))), 32)
		case 'c':
			dst = appendScaled(dst, int64(int16(binary.LittleEndian.Uint16(q))), 2)
		case 'C':
			dst = appendScaled(dst, int64(binary.LittleEndian.Uint16(q)), 2)
		case 'e':
			dst = appendScaled(dst, int64(int32(binary.LittleEndian.Uint32(q))), 2)
		case 'E':
			dst = appendScaled(dst, int64(binary.LittleEndian.Uint32(q)), 2)
		case 'L':
			dst = appendScaled(dst, int64(int32(binary.LittleEndian.Uint32(q))), 7)
		case 'n', 'N', 'Z':
			dst = appendJSONString(dst, cstring(q))
		case 'a':
			dst = append(dst, '[')
			for j := 0; j < 32; j++ {
				if j > 0 {
					dst = append(dst, ',')
				}
				dst = strconv.AppendInt(dst, int64(int16(binary.LittleEndian.Uint16(q[2*j:]))), 10)
			}
			dst = append(dst, ']')
		}
	}
	return append(dst, '}')
}

func newBinEncoder(f *Format) *binEncoder {
	enc := &binEncoder{}
	for i, c := range f.Columns {
		var k []byte
		if i > 0 {
			k = append(k, ',')
		}
		k = appendJSONString(k, c.Name)
		enc.keys = append(enc.keys, append(k, ':'))
	}
	return enc
}

// BinSchema returns the JSON schema of the records of f; each column's
// unit and multiplier, where the log gives them (b's FMTU, UNIT and MULT
// records so far), are in its description.
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
