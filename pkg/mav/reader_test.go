package mav_test

import (
	"bytes"
	"encoding/hex"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/bluenviron/gomavlib/v3/pkg/dialects/common"
	"github.com/stretchr/testify/require"

	"github.com/timealign/timealign/internal/testutil/fuzzcheck"
	"github.com/timealign/timealign/pkg/mav"
	"github.com/timealign/timealign/pkg/mav/mavsim"
	"github.com/timealign/timealign/pkg/stamp"
)

const t0 = stamp.Time(1_700_000_000_000_000_000)

func att(ms uint32) *common.MessageAttitude {
	return &common.MessageAttitude{TimeBootMs: ms, Roll: 0.1, Pitch: -0.2, Yaw: 3}
}

func frame(v int, ms uint32) []byte { return mavsim.Frame(v, 0, 1, 1, att(ms)) }

// rec is one tlog record: 8 stamp bytes and a frame.
func rec(i int, f []byte) []byte {
	var b bytes.Buffer
	w := mavsim.NewTlogWriter(&b)
	w.WriteRaw(t0.Add(time.Duration(i)*100*time.Millisecond), f)
	return b.Bytes()
}

func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

// tlogCases is the table of the tlog reader's tests and fuzz seeds.
var tlogCases = []struct {
	name string
	in   []byte
	// want: the time_boot_ms of the messages read, and the counters.
	boot  []uint32
	stats mav.TlogStats
}{
	{"empty", nil, nil, mav.TlogStats{}},
	{"v1 and v2", cat(rec(0, frame(1, 10)), rec(1, frame(2, 20))), []uint32{10, 20}, mav.TlogStats{Messages: 2}},
	{"truncated stamp", cat(rec(0, frame(2, 10)), []byte{0, 1, 2}), []uint32{10},
		mav.TlogStats{Messages: 1, Truncated: 1, SkippedBytes: 3}},
	{"truncated frame", cat(rec(0, frame(2, 10)), rec(1, frame(2, 20))[:20]), []uint32{10},
		mav.TlogStats{Messages: 1, Truncated: 1, SkippedBytes: 20}},
	{"bad CRC", cat(rec(0, frame(2, 10)), rec(1, flip(frame(2, 20), 12)), rec(2, frame(2, 30))), []uint32{10, 30},
		mav.TlogStats{Messages: 2, BadCRC: 1, BadCRCIDs: map[uint32]int{30: 1}, Resyncs: 1}},
	{"unknown id", cat(rec(0, frame(2, 10)), rec(1, mavsim.RawFrame(2, 0, 1, 1, 60000, []byte{1, 2, 3}, 7)), rec(2, frame(1, 30))),
		[]uint32{10, 30}, mav.TlogStats{Messages: 2, Unknown: 1, UnknownIDs: map[uint32]int{60000: 1}}},
	{"garbage between records", cat(rec(0, frame(2, 10)), []byte("\xfd\xfe garbage \x00\x01"), rec(1, frame(2, 20))), []uint32{10, 20},
		mav.TlogStats{Messages: 2, Resyncs: 1}},
	{"signed v2", cat(rec(0, signed(frame(2, 10))), rec(1, frame(2, 20))), []uint32{10, 20}, mav.TlogStats{Messages: 2}},
	{"v1 payload of the wrong length", cat(rec(0, shortV1()), rec(1, frame(1, 20))), []uint32{20},
		mav.TlogStats{Messages: 1, BadLength: 1}},
	{"stamp far off after garbage", cat(rec(0, frame(2, 10)), []byte{0xff, 0xff}, farRec(), rec(1, frame(2, 20))), []uint32{10, 20},
		mav.TlogStats{Messages: 2, Resyncs: 1}},
}

// flip returns f with byte i inverted.
func flip(f []byte, i int) []byte {
	g := bytes.Clone(f)
	g[i] ^= 0xff
	return g
}

// signed makes a v2 frame signed: the incompatibility flag (under the
// CRC) and 13 signature bytes (not under it).
func signed(f []byte) []byte {
	g := mavsim.RawFrameFlags(2, 1, f[4], f[5], f[6], 30, f[10:len(f)-2], mavsim.CRCExtra(30))
	return append(g, make([]byte, 13)...)
}

// shortV1 is an ATTITUDE frame whose payload is one byte short (and whose
// CRC is right for it).
func shortV1() []byte {
	f := frame(1, 5)
	return mavsim.RawFrame(1, 0, 1, 1, 30, f[6:len(f)-3], mavsim.CRCExtra(30))
}

