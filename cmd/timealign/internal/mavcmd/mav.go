// Package mavcmd holds the mav command: align and merge ArduPilot's logs
// (a tlog and dataflash BIN logs, pkg/mav) on one clock.
package mavcmd

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/timealign/timealign/cmd/timealign/internal/cli"
	"github.com/timealign/timealign/pkg/mav"
	"github.com/timealign/timealign/pkg/stamp"
)

const mavDoc = `
ArduPilot logs: a telemetry log (.tlog: MAVLink messages stamped by the
computer that received them) and the autopilot's dataflash logs (.BIN:
records stamped with TimeUS, microseconds since the autopilot booted) are
on different clocks. mav finds the offset between them from every source
the logs hold and puts them on one clock.

Subcommands:
  align TLOG [BIN...]          print every source's offset from the boot clock
                               to Unix time, side by side, and whether each BIN
                               belongs to the tlog (--json for scripts)
  merge TLOG BIN... --out F    write one time-ordered stream on the Unix clock:
                               MCAP (JSON messages and schemas, opens in
                               Foxglove) or CSV; --report F.html adds a timing
                               report

Run 'timealign mav <subcommand> --help' for its flags and exit statuses.

Exit status: 0 success, 1 bad data or I/O failure, 2 bad command line,
130 interrupted.`

// Command returns the mav command and its subcommands.
func Command() *cli.Command {
	f := &cli.Family{Name: "mav", Usage: "align|merge [flags] TLOG [BIN...]", Doc: mavDoc, Commands: []*cli.Command{
		{Name: "align", Short: "every source's offset from the boot clock to Unix time", Run: runMavAlign},
		{Name: "merge", Short: "one time-ordered stream on the Unix clock, MCAP or CSV", Run: runMavMerge},
	}}
	return f.Command("ArduPilot logs: align a tlog with dataflash BIN logs, merge them (pkg/mav)")
}

// noTimeFailure is what else exits 1 in the mav commands.
const noTimeFailure = ", or logs with no source of time"

const mavAlignDoc = `
Finds the offset between the autopilot's boot clock and Unix time, for
each boot of the autopilot in the tlog, from every source the logs hold:

  tlog         the tlog's receive stamps against the time_boot_ms of the
               autopilot's messages (ATTITUDE, SYSTEM_TIME, ...): pkg/pll's
               offset mode, the line under (receive − boot) over a sliding
               window, so the logging computer's clock drift is followed and
               late messages cannot pull it; steps of that clock start a new
               piece, reboots (time_boot_ms going back) a new boot
  system_time  SYSTEM_TIME's time_unix_usec against its time_boot_ms: the
               autopilot's own Unix clock (set from a GPS or a ground station)
  gps_input    GPS time in GPS_INPUT messages against the tlog's stamps,
               through the tlog's offset
  gps          GPS time (GWk, GMS) of each BIN's GPS records against TimeUS

The winner (tlog when present: it is the clock of the tlog) maps the boot
to Unix time; every other source is compared with it and reported as
agrees, disagrees (its clock is set apart) or inconsistent (the tlog's
messages would arrive before they were sent). Offsets are Unix time minus
boot time (the Unix time at which the autopilot booted, for a clock
without skew), in µs in --json; ± is the uncertainty: how far above the
true floor the fitted one typically lies.

Each BIN is matched to a boot of the tlog by what the logs say about
themselves: firmware and board (banner lines, AUTOPILOT_VERSION),
SYSID_THISMAV, STAT_BOOTCNT, boot times, and the attitude at equal boot
times; one that contradicts them does not belong (merge refuses it).

Exit status 1 when no source can place the logs on a Unix clock (the
message says why).`

// mavFlags are the alignment flags shared by align and merge.
type mavFlags struct {
	cfg       mav.Config
	source    string
	ignoreCRC bool
}

