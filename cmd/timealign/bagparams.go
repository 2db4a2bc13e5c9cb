package main

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/timealign/timealign/pkg/params"
	"github.com/timealign/timealign/pkg/pll"
	tsync "github.com/timealign/timealign/pkg/sync"
	"github.com/timealign/timealign/pkg/tsest"
)

// bag fix reads the nodes' parameter YAML (the files of config/, the file
// a launch file passes with --params-file): each corrected topic names the
// node whose parameters apply to it, and those are resolved exactly as that
// node would resolve them (node-name sections, /** and /* wildcards, later
// files win), then bound to the same parameter names with the same ranges
// and checks as the node declares (nodes/internal/tsestnode, clocksync and
// syncnode's Params.Bind, mirrored here because the CLI cannot import the
// nodes' internal packages; bagparams_test.go holds the two to the
// documented config/*.yaml files). Offline, a value the node would reject
// and keep its default for is an error.
//
// Which topic goes through which node is said by --apply flags or by the
// same strings in the parameter file, in a section for timealign's own
// pseudo-node, which no running node matches:
//
//	timealign_bag_fix:
//	  ros__parameters:
//	    apply: ["/imu/data_raw=timestamp_estimator:/imu_estimator", "/scan=clock_sync", "/camera/image_raw=offset:-0.012"]
//	    policy: keep
//	    sync: ["/imu/data_raw", "/camera/image_raw"]

// bagFixNode is the pseudo-node whose section of a parameter file holds
// bag fix's own settings.
const bagFixNode = "/timealign_bag_fix"

// Correction kinds.
const (
	kindTsest  = "timestamp_estimator"
	kindClock  = "clock_sync"
	kindOffset = "offset"
)

// applyRule is one topic's correction: "TOPIC=KIND[:NODE]" or
// "TOPIC=offset:SECONDS".
type applyRule struct {
	topic, kind, node string
	offset            time.Duration
	source            string // where it was given, for messages
}

func parseApply(s, source string) (applyRule, error) {
	topic, rest, ok := strings.Cut(s, "=")
	r := applyRule{topic: strings.TrimSpace(topic), source: source}
	if !ok || r.topic == "" || rest == "" {
		return r, fmt.Errorf("%s: %q is not TOPIC=KIND[:NODE] (KIND: timestamp_estimator, clock_sync, offset:SECONDS)", source, cut(s))
	}
	kind, arg, hasArg := strings.Cut(rest, ":")
	r.kind = strings.TrimSpace(kind)
	switch r.kind {
	case kindTsest, kindClock:
		r.node = "/" + r.kind // the executable's default node name
		if hasArg {
			n := strings.TrimSpace(arg)
			if n == "" {
				return r, fmt.Errorf("%s: %q: empty node name", source, cut(s))
			}
			if !strings.HasPrefix(n, "/") {
				n = "/" + n
			}
			r.node = n
		}
	case kindOffset:
		if !hasArg {
			return r, fmt.Errorf("%s: %q: offset needs its value in seconds, e.g. %s=offset:-0.012", source, cut(s), r.topic)
		}
		a := strings.TrimSpace(arg)
		var d time.Duration
		var err error
		if f, ferr := strconv.ParseFloat(a, 64); ferr == nil {
			d, err = params.SecondsDuration(f)
		} else {
			d, err = time.ParseDuration(a)
		}
		if err != nil {
			return r, fmt.Errorf("%s: %q: offset %q is not seconds (-0.012) or a duration (-12ms)", source, cut(s), cut(a))
		}
		r.offset = d
	default:
		return r, fmt.Errorf("%s: %q: correction %q is not timestamp_estimator, clock_sync or offset", source, cut(s), cut(r.kind))
	}
	return r, nil
}

// paramFiles are the parsed --params files.
type paramFiles []*params.File

func loadParamFiles(paths []string) (paramFiles, error) {
	var fs paramFiles
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("--params: %w", err)
		}
		f, err := params.ParseFile(p, data)
		if err != nil {
			return nil, fmt.Errorf("--params: %w", err)
		}
		fs = append(fs, f)
	}
	return fs, nil
}

