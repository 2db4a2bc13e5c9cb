package sync

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timealign/timealign/internal/testutil/fuzzcheck"
	"github.com/timealign/timealign/pkg/stamp"
)

// alignerDecode turns fuzz bytes into a configuration and events: byte 0
// the timeout (bits 2..7, in ms) and flags, byte 1 the stream count, then
// three bytes per stream (period, buffer size, priority), then two bytes
// per event (kind and stream, stamp step). Flag bit 0 makes the timeout
// MaxInt64 minus those milliseconds and the periods 2^56 times larger (up
// to the int64 extremes). Event kinds 14 and 15 push at MaxInt64 or
// MinInt64 plus or minus the second byte; steps saturate.
func alignerDecode(data []byte) (time.Duration, []StreamConfig, []alignerEv) {
	if len(data) < 2 {
		return 0, nil, nil
	}
	unit := stamp.Time(time.Millisecond)
	huge := data[0]&1 != 0
	timeout := time.Duration(data[0]>>2) * time.Duration(unit)
	if huge {
		timeout = math.MaxInt64 - timeout
	}
	n := int(data[1]%8) + 1
	data = data[2:]
	var cfgs []StreamConfig
	for i := 0; i < n; i++ {
		var b [3]byte
		copy(b[:], data)
		if len(data) >= 3 {
			data = data[3:]
		} else {
			data = nil
		}
		c := StreamConfig{Period: time.Duration(int8(b[0])) * time.Duration(unit), BufferSize: int(int8(b[1])) % 9, Priority: int(int8(b[2])) % 3}
		if huge {
			c.Period = time.Duration(int8(b[0])) << 56
		}
		if c.Period < 0 || (c.Period > 0 && c.BufferSize < 0) {
			c.BufferSize = -1
		} else if c.BufferSize < 0 {
			c.BufferSize = 0
		}
		if _, _, err := alignerSize(c, timeout, 1<<10); err != nil {
			// An automatic size over the limit: a growing buffer instead.
			c.BufferSize = 0
			c.Period = max(c.Period, 0)
		}
		cfgs = append(cfgs, c)
	}
	var evs []alignerEv
	var t stamp.Time
	for len(data) >= 2 {
		k := "ppppppssdxerct"[int(data[0]&0x0f)%14]
		s := int(data[0]>>4) - 1
		switch data[0] & 0x0f {
		case 14:
			t = stamp.Max - stamp.Time(data[1])
		case 15:
			t = stamp.Min + stamp.Time(data[1])
		default:
			t = t.Add(time.Duration(int8(data[1])) * time.Duration(unit) / 4)
		}
		evs = append(evs, alignerEv{k, s, t})
		data = data[2:]
	}
	return timeout, cfgs, evs
}

// alignerEncode is the inverse of alignerDecode for the tables' cases (on
// its millisecond grid; a timeout over 63 ms is taken as MaxInt64 minus up
// to 63 ms, with periods in units of 2^56 ns), to seed the corpus.
func alignerEncode(timeout time.Duration, cfgs []StreamConfig, evs []alignerEv) []byte {
	ms := int64(time.Millisecond)
	huge := timeout > 63*time.Millisecond
	b := []byte{byte(min(int64(timeout)/ms, 63) << 2), byte(len(cfgs) - 1)}
	if huge {
		b[0] = byte(min((math.MaxInt64-int64(timeout))/ms, 63)<<2) | 1
	}
	for _, c := range cfgs {
		p := byte(int8(min(int64(c.Period)/ms, 127)))
		if huge {
			p = byte(int8(c.Period >> 56))
		}
		b = append(b, p, byte(int8(c.BufferSize)), byte(int8(c.Priority)))
	}
	var t stamp.Time
	for _, e := range evs {
		kind := map[byte]byte{'p': 0, 's': 6, 'd': 8, 'x': 9, 'e': 10, 'r': 11, 'c': 12, 't': 13}[e.kind]
		stream := byte((e.stream+1)&0x0f) << 4
		switch {
		case e.kind == 'p' && e.t >= stamp.Max-255:
			t = e.t
			b = append(b, 14|stream, byte(stamp.Max-e.t))
		case e.kind == 'p' && e.t <= stamp.Min+255:
			t = e.t
			b = append(b, 15|stream, byte(e.t-stamp.Min))
		default:
			d := max(min(int64(e.t.Sub(t))*4/ms, 127), -128)
			t = t.Add(time.Duration(d * ms / 4))
			b = append(b, kind|stream, byte(int8(d)))
		}
	}
	return b
}

// alignerDescribe names a fuzz input in a failure.
func alignerDescribe(timeout time.Duration, cfgs []StreamConfig, evs []alignerEv) string {
	var b strings.Builder
	fmt.Fprintf(&b, "timeout %d, streams", int64(timeout))
	for _, c := range cfgs {
		fmt.Fprintf(&b, " {period %d, buffer %d, priority %d}", int64(c.Period), c.BufferSize, c.Priority)
	}
	fmt.Fprintf(&b, "; %d events:", len(evs))
	for i, e := range evs {
		if i == 64 {
			b.WriteString(" …")
			break
		}
		fmt.Fprintf(&b, " %c%d@%d", e.kind, e.stream, int64(e.t))
	}
	return b.String()
}

