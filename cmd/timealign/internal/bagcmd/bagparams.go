package bagcmd

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/timealign/timealign/pkg/params"
)

// bag fix reads the nodes' parameter YAML (the files of config/, the file
// a launch file passes with --params-file): each corrected topic names the
// node whose parameters apply to it, and those are resolved exactly as that
// node would resolve them (node-name sections, /** and /* wildcards, later
// files win), then bound to the same parameter names with the same ranges
// and checks as the node declares (nodes/nodeparams binds the nodes' own
// Params). Offline, a value the node would reject and keep its default for
// is an error.
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