func (m *mavFlags) add(fs *flag.FlagSet) {
	m.cfg = mav.DefaultConfig()
	fs.IntVar(&m.cfg.SystemID, "sysid", 0, "system id of the autopilot in the tlog (default: the one whose HEARTBEAT says autopilot)")
	fs.IntVar(&m.cfg.ComponentID, "compid", 0, "component id of the autopilot (default: found from the log)")
	fs.StringVar(&m.source, "source", "", "source that wins where it has an answer: tlog, system_time, gps_input or gps (default: in that order)")
	fs.IntVar(&m.cfg.Window, "window-samples", m.cfg.Window, "samples each estimate fits at a time")
	fs.DurationVar(&m.cfg.MaxLatency, "max-latency", m.cfg.MaxLatency, "largest delay of a consistent message; a run of later ones is a clock step")
	fs.Float64Var(&m.cfg.MaxSkewPPM, "max-skew-ppm", m.cfg.MaxSkewPPM, "largest rate difference between two clocks, ppm")
	fs.DurationVar(&m.cfg.Tolerance, "tolerance", m.cfg.Tolerance, "added to the uncertainties before two sources disagree")
	fs.BoolVar(&m.ignoreCRC, "ignore-crc", false, "decode tlog frames with a wrong checksum when the next record is sound (pymavlink's MAV_IGNORE_CRC)")
}

// config validates the flags into a mav.Config.
func (m *mavFlags) config(fs *flag.FlagSet) (mav.Config, error) {
	if m.source != "" {
		s, err := mav.ParseSource(m.source)
		if err != nil {
			return m.cfg, cli.Usagef("--source: %s is not a source (want tlog, system_time, gps_input or gps)", cli.Cut(m.source))
		}
		m.cfg.Prefer = s
	}
	if err := m.cfg.Validate(); err != nil {
		return m.cfg, cli.ConfigError(fs, err, map[string]string{"SystemID": "sysid", "ComponentID": "compid", "Prefer": "source", "Window": "window-samples"})
	}
	return m.cfg, nil
}

func runMavAlign(e *cli.Env, args []string) error {
	fs := cli.NewFlagsExit(e, "mav align", "[flags] TLOG [BIN...]", mavAlignDoc, noTimeFailure)
	var mf mavFlags
	mf.add(fs)
	asJSON := fs.Bool("json", false, "write the result as JSON (offsets in integer µs) instead of text")
	out := fs.String("out", "", "output file (default standard output)")
	report := fs.String("report", "", "write an HTML timing report to this file")
	quiet := fs.Bool("quiet", false, cli.QuietUsage)
	cli.Deprecate(e, fs, "window", "window-samples")
	if err := cli.ParseFlags(e, fs, args); err != nil {
		return err
	}
	cfg, err := mf.config(fs)
	if err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return cli.Usagef("mav align needs a tlog (and optionally BIN files)")
	}
	f, err := cli.OpenInputs(e, fs.Args(), cli.Out("--out", *out), cli.Out("--report", *report))
	if err != nil {
		return err
	}
	defer f.Abort()
	e.NoProgress = e.NoProgress || *quiet
	pr := logProgress(e, f, "aligning")
	run, err := alignLogs(e, f, cfg, mf.ignoreCRC, pr)
	if err != nil {
		pr.Finish()
		return err
	}
	if f.Asked(1) {
		if err := writeMavReport(f, run, nil, pr); err != nil {
			pr.Finish()
			return err
		}
	}
	pr.Finish()
	if err := run.res.Err(); err != nil {
		return err
	}
	if *asJSON {
		err = cli.WriteJSON(f.Out(0), alignJSON(run))
	} else {
		err = writeAlignText(f.Out(0), run)
	}
	if err != nil {
		return err
	}
	if err := f.Commit(); err != nil {
		return err
	}
	if !*quiet {
		run.summary(e, "mav align")
	}
	return nil
}

// logProgress is the progress bar of a command that reads its logs twice.
func logProgress(e *cli.Env, f *cli.Files, what string) *cli.Progress {
	var total int64
	var names []string
	for _, in := range f.Inputs() {
		total += 2 * in.Size
		names = append(names, in.Name)
	}
	return cli.NewProgress(e, what+" "+logsLabel(names), total)
}

// logsLabel names a command's logs (the tlog, then the BINs) for its
// progress bar: the tlog and the BIN, or the number of BINs.
func logsLabel(names []string) string {
	s := filepath.Base(names[0])
	switch n := len(names) - 1; n {
	case 0:
		return s
	case 1:
		return s + " + " + filepath.Base(names[1])
	default:
		return fmt.Sprintf("%s + %d BINs", s, n)
	}
}

