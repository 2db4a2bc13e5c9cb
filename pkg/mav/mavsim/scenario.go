package mavsim

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"time"

	"github.com/bluenviron/gomavlib/v3/pkg/dialects/common"
	"github.com/bluenviron/gomavlib/v3/pkg/message"

	"github.com/timealign/timealign/pkg/sim"
	"github.com/timealign/timealign/pkg/stamp"
)

// Scenario is a vehicle whose autopilot streams telemetry to a logging
// computer (the tlog) while it writes its own dataflash log (one BIN per
// boot). pkg/sim drives the clocks: the autopilot's boot clock (offset,
// skew, drift, reboots), the delivery latency, losses and steps of the
// logging computer's clock. The zero value is completed by Defaults.
type Scenario struct {
	Seed uint64
	// Duration is the true time the telemetry covers; Period the period of
	// the ATTITUDE stream (every message of the tlog that carries
	// time_boot_ms comes with it).
	Duration, Period time.Duration
	// Latency is the delay from the autopilot's stamp to the tlog's.
	Latency sim.Latency
	// Loss is the probability that a telemetry message is lost.
	Loss float64
	// SkewPPM and DriftPPMPerHour make the boot clock run fast or slow.
	SkewPPM, DriftPPMPerHour float64
	// Uptime is the boot clock's reading at the first message.
	Uptime time.Duration
	// Start is the UTC time of the first message.
	Start stamp.Time
	// LoggerOffset is the logging computer's clock minus UTC; HostSteps
	// step it during the run.
	LoggerOffset time.Duration
	HostSteps    []sim.Step
	// Reboots lists the true times after the start at which the autopilot
	// reboots.
	Reboots []time.Duration
	// RTC, when set, is the autopilot's Unix clock minus UTC, reported in
	// SYSTEM_TIME; nil: its clock is never set (time_unix_usec 0).
	RTC *time.Duration
	// GPS adds GPS records with GPS time to the BIN; GPSInput adds
	// GPS_INPUT messages from a companion computer to the tlog. GPSLag is
	// the time from a fix to its record (default 60 ms).
	GPS, GPSInput bool
	GPSLag        time.Duration
	// Identity.
	SysID     uint8
	BootCount int
	Firmware  string
	Board     string
	// BinAttitudePhase shifts the BIN's attitude (a BIN of another
	// flight); BinBootCount, when not 0, overrides the BIN's STAT_BOOTCNT;
	// BinFirmware and BinBoard override the BIN's banner.
	BinAttitudePhase float64
	BinBootCount     int
	BinFirmware      string
	BinBoard         string
	// BinExtra adds that many IMU records per telemetry period to the BIN.
	BinExtra int
	// BinIMUs is the number of IMU instances (column I) each of those
	// records is written for, at the same TimeUS, as an autopilot with
	// several IMUs logs them; 0 stands for 1.
	BinIMUs int
}

// Defaults fills the zero fields: 10 minutes at 10 Hz, exponential
// latency of mean 20 ms, a boot clock 12 ppm fast that has been up 40 s.
func (s Scenario) Defaults() Scenario {
	if s.Seed == 0 {
		s.Seed = 1
	}
	if s.Duration == 0 {
		s.Duration = 10 * time.Minute
	}
	if s.Period == 0 {
		s.Period = 100 * time.Millisecond
	}
	if s.Latency == (sim.Latency{}) {
		s.Latency = sim.Latency{Kind: sim.Exponential, Scale: 20 * time.Millisecond}
	}
	if s.Uptime == 0 {
		s.Uptime = 40 * time.Second
	}
	if s.Start == 0 {
		s.Start = stamp.Time(time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC).UnixNano())
	}
	if s.GPSLag == 0 {
		s.GPSLag = 60 * time.Millisecond
	}
	if s.SysID == 0 {
		s.SysID = 1
	}
	if s.BootCount == 0 {
		s.BootCount = 7
	}
	if s.Firmware == "" {
		s.Firmware = "ArduSub V4.5.1 (1a2b3c4d)"
	}
	if s.Board == "" {
		s.Board = "CubeOrange 00300021 3030510B 38393337"
	}
	return s
}

