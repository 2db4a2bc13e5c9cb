package mavsim_test

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/bluenviron/gomavlib/v3/pkg/dialects/common"
	"github.com/stretchr/testify/require"

	"github.com/timealign/timealign/pkg/mav"
	"github.com/timealign/timealign/pkg/mav/mavsim"
	"github.com/timealign/timealign/pkg/sim"
	"github.com/timealign/timealign/pkg/stamp"
)

// logs are a scenario's output.
type logs struct {
	tlog  []byte
	bins  [][]byte
	truth mavsim.Truth
}

func write(t *testing.T, s mavsim.Scenario) logs {
	t.Helper()
	var tlog bytes.Buffer
	bins := map[int]*bytes.Buffer{}
	tr, err := s.Write(&tlog, func(boot int) io.Writer {
		bins[boot] = &bytes.Buffer{}
		return bins[boot]
	})
	require.NoError(t, err)
	l := logs{tlog: tlog.Bytes(), truth: tr}
	for b := range len(bins) {
		require.Contains(t, bins, b, "a BIN for every boot, from 0")
		l.bins = append(l.bins, bins[b].Bytes())
	}
	return l
}

func readTlog(t *testing.T, in []byte) []*mav.TlogMessage {
	t.Helper()
	r := mav.NewTlogReader(bytes.NewReader(in))
	var out []*mav.TlogMessage
	for {
		m, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		out = append(out, m)
	}
	st := r.Stats()
	require.Zero(t, st.BadCRC+st.BadLength+st.Unknown+st.Resyncs+st.Truncated, "%+v", st)
	require.Zero(t, st.SkippedBytes)
	require.Equal(t, int64(len(in)), st.Bytes)
	return out
}

// binRec is a BIN record with its values read through its format.
type binRec struct {
	name string
	us   int64
	rec  mav.Record
}

func readBin(t *testing.T, in []byte) []binRec {
	t.Helper()
	r := mav.NewBinReader(bytes.NewReader(in))
	var out []binRec
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		us, _ := rec.Time()
		c := rec
		c.Payload = bytes.Clone(rec.Payload) // valid only until the next Next
		out = append(out, binRec{rec.Format.Name, us, c})
	}
	st := r.Stats()
	require.Zero(t, st.SkippedBytes+int64(st.Resyncs+st.UnknownType+st.BadFormat+st.Truncated+st.BadTime+st.TimeJumps), "%+v", st)
	return out
}

func value(r binRec, col string) float64 {
	f := r.rec.Format
	return r.rec.Float(f.Index(col))
}

func text(r binRec, col string) string {
	return r.rec.String(r.rec.Format.Index(col))
}

