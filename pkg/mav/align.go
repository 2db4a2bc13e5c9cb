package mav

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/bluenviron/gomavlib/v3/pkg/dialects/ardupilotmega"
	"github.com/bluenviron/gomavlib/v3/pkg/dialects/common"

	"github.com/timealign/timealign/pkg/cfgerr"
	"github.com/timealign/timealign/pkg/pll"
	"github.com/timealign/timealign/pkg/stamp"
)

// Source names where an offset between the autopilot's boot clock and
// Unix time comes from.
type Source int

const (
	// SourceTlog: the tlog's receive stamps against the time_boot_ms of
	// the autopilot's messages (the logging computer's clock).
	SourceTlog Source = iota
	// SourceSystemTime: SYSTEM_TIME's time_unix_usec against its
	// time_boot_ms (the autopilot's own idea of Unix time, set from a GPS
	// or from a ground station's SYSTEM_TIME).
	SourceSystemTime
	// SourceGPSInput: GPS time in GPS_INPUT messages (sent to the
	// autopilot by a companion computer) against the tlog's receive stamps,
	// combined with SourceTlog (GPS time, via the logging computer's clock).
	SourceGPSInput
	// SourceGPS: GPS time (GWk, GMS) of a BIN's GPS records against their
	// TimeUS (GPS time, from the autopilot's own receiver).
	SourceGPS
	numSources
)

var sourceNames = []string{"tlog", "system_time", "gps_input", "gps"}

func (s Source) String() string {
	if s >= 0 && s < numSources {
		return sourceNames[s]
	}
	return fmt.Sprintf("Source(%d)", int(s))
}

// MarshalText implements encoding.TextMarshaler.
func (s Source) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// ErrSource is returned by [ParseSource] for an unknown name.
var ErrSource = errors.New("mav: unknown source")

// ParseSource returns the Source named s.
func ParseSource(s string) (Source, error) {
	for i, n := range sourceNames {
		if n == s {
			return Source(i), nil
		}
	}
	return 0, fmt.Errorf("%w %q (want %s)", ErrSource, s, strings.Join(sourceNames, ", "))
}

// Config configures an [Aligner]. Start from [DefaultConfig].
type Config struct {
	// Window is the number of samples each estimate fits at a time (the
	// window of pkg/pll's offset mode). It defaults to 256 (25 s of
	// telemetry at 10 Hz). 8..pll.MaxWindow.
	Window int
	// MaxLatency is the largest delay of a message that still counts as
	// consistent with the fit; a run of messages later than that is taken
	// as a step of the receiving clock. It also separates a reboot (boot
	// time going back while receive − boot jumps up by more) from a stray
	// late message. It defaults to 5 s.
	MaxLatency time.Duration
	// MaxSkewPPM bounds the rate difference fitted between two clocks. It
	// defaults to 500.
	MaxSkewPPM float64
	// SystemID and ComponentID select the autopilot in the tlog; 0 picks
	// the component whose HEARTBEAT says it is an autopilot and that sent
	// the most time_boot_ms messages. They default to 0.
	SystemID, ComponentID int
	// Prefer is the source that wins where it has an answer; −1 (the
	// default) ranks them: tlog, system_time, gps_input, gps.
	Prefer Source
	// Tolerance is added to the uncertainties of two sources before they
	// are said to disagree. It defaults to 2 ms.
	Tolerance time.Duration
	// MinSamples is the least number of samples of an estimate. It
	// defaults to 10.
	MinSamples int
}

// DefaultConfig returns the defaults.
func DefaultConfig() Config {
	return Config{Window: 256, MaxLatency: 5 * time.Second, MaxSkewPPM: 500, Prefer: -1,
		Tolerance: 2 * time.Millisecond, MinSamples: 10}
}

// ErrConfig is wrapped by every error of [Config.Validate].
var ErrConfig = errors.New("mav: invalid config")

func bad(field, format string, args ...any) error {
	return cfgerr.New(ErrConfig, field, format, args...)
}

// Validate reports the first bad field.
func (c Config) Validate() error {
	switch {
	case c.Window < 8 || c.Window > pll.MaxWindow:
		return bad("Window", "is %d, want 8..%d", c.Window, pll.MaxWindow)
	case c.MaxLatency < time.Millisecond:
		return bad("MaxLatency", "is %v, want ≥ 1ms", c.MaxLatency)
	case math.IsNaN(c.MaxSkewPPM) || c.MaxSkewPPM < 0 || c.MaxSkewPPM > 10000:
		return bad("MaxSkewPPM", "is %v, want 0..10000", c.MaxSkewPPM)
	case c.SystemID < 0 || c.SystemID > 255:
		return bad("SystemID", "is %d, want 0..255 (0: found from the log)", c.SystemID)
	case c.ComponentID < 0 || c.ComponentID > 255:
		return bad("ComponentID", "is %d, want 0..255 (0: found from the log)", c.ComponentID)
	case c.Prefer < -1 || c.Prefer >= numSources:
		return bad("Prefer", "is %d, want -1 or a source", int(c.Prefer))
	case c.Tolerance < 0:
		return bad("Tolerance", "is %v, want ≥ 0", c.Tolerance)
	case c.MinSamples < 2:
		return bad("MinSamples", "is %d, want ≥ 2", c.MinSamples)
	}
	return nil
}

type compKey struct{ sys, comp uint8 }