// Truth is the ground truth of every telemetry sample, lost ones included.
type Truth struct {
	// Boot is the boot the sample belongs to, Device the boot clock's
	// reading, Logger the true time on the logging computer's clock
	// (what the tlog's stamps would be without latency), UTC the true time.
	Boot   []int
	Device []time.Duration
	Logger []stamp.Time
	UTC    []stamp.Time
}

// Boots returns the number of boots.
func (t Truth) Boots() int {
	if len(t.Boot) == 0 {
		return 0
	}
	return t.Boot[len(t.Boot)-1] + 1
}

type tlogRec struct {
	r     stamp.Time
	order int
	sys   uint8
	comp  uint8
	msg   message.Message
}

// Write writes the tlog to tlog and each boot's BIN to bin(boot) (nil: no
// BIN for that boot).
func (s Scenario) Write(tlog io.Writer, bin func(boot int) io.Writer) (Truth, error) {
	s = s.Defaults()
	c := s.simConfig()
	samples, err := sim.Generate(c)
	if err != nil {
		return Truth{}, err
	}
	var tr Truth
	var recs []tlogRec
	add := func(r stamp.Time, sys, comp uint8, m message.Message) {
		recs = append(recs, tlogRec{r, len(recs), sys, comp, m})
	}
	bins := map[int]*BinWriter{}
	started := map[int]bool{}
	for i, x := range samples {
		utc := x.True.Add(-s.LoggerOffset - hostStep(s.HostSteps, x.True.Sub(c.Start)))
		tr.Boot = append(tr.Boot, x.Boot)
		tr.Device = append(tr.Device, x.Device)
		tr.Logger = append(tr.Logger, x.True)
		tr.UTC = append(tr.UTC, utc)
		bw, ok := bins[x.Boot]
		if !ok && bin != nil {
			if w := bin(x.Boot); w != nil {
				bw = s.binHeader(w, x.Boot, uint64(max(x.Device-500*time.Millisecond, 0).Microseconds()))
			}
			bins[x.Boot] = bw
		}
		if bw != nil {
			s.binSample(bw, i, x.Device.Microseconds(), utc)
		}
		if x.Lost {
			continue
		}
		if !started[x.Boot] {
			started[x.Boot] = true
			s.tlogBanner(add, x.Receive, x.Boot)
		}
		s.tlogSample(add, i, x, utc)
	}
	slices.SortStableFunc(recs, func(a, b tlogRec) int { return cmp.Compare(a.r, b.r) })
	tw := NewTlogWriter(tlog)
	for _, x := range recs {
		tw.Write(x.r, x.sys, x.comp, x.msg)
	}
	if err := tw.Err(); err != nil {
		return tr, err
	}
	for _, bw := range bins {
		if bw != nil && bw.Err() != nil {
			return tr, bw.Err()
		}
	}
	return tr, nil
}

// simConfig is the simulation of the scenario's clocks: the ATTITUDE
// stream's samples, stamped by the logging computer.
func (s Scenario) simConfig() sim.Config {
	c := sim.DefaultConfig()
	c.Seed = s.Seed
	c.Start = s.Start.Add(s.LoggerOffset)
	c.Count = 0
	c.Duration = s.Duration
	c.Period = s.Period
	c.Clock = sim.Clock{Offset: s.Uptime, SkewPPM: s.SkewPPM, DriftPPMPerHour: s.DriftPPMPerHour, TickPeriod: time.Microsecond,
		Reboots: s.Reboots}
	c.Latency = s.Latency
	c.Loss = sim.Loss{Prob: s.Loss}
	c.HostSteps = s.HostSteps
	return c
}

