package cdr

import (
	"encoding/hex"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timealign/timealign/internal/testutil/cdrtest"
	"github.com/timealign/timealign/pkg/stamp"
)

// encodeCases: each writes fields after the encapsulation header (00 01 00
// 00, not shown in want); alignment counts from the end of that header.
var encodeCases = []struct {
	name  string
	write func(e *Encoder)
	want  string
}{
	{"uint8", func(e *Encoder) { e.Uint8(0xab) }, "ab"},
	{"bool", func(e *Encoder) { e.Bool(true); e.Bool(false) }, "0100"},
	{"uint32", func(e *Encoder) { e.Uint32(0x01020304) }, "04030201"},
	{"int32", func(e *Encoder) { e.Int32(-2) }, "feffffff"},
	{"uint8 then uint32: 3 bytes of padding", func(e *Encoder) { e.Uint8(7); e.Uint32(1) }, "07000000" + "01000000"},
	{"uint8 then uint64: 7 bytes of padding", func(e *Encoder) { e.Uint8(7); e.Uint64(1) }, "07000000" + "00000000" + "0100000000000000"},
	{"uint32 then uint64: 4 bytes of padding", func(e *Encoder) { e.Uint32(1); e.Float64(1) }, "01000000" + "00000000" + "000000000000f03f"},
	{"float32", func(e *Encoder) { e.Float32(1.5) }, "0000c03f"},
	{"float64 NaN keeps its bits", func(e *Encoder) { e.Float64(math.Float64frombits(0x7ff8000000000001)) }, "010000000000f87f"},
	{"string: length with the NUL", func(e *Encoder) { e.String("ab") }, "03000000" + "616200"},
	{"empty string", func(e *Encoder) { e.String("") }, "01000000" + "00"},
	{"string then uint32", func(e *Encoder) { e.String("a"); e.Uint32(9) }, "02000000" + "6100" + "0000" + "09000000"},
	{"bytes", func(e *Encoder) { e.Bytes([]byte{1, 2, 3}) }, "03000000" + "010203"},
	{"time", func(e *Encoder) { e.Time(stamp.Time(1_500_000_002)) }, "01000000" + "0265cd1d"},
	{"time before the epoch: seconds rounded down", func(e *Encoder) { e.Time(stamp.Time(-500_000_000)) }, "ffffffff" + "0065cd1d"},
	{"time beyond int32 seconds: 0", func(e *Encoder) { e.Time(stamp.Time(math.MaxInt64)) }, "00000000" + "00000000"},
	{"duration", func(e *Encoder) { e.Duration(-1500 * time.Millisecond) }, "feffffff" + "0065cd1d"},
	{"header", func(e *Encoder) { e.Header(stamp.Time(3_000_000_004), "map") }, "03000000" + "04000000" + "04000000" + "6d617000"},
}

func TestEncoder(t *testing.T) {
	for _, tc := range encodeCases {
		e := NewEncoder(nil)
		tc.write(&e)
		require.Equal(t, "00010000"+tc.want, hex.EncodeToString(e.B), tc.name)
	}
}

// TestHeaderAgainstCdrtest: a header and a body encoded here are the bytes
// cdrtest writes on its own, and pkg/stamp reads the stamp and frame back.
func TestHeaderAgainstCdrtest(t *testing.T) {
	for _, ts := range []stamp.Time{0, 1, 999_999_999, 1_700_000_000_123_456_789, -1} {
		for _, frame := range []string{"", "a", "abc", "abcd", "base_link"} {
			e := NewEncoder(nil)
			e.Header(ts, frame)
			for i := range 11 {
				e.Uint8(byte(i))
			}
			require.Equal(t, cdrtest.Message(ts, frame, 11), e.B, "%v %q", ts, frame)
			got, f, err := stamp.Header(e.B)
			require.NoError(t, err)
			require.Equal(t, ts, got)
			require.Equal(t, frame, string(f))
		}
	}
}

func TestNewEncoderReuses(t *testing.T) {
	buf := make([]byte, 3, 64)
	buf[0] = 0xff
	e := NewEncoder(buf)
	e.Uint32(5)
	require.Equal(t, "0001000005000000", hex.EncodeToString(e.B))
	require.Same(t, &buf[:1][0], &e.B[0], "the caller's buffer, from its start")
}

func BenchmarkHeader(b *testing.B) {
	e := NewEncoder(make([]byte, 0, 64))
	b.ReportAllocs()
	for b.Loop() {
		e = NewEncoder(e.B)
		e.Header(1_700_000_000_123_456_789, "base_link")
		e.Float64(1)
	}
}