// TestScenarioReadBack: pkg/mav's readers find in the logs what the
// scenario describes: every sample of the truth, its boot clock in both
// logs, stamps no earlier than the truth, each boot's banner and
// parameters, the optional sources, and nothing they cannot read.
func TestScenarioReadBack(t *testing.T) {
	rtc := 3 * time.Second
	s := mavsim.Scenario{Seed: 9, Duration: 90 * time.Second, Period: 50 * time.Millisecond, SkewPPM: 30,
		Reboots: []time.Duration{40 * time.Second}, RTC: &rtc, GPS: true, GPSInput: true,
		BinExtra: 2, BinIMUs: 3, SysID: 4, BootCount: 11}
	l := write(t, s)
	tr := l.truth
	n := len(tr.Boot)
	require.Equal(t, 2, tr.Boots())
	require.InDelta(t, 90*20, n, 2, "a sample every period of the duration")
	require.Len(t, tr.Device, n)
	require.Len(t, tr.Logger, n)
	require.Len(t, tr.UTC, n)
	require.Len(t, l.bins, 2)

	// The tlog: every sample (no loss) as an ATTITUDE of its boot clock,
	// in order, stamped after it happened.
	msgs := readTlog(t, l.tlog)
	var att, sysTime, gpsIn int
	bootCounts := map[int]bool{}
	banners := 0
	for _, m := range msgs {
		switch msg := m.Message().(type) {
		case *common.MessageAttitude:
			require.Equal(t, uint8(4), m.SysID)
			require.Less(t, att, n)
			require.Equal(t, uint32(tr.Device[att]/time.Millisecond), msg.TimeBootMs, "sample %d", att)
			lat := m.Receive.Sub(tr.Logger[att])
			require.GreaterOrEqual(t, lat, -time.Microsecond, "stamped before it happened (µs stamps)")
			require.Less(t, lat, time.Second)
			att++
		case *common.MessageSystemTime:
			sysTime++
			i := att - 1 // sent with the ATTITUDE before it
			require.Equal(t, uint64(tr.UTC[i].Add(rtc))/1000, msg.TimeUnixUsec)
			require.Equal(t, uint32(tr.Device[i]/time.Millisecond), msg.TimeBootMs)
		case *common.MessageGpsInput:
			gpsIn++
			require.Equal(t, uint8(220), m.CompID)
		case *common.MessageStatustext:
			if msg.Text == "ArduSub V4.5.1 (1a2b3c4d)" {
				banners++
			}
		case *common.MessageParamValue:
			if msg.ParamId == "STAT_BOOTCNT" {
				bootCounts[int(msg.ParamValue)] = true
			}
		}
	}
	require.Equal(t, n, att, "no sample lost")
	require.InDelta(t, n/10, sysTime, 1)
	require.InDelta(t, n/2, gpsIn, 1)
	require.Equal(t, 2, banners, "a banner per boot")
	require.Equal(t, map[int]bool{11: true, 12: true}, bootCounts)

	// The BINs: each boot's samples as ATT records of its boot clock, with
	// BinExtra IMU records per sample for each of BinIMUs instances and a
	// GPS record every other sample.
	i := 0
	for boot, in := range l.bins {
		recs := readBin(t, in)
		var atts, imus, gps int
		for _, r := range recs {
			switch r.name {
			case "ATT":
				require.Equal(t, boot, tr.Boot[i])
				require.Equal(t, tr.Device[i].Microseconds(), r.us, "sample %d", i)
				i++
				atts++
			case "IMU":
				imus++
				require.Less(t, value(r, "I"), 3.0)
			case "GPS":
				gps++
				require.Equal(t, 12.0, value(r, "NSats"))
			case "PARM":
				if text(r, "Name") == "STAT_BOOTCNT" {
					require.Equal(t, float64(11+boot), value(r, "Value"))
				}
			case "MSG":
				if strings.HasPrefix(text(r, "Message"), "ArduSub") {
					require.Equal(t, "ArduSub V4.5.1 (1a2b3c4d)", text(r, "Message"))
				}
			}
		}
		require.Equal(t, 2*3*atts, imus, "boot %d", boot)
		require.InDelta(t, atts/2, gps, 1, "boot %d", boot)
	}
	require.Equal(t, n, i, "every sample in a BIN")
}

// TestScenarioLoss: lost telemetry is missing from the tlog, not from the
// BIN (the autopilot logged it).
func TestScenarioLoss(t *testing.T) {
	l := write(t, mavsim.Scenario{Seed: 5, Duration: time.Minute, Loss: 0.3})
	n := len(l.truth.Boot)
	att := 0
	for _, m := range readTlog(t, l.tlog) {
		if m.Name == "ATTITUDE" {
			att++
		}
	}
	require.InDelta(t, 0.7*float64(n), att, 0.1*float64(n))
	require.Len(t, l.bins, 1)
	binAtt := 0
	for _, r := range readBin(t, l.bins[0]) {
		if r.name == "ATT" {
			binAtt++
		}
	}
	require.Equal(t, n, binAtt)
}

// TestScenarioDeterministic: a scenario writes the same bytes every time;
// another seed draws other latencies (the true times, which the seed does
// not draw, stay).
func TestScenarioDeterministic(t *testing.T) {
	s := mavsim.Scenario{Seed: 7, Duration: 30 * time.Second, GPS: true, Reboots: []time.Duration{10 * time.Second},
		HostSteps: []sim.Step{{At: 20 * time.Second, By: -time.Second}}}
	a, b := write(t, s), write(t, s)
	require.Equal(t, a, b)
	s.Seed = 8
	c := write(t, s)
	require.NotEqual(t, a.tlog, c.tlog)
	require.Equal(t, a.truth.Logger, c.truth.Logger)
}

func TestDefaults(t *testing.T) {
	d := mavsim.Scenario{}.Defaults()
	require.Equal(t, uint64(1), d.Seed)
	require.Equal(t, 10*time.Minute, d.Duration)
	require.Equal(t, 100*time.Millisecond, d.Period)
	require.Equal(t, uint8(1), d.SysID)
	require.Equal(t, stamp.Time(time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC).UnixNano()), d.Start)
	set := mavsim.Scenario{Seed: 3, Period: time.Second, SysID: 9}.Defaults()
	require.Equal(t, []any{uint64(3), time.Second, uint8(9)}, []any{set.Seed, set.Period, set.SysID}, "set fields are kept")
	require.Contains(t, d.String(), "seed 1")
	// No BIN asked for: the tlog alone.
	var tlog bytes.Buffer
	tr, err := mavsim.Scenario{Duration: 5 * time.Second}.Write(&tlog, nil)
	require.NoError(t, err)
	require.Equal(t, 1, tr.Boots())
	require.NotEmpty(t, readTlog(t, tlog.Bytes()))
}