// farRec is a good frame whose stamp is years away from its neighbours.
func farRec() []byte {
	var b bytes.Buffer
	mavsim.NewTlogWriter(&b).WriteRaw(t0.Add(5*365*24*time.Hour), frame(2, 15))
	return b.Bytes()
}

func readTlog(in []byte) ([]*mav.TlogMessage, mav.TlogStats, error) {
	r := mav.NewTlogReader(bytes.NewReader(in))
	var out []*mav.TlogMessage
	for {
		m, err := r.Next()
		if errors.Is(err, io.EOF) {
			return out, r.Stats(), nil
		}
		if err != nil {
			return out, r.Stats(), err
		}
		out = append(out, m)
	}
}

func TestTlogReader(t *testing.T) {
	for _, c := range tlogCases {
		t.Run(c.name, func(t *testing.T) {
			msgs, st, err := readTlog(c.in)
			require.NoError(t, err)
			var boot []uint32
			for _, m := range msgs {
				b, ok := m.TimeBootMs()
				require.True(t, ok)
				boot = append(boot, b)
				require.Equal(t, "ATTITUDE", m.Name)
				require.Equal(t, uint8(1), m.SysID)
			}
			require.Equal(t, c.boot, boot)
			require.Equal(t, int64(len(c.in)), st.Bytes, "every byte is consumed")
			st.Bytes = 0
			want := c.stats
			if want.SkippedBytes == 0 {
				st.SkippedBytes = 0 // not what the case is about
			}
			require.Equal(t, want, st)
		})
	}
}

func TestTlogMessageFields(t *testing.T) {
	in := cat(rec(3, frame(2, 1234)))
	msgs, _, err := readTlog(in)
	require.NoError(t, err)
	require.Len(t, msgs, 1)
	m := msgs[0]
	require.Equal(t, t0.Add(300*time.Millisecond), m.Receive)
	require.Equal(t, uint8(2), m.Version)
	require.Equal(t, uint32(30), m.ID)
	require.JSONEq(t, `{"time_boot_ms":1234,"roll":0.1,"pitch":-0.2,"yaw":3,"rollspeed":0,"pitchspeed":0,"yawspeed":0}`, string(m.AppendJSON(nil)))
	require.Contains(t, string(m.Schema()), `"time_boot_ms":{"type":"integer"}`)
}

func FuzzTlogReader(f *testing.F) {
	for _, c := range tlogCases {
		f.Add(c.in)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		fuzzcheck.Finish(t, func() string { return hex.EncodeToString(in) }, func(ft *fuzzcheck.T) {
			msgs, st, err := readTlog(in)
			require.NoError(ft, err)
			require.Equal(ft, int64(len(in)), st.Bytes, "every byte is consumed")
			require.Equal(ft, int64(len(msgs)), st.Messages)
			for _, m := range msgs {
				m.AppendJSON(nil) // never panics
			}
			a, err := mav.NewAligner(mav.DefaultConfig())
			require.NoError(ft, err)
			for _, m := range msgs {
				a.AddTlog(m)
			}
			res := a.Result()
			if res.Err() == nil {
				for _, b := range res.Boots {
					if e := b.WinnerEstimate(); e != nil {
						e.Unix(b.First)
					}
				}
			}
		})
	})
}

// binCase builds a BIN with a writer.
func bin(build func(w *mavsim.BinWriter)) []byte {
	var b bytes.Buffer
	w := mavsim.NewBinWriter(&b)
	build(w)
	return b.Bytes()
}

func attDef(w *mavsim.BinWriter) {
	w.Define("ATT", "QccccCCCCB", "TimeUS,DesRoll,Roll,DesPitch,Pitch,DesYaw,Yaw,ErrRP,ErrYaw,AEKF")
	w.Write("UNIT", uint64(0), 'd', "deg")
	w.Units("ATT", 0, "sddddddd--", "F---------")
}

func attRec(w *mavsim.BinWriter, us uint64) {
	w.Write("ATT", us, 1.5, -2.25, 0.0, 3.0, 0.0, 359.5, 0.0, 0.0, uint8(1))
}

