// Package simulate holds the simulate command: sensor streams from
// pkg/sim with their ground truth, as the CSV of the stream commands or as
// a rosbag2 bag of standard sensor topics.
package simulate

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/timealign/timealign/cmd/timealign/internal/cli"
	"github.com/timealign/timealign/pkg/bag"
	"github.com/timealign/timealign/pkg/csvio"
	"github.com/timealign/timealign/pkg/sim"
)

// Command returns the simulate command.
func Command() *cli.Command {
	return &cli.Command{Name: "simulate", Short: "write simulated sensor streams with ground truth as CSV or a bag (pkg/sim)", Run: runSimulate}
}

const simulateDoc = `
Writes simulated sensor streams as CSV in the public formats of the other
commands, plus a ground-truth file, so you can make test data with known
answers. Start from a preset and change any part of it with flags.

Formats (--format):
  estimate  event,stamp_ns,index        input of 'timealign estimate' (stamp = receive time)
  pll       receive_ns,ticks[,scan_ticks]  input of 'timealign pll' (scan_ticks with --send-delay)
  sync      topic,stamp_ns,arrival_ns   input of 'timealign sync', several --streams in arrival order
                                        (arrival_ns: the host clock when the message arrived)
  align     event,stream,stamp_ns       input of 'timealign align', a push and a drain per sample
  samples   every field of every sample, lost ones included

Truth (--truth FILE): for estimate and pll, one row truth_ns per sample row
(the true acquisition time); for sync and align, topic,seq,true_ns,receive_ns
per message; for --bag, topic,seq,true_ns,header_ns,log_ns per message.

Bags (--bag DIR): a rosbag2 bag (directory with metadata.yaml; DIR ending in
.mcap or .db3: one storage file) of the --streams as standard sensor topics:
  imu        /imu/data_raw      sensor_msgs/msg/Imu        header.stamp = receive time
  camera     /camera/image_raw  sensor_msgs/msg/Image      header.stamp = receive time (--image-size, mono8)
  lidar      /scan              sensor_msgs/msg/LaserScan  header.stamp = device clock
  autopilot  /autopilot/imu     sensor_msgs/msg/Imu        header.stamp = device clock (boot)
  bursty     /bursty/imu        sensor_msgs/msg/Imu        header.stamp = receive time
The log time is the recorder's host clock: the receive time plus
--recorder-delay (and an exponential jitter of half of it). --storage mcap
or sqlite3, --compression (MCAP chunks), --max-bag-size splits the bag.

Presets (--preset, or --streams for sync and align):
`

// simulateFormatFlags lists the flags that only some formats use ("bag"
// is --bag DIR).
var simulateFormatFlags = map[string][]string{
	"preset":          {"estimate", "pll", "samples"},
	"streams":         {"sync", "align", "bag"},
	"out":             {"estimate", "pll", "samples", "sync", "align"},
	"storage":         {"bag"},
	"compression":     {"bag"},
	"max-bag-size":    {"bag"},
	"image-size":      {"bag"},
	"recorder-delay":  {"bag"},
	"overwrite":       {"bag"},
	"stamp":           {"sync", "align"},
	"index":           {"estimate"},
	"announce-loss":   {"estimate"},
	"reference-every": {"estimate"},
}

// simulateFlagNames names the flags of sim.Config's fields in messages.
var simulateFlagNames = map[string]string{
	"Latency.Base": "latency", "Latency.Kind": "jitter", "Latency.Scale": "jitter-scale", "Latency.Shape": "jitter-shape",
	"Latency.OutlierProb": "outlier-prob", "Latency.OutlierMax": "outlier-max", "Clock.SkewPPM": "skew-ppm",
	"Clock.DriftPPMPerHour": "drift-ppm-per-hour", "Clock.Offset": "device-offset", "Clock.TickPeriod": "tick-period",
	"Clock.TickBits": "tick-bits", "Clock.SendDelay": "send-delay", "Clock.Reboots": "reboots", "Loss.Prob": "loss",
	"Loss.BurstProb": "burst-prob", "Loss.BurstLen": "burst-len", "Batch.Prob": "batch-prob", "Batch.Size": "batch-size",
	"HostSteps.At": "host-step", "HostSteps": "host-step",
}

