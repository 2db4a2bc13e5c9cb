package mav

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"reflect"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/timealign/timealign/pkg/mav/mavsim"
	"github.com/timealign/timealign/pkg/stamp"
)

// referenceMsgJSON encodes a decoded message field by field through
// reflection: what TlogMessage.AppendJSON, which reads the payload, must
// write byte for byte.
func referenceMsgJSON(m *TlogMessage) string {
	v := reflect.ValueOf(m.Message()).Elem()
	typ := v.Type()
	var b []byte
	b = append(b, '{')
	one := func(fv reflect.Value) {
		switch fv.Kind() {
		case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			b = strconv.AppendUint(b, fv.Uint(), 10)
		case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			b = strconv.AppendInt(b, fv.Int(), 10)
		case reflect.Float32, reflect.Float64:
			f, bits := fv.Float(), 32
			if fv.Kind() == reflect.Float64 {
				bits = 64
			}
			switch {
			case math.IsNaN(f) || math.IsInf(f, 0):
				b = append(b, "null"...)
			case f == math.Trunc(f) && math.Abs(f) < 1e15 && !(f == 0 && math.Signbit(f)):
				b = strconv.AppendInt(b, int64(f), 10)
			default:
				b = strconv.AppendFloat(b, f, 'g', -1, bits)
			}
		case reflect.String:
			b = appendJSONString(b, fv.String())
		}
	}
	for i := range typ.NumField() {
		if i > 0 {
			b = append(b, ',')
		}
		name := typ.Field(i).Tag.Get("mavname")
		if name == "" {
			name = snake(typ.Field(i).Name)
		}
		b = appendJSONString(b, name)
		b = append(b, ':')
		fv := v.Field(i)
		if fv.Kind() != reflect.Array {
			one(fv)
			continue
		}
		b = append(b, '[')
		for j := range fv.Len() {
			if j > 0 {
				b = append(b, ',')
			}
			one(fv.Index(j))
		}
		b = append(b, ']')
	}
	return string(append(b, '}'))
}

// maxPayload is the length of a v2 payload with every field set.
func maxPayload(info *msgInfo) int {
	n := 0
	for _, f := range info.encoder().fields {
		n += f.size * max(f.n, 1)
	}
	return n
}

// TestMsgJSONReference: every message of the dialect, v1 and v2 (with the
// trailing zeros dropped), with random payloads and payloads of edge
// values, encodes as its decoded fields do.
func TestMsgJSONReference(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 2))
	var tl bytes.Buffer
	w := mavsim.NewTlogWriter(&tl)
	frames := 0
	for id, info := range dialectInfo() {
		info.load()
		for k := range 20 {
			p := make([]byte, 255)
			for i := range p {
				switch k % 4 {
				case 0:
					p[i] = byte(r.Uint32())
				case 1:
					p[i] = []byte{0, 0xff, 0x7f, 0x80, 'a', '"', 0xc3}[r.IntN(7)]
				default:
					if r.IntN(3) == 0 {
						p[i] = byte(r.Uint32())
					}
				}
			}
			version := 2
			n := r.IntN(255) + 1
			if k%5 == 0 && id < 256 {
				version, n = 1, info.v1Size
			}
			payload := p[:n]
			if version == 2 {
				// As long as the message at most, without trailing zeros.
				payload = payload[:min(n, maxPayload(info))]
				for len(payload) > 1 && payload[len(payload)-1] == 0 {
					payload = payload[:len(payload)-1]
				}
			}
			w.WriteRaw(stamp.Time(1e15+frames), mavsim.RawFrame(version, 0, 1, 1, id, payload, info.rw.CRCExtra()))
			frames++
		}
	}
	require.NoError(t, w.Err())
	tr := NewTlogReader(bytes.NewReader(tl.Bytes()))
	n := 0
	for {
		m, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		got := m.AppendJSON(nil)
		require.Equal(t, referenceMsgJSON(m), string(got), "%s v%d", m.Name, m.Version)
		require.True(t, json.Valid(got))
		checkScalars(t, m)
		n++
	}
	require.Equal(t, frames, n, "every frame read: %+v", tr.Stats())
	require.Greater(t, n, 4000)
}

// checkScalars compares every number field the payload reader gives
// (TlogMessage.scalar, what the Aligner reads) with the decoded message.
func checkScalars(t *testing.T, m *TlogMessage) {
	t.Helper()
	v := reflect.ValueOf(m.Message()).Elem()
	for i, f := range m.info.encoder().fields {
		if f.n > 0 || f.kind == reflect.String {
			continue
		}
		mask := uint64(1)<<(8*f.size) - 1
		if f.size == 8 {
			mask = ^uint64(0)
		}
		got := m.scalar(i)
		var want uint64
		fv := v.Field(i)
		switch f.kind {
		case reflect.Float32:
			g, w := math.Float32frombits(uint32(got)), float32(fv.Float())
			if g != w && !(g != g && w != w) {
				t.Fatalf("%s field %d: %v from the payload, %v decoded", m.Name, i, g, w)
			}
			continue
		case reflect.Float64:
			g, w := math.Float64frombits(got), fv.Float()
			if g != w && !(g != g && w != w) {
				t.Fatalf("%s field %d: %v from the payload, %v decoded", m.Name, i, g, w)
			}
			continue
		case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Int:
			want = uint64(fv.Int())
		default:
			want = fv.Uint()
		}
		if got&mask != want&mask {
			t.Fatalf("%s field %d: %#x from the payload, %#x decoded", m.Name, i, got&mask, want&mask)
		}
	}
}
