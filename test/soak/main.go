//go:build ros2 && timealign_interfaces

// Command soak runs the live demo (`ros2 launch timealign
// demo.launch.py`) for a given time, injects faults at random moments of
// a seeded schedule, samples every node once a second, and holds the run
// to bounds on memory, drops, recovery and clean exits (issue 29):
//
//	soak [flags]             the fault soak: a CSV, a summary, exit 1 when a bound is broken
//	soak -terms N [flags]    N SIGTERMs at random phases to freshly started nodes
//
// The demo runs with use_sim_time:=true, the soak publishing /clock at
// -clock-hz, and respawn:=true (launch starts a node again 1 s after it
// exits). Faults
// (-faults; the schedule is one per -every slot after -warmup, at a
// random moment, each kind once per round):
//
//   - time_jump: /clock goes back by -jump-min..-jump-max, as at each
//     loop of `ros2 bag play --loop --clock`.
//   - publisher_kill: SIGKILL to sensor_sim, which publishes every input;
//     launch restarts it (a driver that crashes and comes back).
//   - node_term: SIGTERM to a random node, which must exit with status 0
//     within -max-exit; launch restarts it.
//   - imu_flood: a second publisher of Imu on the estimator's input at
//     -imu-flood-hz for -flood (the demo's IMU is 400 Hz).
//   - image_flood: -image-flood images (rgb8) at -image-flood-hz for
//     -flood on the synchronizer's camera input (the demo's camera: VGA
//     mono8 at 30 Hz).
//
// Each flood comes from a publisher of its own, made for it and closed
// after it (a driver started with a wrong setting, then stopped);
// -lasting-flood-writers floods from one publisher per kind for the whole
// soak, which leaves Cyclone DDS holding what it was reassembling for the
// synchronizer's best-effort input until the soak ends (docs/nodes.md,
// Memory).
//   - clock_step: the host clock stepped by ±5 s, only with
//     -host-clock-steps and CAP_SYS_TIME (the host clock is shared: the
//     soak never steps it otherwise, and says "skipped").
//
// Every second it writes one CSV row per node (-out/soak.csv: RSS, peak
// RSS and CPU from /proc; the ~/status counters; /diagnostics'
// inbox.dropped; the rate of the node's main output and, for the
// estimator and clock_sync, the 90th percentile of |stamp − true
// acquisition time| as the soak measures it against sensor_sim's ground
// truth). The summary (stdout and -out/summary.txt) gives per node the
// RSS slope and change after warm-up (at rest: outside the faults'
// windows; warm: after one fault of each kind, the change from its
// first samples shown beside), the peak RSS, the drops outside every fault's window; per
// fault the time until the synchronizer's rate and the two stamp errors
// are back at their level before it (an error: at least its steady level,
// its median outside the faults), and a restarted node publishes its
// status again; per SIGTERM the exit.
//
// It needs what the integration tests need: ROS 2 and this package's
// colcon install (-install, default $TIMEALIGN_INSTALL, or sourced), and
// the cgo flags of both (docs/nodes.md#testing):
//
//	TIMEALIGN_INSTALL=~/ws/install go run -tags ros2,timealign_interfaces ./test/soak -duration 1h
//
// DDS stays on this machine: before any ROS process starts, the soak sets
// the integration tests' loopback environment (package test/loopback: a
// random domain, localhost discovery, Cyclone DDS and Fast DDS configured
// for 127.0.0.1 only).
//
// Exit status: 0 when every bound is met, 1 when one is broken, 2 when
// the soak could not run.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/timealign/timealign/test/soak/internal/soak"
)

// config is what the flags say.
type config struct {
	plan      soak.PlanConfig
	bounds    soak.Bounds
	namespace string
	out       string
	install   string
	startup   time.Duration
	clockHz   float64
	// The floods.
	imuHz, imageHz float64
	// lastingFloodWriters: one publisher per flood kind for the whole
	// soak instead of one per flood.
	lastingFloodWriters bool
	imageW, imageH      int
	// Host clock steps asked for (-host-clock-steps).
	clockSteps bool
	// The SIGTERM series: terms > 0 runs it instead of the fault soak.
	terms     int
	termPhase time.Duration
}