// simFlags are the flags of simulate.
type simFlags struct {
	format, preset, streams, out, truth, stamp string
	index, announce                            bool
	refEvery                                   int
	bag, storage, compression, imageSize       string
	maxSize                                    int64
	recDelay                                   time.Duration
	overwrite, quiet                           bool
	// c holds the sim.Config fields the flags set, which replace the
	// preset's (set names them).
	c      sim.Config
	steps  stepList
	boots  cli.DurationList
	jitter string
	set    map[string]bool
}

func (f *simFlags) define(fs *flag.FlagSet) {
	fs.StringVar(&f.format, "format", "estimate", "output format: estimate, pll, sync, align or samples")
	fs.StringVar(&f.preset, "preset", "imu", "sensor timing to start from")
	fs.StringVar(&f.streams, "streams", "imu,camera,lidar", "comma-separated presets of the streams, for sync and align")
	fs.StringVar(&f.out, "out", "", "output file (default standard output)")
	fs.StringVar(&f.truth, "truth", "", "write the ground truth to this file")
	fs.StringVar(&f.stamp, "stamp", "true", "for sync and align: the header stamp is the 'true' acquisition time or the 'receive' time")
	fs.BoolVar(&f.index, "index", false, "for estimate: fill the index column with the sensor's counter")
	fs.BoolVar(&f.announce, "announce-loss", false, "for estimate: write a loss row for each lost sample")
	fs.IntVar(&f.refEvery, "reference-every", 0, "for estimate: write a reference row (true time) before every N-th sample; 0 for none")
	fs.StringVar(&f.bag, "bag", "", "write a rosbag2 bag of the --streams to this directory (or .mcap/.db3 file) instead of CSV")
	fs.StringVar(&f.storage, "storage", "mcap", "for --bag: storage format, mcap or sqlite3")
	fs.StringVar(&f.compression, "compression", "none", "for --bag: MCAP chunk compression, zstd, lz4 or none")
	fs.Int64Var(&f.maxSize, "max-bag-size", 0, "for --bag: split the bag into files of about this many bytes (0: one file)")
	fs.StringVar(&f.imageSize, "image-size", "64x48", "for --bag: camera image size WIDTHxHEIGHT (mono8)")
	fs.DurationVar(&f.recDelay, "recorder-delay", 200*time.Microsecond, "for --bag: the recorder's delay after the receive time")
	fs.BoolVar(&f.overwrite, "overwrite", false, "for --bag: replace an existing bag")
	fs.BoolVar(&f.quiet, "quiet", false, cli.QuietUsage)
	c := &f.c
	fs.Uint64Var(&c.Seed, "seed", 0, "random seed (default: the preset's)")
	fs.IntVar(&c.Count, "count", 0, "samples to acquire per stream, lost ones included (default: the preset's; with --bag, --duration's)")
	fs.DurationVar(&c.Duration, "duration", 0, "run length in true time, instead of --count (any length: streamed in bounded memory; default with --bag: 20s of every stream)")
	fs.DurationVar(&c.Period, "period", 0, "sampling period in device time")
	fs.DurationVar(&c.Latency.Base, "latency", 0, "constant part of the delivery latency")
	fs.StringVar(&f.jitter, "jitter", "", "jitter distribution: none, uniform, exponential or pareto")
	fs.DurationVar(&c.Latency.Scale, "jitter-scale", 0, "jitter width (uniform), mean (exponential) or scale (pareto)")
	fs.Float64Var(&c.Latency.Shape, "jitter-shape", 0, "Pareto tail index (default 1.5)")
	fs.Float64Var(&c.Latency.OutlierProb, "outlier-prob", 0, "probability of a large extra delay")
	fs.DurationVar(&c.Latency.OutlierMax, "outlier-max", 0, "largest extra delay of an outlier")
	fs.BoolVar(&c.Latency.Reorder, "reorder", false, "let samples overtake each other (default: in-order transport)")
	fs.Float64Var(&c.Clock.SkewPPM, "skew-ppm", 0, "device clock rate error in ppm (positive: fast)")
	fs.Float64Var(&c.Clock.DriftPPMPerHour, "drift-ppm-per-hour", 0, "change of the skew per hour")
	fs.DurationVar(&c.Clock.Offset, "device-offset", 0, "device clock reading at the first sample")
	fs.DurationVar(&c.Clock.TickPeriod, "tick-period", 0, "duration of one device tick")
	fs.IntVar(&c.Clock.TickBits, "tick-bits", 0, "width of the tick counter (wraps at 2^bits)")
	fs.DurationVar(&c.Clock.SendDelay, "send-delay", 0, "device time from acquisition to the tick stamp it sends")
	fs.Var(&f.boots, "reboots", "comma-separated times after the start at which the device reboots")
	fs.Float64Var(&c.Loss.Prob, "loss", 0, "probability that a sample is lost")
	fs.Float64Var(&c.Loss.BurstProb, "burst-prob", 0, "probability that a burst of losses starts")
	fs.Float64Var(&c.Loss.BurstLen, "burst-len", 0, "mean length of a burst of losses, in samples")
	fs.Float64Var(&c.Batch.Prob, "batch-prob", 0, "probability that a delivered sample starts a batch")
	fs.IntVar(&c.Batch.Size, "batch-size", 0, "samples delivered together in a batch")
	fs.IntVar(&c.IndexBits, "index-bits", 0, "width of the sensor's sample counter")
	fs.Var(&f.steps, "host-step", "host clock step `AT:BY`, e.g. 10s:-2s (repeatable)")
}

