package mav

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/bluenviron/gomavlib/v3/pkg/dialects/ardupilotmega"
	"github.com/bluenviron/gomavlib/v3/pkg/message"
	"github.com/bluenviron/gomavlib/v3/pkg/x25"

	"github.com/timealign/timealign/pkg/stamp"
)

// A telemetry log (.tlog, written by QGroundControl, BlueOS, MAVProxy) is a
// sequence of records: the logging computer's receive time as 8 bytes of
// big-endian microseconds since the Unix epoch, then one MAVLink frame, v1
// (0xFE, 6 header bytes, payload, 2 CRC bytes) or v2 (0xFD, 10 header
// bytes, payload, 2 CRC bytes, 13 signature bytes if signed).

const (
	tlogStampLen = 8
	v1Magic      = 0xFE
	v2Magic      = 0xFD
	v1HeaderLen  = 6
	v2HeaderLen  = 10
	crcLen       = 2
	sigLen       = 13
	maxFrameLen  = v2HeaderLen + 255 + crcLen + sigLen
	// plausibleStep is how far a record's stamp may lie from the last good
	// one when reading resumes after garbage: a stamp further away means
	// the candidate is not a record.
	plausibleStep = 24 * time.Hour
)

// msgInfo describes one message of the dialect. Its name is known from
// the start; the rest is built on first use (load), for the few dozen
// types a log holds: building all of the dialect's several hundred took
// about 10 ms of every mav command.
type msgInfo struct {
	name  string
	proto message.Message // the dialect's message of this id
	once  sync.Once
	rw    *message.ReadWriter
	// boot is the index of the TimeBootMs field, −1 if none; bootOff its
	// position in the payload (read without decoding the message).
	boot, bootOff int
	// v1Size is the payload length of a v1 frame (no extensions).
	v1Size int
	// enc is the JSON encoder of the message type (json.go), built once on
	// first use (the table is shared by every reader).
	encOnce sync.Once
	enc     *msgEncoder
}

// dialectInfo is the ardupilotmega dialect (which includes common), by
// message id: made once on first use, each message's details built on
// its own first use (msgInfo.load).
var dialectInfo = sync.OnceValue(func() map[uint32]*msgInfo {
	m := make(map[uint32]*msgInfo, len(ardupilotmega.Dialect.Messages))
	for _, msg := range ardupilotmega.Dialect.Messages {
		if m[msg.GetID()] != nil {
			panic(fmt.Sprintf("mav: message id %d twice in the dialect", msg.GetID())) // a bug in the library, not input
		}
		m[msg.GetID()] = &msgInfo{name: messageName(reflect.TypeOf(msg).Elem().Name()), proto: msg, boot: -1, bootOff: -1}
	}
	return m
})

// load builds the message's reader and layout on first use (safe for
// concurrent use: the table is shared) and returns info.
func (info *msgInfo) load() *msgInfo {
	info.once.Do(func() {
		rw := &message.ReadWriter{Message: info.proto}
		if err := rw.Initialize(); err != nil {
			panic(fmt.Sprintf("mav: message %s of the ardupilotmega dialect does not initialize: %v", info.name, err)) // a bug in the library, not input
		}
		t := reflect.TypeOf(info.proto).Elem()
		info.rw = rw
		info.v1Size = len(rw.Write(reflect.New(t).Interface().(message.Message), false).Payload)
		if f, ok := t.FieldByName("TimeBootMs"); ok && f.Type.Kind() == reflect.Uint32 {
			// Where the field lies on the wire, found as the JSON
			// encoder finds each of its fields.
			info.boot = f.Index[0]
			info.bootOff = fieldOffset(info, t, f.Index[0], msgField{kind: reflect.Uint32, size: 4})
		}
	})
	return info
}

// messageName turns a Go message type name (MessageGpsInput) into the
// MAVLink name (GPS_INPUT).
func messageName(goName string) string {
	return strings.ToUpper(snake(strings.TrimPrefix(goName, "Message")))
}