func main() {
	c, err := parseFlags(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ok, err := run(ctx, c)
	if err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(2)
	}
	if !ok {
		os.Exit(1)
	}
}

func parseFlags(args []string) (config, error) {
	c := config{plan: soak.DefaultPlanConfig()}
	fs := flag.NewFlagSet("soak", flag.ContinueOnError)
	fs.DurationVar(&c.plan.Duration, "duration", 2*time.Minute, "how long the soak runs, from the moment every node is up")
	fs.Uint64Var(&c.plan.Seed, "seed", 1, "seed of the fault schedule (the same seed, the same faults at the same moments)")
	faults := fs.String("faults", "all", "faults to inject, comma-separated: time_jump,publisher_kill,node_term,imu_flood,image_flood,clock_step, or all")
	fs.DurationVar(&c.plan.WarmUp, "warmup", c.plan.WarmUp, "time before the first fault (and before RSS and drops count)")
	fs.DurationVar(&c.plan.Every, "every", c.plan.Every, "one fault per slot of this length, at a random moment of it")
	fs.DurationVar(&c.plan.Room, "room", c.plan.Room, "quiet time each slot keeps after its fault, for recovery")
	fs.DurationVar(&c.plan.FloodFor, "flood", c.plan.FloodFor, "how long a flood lasts")
	fs.DurationVar(&c.plan.JumpMin, "jump-min", c.plan.JumpMin, "shortest jump back of /clock")
	fs.DurationVar(&c.plan.JumpMax, "jump-max", c.plan.JumpMax, "longest jump back of /clock")
	fs.DurationVar(&c.plan.Step, "step", c.plan.Step, "size of a host clock step (either sign)")
	fs.BoolVar(&c.clockSteps, "host-clock-steps", false, "step the host clock (clock_step; needs CAP_SYS_TIME): only on a machine of the soak's own")
	fs.Float64Var(&c.imuHz, "imu-flood-hz", 50000, "rate of the Imu flood (the demo's IMU: 400 Hz)")
	imageSize := fs.String("image-flood", "3840x2160", "size of the flood's rgb8 images, WxH")
	fs.Float64Var(&c.imageHz, "image-flood-hz", 60, "rate of the image flood (the demo's camera: VGA mono8 at 30 Hz)")
	fs.BoolVar(&c.lastingFloodWriters, "lasting-flood-writers", false, "flood from one publisher per kind for the whole soak (default: a publisher made for each flood and closed after it, a driver started with a wrong setting and stopped); Cyclone DDS then keeps what it was reassembling for a best-effort reader of that writer until the soak ends (docs/nodes.md, Memory)")
	fs.Float64Var(&c.clockHz, "clock-hz", 1000, "rate of the /clock the soak publishes (a simulator's 1 kHz: the nodes' receive stamps have its resolution)")
	fs.Float64Var(&c.bounds.RSSChange, "max-rss-change", 25, "bound on each node's |RSS change| from after warm-up to the end, in %")
	fs.Float64Var(&c.bounds.RSSSlope, "max-rss-slope", 20, "bound on each node's |RSS slope| after warm-up, in MB/hour (fits over -slope-span or longer)")
	fs.DurationVar(&c.bounds.SlopeSpan, "slope-span", 10*time.Minute, "the RSS slope bound holds fits this long or longer")
	fs.Float64Var(&c.bounds.PeakRSS, "max-peak-rss", 1024, "bound on each process's peak RSS, in MB")
	drops := fs.Uint64("max-drops", 0, "bound on each node's drops outside every fault's window")
	fs.DurationVar(&c.bounds.Recovery, "max-recovery", 15*time.Second, "bound on the time from a fault's end until the pipeline is back at its levels")
	fs.DurationVar(&c.bounds.Exit, "max-exit", time.Second, "bound on the time from SIGTERM to exit 0")
	fs.StringVar(&c.namespace, "namespace", "demo", "namespace of the demo")
	fs.StringVar(&c.out, "out", "", "directory for soak.csv, summary.txt and launch.log (default: a new one under $TMPDIR)")
	fs.StringVar(&c.install, "install", os.Getenv("TIMEALIGN_INSTALL"), "colcon install directory of the package (default $TIMEALIGN_INSTALL; empty: the sourced one)")
	fs.DurationVar(&c.startup, "startup", time.Minute, "how long the demo may take to come up")
	fs.IntVar(&c.terms, "terms", 0, "instead of the fault soak: this many SIGTERMs, each to a freshly started node at a random phase")
	fs.DurationVar(&c.termPhase, "term-phase", 3*time.Second, "the SIGTERMs of -terms come 0..this long after the node's start")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	c.bounds.Drops = *drops
	var err error
	if c.plan.Kinds, err = soak.ParseKinds(*faults); err != nil {
		return c, err
	}
	if _, err := fmt.Sscanf(*imageSize, "%dx%d", &c.imageW, &c.imageH); err != nil || c.imageW < 1 || c.imageH < 1 {
		return c, fmt.Errorf("-image-flood %q: want WxH", *imageSize)
	}
	if c.terms < 0 || c.termPhase <= 0 || c.clockHz <= 0 || c.imuHz <= 0 || c.imageHz <= 0 {
		return c, errors.New("-terms, -term-phase and the rates must be positive")
	}
	return c, nil
}