// check refuses what the flags of fs cannot mean together, and puts the
// repeatable and parsed ones into f.c.
func (f *simFlags) check(fs *flag.FlagSet) error {
	if fs.NArg() > 0 {
		return cli.Usagef("simulate takes no input file, got %q", fs.Args())
	}
	f.set = cli.SetFlags(fs)
	if f.set["bag"] {
		if f.set["format"] {
			return cli.Usagef("--bag writes a bag: --format does not apply")
		}
		f.format = "bag"
	}
	if err := cli.UnusedFlags(fs, "--format", f.format, simulateFormatFlags); err != nil {
		if f.set["bag"] {
			return cli.Usagef("%s", strings.Replace(err.Error(), "--format bag", "--bag", 1))
		}
		return err
	}
	if f.set["reboots"] {
		f.c.Clock.Reboots = f.boots
	}
	f.c.HostSteps = f.steps
	if f.set["jitter"] {
		k, err := sim.ParseJitter(f.jitter)
		if err != nil {
			return &cli.UsageError{Err: err}
		}
		f.c.Latency.Kind = k
	}
	if f.set["count"] && f.set["duration"] {
		return cli.Usagef("give --count or --duration, not both")
	}
	return nil
}

func runSimulate(e *cli.Env, args []string) error {
	doc := simulateDoc
	for _, p := range sim.Presets() {
		doc += fmt.Sprintf("  %-10s %s\n", p.Name, p.Summary)
	}
	fs := cli.NewFlags(e, "simulate", "[flags]", doc)
	var f simFlags
	f.define(fs)
	if err := cli.ParseFlags(e, fs, args); err != nil {
		return err
	}
	if err := f.check(fs); err != nil {
		return err
	}
	switch f.format {
	case "estimate", "pll", "samples":
		return f.writeStream(e, fs)
	case "sync", "align", "bag":
		cfgs, err := f.streamConfigs(fs)
		if err != nil {
			return err
		}
		if f.format == "bag" {
			return f.writeBag(e, cfgs)
		}
		return f.writeMerged(e, fs, cfgs)
	}
	return cli.Usagef("--format is %q, want estimate, pll, sync, align or samples", cli.Cut(f.format))
}