// mavRun is the first pass over the logs: the alignment and what the
// readers skipped.
type mavRun struct {
	cfg       mav.Config
	ignoreCRC bool
	res       *mav.Result
	tlog      string
	tlogSt    mav.TlogStats
	bins      []string
	binSt     []mav.BinStats
	binNoFMT  []bool
}

// alignLogs reads the tlog (input 0) and each BIN (inputs 1..) once.
func alignLogs(e *cli.Env, f *cli.Files, cfg mav.Config, ignoreCRC bool, pr *cli.Progress) (*mavRun, error) {
	a, err := mav.NewAligner(cfg)
	if err != nil {
		return nil, err
	}
	run := &mavRun{cfg: cfg, ignoreCRC: ignoreCRC, tlog: f.Inputs()[0].Name}
	in, err := f.Input(0)
	if err != nil {
		return nil, err
	}
	// The BINs are read in a goroutine beside the tlog (ReadBin touches
	// only its BIN's part of the Aligner): the first pass takes as long
	// as the longer of the two instead of their sum.
	ctx, cancel := context.WithCancel(e.Ctx)
	defer cancel()
	bins := readBins(ctx, f, a, pr)
	terr := run.readTlog(a, pr.Reader(in))
	if terr != nil {
		cancel() // the BINs' reading stops at its next read
	}
	reads := <-bins
	if terr != nil {
		return nil, terr
	}
	for i, r := range reads {
		name := f.Inputs()[i+1].Name
		if r.err != nil {
			return nil, r.err
		}
		run.bins = append(run.bins, name)
		run.binSt = append(run.binSt, r.st)
		run.binNoFMT = append(run.binNoFMT, r.noFMT)
		if r.st.Records == 0 {
			why := "no dataflash records"
			if r.noFMT {
				why = "no FMT records (not a dataflash log, or its start is missing)"
			}
			return nil, fmt.Errorf("%s: %s in %d bytes", name, why, r.st.Bytes)
		}
	}
	run.res = a.Result()
	return run, nil
}

// readTlog feeds every message of the tlog to a and keeps its reader's
// counts.
func (run *mavRun) readTlog(a *mav.Aligner, in io.Reader) error {
	tr := mav.NewTlogReader(in)
	tr.IgnoreCRC = run.ignoreCRC
	for {
		m, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("%s: offset %d: %w", run.tlog, tr.Stats().Bytes, err)
		}
		a.AddTlog(m)
	}
	run.tlogSt = tr.Stats()
	if run.tlogSt.Messages == 0 {
		return fmt.Errorf("%s: no MAVLink messages in %d bytes: not a telemetry log (.tlog)%s", run.tlog, run.tlogSt.Bytes, tlogHint(run.tlog))
	}
	return nil
}

// binRead is what reading a BIN into the Aligner found.
type binRead struct {
	st    mav.BinStats
	noFMT bool
	err   error
}

// readBins feeds the BINs (inputs 1..) to a, one after the other, in a
// goroutine that ends with ctx; what each read found comes on the channel
// returned once all are read (or one failed: its err is set, the rest are
// not read).
func readBins(ctx context.Context, f *cli.Files, a *mav.Aligner, pr *cli.Progress) <-chan []binRead {
	nb := len(f.Inputs()) - 1
	ks := make([]int, nb)
	for i := range nb {
		ks[i] = a.AddBinFile(filepath.Base(f.Inputs()[i+1].Name))
	}
	done := make(chan []binRead, 1)
	go func() {
		reads := make([]binRead, nb)
		defer func() { done <- reads }()
		for i := range nb {
			r := &reads[i]
			bin, err := f.Input(i + 1)
			if err != nil {
				r.err = err
				return
			}
			br := mav.NewBinReader(pr.Reader(cli.ContextReader(ctx, bin)))
			switch err := a.ReadBin(ks[i], br); {
			case errors.Is(err, io.EOF):
			case errors.Is(err, mav.ErrNoFormats):
				r.noFMT = true
			default:
				r.err = fmt.Errorf("%s: offset %d: %w", f.Inputs()[i+1].Name, br.Stats().Bytes, err)
				return
			}
			r.st = br.Stats()
		}
	}()
	return done
}