// declare binds a node's parameters with its overrides from the files and
// fails on any value the node would reject; unknown names are returned as
// warnings.
func (fs paramFiles) declare(fqn string, bind func(b *params.Binder), validate func() error) (warnings []string, err error) {
	ov := params.ResolveOverrides(fqn, fs, nil)
	srv := params.NewServer(params.Options{Node: fqn, Overrides: ov})
	b := params.NewBinder(srv, validate)
	bind(b)
	if err := b.Declare(); err != nil {
		return nil, err
	}
	var errs []error
	for _, is := range srv.Issues() {
		if is.Severity == params.Error {
			errs = append(errs, fmt.Errorf("node %s: %s", fqn, is))
		} else {
			warnings = append(warnings, fmt.Sprintf("node %s: %s", fqn, is))
		}
	}
	return warnings, errors.Join(errs...)
}

// tsestParams mirrors the timestamp_estimator node's parameters.
type tsestParams struct {
	Estimator   tsest.Config
	MessageType string
	Source      string
	In, Out     params.QoS
}

func defaultTsestParams() tsestParams {
	return tsestParams{Estimator: tsest.DefaultConfig(), Source: "header", In: params.SensorDataQoS(), Out: params.ReliableQoS()}
}

func (p *tsestParams) bind(b *params.Binder) {
	e := &p.Estimator
	b.String("message_type", &p.MessageType, params.Descriptor{ReadOnly: true})
	b.Enum("stamp_source", &p.Source, []string{"header", "receive_time"}, params.Descriptor{})
	b.Duration("window_sec", &e.Window, params.Descriptor{FloatRange: params.Floats(0.001, 3600, 0)})
	b.Duration("period_sec", &e.Period, params.Descriptor{FloatRange: params.Floats(0, 3600, 0)})
	b.Duration("min_latency_sec", &e.MinLatency, params.Descriptor{FloatRange: params.Floats(0, 3600, 0)})
	b.Int("loss_threshold", &e.LossThreshold, params.Descriptor{IntRange: params.Ints(0, 1000, 1)})
	b.Bool("never_infer_loss", &e.NeverInferLoss, params.Descriptor{})
	b.String("reference_type", new(string), params.Descriptor{ReadOnly: true})
	b.QoS("qos.in", &p.In)
	b.QoS("qos.out", &p.Out)
	b.Bool("use_sim_time", new(bool), params.Descriptor{ReadOnly: true})
}

// clockParams mirrors the clock_sync node's parameters.
type clockParams struct {
	PLL         pll.Config
	MessageType string
	Mode        string
	WhenInvalid string
	In, Out     params.QoS
}

func defaultClockParams() clockParams {
	c := pll.DefaultConfig()
	c.Mode, c.TickPeriod, c.TickBits = pll.Envelope, time.Nanosecond, 64
	return clockParams{PLL: c, Mode: c.Mode.String(), WhenInvalid: "drop", In: params.SensorDataQoS(), Out: params.ReliableQoS()}
}

func (p *clockParams) bind(b *params.Binder) {
	c := &p.PLL
	b.String("message_type", &p.MessageType, params.Descriptor{ReadOnly: true})
	b.Enum("mode", &p.Mode, []string{"sick", "regression", "envelope", "offset"}, params.Descriptor{})
	b.Enum("when_invalid", &p.WhenInvalid, []string{"drop", "receive_time", "passthrough"}, params.Descriptor{})
	b.Int("fifo_size", &c.FIFOSize, params.Descriptor{IntRange: params.Ints(2, pll.MaxFIFOSize, 1)})
	b.Duration("max_deviation_sec", &c.MaxDeviation, params.Descriptor{FloatRange: params.Floats(0.000001, 3600, 0)})
	b.Int("max_invalid", &c.MaxInvalid, params.Descriptor{IntRange: params.Ints(1, 1_000_000, 1)})
	b.Int("tick_bits", &c.TickBits, params.Descriptor{IntRange: params.Ints(1, 64, 1)})
	b.Duration("tick_period_sec", &c.TickPeriod, params.Descriptor{FloatRange: params.Floats(1e-9, 3600, 0)})
	b.Int("window", &c.Window, params.Descriptor{IntRange: params.Ints(2, pll.MaxWindow, 1)})
	b.Float64("max_skew_ppm", &c.MaxSkewPPM, params.Descriptor{FloatRange: params.Floats(0, 1e5, 0)})
	b.Bool("track_skew", &c.TrackSkew, params.Descriptor{})
	b.QoS("qos.in", &p.In)
	b.QoS("qos.out", &p.Out)
	b.Bool("use_sim_time", new(bool), params.Descriptor{ReadOnly: true})
	b.Check(func() error {
		m, err := pll.ParseMode(p.Mode)
		if err != nil {
			return err
		}
		c.Mode = m
		return nil
	})
}