// FuzzAligner: arbitrary configurations and event sequences (stamps,
// timeouts and periods up to the int64 extremes) finish within
// fuzzcheck.Deadline, never panic, keep every buffer within its size, play
// in time order between clears, and agree with the literal transcription
// of Rock's algorithm.
func FuzzAligner(f *testing.F) {
	for _, c := range alignerCases {
		f.Add(alignerEncode(c.timeout, c.streams, c.events))
	}
	for _, c := range alignerExtremeCases {
		f.Add(alignerEncode(c.timeout, c.streams, c.events))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		timeout, cfgs, evs := alignerDecode(data)
		fuzzcheck.Finish(t, func() string { return alignerDescribe(timeout, cfgs, evs) }, func(t *fuzzcheck.T) {
			alignerCheck(t, timeout, cfgs, evs)
		})
	})
}

// alignerCheck runs the events and checks what FuzzAligner promises.
func alignerCheck(t *fuzzcheck.T, timeout time.Duration, cfgs []StreamConfig, evs []alignerEv) []alignerOut {
	a, err := NewStreamAligner[int](AlignerConfig{Timeout: timeout, Streams: cfgs, MaxBufferSize: 1 << 10})
	if err != nil {
		if len(cfgs) > 0 {
			t.Fatalf("config rejected: %v", err)
		}
		return nil
	}
	var out []alignerOut
	var last stamp.Time
	for i, e := range evs {
		t.Step(i)
		if e.kind == 'c' {
			last = 0
		}
		n0 := len(out)
		out = alignerApply(a, e, out)
		for _, o := range out[n0:] {
			if o.why == AlignerNoDrop {
				if o.t < last {
					t.Fatalf("played %v after %v", o.t, last)
				}
				last = o.t
			}
		}
	}
	for i, s := range a.Status().Streams {
		if s.BufferFill > s.BufferSize || s.BufferSize > 1<<10 {
			t.Fatalf("stream %d: fill %d, size %d", i, s.BufferFill, s.BufferSize)
		}
	}
	ref := alignerReference(timeout, cfgs, evs)
	if len(ref) != len(out) {
		t.Fatalf("reference %v, got %v", ref, out)
	}
	for i := range ref {
		if ref[i] != out[i] {
			t.Fatalf("at %d: reference %v, got %v", i, ref[i], out[i])
		}
	}
	return out
}

const ms = stamp.Time(time.Millisecond)

// alignerExtremeCases: stamps, timeouts and periods at the int64 extremes.
// Like alignerCases they are checked against the reference model too.
var alignerExtremeCases = []struct {
	name    string
	timeout time.Duration
	streams []StreamConfig
	events  []alignerEv
	want    []alignerOut
}{
	{"due times saturate at MaxInt64", math.MaxInt64,
		[]StreamConfig{{Period: 1 << 56, BufferSize: 4}, {Period: 0, BufferSize: 4, Priority: 1}},
		// Stream 0 is due at MaxInt64 (not wrapped to a stamp long past),
		// so it does not hold back stream 1's sample at MaxInt64.
		[]alignerEv{push(0, 0), push(0, stamp.Max-1), push(0, stamp.Max), drain, push(1, stamp.Max), drain},
		[]alignerOut{played(0, 0), played(0, stamp.Max-1), played(0, stamp.Max), played(1, stamp.Max)}},
	{"a MaxInt64 timeout waits for a silent stream", math.MaxInt64,
		[]StreamConfig{{Period: 0, BufferSize: 0}, {Period: 0, BufferSize: 0}},
		[]alignerEv{push(0, ms), push(0, stamp.Max), drain, push(1, stamp.Max), drain},
		[]alignerOut{played(0, ms), played(0, stamp.Max), played(1, stamp.Max)}},
	{"period MinInt64: automatic buffer of 2·⌈timeout/2^63 ns⌉ = 2", math.MaxInt64,
		[]StreamConfig{{Period: math.MinInt64, BufferSize: -1}},
		[]alignerEv{push(0, ms), push(0, 2*ms), push(0, 3*ms), drain},
		[]alignerOut{{0, ms, AlignerFull}, played(0, 2*ms), played(0, 3*ms)}},
	{"late and backward at the extremes", 0,
		[]StreamConfig{{Period: 0, BufferSize: 0}},
		[]alignerEv{push(0, stamp.Max), drain, push(0, stamp.Min), push(0, stamp.Max), push(0, stamp.Max-1), drain},
		[]alignerOut{played(0, stamp.Max), {0, stamp.Min, AlignerLate}, {0, stamp.Max - 1, AlignerLate}, played(0, stamp.Max)}},
}

// TestAlignerExtremeCases: each case finishes within fuzzcheck.Deadline,
// plays what it says, agrees with the reference model, and survives the
// fuzz encoding unchanged.
func TestAlignerExtremeCases(t *testing.T) {
	for _, c := range alignerExtremeCases {
		t.Run(c.name, func(t *testing.T) {
			var out []alignerOut
			fuzzcheck.Finish(t, func() string { return alignerDescribe(c.timeout, c.streams, c.events) }, func(ft *fuzzcheck.T) {
				out = alignerCheck(ft, c.timeout, c.streams, c.events)
			})
			require.Equal(t, c.want, out)
			timeout, cfgs, evs := alignerDecode(alignerEncode(c.timeout, c.streams, c.events))
			require.Equal(t, c.timeout, timeout)
			require.Equal(t, c.streams, cfgs)
			require.Len(t, evs, len(c.events))
			for i, e := range c.events {
				require.Equal(t, e.kind, evs[i].kind)
				require.Equal(t, e.stream, evs[i].stream)
				if e.kind == 'p' || e.kind == 't' {
					require.Equal(t, e.t, evs[i].t, "event %d", i)
				}
			}
		})
	}
}