// tlogHint suggests the right order when a BIN is given as the tlog.
func tlogHint(name string) string {
	if strings.EqualFold(filepath.Ext(name), ".bin") {
		return " (the tlog comes first: mav align TLOG BIN)"
	}
	return ""
}

// summary tells on stderr what the readers skipped.
func (r *mavRun) summary(e *cli.Env, cmd string) {
	t := r.tlogSt
	var parts []string
	switch {
	case t.BadCRC > 0 && t.KeptBadCRC > 0:
		parts = append(parts, fmt.Sprintf("%d frames with a bad checksum (%s), %d of them decoded anyway (--ignore-crc)", t.BadCRC, idNames(t.BadCRCIDs), t.KeptBadCRC))
	case t.BadCRC > 0:
		parts = append(parts, fmt.Sprintf("%d frames with a bad checksum skipped (%s; --ignore-crc decodes them)", t.BadCRC, idNames(t.BadCRCIDs)))
	}
	if t.Unknown > 0 {
		parts = append(parts, fmt.Sprintf("%d frames of unknown message ids (%s)", t.Unknown, idList(t.UnknownIDs)))
	}
	if t.BadLength > 0 {
		parts = append(parts, fmt.Sprintf("%d frames whose payload does not fit the message", t.BadLength))
	}
	if t.SkippedBytes > 0 {
		parts = append(parts, fmt.Sprintf("%d bytes of no frame skipped at %d places", t.SkippedBytes, max(t.Resyncs, 1)))
	}
	if t.Truncated > 0 {
		parts = append(parts, "the last record is truncated")
	}
	if len(parts) > 0 {
		fmt.Fprintf(e.Stderr, "timealign %s: %s: %d messages read; %s\n", cmd, r.tlog, t.Messages, strings.Join(parts, "; "))
	}
	for i, b := range r.binSt {
		var parts []string
		if b.UnknownType > 0 {
			parts = append(parts, fmt.Sprintf("%d headers of types no FMT declares", b.UnknownType))
		}
		if b.BadFormat > 0 {
			parts = append(parts, fmt.Sprintf("%d records of types with a bad FMT (%s)", b.BadFormat, strings.Join(slices.Sorted(maps.Keys(b.BadFormats)), ", ")))
		}
		if b.SkippedBytes > 0 {
			parts = append(parts, fmt.Sprintf("%d bytes of no record skipped at %d places", b.SkippedBytes, max(b.Resyncs, 1)))
		}
		if b.Truncated > 0 {
			parts = append(parts, "the last record is truncated")
		}
		if b.BadTime > 0 {
			parts = append(parts, fmt.Sprintf("%d records whose boot time is damaged (more than %v from the records around them) skipped", b.BadTime, mav.MaxTimeStep))
		}
		if len(parts) > 0 {
			fmt.Fprintf(e.Stderr, "timealign %s: %s: %d records read; %s\n", cmd, r.bins[i], b.Records, strings.Join(parts, "; "))
		}
	}
	if r.res.Strays > 0 {
		fmt.Fprintf(e.Stderr, "timealign %s: %s: %d time_boot_ms messages went back in time (not a reboot) and were left out\n", cmd, r.tlog, r.res.Strays)
	}
}

func idNames(m map[uint32]int) string {
	var s []string
	for _, id := range slices.Sorted(maps.Keys(m)) {
		n := mav.MessageName(id)
		if n == "" {
			n = fmt.Sprint(id)
		}
		s = append(s, fmt.Sprintf("%s ×%d", n, m[id]))
	}
	return limitList(s)
}

func idList(m map[uint32]int) string {
	var s []string
	for _, id := range slices.Sorted(maps.Keys(m)) {
		s = append(s, fmt.Sprintf("%d ×%d", id, m[id]))
	}
	return limitList(s)
}

func limitList(s []string) string {
	if len(s) > 6 {
		return strings.Join(s[:6], ", ") + fmt.Sprintf(", and %d more", len(s)-6)
	}
	return strings.Join(s, ", ")
}

