package stampmonitor

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/timealign/timealign/pkg/stamp"
)

// Truth is a timealign/msg/GroundTruth: what sensor_sim says of a sample
// it published.
type Truth struct {
	// At is header.stamp (when the sample was published), FrameID its
	// frame.
	At      stamp.Time
	FrameID string
	// Topic is the resolved topic the sample was published on, Sample its
	// number there.
	Topic  string
	Sample uint64
	// True is the true acquisition time; Stamp what the sample was
	// published with.
	True, Stamp stamp.Time
	// Fingerprint is the sample's stamp.Fingerprint.
	Fingerprint uint64
}

// ErrTruth: a message on `truth` is not a GroundTruth.
var ErrTruth = errors.New("stamp_monitor: not a timealign/msg/GroundTruth")

// cdrReader reads CDR fields of a serialized message, aligned relative to
// the body (offset 4), in the message's byte order.
type cdrReader struct {
	b   []byte
	off int
	bo  binary.ByteOrder
	// maxAlign is 8 for CDR (XCDR1), 4 for XCDR2.
	maxAlign int
	err      error
}

func (r *cdrReader) take(n, align int) []byte {
	if r.err != nil {
		return nil
	}
	align = min(align, r.maxAlign)
	off := 4 + (r.off-4+align-1)/align*align
	if off < r.off || off+n > len(r.b) || n < 0 {
		r.err = fmt.Errorf("%w: field at offset %d, %d bytes", stamp.ErrTruncated, off, len(r.b))
		return nil
	}
	r.off = off + n
	return r.b[off : off+n]
}

func (r *cdrReader) uint32() uint32 {
	if b := r.take(4, 4); b != nil {
		return r.bo.Uint32(b)
	}
	return 0
}

func (r *cdrReader) uint64() uint64 {
	if b := r.take(8, 8); b != nil {
		return r.bo.Uint64(b)
	}
	return 0
}

func (r *cdrReader) time() stamp.Time {
	sec, ns := int32(r.uint32()), r.uint32()
	return stamp.Normalize(sec, ns)
}

func (r *cdrReader) string() string {
	n := r.uint32()
	if r.err == nil && (n == 0 || uint64(n) > uint64(len(r.b)-r.off)) {
		r.err = fmt.Errorf("%w: string of length %d at offset %d, %d bytes", ErrTruth, n, r.off, len(r.b))
	}
	b := r.take(int(n), 1)
	if r.err != nil {
		return ""
	}
	if b[len(b)-1] != 0 {
		r.err = fmt.Errorf("%w: a string is not NUL-terminated", ErrTruth)
		return ""
	}
	return string(b[:len(b)-1])
}

// ParseTruth decodes a serialized timealign/msg/GroundTruth, in either
// CDR byte order. A message that ends early or whose strings are not CDR
// strings is an error.
func ParseTruth(msg []byte) (Truth, error) {
	at, frame, err := stamp.Header(msg)
	if err != nil {
		return Truth{}, fmt.Errorf("%w: %w", ErrTruth, err)
	}
	r := cdrReader{b: msg, off: 16 + len(frame) + 1, bo: binary.LittleEndian, maxAlign: 8}
	if msg[1]&1 == 0 { // 0x0000, 0x0006: big endian (stamp.Header checked the identifier)
		r.bo = binary.BigEndian
	}
	if msg[1] >= 6 {
		r.maxAlign = 4
	}
	t := Truth{At: at, FrameID: string(frame)}
	t.Topic = r.string()
	t.Sample = r.uint64()
	t.True = r.time()
	t.Stamp = r.time()
	t.Fingerprint = r.uint64()
	if r.err != nil {
		if !errors.Is(r.err, ErrTruth) {
			r.err = fmt.Errorf("%w: %w", ErrTruth, r.err)
		}
		return Truth{}, r.err
	}
	return t, nil
}