// TestTlogWriterFrames: frames of both MAVLink versions are read back with
// their sender, sequence of stamps and fields; a frame written with a
// wrong CRC extra, or an id outside the dialect, is what the reader counts
// as damaged or unknown.
func TestTlogWriterFrames(t *testing.T) {
	var buf bytes.Buffer
	w := mavsim.NewTlogWriter(&buf)
	hb := &common.MessageHeartbeat{Type: common.MAV_TYPE_GCS, MavlinkVersion: 3}
	att := &common.MessageAttitude{TimeBootMs: 1234, Roll: 0.5}
	w.Write(1_000_000_000_001_000, 255, 190, hb)
	w.Version = 1
	w.Write(1_000_000_000_002_000, 1, 1, att)
	require.NoError(t, w.Err())
	msgs := readTlog(t, buf.Bytes())
	require.Len(t, msgs, 2)
	require.Equal(t, []any{uint8(2), uint8(255), uint8(190), "HEARTBEAT", stamp.Time(1_000_000_000_001_000)},
		[]any{msgs[0].Version, msgs[0].SysID, msgs[0].CompID, msgs[0].Name, msgs[0].Receive})
	require.Equal(t, hb, msgs[0].Message())
	require.Equal(t, uint8(1), msgs[1].Version)
	require.Equal(t, att, msgs[1].Message())

	damaged := mavsim.NewTlogWriter(&buf)
	buf.Reset()
	payload := mavsim.Frame(2, 0, 1, 1, att)[10:]
	payload = payload[:len(payload)-2]
	damaged.WriteRaw(1_000, mavsim.RawFrame(2, 0, 1, 1, 30, payload, mavsim.CRCExtra(30)^1))
	damaged.WriteRaw(2_000, mavsim.RawFrame(2, 1, 1, 1, 30, payload, mavsim.CRCExtra(30)))
	damaged.WriteRaw(3_000, mavsim.RawFrame(2, 2, 1, 1, 0xabcde, []byte{1, 2}, 0))
	r := mav.NewTlogReader(bytes.NewReader(buf.Bytes()))
	for {
		if _, err := r.Next(); err != nil {
			require.ErrorIs(t, err, io.EOF)
			break
		}
	}
	st := r.Stats()
	require.Equal(t, int64(1), st.Messages)
	require.Equal(t, 1, st.BadCRC)
	require.Equal(t, 1, st.Unknown)
}

// TestBinWriterRecords: a record type defined and written is read back
// with its values, units and multipliers, scaled columns included.
func TestBinWriterRecords(t *testing.T) {
	var buf bytes.Buffer
	w := mavsim.NewBinWriter(&buf)
	w.Define("TST", "QbHicCeELfdnZ", "TimeUS,B,H,I,C1,C2,E1,E2,Lat,F,D,N,Z")
	w.Write("UNIT", uint64(5), 'd', "deg")
	w.Write("MULT", uint64(5), '?', 1.0)
	w.Units("TST", 5, "s-----dd-----", "F????????????")
	w.Write("TST", uint64(1_000_001), int8(-3), uint16(65000), int32(-70000), -1.25, 2.5, -3.75, 4.5, 47.3977419, float32(0.5), 1e-3, "abcd", "hello")
	require.NoError(t, w.Err())
	recs := readBin(t, buf.Bytes())
	last := recs[len(recs)-1]
	require.Equal(t, "TST", last.name)
	require.Equal(t, int64(1_000_001), last.us)
	for col, want := range map[string]float64{"B": -3, "H": 65000, "I": -70000, "C1": -1.25, "C2": 2.5, "E1": -3.75, "E2": 4.5, "F": 0.5, "D": 1e-3} {
		require.Equal(t, want, value(last, col), col)
	}
	require.InDelta(t, 47.3977419, value(last, "Lat"), 1e-7)
	require.Equal(t, "abcd", text(last, "N"))
	require.Equal(t, "hello", text(last, "Z"))
	require.Equal(t, buf.Bytes()[len(buf.Bytes())-len(last.rec.Payload)-3:], w.Record("TST", uint64(1_000_001), int8(-3), uint16(65000), int32(-70000), -1.25, 2.5, -3.75, 4.5, 47.3977419, float32(0.5), 1e-3, "abcd", "hello"),
		"Record returns the bytes Write writes")
	require.Panics(t, func() { w.Write("NOPE") }, "an undeclared type is a programming error")
	require.Panics(t, func() { w.Write("TST", uint64(1)) }, "so is a wrong number of values")
}
