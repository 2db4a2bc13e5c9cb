package demo

import (
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/timealign/timealign/cmd/timealign/internal/cli"
	"github.com/timealign/timealign/pkg/sim"
	"github.com/timealign/timealign/pkg/stamp"
	tsync "github.com/timealign/timealign/pkg/sync"
)

// demoStreams simulates a camera, an IMU and a lidar with true header
// stamps, merged in arrival order.
func demoStreams(seconds int) ([]sim.Tagged, []string, error) {
	names := []string{"camera", "imu", "lidar"}
	var all [][]sim.Sample
	for i, n := range names {
		p, err := sim.LookupPreset(n)
		if err != nil {
			return nil, nil, err
		}
		c := p.Config
		c.Count = int(time.Duration(seconds) * time.Second / c.Period)
		c.Start = c.Start.Add(time.Duration(i) * 1300 * time.Microsecond) // the sensors are not triggered together
		s, err := sim.Generate(c)
		if err != nil {
			return nil, nil, err
		}
		all = append(all, s)
	}
	return sim.Merge(all...), names, nil
}

// demoSync matches camera, IMU and lidar messages with each policy.
func demoSync(w io.Writer) error {
	merged, names, err := demoStreams(10)
	if err != nil {
		return err
	}
	para(w, "A 30 Hz camera, a 100 Hz IMU and a 10 Hz lidar (hardware stamps), arriving out of order "+
		"across topics (different latencies). Each policy matches one message per topic:")
	fmt.Fprintln(w)
	tb := cli.NewTable("policy", "sets", "mean span ms", "max span ms", "dropped", "mean latency ms")
	var first [][]stamp.Time
	for _, p := range []tsync.Policy{tsync.Approximate, tsync.Exact, tsync.Epsilon, tsync.Latest} {
		cfg := tsync.DefaultConfig()
		cfg.Policy, cfg.Topics, cfg.Epsilon = p, 3, 5*time.Millisecond
		if p == tsync.Approximate {
			cfg.QueueSize = 20
		}
		s, err := tsync.New(cfg, func(set []tsync.Message[int]) {
			if p == tsync.Approximate && len(first) < 4 {
				row := make([]stamp.Time, len(set))
				for i, m := range set {
					row[i] = m.Stamp
				}
				first = append(first, row)
			}
		}, nil)
		if err != nil {
			return err
		}
		for _, m := range merged {
			s.Add(tsync.Message[int]{Topic: m.Topic, Stamp: m.True, Arrival: m.Arrival})
		}
		st := s.Status()
		var dropped uint64
		for _, d := range st.DroppedPerTopic() {
			dropped += d
		}
		tb.Row(p.String(), fmt.Sprint(st.Sets), ms(st.MeanSpread), ms(st.MaxSpread), fmt.Sprint(dropped), ms(st.MeanLatency))
	}
	tb.Write(w)
	fmt.Fprintln(w)
	fmt.Fprintln(w, "The first approximate sets (stamps relative to the first, ms):")
	t0 := slices.Min(first[0])
	sets := cli.NewTable(names...)
	for _, row := range first {
		cells := make([]string, len(row))
		for i, t := range row {
			cells[i] = ms(t.Sub(t0))
		}
		sets.Row(cells...)
	}
	sets.Write(w)
	para(w, "span: newest minus oldest stamp of a set; latency: from the arrival of a set's last member "+
		"to its publication. exact needs identical stamps, which free-running sensors never "+
		"produce; epsilon (5 ms) publishes as soon as every topic has a message within 5 ms of the "+
		"oldest; approximate picks, for each lidar scan, the tightest set, and waits for later "+
		"messages to know that no tighter one can come (its latency); latest repeats the slow "+
		"topics at the IMU's rate.")
	return nil
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f", float64(d)/1e6) }