func writeAlignText(w io.Writer, run *mavRun) error {
	r := run.res
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d messages", run.tlog, run.tlogSt.Messages)
	if r.SysID != 0 {
		fmt.Fprintf(&b, "; autopilot %d/%d", r.SysID, r.CompID)
		if fw := r.Identity.Firmware(); fw != "" {
			fmt.Fprintf(&b, " %s", fw)
		}
		fmt.Fprintf(&b, ", %d boot", len(r.Boots))
		if len(r.Boots) != 1 {
			b.WriteString("s")
		}
	}
	b.WriteString("\n")
	for _, bt := range r.Boots {
		fmt.Fprintf(&b, "\nboot %d: uptime %s – %s, %d messages with time_boot_ms\n  received %s – %s UTC (the tlog's stamps)\n",
			bt.Index+1, secs(bt.First), secs(bt.Last), bt.Messages, cli.UTCMicros(bt.FirstReceive)[:23], cli.UTCMicros(bt.LastReceive)[11:23])
		tb := cli.NewTable("source", "offset (Unix time at boot 0)", "±", "skew ppm", "samples", "status")
		for _, e := range bt.Estimates {
			name := e.Source.String()
			if e.File != "" {
				name += " " + e.File
			}
			status := e.Status
			if e.Status != "won" {
				status += fmt.Sprintf(" %+s", cli.ShortDuration(e.Delta))
			}
			tb.Row(name, cli.UTCMicros(stamp.Time(e.OffsetAt(0))), cli.Uncertainty(e.Uncertainty), fmt.Sprintf("%+.1f", e.SkewPPM), fmt.Sprint(e.Samples), status)
		}
		if len(bt.Estimates) > 0 {
			tb.Write(&b)
			for _, e := range bt.Estimates {
				detail := ""
				if e.Status != "won" {
					detail = e.Detail
				}
				if e.Pieces > 1 {
					if detail != "" {
						detail += "; "
					}
					detail += fmt.Sprintf("its clock stepped or the fit restarted %d times", e.Pieces-1)
				}
				if detail != "" {
					fmt.Fprintf(&b, "  %s: %s\n", e.Source, detail)
				}
			}
		}
		if bt.SystemTime > 0 && bt.SystemTimeNoUnix == bt.SystemTime {
			fmt.Fprintf(&b, "  system_time: none (%d SYSTEM_TIME without time_unix_usec: the autopilot's clock was never set)\n", bt.SystemTime)
		}
	}
	if g := r.GPSInput; g != nil {
		fmt.Fprintf(&b, "\nGPS_INPUT: the logging computer's clock is %s ahead of GPS time (± %s, %d samples)\n",
			cli.ShortDuration(g.OffsetAt(g.Ref)), cli.Uncertainty(g.Uncertainty), g.Samples)
	}
	for i, br := range r.Bins {
		fmt.Fprintf(&b, "\n%s: uptime %s – %s, %d records", run.bins[i], secs(br.First), secs(br.Last), br.Records)
		switch {
		case br.Belongs == "no":
			b.WriteString(": does NOT belong to this tlog\n")
		case br.Boot >= 0 && br.Belongs == "yes":
			fmt.Fprintf(&b, ": boot %d\n", br.Boot+1)
		case br.Boot >= 0:
			fmt.Fprintf(&b, ": probably boot %d (not confirmed)\n", br.Boot+1)
		default:
			b.WriteString(": no boot of the tlog to match\n")
		}
		for _, ev := range br.Evidence {
			mark := map[int]string{1: "+", 0: "?", -1: "✗"}[ev.Verdict]
			fmt.Fprintf(&b, "  %s %s\n", mark, ev.Detail)
		}
		if len(br.Also) > 0 {
			var also []string
			for _, k := range br.Also {
				also = append(also, fmt.Sprint(k+1))
			}
			fmt.Fprintf(&b, "  ? could also be boot %s\n", strings.Join(also, ", "))
		}
		if br.GPS == nil && br.GPSWithoutTime > 0 {
			fmt.Fprintf(&b, "  ? %d GPS records without GPS time\n", br.GPSWithoutTime)
		}
		if br.Boot < 0 && br.GPS != nil {
			fmt.Fprintf(&b, "  gps: offset %s ± %s, skew %+.1f ppm, %d samples\n", cli.UTCMicros(stamp.Time(br.GPS.OffsetAt(0))),
				cli.Uncertainty(br.GPS.Uncertainty), br.GPS.SkewPPM, br.GPS.Samples)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func secs(d time.Duration) string { return fmt.Sprintf("%.1fs", d.Seconds()) }

// JSON of the alignment: offsets and boot times in integer µs.

type estimateJSON struct {
	Source        string  `json:"source"`
	File          string  `json:"file,omitempty"`
	OffsetUS      int64   `json:"offset_us"`
	RefBootUS     int64   `json:"ref_boot_us"`
	UncertaintyUS *int64  `json:"uncertainty_us"`
	SkewPPM       float64 `json:"skew_ppm"`
	Samples       int     `json:"samples"`
	Pieces        int     `json:"pieces"`
	FirstBootUS   int64   `json:"first_boot_us"`
	LastBootUS    int64   `json:"last_boot_us"`
	Status        string  `json:"status,omitempty"`
	DeltaUS       int64   `json:"delta_us"`
	Detail        string  `json:"detail,omitempty"`
}

func estJSON(e *mav.Estimate) estimateJSON {
	j := estimateJSON{Source: e.Source.String(), File: e.File, OffsetUS: e.Offset.Microseconds(), RefBootUS: e.Ref.Microseconds(),
		SkewPPM: e.SkewPPM, Samples: e.Samples, Pieces: e.Pieces, FirstBootUS: e.First.Microseconds(),
		LastBootUS: e.Last.Microseconds(), Status: e.Status, DeltaUS: e.Delta.Microseconds(), Detail: e.Detail}
	if e.Uncertainty >= 0 {
		u := e.Uncertainty.Microseconds()
		j.UncertaintyUS = &u
	}
	return j
}

func alignJSON(run *mavRun) map[string]any {
	r := run.res
	var boots []map[string]any
	for _, bt := range r.Boots {
		var ests []estimateJSON
		for _, e := range bt.Estimates {
			ests = append(ests, estJSON(e))
		}
		winner := ""
		if w := bt.WinnerEstimate(); w != nil {
			winner = w.Source.String()
		}
		names := map[string]int{}
		maps.Copy(names, bt.ByName)
		boots = append(boots, map[string]any{"boot": bt.Index + 1, "first_boot_us": bt.First.Microseconds(),
			"last_boot_us": bt.Last.Microseconds(), "first_receive_us": int64(bt.FirstReceive) / 1000,
			"last_receive_us": int64(bt.LastReceive) / 1000, "messages": bt.Messages, "by_name": names,
			"boot_count": nullIf(bt.BootCount, -1), "winner": winner, "sources": ests})
	}
	var bins []map[string]any
	for i, br := range r.Bins {
		var boot any
		if br.Boot >= 0 {
			boot = br.Boot + 1
		}
		m := map[string]any{"file": run.bins[i], "boot": boot, "belongs": br.Belongs, "evidence": br.Evidence,
			"identity": br.Identity, "firmware": br.Identity.Firmware(), "first_boot_us": br.First.Microseconds(),
			"last_boot_us": br.Last.Microseconds(), "records": br.Records, "read": run.binSt[i]}
		if br.GPS != nil {
			m["gps"] = estJSON(br.GPS)
		}
		bins = append(bins, m)
	}
	var comps []map[string]any
	for _, c := range r.Components {
		comps = append(comps, map[string]any{"sysid": c.SysID, "compid": c.CompID, "autopilot": c.Autopilot,
			"time_boot_messages": c.TimeBoot, "boots": c.Boots})
	}
	out := map[string]any{
		"tlog":       map[string]any{"file": run.tlog, "read": run.tlogSt},
		"autopilot":  map[string]any{"sysid": r.SysID, "compid": r.CompID, "identity": r.Identity, "firmware": r.Identity.Firmware()},
		"components": comps, "boots": boots, "bins": bins,
	}
	if r.GPSInput != nil {
		g := estJSON(r.GPSInput)
		g.Detail = "the logging computer's clock minus GPS time (offset_us at ref_boot_us, which here is a GPS time)"
		out["gps_input"] = g
	}
	return out
}

func nullIf(v, null int) any {
	if v == null {
		return nil
	}
	return v
}

// sortedNames returns the message names of a count map, most first.
func sortedNames(m map[string]int) []string {
	names := slices.Collect(maps.Keys(m))
	sort.Slice(names, func(i, j int) bool {
		if m[names[i]] != m[names[j]] {
			return m[names[i]] > m[names[j]]
		}
		return names[i] < names[j]
	})
	return names
}
