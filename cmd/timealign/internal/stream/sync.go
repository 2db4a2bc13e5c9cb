package stream

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/timealign/timealign/cmd/timealign/internal/cli"
	"github.com/timealign/timealign/pkg/csvio"
	"github.com/timealign/timealign/pkg/stamp"
	tsync "github.com/timealign/timealign/pkg/sync"
)

const syncDoc = `
Matches messages of N topics into sets with a ROS message_filters policy
(pkg/sync), set for set as the C++ original, for any number of topics.

Input:  topic,stamp_ns[,arrival_ns] in arrival order; topic is 0..N-1,
        stamp_ns the header stamp; arrival_ns (optional) the arrival time,
        which the latest policy's rate estimates and the latency figures use
        (without it, or where it is empty, the stamp stands for the arrival
        time). Without --num-topics, N is one more than the largest topic of the
        input (read twice: standard input is buffered in a temporary file);
        with it, a topic outside 0..N-1 is an error.
Output: t0,...,t{N-1}: the stamps of each published set, in topic order
--drops FILE: topic,stamp_ns,reason for every dropped message, when it is
        dropped (reasons: queue_full, not_matched, max_interval, after_drop,
        replaced)
--status FILE: the final status as JSON (sets, drops by topic and reason,
        spreads, latencies, queue fill, each topic's last stamp)
A summary of the messages in no set goes to standard error (-quiet: none).

Policies: approximate (ApproximateTime: --queue-size, --age-penalty,
--max-interval, --lower-bounds), exact (ExactTime: --queue-size), epsilon
(ApproximateEpsilonTime: --queue-size, --epsilon), latest (LatestTime). A
flag the chosen policy does not use is an error.`

// syncPolicyFlags lists the flags that only some policies use.
var syncPolicyFlags = map[string][]string{
	"queue-size":   {"approximate", "exact", "epsilon"},
	"age-penalty":  {"approximate"},
	"max-interval": {"approximate"},
	"lower-bounds": {"approximate"},
	"epsilon":      {"epsilon"},
}

func runSync(e *cli.Env, args []string) error {
	fs := cli.NewFlags(e, "sync", "[flags] [input.csv]", syncDoc)
	cfg := tsync.DefaultConfig()
	policy := fs.String("policy", "approximate", "approximate, exact, epsilon or latest")
	fs.IntVar(&cfg.Topics, "num-topics", 0, "number of topics N (default: from the input)")
	fs.IntVar(&cfg.QueueSize, "queue-size", cfg.QueueSize, "approximate, exact, epsilon: queue size")
	fs.Float64Var(&cfg.AgePenalty, "age-penalty", cfg.AgePenalty, "approximate: age penalty")
	fs.DurationVar(&cfg.MaxInterval, "max-interval", 0, "approximate: largest spread of a set (0: no limit)")
	var bounds cli.DurationList
	fs.Var(&bounds, "lower-bounds", "approximate: least interval between messages of each topic, D,D,...")
	fs.DurationVar(&cfg.Epsilon, "epsilon", 0, "epsilon: largest distance from a set's oldest stamp")
	out := fs.String("out", "", "output file (default standard output)")
	dropsPath := fs.String("drops", "", "write dropped messages to this file")
	statusPath := fs.String("status", "", "write the final status as JSON to this file")
	quiet := fs.Bool("quiet", false, cli.QuietUsage)
	cli.Deprecate(e, fs, "topics", "num-topics")
	if err := cli.ParseFlags(e, fs, args); err != nil {
		return err
	}
	p, err := tsync.ParsePolicy(*policy)
	if err != nil {
		return cli.Usagef("--policy: %s is not a policy (want approximate, exact, epsilon or latest)", cli.Cut(*policy))
	}
	cfg.Policy = p
	cfg.LowerBounds = bounds
	if err := cli.UnusedFlags(fs, "--policy", p.String(), syncPolicyFlags); err != nil {
		return err
	}
	given := cli.SetFlags(fs)["num-topics"]
	check := cfg
	if !given { // the input decides; check the rest now
		check.Topics = max(2, len(bounds))
		if len(bounds) == 1 {
			check.LowerBounds = nil
		}
	}
	if err := check.Validate(); err != nil {
		return cli.ConfigError(fs, err, map[string]string{"Topics": "num-topics"})
	}
	f, err := cli.OpenFiles(e, fs, cli.Out("--out", *out), cli.Out("--drops", *dropsPath), cli.Out("--status", *statusPath))
	if err != nil {
		return err
	}
	defer f.Abort()
	var st *tsync.Status
	run := func(in io.Reader) (err error) {
		st, err = syncStream(cfg, in, f.Name, f.Out(0), f.Out(1))
		return err
	}
	if given {
		err = run(f.In)
	} else {
		err = f.TwoPass(func(in io.Reader) error {
			n, err := countTopics(in, f.Name)
			if err != nil {
				return err
			}
			if len(bounds) > 0 && len(bounds) != n {
				return cli.Usagef("--lower-bounds has %d values, the input %d topics (0..%d)", len(bounds), n, n-1)
			}
			cfg.Topics = n
			return nil
		}, run)
	}
	if err != nil {
		return err
	}
	if f.Asked(2) {
		if err := cli.WriteJSON(f.Out(2), syncStatusJSON(*st)); err != nil {
			return err
		}
	}
	if err := f.Commit(); err != nil {
		return err
	}
	if !*quiet {
		syncSummary(e, *st, f.Asked(1))
	}
	return nil
}

