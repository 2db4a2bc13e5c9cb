package main

import (
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/timealign/timealign/pkg/csvio"
	"github.com/timealign/timealign/pkg/stamp"
	tsync "github.com/timealign/timealign/pkg/sync"
)

const syncDoc = `
Matches messages of N topics into sets with a ROS message_filters policy
(pkg/sync), set for set as the C++ original, for any number of topics.

Input:  topic,stamp_ns[,arrival_ns] in arrival order; topic is 0..N-1
        (another index is a counted bad_topic drop), stamp_ns the header
        stamp; arrival_ns (optional) the arrival time, which the latest
        policy's rate estimates and the latency figures use (without it,
        or where it is empty, the stamp stands for the arrival time)
Output: t0,...,t{N-1}: the stamps of each published set, in topic order
--drops FILE: topic,stamp_ns,reason for every dropped message, when it is
        dropped (reasons: queue_full, not_matched, max_interval, after_drop,
        replaced, bad_topic)
--status FILE: the final status as JSON (sets, drops by topic and reason,
        spreads, latencies, queue fill, each topic's last stamp)

Policies: approximate (ApproximateTime: --queue-size, --age-penalty,
--max-interval, --lower-bounds), exact (ExactTime: --queue-size), epsilon
(ApproximateEpsilonTime: --queue-size, --epsilon), latest (LatestTime).`

func runSync(e *env, args []string) error {
	fs := newFlags(e, "sync", "[flags] [input.csv]", syncDoc)
	cfg := tsync.DefaultConfig()
	policy := fs.String("policy", "approximate", "approximate, exact, epsilon or latest")
	fs.IntVar(&cfg.Topics, "topics", cfg.Topics, "number of topics N")
	fs.IntVar(&cfg.QueueSize, "queue-size", cfg.QueueSize, "queue size")
	fs.Float64Var(&cfg.AgePenalty, "age-penalty", cfg.AgePenalty, "approximate: age penalty")
	fs.DurationVar(&cfg.MaxInterval, "max-interval", 0, "approximate: largest spread of a set (0: no limit)")
	var bounds durationList
	fs.Var(&bounds, "lower-bounds", "approximate: least interval between messages of each topic, D,D,...")
	fs.DurationVar(&cfg.Epsilon, "epsilon", 0, "epsilon: largest distance from a set's oldest stamp")
	out := fs.String("out", "", "output file (default standard output)")
	dropsPath := fs.String("drops", "", "write dropped messages to this file")
	statusPath := fs.String("status", "", "write the final status as JSON to this file")
	if err := parseFlags(e, fs, args); err != nil {
		return err
	}
	p, err := tsync.ParsePolicy(*policy)
	if err != nil {
		return &usageError{err: fmt.Errorf("--policy: %w", err)}
	}
	cfg.Policy = p
	cfg.LowerBounds = bounds
	if err := cfg.Validate(); err != nil {
		return &usageError{err: err}
	}
	f, err := openFiles(e, fs, *out, *dropsPath)
	if err != nil {
		return err
	}
	st, err := syncStream(cfg, f.in, f.name, f.out, f.side)
	err = errors.Join(err, f.close())
	if *statusPath != "" && st != nil {
		err = errors.Join(err, writeStatusJSON(*statusPath, syncStatusJSON(*st)))
	}
	return err
}

func syncStream(cfg tsync.Config, in io.Reader, name string, w, dw io.Writer) (*tsync.Status, error) {
	r, err := csvio.NewReader(in, name, csvio.Columns{Required: []string{"topic", "stamp_ns"}, Optional: []string{"arrival_ns"}})
	if err != nil {
		return nil, err
	}
	hdr := make([]string, cfg.Topics)
	for i := range hdr {
		hdr[i] = "t" + strconv.Itoa(i)
	}
	cw := csvio.NewWriter(w, hdr...)
	dcw := csvio.NewWriter(dw, "topic", "stamp_ns", "reason")
	s, err := tsync.New(cfg,
		func(set []tsync.Message[struct{}]) {
			for _, m := range set {
				cw.Stamp(m.Stamp)
			}
			cw.EndRow()
		},
		func(m tsync.Message[struct{}], why tsync.DropReason) {
			dcw.Int(int64(m.Topic)).Stamp(m.Stamp).String(why.String()).EndRow()
		})
	if err != nil {
		return nil, err
	}
	flush := func(err error) (*tsync.Status, error) {
		st := s.Status()
		return &st, errors.Join(err, cw.Flush(), dcw.Flush())
	}
	for {
		row, err := r.Next()
		if errors.Is(err, io.EOF) {
			return flush(nil)
		}
		if err != nil {
			return flush(err)
		}
		topic, err := row.Int(0)
		if err != nil {
			return flush(err)
		}
		// A topic out of range 0..N-1 is not an error: the policy counts it
		// as a bad_topic drop.
		t, err := row.Stamp(1)
		if err != nil {
			return flush(err)
		}
		arrival := t
		if v, ok, err := row.OptInt(2); err != nil {
			return flush(err)
		} else if ok {
			arrival = stamp.Time(v)
		}
		s.Add(tsync.Message[struct{}]{Topic: int(topic), Stamp: t, Arrival: arrival})
	}
}

// syncStatusJSON flattens a Status for JSON, naming the drop reasons.
func syncStatusJSON(st tsync.Status) map[string]any {
	drops := make([]map[string]uint64, len(st.Drops))
	for t, d := range st.Drops {
		drops[t] = map[string]uint64{}
		for r, n := range d {
			if n > 0 {
				drops[t][tsync.DropReason(r).String()] = n
			}
		}
	}
	return map[string]any{
		"policy": st.Policy.String(), "sets": st.Sets, "received": st.Received, "drops": drops,
		"bad_topic": st.BadTopic, "out_of_order": st.OutOfOrder, "duplicate": st.Duplicate, "queue_fill": st.QueueFill,
		"last_stamp_ns": st.LastStamp, "mean_spread_ns": st.MeanSpread, "max_spread_ns": st.MaxSpread,
		"mean_latency_ns": st.MeanLatency, "max_latency_ns": st.MaxLatency,
	}
}
