package stamp

import (
	"encoding/binary"
	"encoding/hex"
	"testing"

	"github.com/stretchr/testify/require"
)

// timeRefCases are sensor_msgs/msg/TimeReference messages as rclpy
// serializes them on ROS 2 Humble (rclpy.serialization.serialize_message of
// a TimeReference with header.stamp 1700000000.000000005, time_ref
// 1700000001.123456789 and the frame_id and source shown), covering every
// padding of time_ref behind frame_id.
var timeRefCases = []struct {
	frameID, source, hex string
}{
	{"", "", "0001000000f1536505000000010000000000000001f1536515cd5b070100000000"},
	{"a", "gps", "0001000000f1536505000000020000006100000001f1536515cd5b070400000067707300"},
	{"abc", "pps", "0001000000f1536505000000040000006162630001f1536515cd5b070400000070707300"},
	{"abcd", "", "0001000000f153650500000005000000616263640000000001f1536515cd5b070100000000"},
	{"gps_link", "nmea", "0001000000f1536505000000090000006770735f6c696e6b0000000001f1536515cd5b07050000006e6d656100"},
}

const timeRefWant = Time(1_700_000_001_123_456_789)

func timeRefMsg(t testing.TB, i int) []byte {
	b, err := hex.DecodeString(timeRefCases[i].hex)
	require.NoError(t, err)
	return b
}

// timeRef builds a TimeReference in either byte order, with header.stamp
// 1700000000.000000005.
func timeRef(bo binary.AppendByteOrder, enc uint16, frame string, sec int32, ns uint32, source string) []byte {
	b := header(bo, enc, 1_700_000_000, 5, frame, 0)
	for (len(b)-4)%4 != 0 {
		b = append(b, 0)
	}
	b = bo.AppendUint32(b, uint32(sec))
	b = bo.AppendUint32(b, ns)
	b = bo.AppendUint32(b, uint32(len(source)+1))
	b = append(b, source...)
	return append(b, 0)
}

func TestTimeRef(t *testing.T) {
	for i, tc := range timeRefCases {
		msg := timeRefMsg(t, i)
		got, err := TimeRef(msg)
		require.NoError(t, err, "frame_id %q", tc.frameID)
		require.Equal(t, timeRefWant, got, "frame_id %q", tc.frameID)
		require.Equal(t, msg, timeRef(binary.LittleEndian, 0x0001, tc.frameID, 1_700_000_001, 123_456_789, tc.source),
			"the builder writes what rclpy writes")
		hs, err := HeaderStamp(msg)
		require.NoError(t, err)
		require.Equal(t, Time(1_700_000_000_000_000_005), hs, "header.stamp is another field")
	}
	for _, tc := range []struct {
		name string
		msg  []byte
		want Time
	}{
		{"BE", timeRef(binary.BigEndian, 0x0000, "ab", -2, 5, "x"), -1_999_999_995},
		{"CDR2 BE", timeRef(binary.BigEndian, 0x0006, "abcdefg", 3, 0, ""), 3_000_000_000},
		{"CDR2 LE", timeRef(binary.LittleEndian, 0x0007, "", 0, 1, ""), 1},
		{"nanosec over 1e9", timeRef(binary.LittleEndian, 0x0001, "f", 1, 1_500_000_000, ""), 2_500_000_000},
	} {
		got, err := TimeRef(tc.msg)
		require.NoError(t, err, tc.name)
		require.Equal(t, tc.want, got, tc.name)
	}
}

// TestTimeRefTruncated: every prefix that ends before time_ref is over is
// refused (never read past the end); the header's own errors come first.
func TestTimeRefTruncated(t *testing.T) {
	for i := range timeRefCases {
		msg := timeRefMsg(t, i)
		_, frame, err := Header(msg)
		require.NoError(t, err)
		end := 16 + len(frame) + 1
		off := 4 + (end-4+3)/4*4
		for n := 0; n < off+8; n++ {
			_, err := TimeRef(msg[:n:n])
			require.ErrorIs(t, err, ErrTruncated, "case %d cut at %d", i, n)
		}
		got, err := TimeRef(msg[: off+8 : off+8])
		require.NoError(t, err, "source is not needed")
		require.Equal(t, timeRefWant, got)
	}
	_, err := TimeRef(corrupt(timeRefMsg(t, 1), 17, 'x')) // frame_id "a" loses its NUL
	require.ErrorIs(t, err, ErrNotHeader)
	var enc *EncapsulationError
	_, err = TimeRef(corrupt(timeRefMsg(t, 1), 1, 3))
	require.ErrorAs(t, err, &enc)
}

func TestTimeRefZeroAlloc(t *testing.T) {
	msg := timeRefMsg(t, 4)
	require.Zero(t, testing.AllocsPerRun(100, func() { _, _ = TimeRef(msg) }))
}

func FuzzTimeRef(f *testing.F) {
	for i := range timeRefCases {
		f.Add(timeRefMsg(f, i))
	}
	f.Add(timeRef(binary.BigEndian, 0x0000, "ab", -2, 5, "x"))
	f.Fuzz(func(t *testing.T, msg []byte) {
		got, err := TimeRef(msg)
		if err != nil {
			return
		}
		// A readable time_ref has a readable Header before it and lies
		// within the message.
		_, frame, err := Header(msg)
		require.NoError(t, err)
		end := 16 + len(frame) + 1
		off := 4 + (end-4+3)/4*4
		require.LessOrEqual(t, off+8, len(msg))
		bo, _ := byteOrder(msg)
		require.Equal(t, Normalize(int32(bo.Uint32(msg[off:])), bo.Uint32(msg[off+4:])), got)
	})
}