// binSample writes sample i's records to its boot's BIN at boot time us
// (true time utc): ATT, BinExtra IMU records per instance, GPS every
// other sample.
func (s Scenario) binSample(bw *BinWriter, i int, us int64, utc stamp.Time) {
	br, bp, by := attitudeAt(utc, s.BinAttitudePhase)
	bw.Write("ATT", uint64(us), 0.0, br, 0.0, bp, 0.0, math.Mod(by+360, 360), 0.0, 0.0, uint8(0))
	for j := range s.BinExtra {
		t := us + int64(j+1)*s.Period.Microseconds()/int64(s.BinExtra+1)
		for k := range max(s.BinIMUs, 1) {
			bw.Write("IMU", uint64(t), uint8(k), 0.01*float32(j), -0.02, 0.03, 0.1, -0.2, -9.81, uint32(0), uint32(0), uint8(0), uint8(0), 25.0, uint8(1), uint8(1))
		}
	}
	if s.GPS && i%2 == 0 {
		wk, ms := gpsTime(utc.Add(-s.GPSLag))
		bw.Write("GPS", uint64(us), uint8(0), uint8(3), ms, wk, uint8(12), 0.8, 47.3977419, 8.5455938, 12.0, 0.5, 90.0, 0.0, 0.0, uint8(1))
	}
}

// tlogSample adds the telemetry of delivered sample i (true time utc):
// ATTITUDE; every tenth sample SYSTEM_TIME and the heartbeats of the
// autopilot and the ground station; GPS_INPUT every other sample.
func (s Scenario) tlogSample(add func(stamp.Time, uint8, uint8, message.Message), i int, x sim.Sample, utc stamp.Time) {
	r := x.Receive
	ms := uint32(x.Device / time.Millisecond)
	roll, pitch, yaw := attitudeAt(utc, 0)
	add(r, s.SysID, 1, &common.MessageAttitude{TimeBootMs: ms, Roll: rad(roll), Pitch: rad(pitch), Yaw: rad(yaw)})
	if i%10 == 0 {
		st := &common.MessageSystemTime{TimeBootMs: ms}
		if s.RTC != nil {
			st.TimeUnixUsec = uint64(utc.Add(*s.RTC)) / 1000
		}
		add(r, s.SysID, 1, st)
		add(r, s.SysID, 1, &common.MessageHeartbeat{Type: common.MAV_TYPE_SUBMARINE, Autopilot: common.MAV_AUTOPILOT_ARDUPILOTMEGA, MavlinkVersion: 3})
		add(r, 255, 190, &common.MessageHeartbeat{Type: common.MAV_TYPE_GCS, Autopilot: common.MAV_AUTOPILOT_INVALID, MavlinkVersion: 3})
	}
	if s.GPSInput && i%2 == 1 {
		wk, wms := gpsTime(utc.Add(-s.GPSLag))
		add(r, s.SysID, 220, &common.MessageGpsInput{TimeWeek: wk, TimeWeekMs: wms, FixType: 3, SatellitesVisible: 12})
	}
}

// hostStep is the logging computer's clock step at elapsed time d.
func hostStep(steps []sim.Step, d time.Duration) time.Duration {
	var off time.Duration
	for _, st := range steps {
		if d >= st.At+off {
			off += st.By
		}
	}
	return off
}

// attitudeAt is a slow, smooth motion of the vehicle (degrees).
func attitudeAt(t stamp.Time, phase float64) (roll, pitch, yaw float64) {
	s := float64(t%stamp.Time(time.Hour)) / 1e9
	roll = 12 * math.Sin(2*math.Pi*s/17+phase)
	pitch = 7 * math.Sin(2*math.Pi*s/23+1+phase)
	yaw = math.Mod(360*s/90+40*phase, 360) - 180
	return
}

func rad(deg float64) float32 { return float32(deg * math.Pi / 180) }