// writeStream writes one stream of --preset as estimate, pll or samples.
func (f *simFlags) writeStream(e *cli.Env, fs *flag.FlagSet) error {
	p, err := sim.LookupPreset(f.preset)
	if err != nil {
		return &cli.UsageError{Err: err}
	}
	cfg := overlay(p.Config, f.c, f.set)
	gen, err := sim.NewGenerator(cfg)
	if err != nil {
		return cli.ConfigError(fs, err, simulateFlagNames)
	}
	del, err := sim.NewDelivery(cfg)
	if err != nil {
		return cli.ConfigError(fs, err, simulateFlagNames)
	}
	return writeFiles(e, f.out, f.truth, func(w, tw io.Writer) error {
		switch f.format {
		case "estimate":
			return writeEstimate(w, tw, gen, f.index, f.announce, f.refEvery)
		case "pll":
			return writePLL(w, tw, del, cfg.Clock.SendDelay > 0)
		}
		return writeSamples(w, gen)
	})
}

// streamConfigs are the configurations of the --streams (sync, align,
// bag).
func (f *simFlags) streamConfigs(fs *flag.FlagSet) ([]sim.Config, error) {
	var cfgs []sim.Config
	for i, name := range strings.Split(f.streams, ",") {
		p, err := sim.LookupPreset(strings.TrimSpace(name))
		if err != nil {
			return nil, cli.Usagef("--streams: %w", err)
		}
		cfg := overlay(p.Config, f.c, f.set)
		if f.set["seed"] {
			cfg.Seed = f.c.Seed + uint64(i)*1000 // independent streams
		}
		if f.format == "bag" && !f.set["count"] && !f.set["duration"] {
			// A bag's streams span the same time: a preset's count
			// would end a 100 Hz IMU after 10 s of a 100 s lidar.
			cfg.Count, cfg.Duration = 0, defaultBagDuration
		}
		if err := cfg.Validate(); err != nil {
			return nil, cli.Usagef("stream %d (%s): %w", i, name, cli.ConfigError(fs, err, simulateFlagNames))
		}
		cfgs = append(cfgs, cfg)
	}
	if len(cfgs) < 2 && f.format == "sync" {
		return nil, cli.Usagef("--streams: sync needs at least 2 streams")
	}
	return cfgs, nil
}

// writeMerged writes the streams merged in arrival order, as sync or
// align.
func (f *simFlags) writeMerged(e *cli.Env, fs *flag.FlagSet, cfgs []sim.Config) error {
	if f.stamp != "true" && f.stamp != "receive" {
		return cli.Usagef("--stamp is %q, want true or receive", cli.Cut(f.stamp))
	}
	merged, err := sim.NewMergedDelivery(cfgs...)
	if err != nil {
		return cli.ConfigError(fs, err, simulateFlagNames)
	}
	return writeFiles(e, f.out, f.truth, func(w, tw io.Writer) error {
		return writeMulti(w, tw, merged, f.format == "align", f.stamp == "receive")
	})
}

// writeBag checks the flags of --bag and writes the bag.
func (f *simFlags) writeBag(e *cli.Env, cfgs []sim.Config) error {
	o := simBagOptions{dir: f.bag, truth: f.truth, compression: f.compression, maxBagSize: f.maxSize,
		recorderDelay: f.recDelay, seed: cfgs[0].Seed, cfgs: cfgs, overwrite: f.overwrite, quiet: f.quiet}
	st, err := bag.ParseStorage(f.storage)
	if err != nil {
		return cli.Usagef("--storage is %q, want mcap or sqlite3", cli.Cut(f.storage))
	}
	o.storage = st
	if _, err := bag.ParseCompression(f.compression); err != nil {
		return cli.Usagef("--compression is %q, want zstd, lz4 or none", cli.Cut(f.compression))
	}
	if st == bag.SQLite && f.set["compression"] && f.compression != "none" {
		return cli.Usagef("--compression applies to MCAP chunks; SQLite bags are not compressed")
	}
	if f.maxSize < 0 || f.recDelay < 0 {
		return cli.Usagef("--max-bag-size and --recorder-delay must not be negative")
	}
	if o.imageW, o.imageH, err = parseImageSize(f.imageSize); err != nil {
		return err
	}
	for _, name := range strings.Split(f.streams, ",") {
		o.names = append(o.names, strings.TrimSpace(name))
	}
	return writeSimBag(e, o)
}