// run sets up the environment, starts the demo and runs the soak or the
// SIGTERM series; ok is false when a bound is broken.
func run(ctx context.Context, c config) (ok bool, err error) {
	if c.out == "" {
		if c.out, err = os.MkdirTemp("", "timealign-soak-"); err != nil {
			return false, err
		}
	} else if err := os.MkdirAll(c.out, 0o755); err != nil {
		return false, err
	}
	if err := setEnv(c.out, c.install); err != nil {
		return false, err
	}
	prefix, err := packagePrefix()
	if err != nil {
		return false, err
	}
	steps := hostClockSteps(c)
	fmt.Printf("soak: output in %s; ROS 2 %s, ROS_DOMAIN_ID %s, DDS on loopback; package %s\n",
		c.out, os.Getenv("ROS_DISTRO"), os.Getenv("ROS_DOMAIN_ID"), prefix)

	r, err := newROS(c, nodeNames())
	if err != nil {
		return false, err
	}
	defer r.close()
	l, err := startLaunch(c.namespace, filepath.Join(c.out, "launch.log"))
	if err != nil {
		return false, err
	}
	defer func() {
		if err := l.stop(); err != nil {
			fmt.Fprintln(os.Stderr, "soak:", err)
		}
	}()
	if err := waitUp(ctx, l, r, c.startup); err != nil {
		return false, err
	}
	if c.terms > 0 {
		return runTerms(ctx, c, r, prefix)
	}
	return runSoak(ctx, c, l, r, steps)
}

// hostClockSteps decides whether clock_step faults are injected and says
// so; when not, they leave the schedule.
func hostClockSteps(c config) bool {
	status, err := os.ReadFile("/proc/self/status")
	var capEff uint64
	if err == nil {
		_, _, capEff, _ = soak.ParseStatus(string(status))
	}
	ok, why := soak.HostClockSteps(c.clockSteps, capEff)
	if ok {
		fmt.Println("host clock steps: enabled (-host-clock-steps, CAP_SYS_TIME)")
	} else {
		fmt.Println("host clock steps:", why)
	}
	return ok
}

