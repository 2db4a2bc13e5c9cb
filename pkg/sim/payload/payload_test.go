package payload

import (
	"encoding/binary"
	"encoding/hex"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timealign/timealign/pkg/stamp"
)

// TestDistinct: no two samples of a stream are alike apart from
// their stamps (their fingerprints differ), over more samples than the
// ground-truth monitor ever waits for; the stamp and frame are where they
// belong.
func TestDistinct(t *testing.T) {
	p, err := New(Options{ImageWidth: 16, ImageHeight: 8, Encoding: "rgb8", Beams: 90})
	require.NoError(t, err)
	const ts = stamp.Time(1_700_000_000_000_000_123)
	for _, typ := range []string{ImuType, LaserScanType, ImageType} {
		seen := map[uint64]int{}
		var buf []byte
		for seq := range 20_000 {
			buf = p.Message(buf, typ, ts, "frame", seq)
			got, frame, err := stamp.Header(buf)
			require.NoError(t, err)
			require.Equal(t, ts, got)
			require.Equal(t, "frame", string(frame))
			fp, err := stamp.Fingerprint(buf)
			require.NoError(t, err)
			if prev, dup := seen[fp]; dup {
				t.Fatalf("%s: sample %d has the fingerprint of sample %d", typ, seq, prev)
			}
			seen[fp] = seq
		}
	}
}

func TestImage(t *testing.T) {
	for _, tc := range []struct {
		enc string
		bpp int
	}{{"mono8", 1}, {"mono16", 2}, {"rgb8", 3}, {"bgra8", 4}} {
		p, err := New(Options{ImageWidth: 640, ImageHeight: 480, Encoding: tc.enc})
		require.NoError(t, err)
		msg := p.Image(nil, 5, "camera", 77)
		// header (stamp, "camera"), height, width, encoding, is_bigendian,
		// step, data: the size of the pixels plus the fields before them.
		data := 640 * 480 * tc.bpp
		require.Greater(t, len(msg), data, tc.enc)
		require.Less(t, len(msg), data+64, tc.enc)
		require.Equal(t, uint64(77), binary.LittleEndian.Uint64(msg[len(msg)-data:]), "%s: the frame number", tc.enc)
	}
}

func TestOptionsRejected(t *testing.T) {
	for _, o := range []Options{
		{ImageWidth: 0, ImageHeight: 480},
		{ImageWidth: 640, ImageHeight: 20000},
		{ImageWidth: 640, ImageHeight: 480, Encoding: "yuv422"},
		{ImageWidth: 640, ImageHeight: 480, Beams: -1},
		{ImageWidth: 640, ImageHeight: 480, ScanTime: -time.Second},
	} {
		_, err := New(o)
		require.Error(t, err, "%+v", o)
	}
}

func TestAppendTimeReference(t *testing.T) {
	msg := AppendTimeReference(nil, 1_700_000_000_000_000_005, "gps_link", 1_700_000_001_123_456_789, "nmea")
	// rclpy's bytes for this message (pkg/stamp's TimeRef cases).
	want := "0001000000f1536505000000090000006770735f6c696e6b0000000001f1536515cd5b07050000006e6d656100"
	require.Equal(t, want, hex.EncodeToString(msg))
	ref, err := stamp.TimeRef(msg)
	require.NoError(t, err)
	require.Equal(t, stamp.Time(1_700_000_001_123_456_789), ref)
}