// maxComponents bounds the components followed; maxBoots the boots of
// one component (time_boot_ms going back more often than that is not an
// autopilot rebooting; the samples past the limit are strays).
const (
	maxComponents = 64
	maxBoots      = 256
	maxNames      = 256 // message names counted per boot
)

// component is one sender of the tlog.
type component struct {
	key        compKey
	autopilot  bool // its HEARTBEAT says it is an autopilot
	heartbeats int
	mavType    uint64
	ident      Identity
	boots      []*boot
	// bootCounts are the STAT_BOOTCNT values seen, with their stamps:
	// they go to a boot by time (a value sent after a reboot and before
	// its first time_boot_ms message belongs to the new boot).
	bootCounts []stampedInt
	tentative  bool // the last boot began with one sample and awaits a second
	strays     int  // samples that looked like a reboot but were not
	timeBoot   int
}

// boot is one boot of the autopilot as the tlog sees it.
type stampedInt struct {
	r stamp.Time
	v int
}

type boot struct {
	tlog, sys      *track
	firstB, lastB  int64 // µs
	firstR, lastR  stamp.Time
	minOff         stamp.Time // min(receive − boot)
	n              int
	names          map[string]int
	att            attSampler
	unixZero       int // SYSTEM_TIME without Unix time
	systemTimeSeen int
}

// binLog is one BIN file.
type binLog struct {
	name        string
	first, last int64
	haveTime    bool
	gps         *track
	gpsNoTime   int
	att         attSampler
	ident       Identity
	bootCount   int
	records     int64
}

// Aligner collects what the logs say about their clocks: feed it every
// message of the tlog ([Aligner.AddTlog]) and every record of each BIN
// ([Aligner.AddBin], or [Aligner.ReadBin] for a whole one), then ask for
// the [Result]. Memory is bounded by the
// number of components, boots and BIN files, plus O(n/Window) knots per
// estimate for n samples. It is not safe for concurrent use, with one
// exception: once every BIN file is added ([Aligner.AddBinFile]), the tlog's
// messages and each BIN's records may be fed from goroutines of their own
// (one per input), which touch disjoint parts.
type Aligner struct {
	cfg       Config
	pcfg      pll.Config
	comps     map[compKey]*component
	dropped   int // components beyond maxComponents
	gpsInput  *track
	gpsInputN int // GPS_INPUT messages, with or without time
	bins      []*binLog
	tlogMsgs  int64
}

// NewAligner returns an Aligner, or the error of cfg.Validate.
func NewAligner(cfg Config) (*Aligner, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	a := &Aligner{cfg: cfg, pcfg: trackConfig(cfg.Window, cfg.MaxLatency, cfg.MaxSkewPPM), comps: map[compKey]*component{}}
	a.gpsInput = newTrack(a.pcfg)
	return a, nil
}

func (a *Aligner) component(k compKey) *component {
	c := a.comps[k]
	if c == nil {
		if len(a.comps) >= maxComponents {
			a.dropped++
			return nil
		}
		c = &component{key: k}
		a.comps[k] = c
	}
	return c
}

// AddTlog feeds one message of the tlog.
func (a *Aligner) AddTlog(m *TlogMessage) {
	a.tlogMsgs++
	if m.ID == gpsInputID {
		gi := m.Message().(*common.MessageGpsInput)
		a.gpsInputN++
		if us, ok := gpsToUnixMicros(gi.TimeWeek, gi.TimeWeekMs); ok {
			a.gpsInput.add(us, m.Receive)
		}
		return
	}
	c := a.component(compKey{m.SysID, m.CompID})
	if c == nil {
		return
	}
	if b, ok := m.TimeBootMs(); ok {
		a.sample(c, int64(b)*1000, m.Receive)
		bt := c.boots[len(c.boots)-1]
		// A name already seen is always counted; new ones while fewer
		// than maxNames are (the dialect's messages with time_boot_ms
		// are fewer: the bound only keeps the map bounded).
		if _, seen := bt.names[m.Name]; seen || len(bt.names) < maxNames {
			bt.names[m.Name]++
		}
	}
	var bt *boot
	if len(c.boots) > 0 {
		bt = c.boots[len(c.boots)-1]
	}
	switch m.ID {
	case attitudeID:
		// The frequent ones: read from the payload.
		if bt != nil {
			f32 := func(i int) float32 { return math.Float32frombits(uint32(m.scalar(i))) }
			bt.att.add(attitude{boot: int64(uint32(m.scalar(attTimeBootMs))) * 1000,
				roll: deg(f32(attRoll)), pitch: deg(f32(attPitch)), yaw: deg(f32(attYaw))})
		}
		return
	case systemTimeID:
		if bt != nil {
			bt.systemTime(int64(uint32(m.scalar(sysTimeBootMs)))*1000, m.scalar(sysTimeUnixUsec))
		}
		return
	case heartbeatID, statustextID, autopilotVersionID, paramValueID:
	default:
		return // no other message says anything about the clocks or the vehicle
	}
	switch msg := m.Message().(type) {
	case *common.MessageHeartbeat:
		c.heartbeats++
		c.mavType = uint64(msg.Type)
		if msg.Autopilot != common.MAV_AUTOPILOT_INVALID && msg.Type != common.MAV_TYPE_GCS {
			c.autopilot = true
		}
	case *common.MessageStatustext:
		c.ident.noteText(msg.Text)
	case *common.MessageAutopilotVersion:
		v := msg.FlightSwVersion
		if c.ident.Version == "" {
			c.ident.Version = fmt.Sprintf("%d.%d.%d", v>>24, v>>16&0xff, v>>8&0xff)
		}
		if h := printable(msg.FlightCustomVersion[:]); h != "" && c.ident.GitHash == "" {
			c.ident.GitHash = strings.ToLower(h)
		}
		if u := printable(msg.Uid2[:]); len(u) >= 8 {
			c.ident.BoardPrefix = u
		}
	case *common.MessageParamValue:
		switch msg.ParamId {
		case "SYSID_THISMAV":
			c.ident.SysID = int(msg.ParamValue)
		case "STAT_BOOTCNT":
			if len(c.bootCounts) < 1024 {
				c.bootCounts = append(c.bootCounts, stampedInt{m.Receive, int(msg.ParamValue)})
			}
		}
	}
}

