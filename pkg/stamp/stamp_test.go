package stamp

import (
	"bytes"
	"encoding/binary"
	"io"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// rosCases feeds the conversion tests, the fuzz seeds and the benchmarks.
var rosCases = []struct {
	name    string
	sec     int32
	nanosec uint32
	want    Time
	err     error
}{
	{"zero", 0, 0, 0, nil},
	{"one ns", 0, 1, 1, nil},
	{"now", 1_700_000_000, 123_456_789, 1_700_000_000_123_456_789, nil},
	{"max", math.MaxInt32, 999_999_999, Time(int64(math.MaxInt32)*1e9 + 999_999_999), nil},
	{"negative", -1, 500_000_000, -500_000_000, nil},
	{"min", math.MinInt32, 0, Time(int64(math.MinInt32) * 1e9), nil},
	{"nanosec 1e9", 1, 1_000_000_000, 0, ErrNanosecRange},
	{"nanosec max", 1, math.MaxUint32, 0, ErrNanosecRange},
}

func TestFromROS(t *testing.T) {
	for _, tc := range rosCases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := FromROS(tc.sec, tc.nanosec)
			if tc.err != nil {
				require.ErrorIs(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
			sec, ns, err := got.ROS()
			require.NoError(t, err)
			require.Equal(t, tc.sec, sec)
			require.Equal(t, tc.nanosec, ns)
		})
	}
}

func TestNormalize(t *testing.T) {
	require.Equal(t, Time(2_500_000_000), Normalize(1, 1_500_000_000))
	require.Equal(t, Time(-1e9+4_294_967_295), Normalize(-1, math.MaxUint32))
}

func TestROSRange(t *testing.T) {
	for _, v := range []Time{Max, Min, Time(int64(math.MaxInt32+1) * 1e9), Time(int64(math.MinInt32)*1e9 - 1)} {
		_, _, err := v.ROS()
		require.ErrorIs(t, err, ErrSecRange, "%d", v)
	}
}

func TestSaturating(t *testing.T) {
	for _, tc := range []struct {
		t    Time
		d    time.Duration
		want Time
	}{
		{Max - 1, 5, Max},
		{Min + 1, -5, Min},
		{Max, -1, Max - 1},
		{10, -20, -10},
		{Min, math.MaxInt64, -1},
	} {
		require.Equal(t, tc.want, tc.t.Add(tc.d), "%d + %d", tc.t, tc.d)
	}
	require.Equal(t, time.Duration(math.MaxInt64), Max.Sub(Min))
	require.Equal(t, time.Duration(math.MinInt64), Min.Sub(Max))
	require.Equal(t, time.Duration(-3), Time(7).Sub(10))
}

func TestSaturatingProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		a := Time(rapid.Int64().Draw(t, "a"))
		d := time.Duration(rapid.Int64().Draw(t, "d"))
		got := a.Add(d)
		// Exact when representable, else clamped; compare in float.
		exact := float64(a) + float64(d)
		switch {
		case exact >= math.MaxInt64:
			if got != Max && float64(got) < 9.2e18 {
				t.Fatalf("%d+%d = %d, want saturation at Max", a, d, got)
			}
		case exact <= math.MinInt64:
			if got != Min && float64(got) > -9.2e18 {
				t.Fatalf("%d+%d = %d, want saturation at Min", a, d, got)
			}
		default:
			if math.Abs(float64(got)-exact) > 4096 {
				t.Fatalf("%d+%d = %d", a, d, got)
			}
		}
		if d > math.MinInt64 && got != Max && got != Min && got.Sub(a) != d {
			t.Fatalf("(%d+%d)-%d != %d", a, d, a, d)
		}
		if a >= Time(math.MinInt32)*1e9 && a < Time(math.MaxInt32+1)*1e9 {
			s, ns, err := a.ROS()
			if err != nil || ns >= 1e9 {
				t.Fatalf("ROS(%d) = %d, %d, %v", a, s, ns, err)
			}
			back, err := FromROS(s, ns)
			if err != nil || back != a {
				t.Fatalf("round trip %d -> %d", a, back)
			}
		}
	})
}

