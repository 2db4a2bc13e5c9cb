package mav

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"math"
	"math/big"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/timealign/timealign/pkg/mav/mavsim"
)

// referenceJSON encodes a record the plain way, column by column through
// Record's accessors, strconv and exact rationals: what Record.AppendJSON
// must write byte for byte.
func referenceJSON(r Record) string {
	f := r.Format
	if f.Err != nil {
		return "{}"
	}
	var b strings.Builder
	b.WriteByte('{')
	for i, c := range f.Columns {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(appendJSONString(nil, c.Name))
		b.WriteByte(':')
		p := r.Payload[c.Offset : c.Offset+c.Size]
		switch c.Kind {
		case 'b', 'h', 'i', 'q':
			b.WriteString(strconv.FormatInt(r.Int(i), 10))
		case 'B', 'M', 'H', 'I', 'Q':
			b.WriteString(strconv.FormatUint(uint64(r.Int(i)), 10))
		case 'f', 'g', 'd':
			bits := 32
			if c.Kind == 'd' {
				bits = 64
			}
			v := r.Float(i)
			switch {
			case math.IsNaN(v) || math.IsInf(v, 0):
				b.WriteString("null")
			case v == math.Trunc(v) && math.Abs(v) < 1e15 && !(v == 0 && math.Signbit(v)):
				b.WriteString(strconv.FormatInt(int64(v), 10))
			default:
				b.WriteString(strconv.FormatFloat(v, 'g', -1, bits))
			}
		case 'c', 'C', 'e', 'E', 'L':
			dec := 2
			if c.Kind == 'L' {
				dec = 7
			}
			s := new(big.Rat).SetFrac(big.NewInt(r.Int(i)), new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(dec)), nil)).FloatString(dec)
			s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
			if s == "-0" {
				s = "0"
			}
			b.WriteString(s)
		case 'n', 'N', 'Z':
			b.Write(appendJSONString(nil, r.String(i)))
		case 'a':
			b.WriteByte('[')
			for j := range 32 {
				if j > 0 {
					b.WriteByte(',')
				}
				b.WriteString(strconv.Itoa(int(int16(binary.LittleEndian.Uint16(p[2*j:])))))
			}
			b.WriteByte(']')
		}
	}
	b.WriteByte('}')
	return b.String()
}

// checkBinJSON reads every record of a BIN and compares its JSON with the
// reference; it returns the number of records.
func checkBinJSON(t *testing.T, in []byte) int {
	r := NewBinReader(bytes.NewReader(in))
	n := 0
	var buf []byte
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			return n
		}
		require.NoError(t, err)
		want := referenceJSON(rec)
		// After other bytes, with and without room.
		buf = rec.AppendJSON(append(buf[:0], 'x'))
		require.Equal(t, want, string(buf[1:]), "%s record at %d", rec.Format.Name, rec.Offset)
		require.Equal(t, want, string(rec.AppendJSON(nil)))
		require.True(t, json.Valid(buf[1:]), "%s", buf[1:])
		n++
	}
}

// randomValue returns n bytes of a column value: random bits, or a
// value logs are full of (small integers, short decimals, zeros, powers
// of two), or an edge (NaN, infinities, −0, extremes, invalid UTF-8).
func randomValue(r *rand.Rand, kind byte, n int) []byte {
	p := make([]byte, n)
	switch r.IntN(3) {
	case 0:
		for i := range p {
			p[i] = byte(r.Uint32())
		}
	case 1:
		switch kind {
		case 'f':
			v := float32(r.IntN(20001)-10000) / float32([]int{1, 10, 100, 1000, 1e4}[r.IntN(5)])
			binary.LittleEndian.PutUint32(p, math.Float32bits(v))
		case 'd':
			binary.LittleEndian.PutUint64(p, math.Float64bits(float64(r.IntN(2001)-1000)/100))
		case 'g':
			binary.LittleEndian.PutUint16(p, uint16(r.IntN(1<<16)))
		case 'n', 'N', 'Z':
			copy(p, []string{"ATT", "PID_RLL_P", "Mission 1", "ArduSub V4.5.1 (1a2b3c4d)"}[r.IntN(4)])
		default:
			v := uint64(r.IntN(200)) - 100
			if r.IntN(2) == 0 {
				v = 1 << r.IntN(8*n)
			}
			for i := range p {
				p[i] = byte(v >> (8 * i))
			}
		}
	default:
		switch kind {
		case 'f':
			e := []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.Copysign(0, -1)),
				math.MaxFloat32, math.SmallestNonzeroFloat32, 1e15, 999999999999999, 1 << 49, 1<<50 - 64, 16777217, 0.1, 1e-5}[r.IntN(13)]
			binary.LittleEndian.PutUint32(p, math.Float32bits(e))
		case 'g':
			binary.LittleEndian.PutUint16(p, []uint16{0x7c00, 0xfc00, 0x7e00, 0x8000, 0x0001, 0x7bff, 0x3c00}[r.IntN(7)])
		case 'n', 'N', 'Z':
			copy(p, []string{"a\"b\\c\n\t\x01", "\xff\xfeok", "é", "\x00after"}[r.IntN(4)])
		default:
			for i := range p {
				p[i] = 0xff
			}
			if r.IntN(2) == 0 {
				p[n-1] = 0x7f
			} else if r.IntN(2) == 0 {
				clear(p)
				p[n-1] = 0x80
			}
		}
	}
	return p
}

// TestBinJSONReference compares every kind of column, with random and
// edge values, and the test logs, with the reference encoding.
func TestBinJSONReference(t *testing.T) {
	const format = "QbBhHiIqQfdgcCeELMnNZa"
	var cols []string
	for i := range len(format) {
		cols = append(cols, "C"+string(format[i])+strconv.Itoa(i))
	}
	cols[0] = "TimeUS"
	var in bytes.Buffer
	w := mavsim.NewBinWriter(&in)
	id := w.Define("ALL", format, strings.Join(cols, ","))
	w.Define("ONE", "f", "V")
	w.Define("STR", "Z", "Msg")
	r := rand.New(rand.NewPCG(16, 1))
	for range 20000 {
		p := []byte{0xA3, 0x95, id}
		for i := range len(format) {
			p = append(p, randomValue(r, format[i], int(kindSize[format[i]]))...)
		}
		w.WriteRaw(p)
	}
	for range 2000 {
		w.WriteRaw(append([]byte{0xA3, 0x95, id + 1}, randomValue(r, 'f', 4)...))
		w.WriteRaw(append([]byte{0xA3, 0x95, id + 2}, randomValue(r, 'Z', 64)...))
	}
	require.NoError(t, w.Err())
	require.Greater(t, checkBinJSON(t, in.Bytes()), 24000)
	logs, err := filepath.Glob(filepath.Join("..", "..", "testdata", "mav", "*.BIN"))
	require.NoError(t, err)
	require.NotEmpty(t, logs)
	for _, p := range logs {
		in, err := os.ReadFile(p)
		require.NoError(t, err)
		require.Positive(t, checkBinJSON(t, in), p)
	}
}