// gpsTime converts UTC to GPS week and milliseconds (18 leap seconds: the
// scenarios are after 2017).
func gpsTime(t stamp.Time) (uint16, uint32) {
	const epoch = 315964800
	g := int64(t)/1e6 - epoch*1e3 + 18e3 // ms since the GPS epoch
	w := g / (7 * 24 * 3600 * 1000)
	return uint16(w), uint32(g - w*7*24*3600*1000)
}

func (s Scenario) bootCount(boot int) int { return s.BootCount + boot }

func (s Scenario) tlogBanner(add func(stamp.Time, uint8, uint8, message.Message), r stamp.Time, boot int) {
	sys := s.SysID
	for _, t := range []string{s.Firmware, "ChibiOS: 93e6e03d", s.Board, "Frame: VECTORED_6DOF"} {
		add(r, sys, 1, &common.MessageStatustext{Severity: common.MAV_SEVERITY_INFO, Text: t})
	}
	add(r, sys, 1, &common.MessageParamValue{ParamId: "SYSID_THISMAV", ParamValue: float32(sys), ParamType: common.MAV_PARAM_TYPE_INT8})
	add(r, sys, 1, &common.MessageParamValue{ParamId: "STAT_BOOTCNT", ParamValue: float32(s.bootCount(boot)), ParamType: common.MAV_PARAM_TYPE_INT16})
}

// binHeader starts a boot's BIN at boot time us: formats, units, banner,
// parameters.
func (s Scenario) binHeader(w io.Writer, boot int, us uint64) *BinWriter {
	b := NewBinWriter(w)
	b.Define("PARM", "QNff", "TimeUS,Name,Value,Default")
	b.Define("MSG", "QZ", "TimeUS,Message")
	b.Define("ATT", "QccccCCCCB", "TimeUS,DesRoll,Roll,DesPitch,Pitch,DesYaw,Yaw,ErrRP,ErrYaw,AEKF")
	b.Define("IMU", "QBffffffIIfBBHH", "TimeUS,I,GyrX,GyrY,GyrZ,AccX,AccY,AccZ,EG,EA,T,GH,AH,GHz,AHz")
	b.Define("GPS", "QBBIHBcLLeffffB", "TimeUS,I,Status,GMS,GWk,NSats,HDop,Lat,Lng,Alt,Spd,GCrs,VZ,Yaw,U")
	for _, u := range []struct {
		id    byte
		label string
	}{{'s', "s"}, {'d', "deg"}, {'m', "m"}, {'n', "m/s"}, {'-', ""}, {'E', "rad/s"}, {'o', "m/s/s"}, {'O', "degC"}} {
		b.Write("UNIT", us, u.id, u.label)
	}
	for _, m := range []struct {
		id byte
		v  float64
	}{{'-', 0}, {'?', 1}, {'F', 1e-6}, {'0', 1}} {
		b.Write("MULT", us, m.id, m.v)
	}
	b.Units("ATT", us, "sddddhhdh-", "F000000000")
	b.Units("IMU", us, "s#EEEooo--O--zz", "F?000000-----00")
	fw, board := s.Firmware, s.Board
	if s.BinFirmware != "" {
		fw = s.BinFirmware
	}
	if s.BinBoard != "" {
		board = s.BinBoard
	}
	for _, t := range []string{fw, "ChibiOS: 93e6e03d", board, "Frame: VECTORED_6DOF"} {
		b.Write("MSG", us, t)
	}
	bc := s.bootCount(boot)
	if s.BinBootCount != 0 {
		bc = s.BinBootCount
	}
	b.Write("PARM", us, "SYSID_THISMAV", float32(s.SysID), float32(1))
	b.Write("PARM", us, "STAT_BOOTCNT", float32(bc), float32(0))
	return b
}

// String describes the scenario in a line.
func (s Scenario) String() string {
	return fmt.Sprintf("seed %d, %v at %v, latency %v %v, skew %+.0f ppm", s.Seed, s.Duration, s.Period, s.Latency.Kind, s.Latency.Scale, s.SkewPPM)
}