func TestStringAndParse(t *testing.T) {
	require.Equal(t, "1700000000.000000001", Time(1_700_000_000_000_000_001).String())
	require.Equal(t, "-0.500000000", Time(-500_000_000).String())
	require.Equal(t, "-1.250000000", Time(-1_250_000_000).String())
	v, err := ParseNanos("-42")
	require.NoError(t, err)
	require.Equal(t, Time(-42), v)
	_, err = ParseNanos("1.5")
	require.Error(t, err)
	require.Equal(t, "17", string(Time(17).AppendNanos(nil)))
}

// cdrCases feeds the CDR tests, the fuzz seeds and the benchmarks.
var cdrCases = []struct {
	name    string
	msg     []byte
	stamp   Time
	frameID string
	err     error // of Header
}{
	{"LE", header(binary.LittleEndian, 0x0001, 1_700_000_000, 5, "imu_link", 8), 1_700_000_000_000_000_005, "imu_link", nil},
	{"BE", header(binary.BigEndian, 0x0000, 12, 999_999_999, "base", 0), 12_999_999_999, "base", nil},
	{"CDR2 LE", header(binary.LittleEndian, 0x0007, 3, 0, "", 4), 3_000_000_000, "", nil},
	{"CDR2 BE", header(binary.BigEndian, 0x0006, -3, 0, "x", 0), -3_000_000_000, "x", nil},
	{"nanosec over 1e9", header(binary.LittleEndian, 0x0001, 1, 1_500_000_000, "f", 0), 2_500_000_000, "f", nil},
	{"empty", nil, 0, "", ErrTruncated},
	{"short", []byte{0, 1, 0, 0, 1, 2, 3}, 0, "", ErrTruncated},
	{"no frame_id", header(binary.LittleEndian, 0x0001, 1, 2, "abc", 0)[:14], 1_000_000_002, "", ErrTruncated},
	{"frame_id too long", trunc(header(binary.LittleEndian, 0x0001, 1, 2, "abcdef", 0), 3), 1_000_000_002, "", ErrTruncated},
	{"frame_id not terminated", corrupt(header(binary.LittleEndian, 0x0001, 1, 2, "ab", 0), 18, 'x'), 1_000_000_002, "", ErrNotHeader},
	{"frame_id length 0", corrupt(header(binary.LittleEndian, 0x0001, 1, 2, "ab", 0), 12, 0), 1_000_000_002, "", ErrNotHeader},
	{"PL_CDR", header(binary.LittleEndian, 0x0003, 1, 2, "", 0), 0, "", &EncapsulationError{ID: 3}},
	{"garbage", header(binary.LittleEndian, 0x4142, 1, 2, "", 0), 0, "", &EncapsulationError{ID: 0x4142}},
}

// header serializes a std_msgs/Header followed by pad bytes of payload.
func header(bo binary.AppendByteOrder, enc uint16, sec int32, ns uint32, frame string, pad int) []byte {
	b := binary.BigEndian.AppendUint16(nil, enc)
	b = append(b, 0, 0)
	b = bo.AppendUint32(b, uint32(sec))
	b = bo.AppendUint32(b, ns)
	b = bo.AppendUint32(b, uint32(len(frame)+1))
	b = append(b, frame...)
	b = append(b, 0)
	for i := 0; i < pad; i++ {
		b = append(b, byte(0xa0+i))
	}
	return b
}

func trunc(b []byte, n int) []byte           { return b[:len(b)-n] }
func corrupt(b []byte, i int, v byte) []byte { b[i] = v; return b }

func TestHeader(t *testing.T) {
	for _, tc := range cdrCases {
		t.Run(tc.name, func(t *testing.T) {
			st, frame, err := Header(tc.msg)
			var encErr *EncapsulationError
			switch {
			case tc.err == nil:
				require.NoError(t, err)
				require.Equal(t, tc.stamp, st)
				require.Equal(t, tc.frameID, string(frame))
			case errorAs(tc.err, &encErr):
				var got *EncapsulationError
				require.ErrorAs(t, err, &got)
				require.Equal(t, encErr.ID, got.ID)
			default:
				require.ErrorIs(t, err, tc.err)
			}
			// HeaderStamp needs only the 12 bytes of the stamp.
			st, err = HeaderStamp(tc.msg)
			if len(tc.msg) >= HeaderStampSize && tc.stamp != 0 {
				require.NoError(t, err)
				require.Equal(t, tc.stamp, st)
			}
		})
	}
	require.ErrorIs(t, ErrTruncated, io.ErrUnexpectedEOF)
}