// defaultBagDuration is the true time every stream of a --bag spans when
// neither --count nor --duration is given.
const defaultBagDuration = 20 * time.Second

// overlay returns base with the fields the user set on the command line
// replaced by those of c.
func overlay(base, c sim.Config, set map[string]bool) sim.Config {
	pick := func(name string, dst any, src any) {
		if !set[name] {
			return
		}
		switch d := dst.(type) {
		case *uint64:
			*d = *src.(*uint64)
		case *int:
			*d = *src.(*int)
		case *time.Duration:
			*d = *src.(*time.Duration)
		case *float64:
			*d = *src.(*float64)
		case *bool:
			*d = *src.(*bool)
		}
	}
	pick("seed", &base.Seed, &c.Seed)
	pick("count", &base.Count, &c.Count)
	if set["duration"] {
		base.Count, base.Duration = 0, c.Duration
	}
	pick("period", &base.Period, &c.Period)
	pick("latency", &base.Latency.Base, &c.Latency.Base)
	if set["jitter"] {
		base.Latency.Kind = c.Latency.Kind
	}
	pick("jitter-scale", &base.Latency.Scale, &c.Latency.Scale)
	pick("jitter-shape", &base.Latency.Shape, &c.Latency.Shape)
	pick("outlier-prob", &base.Latency.OutlierProb, &c.Latency.OutlierProb)
	pick("outlier-max", &base.Latency.OutlierMax, &c.Latency.OutlierMax)
	pick("reorder", &base.Latency.Reorder, &c.Latency.Reorder)
	pick("skew-ppm", &base.Clock.SkewPPM, &c.Clock.SkewPPM)
	pick("drift-ppm-per-hour", &base.Clock.DriftPPMPerHour, &c.Clock.DriftPPMPerHour)
	pick("device-offset", &base.Clock.Offset, &c.Clock.Offset)
	pick("tick-period", &base.Clock.TickPeriod, &c.Clock.TickPeriod)
	pick("tick-bits", &base.Clock.TickBits, &c.Clock.TickBits)
	pick("send-delay", &base.Clock.SendDelay, &c.Clock.SendDelay)
	if set["reboots"] {
		base.Clock.Reboots = c.Clock.Reboots
	}
	pick("loss", &base.Loss.Prob, &c.Loss.Prob)
	pick("burst-prob", &base.Loss.BurstProb, &c.Loss.BurstProb)
	pick("burst-len", &base.Loss.BurstLen, &c.Loss.BurstLen)
	pick("batch-prob", &base.Batch.Prob, &c.Batch.Prob)
	pick("batch-size", &base.Batch.Size, &c.Batch.Size)
	pick("index-bits", &base.IndexBits, &c.IndexBits)
	if set["host-step"] {
		base.HostSteps = c.HostSteps
	}
	return base
}

// writeFiles opens the output and the optional truth file and runs write.
func writeFiles(e *cli.Env, out, truth string, write func(w, tw io.Writer) error) error {
	f, err := cli.OpenOutputs(e, cli.Out("--out", out), cli.Out("--truth", truth))
	if err != nil {
		return err
	}
	defer f.Abort()
	if err := write(f.Out(0), f.Out(1)); err != nil {
		return err
	}
	return f.Commit()
}

// rowCheck is how often the writers look for a write error (a full disk,
// an interrupt) so that a long simulation stops at once.
const rowCheck = 1024

func writeEstimate(w, tw io.Writer, gen *sim.Generator, withIndex, announce bool, refEvery int) error {
	cw := csvio.NewWriter(w, "event", "stamp_ns", "index")
	tr := csvio.NewWriter(tw, "truth_ns")
	pendingLoss := 0
	for n := 0; ; n++ {
		s, ok := gen.Next()
		if !ok {
			break
		}
		if n%rowCheck == 0 && (cw.Err() != nil || tr.Err() != nil) {
			break
		}
		if s.Lost {
			pendingLoss++
			continue
		}
		if announce {
			for ; pendingLoss > 0; pendingLoss-- {
				cw.String("loss").Empty().Empty().EndRow()
			}
		}
		pendingLoss = 0
		if refEvery > 0 && s.Seq%refEvery == 0 {
			cw.String("reference").Stamp(s.True).Empty().EndRow()
		}
		cw.String("sample").Stamp(s.Receive)
		if withIndex {
			cw.Uint(s.Index)
		} else {
			cw.Empty()
		}
		cw.EndRow()
		tr.Stamp(s.True).EndRow()
	}
	return errors.Join(cw.Flush(), tr.Flush())
}

