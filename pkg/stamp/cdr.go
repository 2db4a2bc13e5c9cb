package stamp

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// A serialized ROS 2 message (as rmw_serialize and the serialized take and
// publish calls carry it) starts with a 4-byte encapsulation header: two
// bytes naming the representation, two option bytes. For a message whose
// first field is a std_msgs/Header the body then starts with
//
//	int32  header.stamp.sec       at offset 4
//	uint32 header.stamp.nanosec   at offset 8
//	uint32 len(frame_id)+1        at offset 12
//	bytes  frame_id, NUL          at offset 16
//
// in the byte order the representation names. The body is aligned relative
// to offset 4, so these offsets hold for plain CDR (XCDR1) and for final
// XCDR2 alike.

// Encapsulation identifiers (OMG DDS-XTypes 7.6.3.1.2).
const (
	encCDRBE  = 0x0000
	encCDRLE  = 0x0001
	encCDR2BE = 0x0006
	encCDR2LE = 0x0007
)

const (
	offSec     = 4
	offNanosec = 8
	offFrameID = 12
	// HeaderStampSize is how many bytes a message needs for its stamp to be read.
	HeaderStampSize = offNanosec + 4
)

// ErrTruncated: the message ends before the field being read. It unwraps to
// [io.ErrUnexpectedEOF].
var ErrTruncated = fmt.Errorf("stamp: truncated CDR message: %w", io.ErrUnexpectedEOF)

// ErrNotHeader: the bytes after the stamp are not a valid frame_id string,
// so the message's first field is not a std_msgs/Header.
var ErrNotHeader = errors.New("stamp: first field is not a std_msgs/Header")

// EncapsulationError reports an encapsulation header that timealign cannot
// read a stamp behind (parameter lists, delimited XCDR2, or garbage).
type EncapsulationError struct {
	ID uint16 // the representation identifier found
}

func (e *EncapsulationError) Error() string {
	return fmt.Sprintf("stamp: unsupported CDR encapsulation 0x%04x (want CDR or final XCDR2, little or big endian)", e.ID)
}

// byteOrder returns the byte order of a serialized message's body.
func byteOrder(msg []byte) (binary.ByteOrder, error) {
	if len(msg) < HeaderStampSize {
		return nil, ErrTruncated
	}
	switch id := binary.BigEndian.Uint16(msg); id {
	case encCDRLE, encCDR2LE:
		return binary.LittleEndian, nil
	case encCDRBE, encCDR2BE:
		return binary.BigEndian, nil
	default:
		return nil, &EncapsulationError{ID: id}
	}
}

// HeaderStamp reads header.stamp from a serialized message whose first field
// is a std_msgs/Header. It checks the encapsulation and length, not the
// frame_id; use [Header] for that. It does not allocate. A nanosec field of
// 1e9 or more is normalized, as rclcpp's Time does.
func HeaderStamp(msg []byte) (Time, error) {
	bo, err := byteOrder(msg)
	if err != nil {
		return 0, err
	}
	return Normalize(int32(bo.Uint32(msg[offSec:])), bo.Uint32(msg[offNanosec:])), nil
}

// Header reads header.stamp and header.frame_id (a slice of msg, without the
// terminating NUL) and checks that frame_id is a well-formed CDR string, the
// best evidence available in the bytes that the message really starts with a
// std_msgs/Header. It does not allocate.
func Header(msg []byte) (t Time, frameID []byte, err error) {
	t, err = HeaderStamp(msg)
	if err != nil {
		return 0, nil, err
	}
	bo, _ := byteOrder(msg)
	if len(msg) < offFrameID+4 {
		return 0, nil, ErrTruncated
	}
	n := bo.Uint32(msg[offFrameID:])
	start := offFrameID + 4
	if n == 0 {
		return 0, nil, fmt.Errorf("%w: frame_id length is 0 (a CDR string counts its NUL)", ErrNotHeader)
	}
	if uint64(n) > uint64(len(msg)-start) {
		return 0, nil, fmt.Errorf("%w: frame_id length %d, %d bytes left", ErrTruncated, n, len(msg)-start)
	}
	end := start + int(n) - 1
	if msg[end] != 0 {
		return 0, nil, fmt.Errorf("%w: frame_id is not NUL-terminated", ErrNotHeader)
	}
	return t, msg[start:end], nil
}

// SetHeaderStamp rewrites header.stamp in place in a serialized message whose
// first field is a std_msgs/Header, leaving every other byte as it was. It
// fails if t does not fit builtin_interfaces/Time. It does not allocate.
func SetHeaderStamp(msg []byte, t Time) error {
	bo, err := byteOrder(msg)
	if err != nil {
		return err
	}
	sec, ns, err := t.ROS()
	if err != nil {
		return err
	}
	bo.PutUint32(msg[offSec:], uint32(sec))
	bo.PutUint32(msg[offNanosec:], ns)
	return nil
}

// TimeRef reads time_ref from a serialized sensor_msgs/msg/TimeReference:
//
//	std_msgs/Header header             stamp, frame_id (see Header)
//	builtin_interfaces/Time time_ref   int32 sec, uint32 nanosec, 4-aligned
//	string source
//
// time_ref follows frame_id's NUL, padded to a multiple of 4 from the start
// of the body (offset 4), in either byte order. The header is checked as by
// [Header]; a message that ends inside time_ref is [ErrTruncated]; source is
// not read. A nanosec field of 1e9 or more is normalized. It does not
// allocate.
func TimeRef(msg []byte) (Time, error) {
	_, frameID, err := Header(msg)
	if err != nil {
		return 0, err
	}
	bo, _ := byteOrder(msg)
	end := offFrameID + 4 + len(frameID) + 1 // after the NUL
	off := offSec + (end-offSec+3)&^3
	if len(msg) < off+8 {
		return 0, fmt.Errorf("%w: time_ref at offset %d, %d bytes", ErrTruncated, off, len(msg))
	}
	return Normalize(int32(bo.Uint32(msg[off:])), bo.Uint32(msg[off+4:])), nil
}

// Fingerprint identifies a serialized message whose first field is a
// std_msgs/Header by everything but its stamp: the FNV-1a 64-bit hash of
// its representation identifier (bytes 0–1) and of its bytes from offset 12
// on (frame_id and the rest of the message), zero-padded to a multiple of 4
// from the start of the body. A node that rewrites only header.stamp (and a
// middleware that pads a message to 4 bytes with zeros, setting the option
// bytes 2–3) leaves it unchanged, so it finds a sample again whatever its
// stamp became: timealign's sensor_sim publishes it with the sample's
// ground truth. A message shorter than a stamp is [ErrTruncated]; the
// frame_id is not checked. It does not allocate.
func Fingerprint(msg []byte) (uint64, error) {
	if _, err := byteOrder(msg); err != nil {
		return 0, err
	}
	const offset64, prime64 = 14695981039346656037, 1099511628211
	h := uint64(offset64)
	for _, b := range msg[:2] {
		h = (h ^ uint64(b)) * prime64
	}
	for _, b := range msg[HeaderStampSize:] {
		h = (h ^ uint64(b)) * prime64
	}
	for n := (len(msg) - offSec) % 4; n > 0 && n < 4; n++ {
		h *= prime64 // a zero byte: h ^ 0
	}
	return h, nil
}
