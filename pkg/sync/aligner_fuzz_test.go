package sync

import (
	"testing"
	"time"

	"github.com/timealign/timealign/pkg/stamp"
)

// alignerDecode turns fuzz bytes into a configuration and events: byte 0
// the stream count, then three bytes per stream (period, buffer size,
// priority), then two bytes per event (kind and stream, stamp step).
func alignerDecode(data []byte) (time.Duration, []StreamConfig, []alignerEv) {
	if len(data) < 2 {
		return 0, nil, nil
	}
	unit := stamp.Time(time.Millisecond)
	timeout := time.Duration(data[0]>>2) * time.Duration(unit)
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
		if c.Period < 0 || (c.Period > 0 && c.BufferSize < 0) {
			c.BufferSize = -1
		} else if c.BufferSize < 0 {
			c.BufferSize = 0
		}
		cfgs = append(cfgs, c)
	}
	var evs []alignerEv
	var t stamp.Time
	for len(data) >= 2 {
		k := "ppppppssdxerct"[int(data[0]&0x0f)%14]
		s := int(data[0]>>4) - 1
		t += stamp.Time(int8(data[1])) * unit / 4
		evs = append(evs, alignerEv{k, s, t})
		data = data[2:]
	}
	return timeout, cfgs, evs
}

// alignerEncode is the inverse of alignerDecode for the table's cases (on
// its millisecond grid), to seed the corpus.
func alignerEncode(timeout time.Duration, cfgs []StreamConfig, evs []alignerEv) []byte {
	ms := int64(time.Millisecond)
	b := []byte{byte(min(int64(timeout)/ms, 63) << 2), byte(len(cfgs) - 1)}
	for _, c := range cfgs {
		b = append(b, byte(int8(min(int64(c.Period)/ms, 127))), byte(int8(c.BufferSize)), byte(int8(c.Priority)))
	}
	var t int64
	for _, e := range evs {
		kind := map[byte]byte{'p': 0, 's': 6, 'd': 8, 'x': 9, 'e': 10, 'r': 11, 'c': 12, 't': 13}[e.kind]
		d := max(min((int64(e.t)-t)*4/ms, 127), -128)
		t += d * ms / 4
		b = append(b, kind|byte((e.stream+1)&0x0f)<<4, byte(int8(d)))
	}
	return b
}

// FuzzAligner: arbitrary configurations and event sequences never panic,
// keep every buffer within its size, play in time order between clears,
// and agree with the literal transcription of Rock's algorithm.
func FuzzAligner(f *testing.F) {
	for _, c := range alignerCases {
		f.Add(alignerEncode(c.timeout, c.streams, c.events))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		timeout, cfgs, evs := alignerDecode(data)
		a, err := NewStreamAligner[int](AlignerConfig{Timeout: timeout, Streams: cfgs, MaxBufferSize: 1 << 10})
		if err != nil {
			if len(cfgs) > 0 {
				t.Fatalf("decoded config rejected: %v", err)
			}
			return
		}
		var out []alignerOut
		var last stamp.Time
		for _, e := range evs {
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
	})
}