// systemTime notes a SYSTEM_TIME message of the boot: boot time b (µs)
// and its time_unix_usec.
func (bt *boot) systemTime(b int64, unixUsec uint64) {
	bt.systemTimeSeen++
	if unixUsec == 0 {
		bt.unixZero++
	} else if unixUsec < uint64(stamp.Max)/1000 {
		bt.sys.add(b, stamp.Time(unixUsec*1000))
	}
}

// The ids of the messages the Aligner decodes.
var (
	heartbeatID        = (&common.MessageHeartbeat{}).GetID()
	statustextID       = (&common.MessageStatustext{}).GetID()
	autopilotVersionID = (&common.MessageAutopilotVersion{}).GetID()
	paramValueID       = (&common.MessageParamValue{}).GetID()
	attitudeID         = (&common.MessageAttitude{}).GetID()
	systemTimeID       = (&common.MessageSystemTime{}).GetID()
	gpsInputID         = (&common.MessageGpsInput{}).GetID()
	_                  = ardupilotmega.Dialect // the dialect the messages come from

	// The fields the Aligner reads from the payload (msgField order is
	// the Go type's).
	attTimeBootMs   = fieldIndex(common.MessageAttitude{}, "TimeBootMs")
	attRoll         = fieldIndex(common.MessageAttitude{}, "Roll")
	attPitch        = fieldIndex(common.MessageAttitude{}, "Pitch")
	attYaw          = fieldIndex(common.MessageAttitude{}, "Yaw")
	sysTimeBootMs   = fieldIndex(common.MessageSystemTime{}, "TimeBootMs")
	sysTimeUnixUsec = fieldIndex(common.MessageSystemTime{}, "TimeUnixUsec")
)

// fieldIndex returns the index of the field named name of the message
// type of msg.
func fieldIndex(msg any, name string) int {
	f, ok := reflect.TypeOf(msg).FieldByName(name)
	if !ok || len(f.Index) != 1 {
		panic("mav: " + reflect.TypeOf(msg).Name() + " has no field " + name) // a bug, not input
	}
	return f.Index[0]
}

func deg(rad float32) float32 { return rad * (180 / math.Pi) }

// printable returns b up to its first NUL if it is printable ASCII.
func printable(b []byte) string {
	s := cstring(b)
	for _, r := range s {
		if r < 0x20 || r > 0x7e {
			return ""
		}
	}
	return s
}

// rebootBack is how far boot time must go back to be a reboot on its own.
const rebootBack = int64(time.Second / time.Microsecond)

// sample places one time_boot_ms message of component c into a boot.
func (a *Aligner) sample(c *component, b int64, r stamp.Time) {
	c.timeBoot++
	off := r - stamp.Time(b*1000)
	if n := len(c.boots); n > 0 && c.tentative {
		cand, old := c.boots[n-1], c.boots[n-2]
		fitsNew := b >= cand.lastB && absDur(off-cand.minOff) < a.cfg.MaxLatency
		fitsOld := b >= old.lastB-rebootBack && absDur(off-old.minOff) < a.cfg.MaxLatency
		c.tentative = false
		if !fitsNew && fitsOld {
			// The one sample was a stray late message, not a reboot.
			c.boots = c.boots[:n-1]
			c.strays++
		}
	}
	if n := len(c.boots); n > 0 {
		cur := c.boots[n-1]
		if b < cur.lastB && (cur.lastB-b > rebootBack || off-cur.minOff > stamp.Time(a.cfg.MaxLatency)) {
			if len(c.boots) >= maxBoots {
				c.strays++
				return
			}
			c.boots = append(c.boots, a.newBoot())
			c.tentative = true
		}
	} else {
		c.boots = append(c.boots, a.newBoot())
	}
	bt := c.boots[len(c.boots)-1]
	if bt.n == 0 {
		bt.firstB, bt.firstR, bt.minOff = b, r, off
	}
	bt.n++
	bt.lastB, bt.lastR = max(bt.lastB, b), r
	bt.firstB = min(bt.firstB, b)
	bt.minOff = min(bt.minOff, off)
	bt.tlog.add(b, r)
}

func (a *Aligner) newBoot() *boot {
	return &boot{tlog: newTrack(a.pcfg), sys: newTrack(a.pcfg), names: map[string]int{}}
}

func absDur(d stamp.Time) time.Duration {
	if d < 0 {
		d = -d
	}
	return time.Duration(d)
}

// AddBinFile starts a BIN file and returns its index for [Aligner.AddBin].
func (a *Aligner) AddBinFile(name string) int {
	a.bins = append(a.bins, &binLog{name: name, gps: newTrack(a.pcfg), bootCount: -1})
	return len(a.bins) - 1
}

// binColumns caches the columns a BIN's records are read by.
type binColumns struct {
	gwk, gms, status, inst int
	roll, pitch, yaw       int
}