func writePLL(w, tw io.Writer, del *sim.Delivery, scan bool) error {
	hdr := []string{"receive_ns", "ticks"}
	if scan {
		hdr = append(hdr, "scan_ticks")
	}
	cw := csvio.NewWriter(w, hdr...)
	tr := csvio.NewWriter(tw, "truth_ns")
	for n := 0; ; n++ {
		s, ok := del.Next()
		if !ok || n%rowCheck == 0 && (cw.Err() != nil || tr.Err() != nil) {
			break
		}
		cw.Stamp(s.Receive).Uint(s.SendTicks)
		if scan {
			cw.Uint(s.Ticks)
		}
		cw.EndRow()
		tr.Stamp(s.True).EndRow()
	}
	return errors.Join(cw.Flush(), tr.Flush())
}

func writeSamples(w io.Writer, gen *sim.Generator) error {
	cw := csvio.NewWriter(w, "seq", "index", "true_ns", "receive_ns", "arrival_ns", "device_ns", "ticks", "send_ticks", "boot", "lost")
	for n := 0; ; n++ {
		s, ok := gen.Next()
		if !ok || n%rowCheck == 0 && cw.Err() != nil {
			break
		}
		cw.Int(int64(s.Seq)).Uint(s.Index).Stamp(s.True)
		if s.Lost {
			cw.Empty().Empty()
		} else {
			cw.Stamp(s.Receive).Stamp(s.Arrival)
		}
		cw.Int(int64(s.Device)).Uint(s.Ticks).Uint(s.SendTicks).Int(int64(s.Boot)).Bool(s.Lost).EndRow()
	}
	return cw.Flush()
}

func writeMulti(w, tw io.Writer, merged *sim.MergedDelivery, align, receive bool) error {
	var cw *csvio.Writer
	if align {
		cw = csvio.NewWriter(w, "event", "stream", "stamp_ns")
	} else {
		cw = csvio.NewWriter(w, "topic", "stamp_ns", "arrival_ns")
	}
	tr := csvio.NewWriter(tw, "topic", "seq", "true_ns", "receive_ns")
	for n := 0; ; n++ {
		m, ok := merged.Next()
		if !ok || n%rowCheck == 0 && (cw.Err() != nil || tr.Err() != nil) {
			break
		}
		st := m.True
		if receive {
			st = m.Receive
		}
		if align {
			cw.String("push").Int(int64(m.Topic)).Stamp(st).EndRow()
			cw.String("drain").Empty().Empty().EndRow()
		} else {
			cw.Int(int64(m.Topic)).Stamp(st).Stamp(m.Receive).EndRow()
		}
		tr.Int(int64(m.Topic)).Int(int64(m.Seq)).Stamp(m.True).Stamp(m.Receive).EndRow()
	}
	return errors.Join(cw.Flush(), tr.Flush())
}

// stepList is a repeatable flag of host clock steps AT:BY.
type stepList []sim.Step

func (s *stepList) String() string {
	parts := make([]string, len(*s))
	for i, st := range *s {
		parts[i] = st.At.String() + ":" + st.By.String()
	}
	return strings.Join(parts, ",")
}

func (s *stepList) Set(v string) error {
	at, by, ok := strings.Cut(v, ":")
	if !ok {
		return fmt.Errorf("%q is not AT:BY (example: 10s:-2s)", v)
	}
	a, err := time.ParseDuration(at)
	if err != nil {
		return fmt.Errorf("%q: AT is not a duration", v)
	}
	b, err := time.ParseDuration(by)
	if err != nil {
		return fmt.Errorf("%q: BY is not a duration", v)
	}
	*s = append(*s, sim.Step{At: a, By: b})
	return nil
}