// syncParams mirrors the synchronizer node's parameters.
type syncParams struct {
	Sync         tsync.Config
	MessageTypes []string
	Policy       string
	SilentAfter  time.Duration
	MaxDropShare float64
	In, Out      params.QoS
}

func defaultSyncParams(n int) syncParams {
	c := tsync.DefaultConfig()
	c.Topics = n
	return syncParams{Sync: c, Policy: c.Policy.String(), SilentAfter: time.Second, MaxDropShare: 0.5,
		In: params.SensorDataQoS(), Out: params.ReliableQoS()}
}

func (p *syncParams) bind(b *params.Binder) {
	s := &p.Sync
	b.Int("inputs", &s.Topics, params.Descriptor{ReadOnly: true, IntRange: params.Ints(2, tsync.MaxTopics, 1)})
	b.Strings("message_types", &p.MessageTypes, params.Descriptor{ReadOnly: true})
	b.Enum("policy", &p.Policy, []string{"approximate", "exact", "epsilon", "latest"}, params.Descriptor{ReadOnly: true})
	b.Int("queue_size", &s.QueueSize, params.Descriptor{ReadOnly: true, IntRange: params.Ints(1, tsync.MaxQueueSize, 1)})
	b.Float64("age_penalty", &s.AgePenalty, params.Descriptor{ReadOnly: true, FloatRange: params.Floats(0, 1e6, 0)})
	b.Duration("max_interval_sec", &s.MaxInterval, params.Descriptor{ReadOnly: true, FloatRange: params.Floats(0, 1e6, 0)})
	b.Durations("lower_bounds_sec", &s.LowerBounds, params.Descriptor{ReadOnly: true})
	b.Duration("epsilon_sec", &s.Epsilon, params.Descriptor{ReadOnly: true, FloatRange: params.Floats(0, 1e6, 0)})
	b.Duration("silent_after_sec", &p.SilentAfter, params.Descriptor{FloatRange: params.Floats(0.001, 1e6, 0)})
	b.Float64("max_drop_share", &p.MaxDropShare, params.Descriptor{FloatRange: params.Floats(0, 1, 0)})
	b.QoS("qos.in", &p.In)
	b.QoS("qos.out", &p.Out)
	b.Bool("use_sim_time", new(bool), params.Descriptor{ReadOnly: true})
	b.Check(func() error {
		pol, err := tsync.ParsePolicy(p.Policy)
		if err != nil {
			return err
		}
		s.Policy = pol
		return nil
	})
}

// fixSettings are bag fix's own settings from its section of the files.
type fixSettings struct {
	apply    []string
	policy   string
	sync     []string
	syncNode string
	source   map[string]string // setting -> file:line
}

func (fs paramFiles) fixSettings() fixSettings {
	var s fixSettings
	s.source = map[string]string{}
	ov := params.ResolveOverrides(bagFixNode, fs, nil)
	get := func(name string) (params.Override, bool) {
		o, ok := ov[name]
		if ok {
			s.source[name] = o.Source
		}
		return o, ok
	}
	if o, ok := get("apply"); ok {
		if o.Value.Type() == params.StringArray {
			s.apply = o.Value.Strings()
		} else if o.Value.Type() == params.String {
			s.apply = []string{o.Value.Str()}
		}
	}
	if o, ok := get("policy"); ok && o.Value.Type() == params.String {
		s.policy = o.Value.Str()
	}
	if o, ok := get("sync"); ok && o.Value.Type() == params.StringArray {
		s.sync = o.Value.Strings()
	}
	if o, ok := get("sync_node"); ok && o.Value.Type() == params.String {
		s.syncNode = o.Value.Str()
	}
	return s
}