// AddBin feeds one record of BIN file i. Only a few types matter (GPS,
// ATT, MSG, VER, PARM) and the boot time range; the rest are counted.
func (a *Aligner) AddBin(i int, r Record) {
	b := a.bins[i]
	b.records++
	f := r.Format
	if f.Err != nil {
		return
	}
	t, hasTime := r.Time()
	if hasTime {
		if !b.haveTime {
			b.first, b.last, b.haveTime = t, t, true
		}
		b.first, b.last = min(b.first, t), max(b.last, t)
	}
	if f.role != roleNone {
		b.addRole(r, t, hasTime)
	}
}

// ReadBin feeds every record of br to BIN file i, as AddBin does one by
// one, until br's first error, which it returns (io.EOF at the end). The
// records no role is read for, nearly all of them, only count and move
// the time range, kept in registers here.
func (a *Aligner) ReadBin(i int, br *BinReader) error {
	b := a.bins[i]
	n, first, last, have := b.records, b.first, b.last, b.haveTime
	defer func() { b.records, b.first, b.last, b.haveTime = n, first, last, have }()
	for {
		r, err := br.Next()
		if err != nil {
			return err
		}
		n++
		f := r.Format
		if f.Err != nil {
			continue
		}
		t, hasTime := r.Time()
		if hasTime {
			if !have {
				first, last, have = t, t, true
			}
			first, last = min(first, t), max(last, t)
		}
		if f.role != roleNone {
			b.addRole(r, t, hasTime)
		}
	}
}

// addRole reads a record of a type with a role; t is its boot time (if
// hasTime).
func (b *binLog) addRole(r Record, t int64, hasTime bool) {
	f := r.Format
	switch f.role {
	case roleGPS:
		wk, ms, st, in := f.Index("GWk"), f.Index("GMS"), f.Index("Status"), f.Index("I")
		if wk < 0 || ms < 0 || !hasTime || (in >= 0 && r.Int(in) != 0) {
			return
		}
		us, ok := gpsToUnixMicros(uint16(r.Int(wk)), uint32(r.Int(ms)))
		if !ok || (st >= 0 && r.Int(st) < 3) {
			b.gpsNoTime++
			return
		}
		b.gps.add(us, stamp.Time(t*1000))
	case roleATT:
		ro, pi, ya := f.Index("Roll"), f.Index("Pitch"), f.Index("Yaw")
		if ro < 0 || pi < 0 || ya < 0 || !hasTime {
			return
		}
		b.att.add(attitude{boot: t, roll: float32(r.Float(ro)), pitch: float32(r.Float(pi)), yaw: float32(r.Float(ya))})
	case roleMSG:
		if k := f.Index("Message"); k >= 0 {
			b.ident.noteText(r.String(k))
		}
	case roleVER:
		if k := f.Index("FWS"); k >= 0 {
			b.ident.noteText(r.String(k))
		}
		if k := f.Index("GH"); k >= 0 && b.ident.GitHash == "" && r.Int(k) != 0 {
			b.ident.GitHash = fmt.Sprintf("%08x", r.Int(k))
		}
	case rolePARM:
		n, v := f.Index("Name"), f.Index("Value")
		if n < 0 || v < 0 {
			return
		}
		switch r.String(n) {
		case "SYSID_THISMAV":
			b.ident.SysID = int(r.Float(v))
		case "STAT_BOOTCNT":
			b.bootCount = int(r.Float(v))
		}
	}
}

// Estimate is one source's answer for one boot: Unix time = boot time +
// Offset at boot time Ref, changing by SkewPPM (the fit between First and
// Last follows drift piecewise; Pieces counts the clock steps plus one).
type Estimate struct {
	Source Source
	// File is the BIN file of a gps estimate.
	File string
	// Offset is Unix time minus boot time at boot time Ref.
	Offset time.Duration
	Ref    time.Duration
	// SkewPPM is how much faster Unix time runs than the boot clock.
	SkewPPM float64
	// Uncertainty is how far the fitted floor typically lies above the
	// true one (the mean gap between the two fastest samples of each
	// window); negative when unknown (too few samples).
	Uncertainty time.Duration
	// Samples counts the samples fitted; Pieces the runs the fit had to
	// start over for (a clock step is one more).
	Samples, Pieces int
	// First and Last are the boot times the samples cover.
	First, Last time.Duration
	// Status compares it with the winner: won, agrees, disagrees,
	// inconsistent (messages would arrive before they were sent), or
	// unchecked (no common time).
	Status string
	// Delta is this estimate minus the winner (mean over their common
	// time; for inconsistent ones, the largest).
	Delta time.Duration
	// Detail explains Status in words.
	Detail string

	unix func(bootUS int64) stamp.Time // Unix time of a boot time in µs
	m    *Map                          // the map unix evaluates, when it is one
}

// Unix maps a boot time to Unix time (µs resolution in boot time).
func (e *Estimate) Unix(boot time.Duration) stamp.Time {
	us := boot.Microseconds()
	return e.unix(us).Add(boot - time.Duration(us)*time.Microsecond)
}

// Mapper returns a function equal to Unix for a run of boot times that
// mostly grow, as a log's records do: it starts where the last one fell,
// so that the next is found without a search. It is not safe for
// concurrent use (make one per goroutine); e is not changed.
func (e *Estimate) Mapper() func(boot time.Duration) stamp.Time {
	if e.m == nil {
		return e.Unix
	}
	c := mapCursor{m: e.m}
	return func(boot time.Duration) stamp.Time {
		us := boot.Microseconds()
		return c.at(us).Add(boot - time.Duration(us)*time.Microsecond)
	}
}