func errorAs(err error, target **EncapsulationError) bool {
	e, ok := err.(*EncapsulationError)
	if ok {
		*target = e
	}
	return ok
}

func TestSetHeaderStamp(t *testing.T) {
	for _, tc := range cdrCases {
		if tc.err != nil {
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			msg := append([]byte(nil), tc.msg...)
			want := Time(1_234_567_890_987_654_321)
			require.NoError(t, SetHeaderStamp(msg, want))
			got, frame, err := Header(msg)
			require.NoError(t, err)
			require.Equal(t, want, got)
			require.Equal(t, tc.frameID, string(frame))
			require.Equal(t, tc.msg[:4], msg[:4], "encapsulation untouched")
			require.Equal(t, tc.msg[12:], msg[12:], "everything after the stamp untouched")
		})
	}
	msg := header(binary.LittleEndian, 1, 1, 2, "", 0)
	orig := append([]byte(nil), msg...)
	require.ErrorIs(t, SetHeaderStamp(msg, Max), ErrSecRange)
	require.Equal(t, orig, msg, "a failed rewrite changes nothing")
	require.ErrorIs(t, SetHeaderStamp(msg[:8], 5), ErrTruncated)
}

func TestZeroAlloc(t *testing.T) {
	msg := append([]byte(nil), cdrCases[0].msg...) // the table stays as it is
	allocs := testing.AllocsPerRun(100, func() {
		st, _, _ := Header(msg)
		_ = SetHeaderStamp(msg, st+1)
	})
	require.Zero(t, allocs)
}

func FuzzHeader(f *testing.F) {
	for _, tc := range cdrCases {
		f.Add(tc.msg, int64(tc.stamp))
	}
	f.Fuzz(func(t *testing.T, msg []byte, v int64) {
		st, frame, err := Header(msg)
		if err == nil {
			require.LessOrEqual(t, len(frame), len(msg))
			hs, err := HeaderStamp(msg)
			require.NoError(t, err)
			require.Equal(t, st, hs)
		}
		orig := bytes.Clone(msg) // nil stays nil, empty stays empty (the fuzzer passes either)
		fp, fpErr := Fingerprint(msg)
		if err := SetHeaderStamp(msg, Time(v)); err == nil {
			// The fingerprint ignores the stamp.
			require.NoError(t, fpErr)
			fp2, err := Fingerprint(msg)
			require.NoError(t, err)
			require.Equal(t, fp, fp2)
			got, err := HeaderStamp(msg)
			require.NoError(t, err)
			require.Equal(t, Time(v), got)
			require.Equal(t, orig[12:], msg[12:])
		} else {
			require.Equal(t, orig, msg)
		}
	})
}

func FuzzFromROS(f *testing.F) {
	for _, tc := range rosCases {
		f.Add(tc.sec, tc.nanosec)
	}
	f.Fuzz(func(t *testing.T, sec int32, ns uint32) {
		v, err := FromROS(sec, ns)
		if ns >= 1e9 {
			require.ErrorIs(t, err, ErrNanosecRange)
			return
		}
		require.NoError(t, err)
		s2, ns2, err := v.ROS()
		require.NoError(t, err)
		require.Equal(t, sec, s2)
		require.Equal(t, ns, ns2)
	})
}

func BenchmarkHeader(b *testing.B) {
	for _, tc := range cdrCases[:4] {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_, _, _ = Header(tc.msg)
			}
		})
	}
}

func BenchmarkSetHeaderStamp(b *testing.B) {
	msg := append([]byte(nil), cdrCases[0].msg...)
	b.ReportAllocs()
	for b.Loop() {
		_ = SetHeaderStamp(msg, 1_700_000_000_000_000_000)
	}
}