var binCases = []struct {
	name  string
	in    []byte
	times []int64 // TimeUS of the ATT records read
	stats mav.BinStats
	err   error
}{
	{"empty", nil, nil, mav.BinStats{}, nil},
	{"records", bin(func(w *mavsim.BinWriter) { attDef(w); attRec(w, 100); attRec(w, 200) }), []int64{100, 200},
		mav.BinStats{Records: 9, Formats: 5}, nil},
	{"truncated", bin(func(w *mavsim.BinWriter) {
		attDef(w)
		attRec(w, 100)
		w.WriteRaw(w.Record("ATT", uint64(1), 0, 0, 0, 0, 0, 0, 0, 0, 0)[:10])
	}),
		[]int64{100}, mav.BinStats{Records: 8, Formats: 5, Truncated: 1, SkippedBytes: 10}, nil},
	{"garbage", bin(func(w *mavsim.BinWriter) {
		attDef(w)
		attRec(w, 100)
		w.WriteRaw([]byte("\xa3\x95\xa3 junk \xa3"))
		attRec(w, 200)
	}), []int64{100, 200}, mav.BinStats{Records: 9, Formats: 5, Resyncs: 1, SkippedBytes: 10, UnknownType: 1, UnknownTypes: map[uint8]int{0xa3: 1}}, nil},
	{"no FMT", func() []byte {
		var b bytes.Buffer
		w := mavsim.NewBinWriter(io.Discard)
		attDef(w)
		for i := range 5 {
			b.Write(w.Record("ATT", uint64(i), 0, 0, 0, 0, 0, 0, 0, 0, 0))
		}
		return b.Bytes()
	}(), nil, mav.BinStats{UnknownType: 5, UnknownTypes: map[uint8]int{132: 5}, Resyncs: 1, SkippedBytes: 140}, mav.ErrNoFormats},
	// A BIN has no checksum: a damaged TimeUS is told by the records
	// around it (pkg/mav.MaxTimeStep).
	{"damaged time", bin(func(w *mavsim.BinWriter) {
		attDef(w)
		attRec(w, 100)
		attRec(w, 200)
		attRec(w, 200|1<<40) // a byte of TimeUS damaged: 12.7 days later
		attRec(w, 300)
	}), []int64{100, 200, 300}, mav.BinStats{Records: 11, Formats: 5, BadTime: 1}, nil},
	{"time jump confirmed", bin(func(w *mavsim.BinWriter) {
		attDef(w)
		attRec(w, 100)
		attRec(w, 200)
		attRec(w, 60_000_200) // logging paused for a minute
		attRec(w, 60_000_300)
	}), []int64{100, 200, 60_000_200, 60_000_300}, mav.BinStats{Records: 11, Formats: 5, TimeJumps: 1}, nil},
	{"time back a little", bin(func(w *mavsim.BinWriter) {
		attDef(w)
		attRec(w, 5000)
		attRec(w, 4000) // written out of order
		attRec(w, 6000)
	}), []int64{5000, 4000, 6000}, mav.BinStats{Records: 10, Formats: 5}, nil},
	{"TimeUS past 2^63", bin(func(w *mavsim.BinWriter) {
		attDef(w)
		attRec(w, 100)
		attRec(w, 1<<63|200)
		attRec(w, 300)
	}), []int64{100, 300}, mav.BinStats{Records: 10, Formats: 5, BadTime: 1}, nil},
	{"damaged last record", bin(func(w *mavsim.BinWriter) {
		attDef(w)
		attRec(w, 100)
		attRec(w, 200)
		attRec(w, 1<<45)
	}), []int64{100, 200}, mav.BinStats{Records: 10, Formats: 5, BadTime: 1}, nil},
	{"two damaged in a row", bin(func(w *mavsim.BinWriter) {
		attDef(w)
		attRec(w, 100)
		attRec(w, 1<<41)
		attRec(w, 1<<44)
		attRec(w, 200)
	}), []int64{100, 200}, mav.BinStats{Records: 11, Formats: 5, BadTime: 2}, nil},
	{"bad format", bin(func(w *mavsim.BinWriter) {
		attDef(w)
		// A type whose declared length disagrees with its format: its
		// records are skipped by the declared length.
		w.WriteRaw(badFMT(200, 10, "BAD", "QQ", "A,B"))
		w.WriteRaw(append([]byte{0xa3, 0x95, 200}, make([]byte, 7)...))
		attRec(w, 300)
	}), []int64{300}, mav.BinStats{Records: 10, Formats: 6, BadFormat: 1, BadFormats: map[string]int{"BAD": 1}}, nil},
}

func badFMT(typ, length byte, name, format, cols string) []byte {
	p := []byte{0xa3, 0x95, 128, typ, length}
	pad := func(s string, n int) []byte { b := make([]byte, n); copy(b, s); return b }
	p = append(p, pad(name, 4)...)
	p = append(p, pad(format, 16)...)
	return append(p, pad(cols, 64)...)
}