// OffsetAt returns Unix time minus boot time at boot time b.
func (e *Estimate) OffsetAt(b time.Duration) time.Duration {
	return time.Duration(e.Unix(b) - stamp.Time(b))
}

// Boot is one boot of the autopilot in the tlog.
type Boot struct {
	Index int
	// First and Last are the boot times of its first and last time_boot_ms
	// message; FirstReceive and LastReceive their tlog stamps.
	First, Last               time.Duration
	FirstReceive, LastReceive stamp.Time
	// Messages counts its time_boot_ms messages; ByName by message name.
	Messages int
	ByName   map[string]int
	// BootCount is STAT_BOOTCNT as the tlog saw it in this boot, −1 unknown.
	BootCount int
	// SystemTimeNoUnix counts SYSTEM_TIME messages without Unix time.
	SystemTimeNoUnix, SystemTime int
	// Estimates has every source's answer; Winner indexes the one that
	// maps this boot to Unix time (−1: none).
	Estimates []*Estimate
	Winner    int
	// endsBy is the boot time by which this boot ended (the next boot's
	// first message), 0 for the last.
	endsBy time.Duration
	att    []attitude
}

// WinnerEstimate returns the winning estimate, or nil.
func (b *Boot) WinnerEstimate() *Estimate {
	if b.Winner < 0 {
		return nil
	}
	return b.Estimates[b.Winner]
}

// Find returns the boot's estimate from src (for gps, of any file), or nil.
func (b *Boot) Find(src Source) *Estimate {
	for _, e := range b.Estimates {
		if e.Source == src {
			return e
		}
	}
	return nil
}

// BinResult says which boot a BIN belongs to and why.
type BinResult struct {
	File     string
	Identity Identity
	// First and Last are its boot time range; Records its record count.
	First, Last time.Duration
	Records     int64
	// Boot is the index of its boot in Result.Boots, −1 if none (for a
	// BIN that does not belong, the boot it is closest to).
	Boot int
	// Belongs is yes, no or unknown; Evidence says why. Also lists other
	// boots it could belong to.
	Belongs  string
	Evidence []Evidence
	Also     []int
	// GPS is its own GPS time estimate, nil without GPS time;
	// GPSWithoutTime counts GPS records without a usable time.
	GPS            *Estimate
	GPSWithoutTime int
}

// Component describes one sender of time_boot_ms messages.
type Component struct {
	SysID, CompID int
	Autopilot     bool
	TimeBoot      int
	Boots         int
}

// Result is what the logs say about their clocks.
type Result struct {
	// SysID and CompID are the autopilot's (0: none found).
	SysID, CompID int
	Identity      Identity
	Components    []Component
	Boots         []*Boot
	// GPSInput is the logging computer's clock minus GPS time, from
	// GPS_INPUT (nil without GPS time there); GPSInputMessages counts them.
	GPSInput         *Estimate
	GPSInputMessages int
	Bins             []*BinResult
	// Strays counts time_boot_ms messages that went back in time without
	// being a reboot (or past the 256th boot).
	Strays int
	// TlogMessages counts the messages fed.
	TlogMessages int64
}

// ErrNoAlignment is wrapped by [Result.Err] when no source could place
// the logs on a Unix clock.
var ErrNoAlignment = errors.New("mav: no alignment possible")

// Result returns the alignment. The Aligner can take more input after it
// and answer again.
func (a *Aligner) Result() *Result {
	res := &Result{GPSInputMessages: a.gpsInputN, TlogMessages: a.tlogMsgs}
	var keys []compKey
	for k, c := range a.comps {
		if c.timeBoot > 0 {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].sys != keys[j].sys {
			return keys[i].sys < keys[j].sys
		}
		return keys[i].comp < keys[j].comp
	})
	var ap *component
	for _, k := range keys {
		c := a.comps[k]
		res.Components = append(res.Components, Component{int(k.sys), int(k.comp), c.autopilot, c.timeBoot, len(c.boots)})
		if a.cfg.SystemID != 0 && int(k.sys) != a.cfg.SystemID || a.cfg.ComponentID != 0 && int(k.comp) != a.cfg.ComponentID {
			continue
		}
		if ap == nil || c.autopilot && !ap.autopilot || c.autopilot == ap.autopilot && c.timeBoot > ap.timeBoot {
			ap = c
		}
	}
	if m := newMap(cloneTrack(a.gpsInput).finish(), a.cfg.Window/2); m != nil && a.gpsInput.samples >= a.cfg.MinSamples {
		res.GPSInput = &Estimate{Source: SourceGPSInput, Samples: a.gpsInput.samples, Pieces: len(m.pieces), Uncertainty: unc(m),
			SkewPPM: m.skewPPM(), unix: func(us int64) stamp.Time { return stamp.Time(m.inverse(stamp.Time(us*1e3)) * 1e3) }}
		f, l := m.span()
		res.GPSInput.First, res.GPSInput.Last = time.Duration(f)*time.Microsecond, time.Duration(l)*time.Microsecond
		res.GPSInput.Ref = (res.GPSInput.First + res.GPSInput.Last) / 2
		res.GPSInput.Offset = m.offsetAt(res.GPSInput.Ref.Microseconds())
	}
	if ap != nil {
		res.SysID, res.CompID, res.Identity, res.Strays = int(ap.key.sys), int(ap.key.comp), ap.ident, ap.strays
		for i, bt := range ap.boots {
			res.Boots = append(res.Boots, a.bootResult(i, bt, res.GPSInput))
		}
		for i := 0; i+1 < len(ap.boots); i++ {
			gap := time.Duration(ap.boots[i+1].firstR - ap.boots[i].lastR)
			res.Boots[i].endsBy = res.Boots[i].Last + max(gap, 0)
		}
		for _, bc := range ap.bootCounts {
			// The boot whose stamps hold it, or the next one.
			i := sort.Search(len(ap.boots), func(i int) bool { return ap.boots[i].lastR >= bc.r })
			i = min(i, len(ap.boots)-1)
			res.Boots[i].BootCount = bc.v
		}
	}
	for _, b := range a.bins {
		res.Bins = append(res.Bins, a.binResult(res, b))
	}
	for _, bt := range res.Boots {
		a.judge(bt)
	}
	return res
}