// snake turns a Go name into MAVLink's lower snake case: an underscore
// before every upper-case letter but the first (TimeBootMs → time_boot_ms).
func snake(s string) string {
	var b strings.Builder
	for i, r := range s {
		if unicode.IsUpper(r) {
			if i > 0 {
				b.WriteByte('_')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

// MessageName returns the name of message id in the ardupilotmega dialect,
// or "" for an id outside it.
func MessageName(id uint32) string {
	if info := dialectInfo()[id]; info != nil {
		return info.name
	}
	return ""
}

// MessageID returns the id of the MAVLink message named name in the
// ardupilotmega dialect.
func MessageID(name string) (uint32, bool) {
	for id, info := range dialectInfo() {
		if info.name == name {
			return id, true
		}
	}
	return 0, false
}

// TlogMessage is one record of a telemetry log.
type TlogMessage struct {
	// Receive is the logging computer's stamp of the record.
	Receive stamp.Time
	// Offset is the record's position in the file.
	Offset int64
	// Version is the MAVLink version of the frame (1 or 2).
	Version uint8
	// SysID and CompID identify the sender.
	SysID, CompID uint8
	// ID is the message id; Name its name in the ardupilotmega dialect.
	ID   uint32
	Name string
	// info describes the message type; payload is the frame's payload
	// (a copy), decoded into msg on first use.
	info    *msgInfo
	payload []byte
	msg     message.Message
}

// Size returns the length of the message's payload in bytes.
func (m *TlogMessage) Size() int { return len(m.payload) }

// Message returns the decoded message (a *common.Message… or
// *ardupilotmega.Message… pointer). Messages are decoded when first asked
// for: reading a log to look at a few types costs no decoding of the rest.
func (m *TlogMessage) Message() message.Message {
	if m.msg == nil {
		msg, err := m.info.rw.Read(&message.MessageRaw{ID: m.ID, Payload: m.payload}, m.Version == 2)
		if err != nil {
			// Next checked the length, the only thing Read can refuse.
			panic("mav: a checked payload does not decode: " + err.Error())
		}
		m.msg = msg
	}
	return m.msg
}

// TimeBootMs returns the message's time_boot_ms field, if it has one
// (read from the payload, without decoding the message).
func (m *TlogMessage) TimeBootMs() (uint32, bool) {
	if m.info == nil || m.info.boot < 0 {
		return 0, false
	}
	var b [4]byte
	if m.info.bootOff < len(m.payload) {
		copy(b[:], m.payload[m.info.bootOff:]) // v2 drops trailing zero bytes
	}
	return binary.LittleEndian.Uint32(b[:]), true
}

// TlogStats counts what a [TlogReader] read and what it skipped.
type TlogStats struct {
	// Messages counts the messages returned.
	Messages int64 `json:"messages"`
	// Bytes is the number of bytes consumed.
	Bytes int64 `json:"bytes"`
	// BadCRC counts frames of a known message whose checksum is wrong;
	// BadLength frames whose payload does not fit their message.
	BadCRC    int `json:"bad_crc"`
	BadLength int `json:"bad_length"`
	// BadCRCIDs counts the frames with a bad checksum per message id;
	// KeptBadCRC counts those decoded anyway (TlogReader.IgnoreCRC).
	BadCRCIDs  map[uint32]int `json:"bad_crc_ids,omitempty"`
	KeptBadCRC int            `json:"kept_bad_crc,omitempty"`
	// Unknown counts frames of message ids outside the dialect (their
	// checksum cannot be checked); UnknownIDs the count per id.
	Unknown    int            `json:"unknown"`
	UnknownIDs map[uint32]int `json:"unknown_ids,omitempty"`
	// SkippedBytes counts bytes of no record; Resyncs the places where the
	// reader lost the record boundary and searched for the next record.
	SkippedBytes int64 `json:"skipped_bytes"`
	Resyncs      int   `json:"resyncs"`
	// Truncated is 1 when the file ends inside a record.
	Truncated int `json:"truncated"`
}

// TlogReader reads a telemetry log from a stream. It is not safe for
// concurrent use.
type TlogReader struct {
	// IgnoreCRC decodes frames whose checksum is wrong when the record
	// that follows them is sound (some MAVLink implementations compute
	// the checksum of messages with extension fields wrongly; pymavlink's
	// MAV_IGNORE_CRC). They are still counted in Stats().BadCRC.
	IgnoreCRC bool

	br    *bufio.Reader
	info  map[uint32]*msgInfo
	off   int64
	stats TlogStats
	// last is the stamp of the last good record (µs), valid if haveLast.
	last     uint64
	haveLast bool
	lost     bool
	slab     []byte // where the next payloads are copied
}

// payloadSlab is the size of the blocks messages' payloads are copied
// into.
const payloadSlab = 16 << 10

// NewTlogReader returns a reader of the telemetry log in r.
func NewTlogReader(r io.Reader) *TlogReader {
	return &TlogReader{br: bufio.NewReaderSize(r, 1<<16), info: dialectInfo()}
}

// Stats returns the counters so far.
func (t *TlogReader) Stats() TlogStats {
	s := t.stats
	s.Bytes = t.off
	return s
}

// frameAt checks the frame that starts at p[8:] and returns its length, or
// 0 and why it is not one. short reports that p ends before the frame
// does.
type frameCheck int

const (
	frameOK frameCheck = iota
	frameShort
	frameBadMagic
	frameBadCRC
	frameUnknown // a frame of an unknown id: length known, CRC not checkable
)

// parse checks the frame at f (after the stamp): its total length and
// whether it is good.
func (t *TlogReader) parse(f []byte) (n int, c frameCheck, info *msgInfo) {
	if len(f) < 1 {
		return 0, frameShort, nil
	}
	var hl int
	switch f[0] {
	case v1Magic:
		hl = v1HeaderLen
	case v2Magic:
		hl = v2HeaderLen
	default:
		return 0, frameBadMagic, nil
	}
	if len(f) < hl {
		return 0, frameShort, nil
	}
	n = hl + int(f[1]) + crcLen
	var id uint32
	if f[0] == v1Magic {
		id = uint32(f[5])
	} else {
		if f[2]&^1 != 0 { // an incompatibility flag we do not know
			return 0, frameBadMagic, nil
		}
		if f[2]&1 != 0 {
			n += sigLen
		}
		id = uint32(f[7]) | uint32(f[8])<<8 | uint32(f[9])<<16
	}
	if len(f) < n {
		return n, frameShort, nil
	}
	info = t.info[id]
	if info == nil {
		return n, frameUnknown, nil
	}
	info.load()
	end := hl + int(f[1])
	var h x25.X25
	h.Reset()
	h.Write(f[1:end])
	h.Write([]byte{info.rw.CRCExtra()})
	if h.Sum16() != binary.LittleEndian.Uint16(f[end:]) {
		return n, frameBadCRC, info
	}
	return n, frameOK, info
}

// Next returns the next message, skipping and counting frames that are not
// good messages; io.EOF at the end (also after a truncated last record,
// counted in Stats().Truncated). Messages stay valid after later calls;
// payloads share 16 KB blocks, so a message kept for long keeps its
// block in memory (copy what is needed of a few to keep them).
func (t *TlogReader) Next() (*TlogMessage, error) {
	for {
		p, err := t.br.Peek(tlogStampLen + maxFrameLen)
		if len(p) == 0 {
			if err != nil && err != io.EOF {
				return nil, err
			}
			return nil, io.EOF
		}
		if err != nil && err != io.EOF {
			return nil, err
		}
		if len(p) < tlogStampLen {
			t.stats.Truncated = 1
			t.discard(len(p), true)
			return nil, io.EOF
		}
		us := binary.BigEndian.Uint64(p)
		n, c, info := t.parse(p[tlogStampLen:])
		if c == frameShort && len(p) < tlogStampLen+maxFrameLen {
			// The stream ends inside this record.
			t.stats.Truncated = 1
			t.discard(len(p), true)
			return nil, io.EOF
		}
		plausible := !t.haveLast || stampNear(us, t.last)
		if (c == frameUnknown || c == frameBadCRC && t.IgnoreCRC) && plausible {
			// Trust an unknown frame only if a record follows it.
			q := p[tlogStampLen+n:]
			if len(q) >= tlogStampLen+1 && len(p) == tlogStampLen+maxFrameLen {
				if _, c2, _ := t.parse(q[tlogStampLen:]); c2 == frameBadMagic || !stampNear(binary.BigEndian.Uint64(q), us) {
					plausible = false
				}
			}
		}
		if c == frameBadMagic || c == frameShort || !plausible || (t.lost && c != frameOK) {
			t.resync()
			continue
		}
		if c == frameBadCRC {
			t.stats.BadCRC++
			if t.stats.BadCRCIDs == nil {
				t.stats.BadCRCIDs = map[uint32]int{}
			}
			if id := frameID(p[tlogStampLen:]); len(t.stats.BadCRCIDs) < 256 || t.stats.BadCRCIDs[id] > 0 {
				t.stats.BadCRCIDs[id]++
			}
			if t.IgnoreCRC && plausible {
				t.stats.KeptBadCRC++
				c = frameOK
			} else {
				// The length may be what was damaged: look for the next
				// record from the next byte on.
				t.resync()
				continue
			}
		}
		t.lost = false
		off := t.off
		frame := p[tlogStampLen : tlogStampLen+n]
		t.last, t.haveLast = us, true
		if c == frameUnknown {
			t.stats.Unknown++
			if t.stats.UnknownIDs == nil {
				t.stats.UnknownIDs = map[uint32]int{}
			}
			id := frameID(frame)
			if _, ok := t.stats.UnknownIDs[id]; ok || len(t.stats.UnknownIDs) < 256 {
				t.stats.UnknownIDs[id]++
			}
			t.discard(tlogStampLen+n, false)
			continue
		}
		m, err := t.decodeFrame(frame, info)
		if err != nil {
			t.stats.BadLength++
			t.discard(tlogStampLen+n, false)
			continue
		}
		m.Receive = stampFromMicros(us)
		m.Offset = off
		t.discard(tlogStampLen+n, false)
		t.stats.Messages++
		return m, nil
	}
}

// stampFromMicros converts a tlog stamp to a stamp.Time, saturating.
func stampFromMicros(us uint64) stamp.Time {
	if us > uint64(stamp.Max)/1000 {
		return stamp.Max
	}
	return stamp.Time(us * 1000)
}

func stampNear(a, b uint64) bool {
	d := int64(a - b)
	lim := int64(plausibleStep / time.Microsecond)
	return d < lim && d > -lim
}

func frameID(f []byte) uint32 {
	if f[0] == v1Magic {
		return uint32(f[5])
	}
	return uint32(f[7]) | uint32(f[8])<<8 | uint32(f[9])<<16
}

// decodeFrame checks a good frame of a known message and copies its
// payload (the message is decoded on demand).
func (t *TlogReader) decodeFrame(f []byte, info *msgInfo) (*TlogMessage, error) {
	m := &TlogMessage{info: info, Name: info.name}
	var hl int
	if f[0] == v1Magic {
		m.Version, hl = 1, v1HeaderLen
		m.SysID, m.CompID = f[3], f[4]
	} else {
		m.Version, hl = 2, v2HeaderLen
		m.SysID, m.CompID = f[5], f[6]
	}
	m.ID = frameID(f)
	n := int(f[1])
	if m.Version == 1 && n != info.v1Size {
		return nil, fmt.Errorf("%w: %s of %d bytes in a v1 frame, want %d", ErrTlogLength, info.name, n, info.v1Size)
	}
	// A copy with no spare capacity: the decoder may append to it (v2
	// zero truncation). Payloads are cut from a slab, one allocation for
	// many messages; a message keeps its slab alive, as long as it is
	// kept.
	if cap(t.slab)-len(t.slab) < n {
		t.slab = make([]byte, 0, payloadSlab)
	}
	k := len(t.slab)
	t.slab = append(t.slab, f[hl:hl+n]...)
	m.payload = t.slab[k : k+n : k+n]
	return m, nil
}

// ErrTlogLength: a frame's payload does not fit its message.
var ErrTlogLength = errors.New("mav: payload length does not fit the message")

// resync skips the current byte and everything up to the next candidate
// record: a magic byte 8 bytes further on.
func (t *TlogReader) resync() {
	if !t.lost {
		t.stats.Resyncs++
		t.lost = true
	}
	t.discard(1, true)
	for {
		p, _ := t.br.Peek(t.br.Buffered())
		if len(p) == 0 {
			if _, err := t.br.Peek(1); err != nil {
				return
			}
			continue
		}
		for i := 0; i+tlogStampLen < len(p); i++ {
			if m := p[i+tlogStampLen]; m == v1Magic || m == v2Magic {
				t.discard(i, true)
				return
			}
		}
		if len(p) <= tlogStampLen {
			// Too few bytes buffered to decide: let Next read more (it
			// handles the end of the stream).
			return
		}
		t.discard(len(p)-tlogStampLen, true)
	}
}

func (t *TlogReader) discard(n int, skipped bool) {
	d, _ := t.br.Discard(n)
	t.off += int64(d)
	if skipped {
		t.stats.SkippedBytes += int64(d)
	}
}