// countTopics reads the topic column and returns one more than the largest
// topic; it warns of topics without messages (they block every set).
func countTopics(in io.Reader, name string) (int, error) {
	r, err := csvio.NewReader(in, name, syncColumns)
	if err != nil {
		return 0, err
	}
	seen := map[int64]bool{}
	maxTopic := int64(-1)
	for {
		row, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return 0, err
		}
		t, err := row.Int(0)
		if err != nil {
			return 0, err
		}
		if t < 0 || t >= tsync.MaxTopics {
			return 0, row.Errorf(0, "topic %d is out of range 0..%d", t, tsync.MaxTopics-1)
		}
		if !seen[t] {
			seen[t] = true
			maxTopic = max(maxTopic, t)
		}
	}
	n := int(maxTopic) + 1
	switch {
	case n == 0:
		return 0, fmt.Errorf("%s has no messages", name)
	case n < 2:
		return 0, fmt.Errorf("%s has only topic 0: sync matches 2 or more topics (give --num-topics if others are silent)", name)
	case len(seen) < n:
		var missing []string
		for t := range int64(n) {
			if !seen[t] {
				missing = append(missing, strconv.FormatInt(t, 10))
			}
		}
		return 0, fmt.Errorf("%s has topics 0..%d but no message of topic %s: no set could ever be published (give --num-topics %d to run anyway)",
			name, n-1, strings.Join(missing, ", "), n)
	}
	return n, nil
}

var syncColumns = csvio.Columns{Required: []string{"topic", "stamp_ns"}, Optional: []string{"arrival_ns"}}

// syncSummary tells, on stderr, how many messages are in no set and why.
func syncSummary(e *cli.Env, st tsync.Status, dropsFile bool) {
	var received uint64
	for _, n := range st.Received {
		received += n
	}
	by := st.DropsByReason()
	var dropped uint64
	var parts []string
	for r, n := range by {
		if n > 0 {
			dropped += n
			parts = append(parts, fmt.Sprintf("%s %d", tsync.DropReason(r), n))
		}
	}
	var held int
	for _, n := range st.QueueFill {
		held += n
	}
	if dropped == 0 && held == 0 {
		return
	}
	msg := fmt.Sprintf("timealign sync: %d messages, %d sets", received, st.Sets)
	if dropped > 0 {
		msg += fmt.Sprintf("; %d dropped (%s)", dropped, strings.Join(parts, ", "))
	}
	if held > 0 {
		msg += fmt.Sprintf("; %d still queued at the end of the input", held)
	}
	if dropped > 0 && !dropsFile {
		msg += "; --drops FILE lists them"
	}
	fmt.Fprintln(e.Stderr, msg)
}

func syncStream(cfg tsync.Config, in io.Reader, name string, w, dw io.Writer) (*tsync.Status, error) {
	r, err := csvio.NewReader(in, name, syncColumns)
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
	for {
		row, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		topic, err := row.Int(0)
		if err != nil {
			return nil, err
		}
		if topic < 0 || topic >= int64(cfg.Topics) {
			return nil, row.Errorf(0, "topic %d is out of range 0..%d (--num-topics %d)", topic, cfg.Topics-1, cfg.Topics)
		}
		t, err := row.Stamp(1)
		if err != nil {
			return nil, err
		}
		arrival := t
		if v, ok, err := row.OptInt(2); err != nil {
			return nil, err
		} else if ok {
			arrival = stamp.Time(v)
		}
		s.Add(tsync.Message[struct{}]{Topic: int(topic), Stamp: t, Arrival: arrival})
	}
	st := s.Status()
	return &st, errors.Join(cw.Flush(), dcw.Flush())
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
		"out_of_order": st.OutOfOrder, "duplicate": st.Duplicate, "queue_fill": st.QueueFill,
		"last_stamp_ns": st.LastStamp, "mean_spread_ns": st.MeanSpread, "max_spread_ns": st.MaxSpread,
		"mean_latency_ns": st.MeanLatency, "max_latency_ns": st.MaxLatency,
	}
}