func unc(m *Map) time.Duration {
	u := m.uncertainty()
	if math.IsNaN(u) {
		return -1
	}
	return time.Duration(math.Round(u))
}

// cloneTrack lets Result finish a copy, so the Aligner can go on.
func cloneTrack(t *track) *track {
	c := *t
	c.pieces = slices.Clone(t.pieces)
	for i := range c.pieces {
		c.pieces[i].knots = slices.Clone(c.pieces[i].knots)
	}
	if t.cur != nil {
		c.cur = &c.pieces[len(c.pieces)-1]
	}
	c.block = slices.Clone(t.block)
	c.ring = slices.Clone(t.ring)
	return &c
}

// estimate makes an Estimate of a boot clock → Unix map.
func (a *Aligner) estimate(src Source, t *track) *Estimate {
	m := newMap(cloneTrack(t).finish(), a.cfg.Window/2)
	if m == nil || t.samples < a.cfg.MinSamples {
		return nil
	}
	f, l := m.span()
	e := &Estimate{Source: src, Samples: t.samples, Pieces: len(m.pieces), Uncertainty: unc(m), SkewPPM: m.skewPPM(),
		First: time.Duration(f) * time.Microsecond, Last: time.Duration(l) * time.Microsecond, unix: m.at, m: m}
	e.Ref = (e.First + e.Last) / 2
	e.Offset = e.OffsetAt(e.Ref)
	return e
}

func (a *Aligner) bootResult(i int, bt *boot, gi *Estimate) *Boot {
	b := &Boot{Index: i, First: time.Duration(bt.firstB) * time.Microsecond, Last: time.Duration(bt.lastB) * time.Microsecond,
		FirstReceive: bt.firstR, LastReceive: bt.lastR, Messages: bt.n, ByName: bt.names, BootCount: -1,
		SystemTimeNoUnix: bt.unixZero, SystemTime: bt.systemTimeSeen, Winner: -1, att: bt.att.s}
	tl := a.estimate(SourceTlog, bt.tlog)
	if tl != nil {
		b.Estimates = append(b.Estimates, tl)
	}
	if e := a.estimate(SourceSystemTime, bt.sys); e != nil {
		b.Estimates = append(b.Estimates, e)
	}
	if tl != nil && gi != nil {
		// GPS time via the logging computer's clock: boot → tlog clock →
		// GPS time.
		e := &Estimate{Source: SourceGPSInput, Samples: gi.Samples, Pieces: gi.Pieces, First: tl.First, Last: tl.Last,
			Uncertainty: combine(gi.Uncertainty, tl.Uncertainty), SkewPPM: tl.SkewPPM - gi.SkewPPM,
			unix: func(us int64) stamp.Time { return gi.unix(int64(tl.unix(us) / 1e3)) }}
		e.Ref = tl.Ref
		e.Offset = e.OffsetAt(e.Ref)
		b.Estimates = append(b.Estimates, e)
	}
	return b
}

func combine(a, b time.Duration) time.Duration {
	if a < 0 || b < 0 {
		return -1
	}
	return a + b
}

// gpsEstimate inverts a BIN's GPS track (GPS time → boot time) into a
// boot → Unix estimate.
func (a *Aligner) gpsEstimate(b *binLog) *Estimate {
	m := newMap(cloneTrack(b.gps).finish(), a.cfg.Window/2)
	if m == nil || b.gps.samples < a.cfg.MinSamples {
		return nil
	}
	f, l := m.span() // GPS time, µs
	e := &Estimate{Source: SourceGPS, File: b.name, Samples: b.gps.samples, Pieces: len(m.pieces), Uncertainty: unc(m),
		SkewPPM: -m.skewPPM(),
		First:   time.Duration(m.at(f)), Last: time.Duration(m.at(l)),
		unix: func(us int64) stamp.Time { return stamp.Time(m.inverse(stamp.Time(us*1e3)) * 1e3) }}
	e.Ref = (e.First + e.Last) / 2
	e.Offset = e.OffsetAt(e.Ref)
	return e
}