func readBin(in []byte) ([]int64, mav.BinStats, error) {
	r := mav.NewBinReader(bytes.NewReader(in))
	var times []int64
	for {
		rec, err := r.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = nil
			}
			return times, r.Stats(), err
		}
		if rec.Format.Name == "ATT" {
			if us, ok := rec.Time(); ok {
				times = append(times, us)
			}
		}
		rec.AppendJSON(nil)
	}
}

func TestBinReader(t *testing.T) {
	for _, c := range binCases {
		t.Run(c.name, func(t *testing.T) {
			times, st, err := readBin(c.in)
			require.ErrorIs(t, err, c.err)
			require.Equal(t, c.times, times)
			require.Equal(t, int64(len(c.in)), st.Bytes)
			st.Bytes = 0
			require.Equal(t, c.stats, st)
		})
	}
}

func TestBinValues(t *testing.T) {
	in := bin(func(w *mavsim.BinWriter) { attDef(w); attRec(w, 123456) })
	r := mav.NewBinReader(bytes.NewReader(in))
	var att mav.Record
	for {
		rec, err := r.Next()
		require.NoError(t, err)
		if rec.Format.Name == "ATT" {
			att = rec
			break
		}
	}
	f := att.Format
	require.Equal(t, 1.5, att.Float(f.Index("DesRoll")))
	require.Equal(t, -2.25, att.Float(f.Index("Roll")))
	require.Equal(t, int64(-225), att.Int(f.Index("Roll")))
	require.Equal(t, 359.5, att.Float(f.Index("Yaw")))
	unit, mult := r.Unit(f, f.Index("Roll"))
	require.Equal(t, "deg", unit)
	require.Equal(t, 0.0, mult)
	require.JSONEq(t, `{"TimeUS":123456,"DesRoll":1.5,"Roll":-2.25,"DesPitch":0,"Pitch":3,"DesYaw":0,"Yaw":359.5,"ErrRP":0,"ErrYaw":0,"AEKF":1}`,
		string(att.AppendJSON(nil)))
	require.Contains(t, string(r.BinSchema(f)), `"Roll":{"description":"unit: deg","type":["number","null"]}`)
}

func FuzzBinReader(f *testing.F) {
	for _, c := range binCases {
		f.Add(c.in)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		fuzzcheck.Finish(t, func() string { return hex.EncodeToString(in) }, func(ft *fuzzcheck.T) {
			_, st, err := readBin(in)
			if err != nil {
				require.ErrorIs(ft, err, mav.ErrNoFormats)
			}
			require.Equal(ft, int64(len(in)), st.Bytes, "every byte is consumed")
		})
	})
}

// TestInstanceColumn: the instance column is the one the log's units mark
// '#' (whatever its name: XKF1's C, ESC's Instance), or, without units, a
// one-byte column named I or Instance; none otherwise.
func TestInstanceColumn(t *testing.T) {
	for _, c := range []struct {
		name, format, cols, units string // units "": no FMTU
		want                      int
	}{
		{"MAG", "QBhhh", "TimeUS,I,MagX,MagY,MagZ", "s#GGG", 1},
		{"XKF1", "QBcc", "TimeUS,C,Roll,Pitch", "s#dd", 1},
		{"IMU", "QBff", "TimeUS,I,GyrX,GyrY", "", 1},
		{"ESC", "QBe", "TimeUS,Instance,RPM", "", 1},
		{"ATT", "QccB", "TimeUS,Roll,Pitch,AEKF", "sdd-", -1},
		{"GPS", "QBB", "TimeUS,I,Status", "s--", -1}, // units given, none '#'
		{"RCOU", "QHH", "TimeUS,C1,C2", "", -1},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := bin(func(w *mavsim.BinWriter) {
				w.Define(c.name, c.format, c.cols)
				if c.units != "" {
					w.Units(c.name, 0, c.units, strings.Repeat("-", len(c.units)))
				}
			})
			r := mav.NewBinReader(bytes.NewReader(in))
			for {
				if _, err := r.Next(); err != nil {
					break
				}
			}
			var f *mav.Format
			for _, g := range r.Formats() {
				if g.Name == c.name {
					f = g
				}
			}
			require.NotNil(t, f)
			require.Equal(t, c.want, r.InstanceColumn(f))
		})
	}
}