// runSoak runs the fault soak from now: the schedule, the sampler, the
// summary.
func runSoak(ctx context.Context, c config, l *launch, r *ros, steps bool) (bool, error) {
	if !steps {
		c.plan.Kinds = removeKind(c.plan.Kinds, soak.ClockStep)
	}
	c.plan.Nodes = nodeNames()
	plan, err := soak.Plan(c.plan)
	if err != nil {
		return false, err
	}
	fmt.Printf("soak: %v, seed %d, %d faults (the nodes run on /clock, which the soak publishes):\n", c.plan.Duration, c.plan.Seed, len(plan))
	for _, f := range plan {
		fmt.Println("  ", f)
	}
	csvFile, err := os.Create(filepath.Join(c.out, "soak.csv"))
	if err != nil {
		return false, err
	}
	defer csvFile.Close()
	s, err := startSampler(l, r, csvFile)
	if err != nil {
		return false, err
	}
	inj := &injector{c: c, l: l, r: r, s: s}
	var done []soak.Injected
	for _, f := range plan {
		if !sleepUntil(ctx, s.start.Add(f.At)) {
			break
		}
		in := inj.inject(ctx, f)
		fmt.Printf("%7.1fs  %s\n", time.Since(s.start).Seconds(), describe(in))
		done = append(done, in)
	}
	sleepUntil(ctx, s.start.Add(c.plan.Duration))
	samples := s.stop()
	inj.undoSteps()
	if err := csvFile.Close(); err != nil {
		return false, fmt.Errorf("soak.csv: %w", err)
	}
	elapsed := time.Since(s.start)
	if ctx.Err() != nil {
		fmt.Printf("soak: interrupted after %v: the summary covers that much\n", elapsed.Round(time.Second))
	}
	sum := soak.Summarize(samples, done, elapsed, summaryConfig(c))
	return report(c.out, sum, c.plan.Seed)
}

// report prints the summary and writes it to summary.txt.
func report(dir string, sum soak.Summary, seed uint64) (bool, error) {
	f, err := os.Create(filepath.Join(dir, "summary.txt"))
	if err != nil {
		return false, err
	}
	defer f.Close()
	w := io.MultiWriter(os.Stdout, f)
	fmt.Fprintf(w, "\nsoak summary: %v, seed %d (CSV: %s)\n\n", sum.Duration.Round(time.Second), seed, filepath.Join(dir, "soak.csv"))
	if err := sum.Write(w); err != nil {
		return false, err
	}
	return len(sum.Violations) == 0, f.Close()
}

// summaryConfig: what must come back after a fault.
func summaryConfig(c config) soak.SummaryConfig {
	rate := func(x soak.Sample) float64 { return x.Rate }
	errP90 := func(x soak.Sample) float64 { return x.Error }
	return soak.SummaryConfig{
		WarmUp: c.plan.WarmUp,
		Levels: []soak.Level{
			{Name: "sync sets/s", Node: "sync", Value: rate, Higher: true},
			{Name: "imu |error| p90 µs", Node: "imu_stamps", Value: errP90},
			{Name: "scan |error| p90 µs", Node: "scan_clock", Value: errP90},
		},
		Bounds: c.bounds,
	}
}

func describe(in soak.Injected) string {
	s := in.Fault.String()
	if in.Skipped != "" {
		return s + ": " + in.Skipped
	}
	var d []string
	if in.PID != 0 {
		d = append(d, fmt.Sprintf("pid %d", in.PID))
	}
	if in.Kind == soak.NodeTerm {
		d = append(d, in.Exit.String())
	}
	if in.Sent > 0 {
		d = append(d, fmt.Sprintf("%d messages, %.0f/s", in.Sent, float64(in.Sent)/(in.End-in.Start).Seconds()))
	}
	if in.Note != "" {
		d = append(d, in.Note)
	}
	if len(d) == 0 {
		return s
	}
	return s + " (" + strings.Join(d, ", ") + ")"
}

func removeKind(ks []soak.Kind, k soak.Kind) []soak.Kind {
	var out []soak.Kind
	for _, x := range ks {
		if x != k {
			out = append(out, x)
		}
	}
	return out
}

// sleepUntil sleeps until t; false if ctx ended first.
func sleepUntil(ctx context.Context, t time.Time) bool {
	timer := time.NewTimer(time.Until(t))
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-ctx.Done():
		return false
	}
}