func (a *Aligner) binResult(res *Result, b *binLog) *BinResult {
	br := &BinResult{File: b.name, Identity: b.ident, Records: b.records, Boot: -1, Belongs: "unknown",
		GPS: a.gpsEstimate(b), GPSWithoutTime: b.gpsNoTime}
	if b.haveTime {
		br.First, br.Last = time.Duration(b.first)*time.Microsecond, time.Duration(b.last)*time.Microsecond
	}
	global := compareIdentity(res.Identity, b.ident)
	contra := func(ev []Evidence) bool {
		return slices.ContainsFunc(ev, func(e Evidence) bool { return e.Verdict < 0 })
	}
	if len(res.Boots) == 0 {
		br.Evidence = global
		if contra(global) {
			br.Belongs = "no"
		}
		return br
	}
	type cand struct {
		i        int
		ev       []Evidence
		sameBoot bool
		overlap  time.Duration
	}
	var cands []cand
	for i, bt := range res.Boots {
		ev := slices.Clone(global)
		switch {
		case bt.BootCount < 0 || b.bootCount < 0:
			ev = append(ev, Evidence{"boot_count", 0, "STAT_BOOTCNT unknown"})
		case bt.BootCount == b.bootCount:
			ev = append(ev, Evidence{"boot_count", 1, fmt.Sprintf("same boot: STAT_BOOTCNT %d", b.bootCount)})
		default:
			ev = append(ev, Evidence{"boot_count", -1, fmt.Sprintf("another boot: STAT_BOOTCNT %d in the BIN, %d in the tlog", b.bootCount, bt.BootCount)})
		}
		ov := min(br.Last, bt.Last) - max(br.First, bt.First)
		switch {
		case !b.haveTime:
			ev = append(ev, Evidence{"boot_time", 0, "the BIN has no boot times"})
		case bt.endsBy > 0 && br.Last > bt.endsBy+2*time.Second:
			ev = append(ev, Evidence{"boot_time", -1, fmt.Sprintf("another boot: the BIN runs to %s of uptime, the tlog shows a reboot by %s",
				fmtSec(br.Last), fmtSec(bt.endsBy))})
		case ov >= 0:
			ev = append(ev, Evidence{"boot_time", 0, fmt.Sprintf("boot times overlap for %s (BIN %s–%s, tlog %s–%s)",
				fmtSec(ov), fmtSec(br.First), fmtSec(br.Last), fmtSec(bt.First), fmtSec(bt.Last))})
		default:
			ev = append(ev, Evidence{"boot_time", 0, fmt.Sprintf("no common boot time (BIN %s–%s, tlog %s–%s)",
				fmtSec(br.First), fmtSec(br.Last), fmtSec(bt.First), fmtSec(bt.Last))})
		}
		if ov > 0 {
			ev = append(ev, compareAttitude(bt.att, b.att.s))
		}
		same := slices.ContainsFunc(ev, func(e Evidence) bool { return e.Verdict > 0 && (e.What == "boot_count" || e.What == "attitude") })
		cands = append(cands, cand{i, ev, same, ov})
	}
	var ok []cand
	for _, c := range cands {
		if !contra(c.ev) {
			ok = append(ok, c)
		}
	}
	best := func(cs []cand) cand {
		return slices.MaxFunc(cs, func(x, y cand) int {
			if x.sameBoot != y.sameBoot {
				if x.sameBoot {
					return 1
				}
				return -1
			}
			return int(x.overlap - y.overlap)
		})
	}
	if len(ok) == 0 {
		// Boot is the closest boot, which a forced merge uses.
		c := best(cands)
		br.Belongs, br.Evidence, br.Boot = "no", c.ev, c.i
		return br
	}
	c := best(ok)
	br.Boot, br.Evidence = c.i, c.ev
	for _, o := range ok {
		if o.i != c.i && o.sameBoot == c.sameBoot {
			br.Also = append(br.Also, o.i)
		}
	}
	identityAgrees := slices.ContainsFunc(c.ev, func(e Evidence) bool { return e.Verdict > 0 })
	if c.sameBoot && len(br.Also) == 0 || identityAgrees && len(res.Boots) == 1 && c.overlap > 0 {
		br.Belongs = "yes"
	}
	if br.GPS != nil {
		res.Boots[c.i].Estimates = append(res.Boots[c.i].Estimates, br.GPS)
	}
	return br
}

func fmtSec(d time.Duration) string { return fmt.Sprintf("%.1fs", d.Seconds()) }

// judge picks the winner of a boot and compares every other estimate
// with it.
func (a *Aligner) judge(b *Boot) {
	b.Winner = -1
	rank := []Source{SourceTlog, SourceSystemTime, SourceGPSInput, SourceGPS}
	if a.cfg.Prefer >= 0 {
		rank = append([]Source{a.cfg.Prefer}, rank...)
	}
	for _, s := range rank {
		if i := slices.IndexFunc(b.Estimates, func(e *Estimate) bool { return e.Source == s }); i >= 0 {
			b.Winner = i
			break
		}
	}
	if b.Winner < 0 {
		return
	}
	w := b.Estimates[b.Winner]
	w.Status, w.Detail = "won", winReason(w, a.cfg.Prefer)
	for i, e := range b.Estimates {
		if i == b.Winner {
			continue
		}
		a.compare(e, w)
	}
}

func winReason(w *Estimate, prefer Source) string {
	if prefer == w.Source {
		return "chosen"
	}
	switch w.Source {
	case SourceTlog:
		return "the tlog's own clock"
	case SourceSystemTime:
		return "no time_boot_ms in the tlog: the autopilot's clock"
	case SourceGPSInput:
		return "GPS time via the logging computer"
	}
	return "GPS time of the BIN"
}

// compare sets e's status against the winner w over their common boot
// time: a source above the tlog's floor would make messages arrive before
// they were sent.
func (a *Aligner) compare(e, w *Estimate) {
	lo, hi := max(e.First, w.First), min(e.Last, w.Last)
	if hi < lo {
		lo, hi = e.Ref, e.Ref
		e.Detail = "no common time; compared at " + fmtSec(e.Ref)
	}
	dmin, dmax, dsum := math.Inf(1), math.Inf(-1), 0.0
	const n = 17
	for k := range n {
		b := lo + (hi-lo)*time.Duration(k)/(n-1)
		d := float64(e.OffsetAt(b) - w.OffsetAt(b))
		dmin, dmax, dsum = math.Min(dmin, d), math.Max(dmax, d), dsum+d
	}
	margin := float64(max(e.Uncertainty, 0) + max(w.Uncertainty, 0) + a.cfg.Tolerance)
	mean := dsum / n
	e.Delta = time.Duration(math.Round(mean))
	sep := ""
	if e.Detail != "" {
		sep = "; "
	}
	switch {
	case w.Source == SourceTlog && dmax > margin:
		e.Status, e.Delta = "inconsistent", time.Duration(math.Round(dmax))
		e.Detail += sep + fmt.Sprintf("tlog messages would arrive up to %s before they were sent", fmtDur(time.Duration(dmax)))
	case w.Source == SourceTlog && dmin < -margin:
		e.Status = "disagrees"
		e.Detail += sep + fmt.Sprintf("%s behind the tlog's clock (a clock set apart, or messages never faster than that)", fmtDur(time.Duration(-mean)))
	case dmax > margin || dmin < -margin:
		e.Status = "disagrees"
		e.Detail += sep + fmt.Sprintf("%+s from the winner", fmtDur(time.Duration(mean)))
	default:
		e.Status = "agrees"
		e.Detail += sep + fmt.Sprintf("within %s of the winner", fmtDur(time.Duration(math.Max(math.Abs(dmin), math.Abs(dmax)))))
	}
}

// fmtDur formats a duration with 3 significant digits or so.
func fmtDur(d time.Duration) string {
	switch a := absDur(stamp.Time(d)); {
	case a >= time.Hour:
		return d.Round(time.Second).String()
	case a >= time.Second:
		return d.Round(time.Millisecond).String()
	case a >= time.Millisecond:
		return d.Round(10 * time.Microsecond).String()
	}
	return d.Round(time.Microsecond).String()
}

// Err says why no boot and no BIN can be placed on a Unix clock, or nil.
func (r *Result) Err() error {
	for _, b := range r.Boots {
		if b.Winner >= 0 {
			return nil
		}
	}
	for _, b := range r.Bins {
		if b.GPS != nil {
			return nil
		}
	}
	var why []string
	switch {
	case len(r.Components) == 0:
		why = append(why, "the tlog has no message with time_boot_ms")
	case r.SysID == 0:
		why = append(why, "no component of the tlog matches the chosen system and component id")
	default:
		n := 0
		for _, b := range r.Boots {
			n += b.Messages
		}
		why = append(why, fmt.Sprintf("the autopilot (%d/%d) sent %d time_boot_ms messages, too few to fit", r.SysID, r.CompID, n))
		st, zero := 0, 0
		for _, b := range r.Boots {
			st += b.SystemTime
			zero += b.SystemTimeNoUnix
		}
		if st == 0 {
			why = append(why, "no SYSTEM_TIME")
		} else if zero == st {
			why = append(why, "SYSTEM_TIME never has time_unix_usec (the autopilot's clock was never set)")
		}
	}
	if r.GPSInputMessages > 0 && r.GPSInput == nil {
		why = append(why, "GPS_INPUT has no GPS time (time_week 0)")
	}
	for _, b := range r.Bins {
		switch {
		case b.GPSWithoutTime > 0:
			why = append(why, b.File+": GPS records without GPS time (no fix)")
		default:
			why = append(why, b.File+": no GPS records")
		}
	}
	return fmt.Errorf("%w: %s", ErrNoAlignment, strings.Join(why, "; "))
}

// BinEstimate returns the estimate that places BIN i on a Unix clock: the
// winner of its boot, or src there when src ≥ 0; without a boot its own GPS
// estimate. nil if none.
func (r *Result) BinEstimate(i int, src Source) *Estimate {
	b := r.Bins[i]
	if b.Boot < 0 {
		if src >= 0 && src != SourceGPS {
			return nil
		}
		return b.GPS
	}
	bt := r.Boots[b.Boot]
	if src >= 0 {
		for _, e := range bt.Estimates {
			if e.Source == src && (src != SourceGPS || e.File == b.File) {
				return e
			}
		}
		return nil
	}
	return bt.WinnerEstimate()
}

// BootOfReceive returns the boot whose tlog stamps are nearest r.
func (r *Result) BootOfReceive(t stamp.Time) *Boot {
	var best *Boot
	var bestD time.Duration
	for _, b := range r.Boots {
		d := time.Duration(0)
		if t < b.FirstReceive {
			d = time.Duration(b.FirstReceive - t)
		} else if t > b.LastReceive {
			d = time.Duration(t - b.LastReceive)
		}
		if best == nil || d < bestD {
			best, bestD = b, d
		}
	}
	return best
}

// ReceiveToBoot maps a tlog stamp to the boot's time through its tlog
// estimate (false without one).
func (b *Boot) ReceiveToBoot(t stamp.Time) (time.Duration, bool) {
	e := b.Find(SourceTlog)
	if e == nil {
		return 0, false
	}
	// Invert by two Newton steps on the (nearly unit-slope) map.
	x := time.Duration(t) - e.OffsetAt(b.First)
	for range 3 {
		x -= time.Duration(e.Unix(x) - t)
	}
	return x, true
}
