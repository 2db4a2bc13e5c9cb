package soak

import (
	"bytes"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// run builds the samples of a soak of n seconds: a synchronizer at 10
// sets/s and an estimator with 30 µs of error, both 20 MB; change, if
// set, alters the sample of node at second s.
type run struct {
	n      int
	change func(node string, s int, x *Sample)
}

func (r run) samples() []Sample {
	var xs []Sample
	for s := 1; s <= r.n; s++ {
		for _, node := range []string{"sync", "imu_stamps"} {
			x := Sample{T: time.Duration(s) * time.Second, Node: node, PID: 100, RSS: 20 << 20, PeakRSS: 21 << 20, CPU: 10,
				Status: true, Rate: math.NaN(), Error: math.NaN()}
			if node == "sync" {
				x.PID, x.Rate = 200, 10
			} else {
				x.Error = 30
			}
			if r.change != nil {
				r.change(node, s, &x)
			}
			xs = append(xs, x)
		}
	}
	return xs
}

func summaryConfig() SummaryConfig {
	return SummaryConfig{
		WarmUp: 10 * time.Second,
		Levels: []Level{
			{Name: "sync sets/s", Node: "sync", Value: func(x Sample) float64 { return x.Rate }, Higher: true},
			{Name: "imu error", Node: "imu_stamps", Value: func(x Sample) float64 { return x.Error }},
		},
		Bounds: Bounds{RSSChange: 10, RSSSlope: 20, SlopeSpan: 10 * time.Minute, PeakRSS: 100, Drops: 0,
			Recovery: 10 * time.Second, Exit: time.Second},
	}
}

// TestSummarizeHealthy: a steady run meets every bound, and a second of
// high RSS at either end of it moves neither reference.
func TestSummarizeHealthy(t *testing.T) {
	spikes := run{n: 120, change: func(node string, s int, x *Sample) {
		if node == "sync" && (s == 12 || s == 119) {
			x.RSS = 80 << 20
		}
	}}
	s := Summarize(spikes.samples(), nil, 120*time.Second, summaryConfig())
	require.Empty(t, s.Violations)
	require.Len(t, s.Nodes, 2)
	n := s.Nodes[0]
	require.Equal(t, "sync", n.Node)
	require.Equal(t, 1, n.Processes)
	require.InDelta(t, 20, n.RSSWarm, 1e-9)
	require.InDelta(t, 20, n.RSSEnd, 1e-9)
	require.InDelta(t, 0, n.Change, 1e-9)
	require.InDelta(t, 0, n.Slope, 2, "two spikes tilt the fit a little")
	require.Equal(t, 109*time.Second, n.Span, "from the process's warm-up (first seen at 1 s, + 10 s) to the end")
	require.InDelta(t, 21, n.PeakRSS, 1e-9)
	require.InDelta(t, 10, n.CPUMean, 1e-9)
}

// TestSummarizeRSS: a node that grows 1 MB a minute has a slope of 60
// MB/hour and grows by the change since warm-up; the slope bound holds
// only fits of SlopeSpan or more.
func TestSummarizeRSS(t *testing.T) {
	grow := run{n: 20 * 60, change: func(node string, s int, x *Sample) {
		if node == "sync" {
			x.RSS = 20<<20 + int64(s)*(1<<20)/60
		}
	}}
	c := summaryConfig()
	s := Summarize(grow.samples(), nil, 20*time.Minute, c)
	n := s.Nodes[0]
	require.InDelta(t, 60, n.Slope, 0.1)
	require.InDelta(t, 100*(1185.0-25.0)/60/(20.0+25.0/60), n.Change, 1e-4, "medians of 30 samples: at 25 s and 1185 s")
	require.Len(t, s.Violations, 2)
	require.Contains(t, s.Violations[0], "sync: RSS +")
	require.Contains(t, s.Violations[1], "sync: RSS slope +60.0 MB/hour")

	short := run{n: 120, change: grow.change}
	s = Summarize(short.samples(), nil, 120*time.Second, c)
	require.InDelta(t, 60, s.Nodes[0].Slope, 0.1)
	require.Empty(t, s.Violations, "a slope over 2 minutes is not bounded; the change is 8 %")
}

// TestSummarizeRecovery: after a time jump the synchronizer stops for 4
// s and the estimator's error is high for 6 s: recovered 6 s after the
// fault's end, and drops up to the recovery bound after it are the
// fault's; a SIGTERM
// whose node exits cleanly and comes back as a new process; a drop
// outside every window and an exit too slow break their bounds.
func TestSummarizeRecovery(t *testing.T) {
	r := run{n: 120, change: func(node string, s int, x *Sample) {
		switch {
		case node == "sync" && s >= 31 && s < 35:
			x.Rate = 0
		case node == "sync" && s >= 35:
			x.Dropped = 5 // dropped at 35 s, inside the jump's window
		case node == "imu_stamps" && s >= 20 && s < 30:
			x.Error = float64(20 + s%3*10) // 20..40 µs: its worst second is its level
		case node == "imu_stamps" && s >= 30 && s < 36:
			x.Error = 5e6
		case node == "imu_stamps" && s >= 42:
			x.Dropped = 1 // 12 s after the jump: within its recovery bound (10 s) and margin (3 s)
		}
		if node == "sync" && s >= 61 {
			x.PID = 201 // back after the SIGTERM at 60 s
			x.Dropped = 0
			if s == 61 {
				x.Status = false // its first status comes a second later
			}
		}
		if node == "imu_stamps" && s >= 100 {
			x.Dropped = 3 // 2 more: unexplained
		}
	}}
	faults := []Injected{
		{Fault: Fault{Kind: TimeJump, At: 30 * time.Second, Jump: 5 * time.Second}, Start: 30 * time.Second, End: 30 * time.Second},
		{Fault: Fault{Kind: NodeTerm, At: 60 * time.Second, Node: "sync"}, Start: 60 * time.Second, End: 60 * time.Second,
			PID: 200, Exit: Exit{Seen: true, After: 1500 * time.Millisecond, CodeKnown: true}},
		{Fault: Fault{Kind: ClockStep, At: 80 * time.Second}, Skipped: "skipped: not permitted"},
	}
	s := Summarize(r.samples(), faults, 120*time.Second, summaryConfig())
	require.Len(t, s.Faults, 2, "the skipped fault is left out")
	jump := s.Faults[0]
	require.True(t, jump.Recovered)
	require.Equal(t, 6*time.Second, jump.After, "the error is back from 36 s")
	require.True(t, math.IsNaN(jump.Levels[0].Steady), "a rate has no steady level")
	require.Equal(t, 30.0, jump.Levels[1].Steady, "the error outside the faults")
	jump.Levels[0].Steady, jump.Levels[1].Steady = 0, 0
	require.Equal(t, []LevelRecovery{
		{Name: "sync sets/s", Before: 10, Limit: 8, Worst: 0, Back: true, After: 5 * time.Second},
		{Name: "imu error", Before: 40, Limit: 280, Worst: 5e6, Back: true, After: 6 * time.Second},
	}, jump.Levels)
	term := s.Faults[1]
	require.True(t, term.Recovered)
	require.Equal(t, "restart of sync", term.Levels[2].Name)
	require.Equal(t, 2*time.Second, term.Levels[2].After, "the new process's first status")

	require.Equal(t, uint64(5), s.Nodes[0].Drops)
	require.Zero(t, s.Nodes[0].Unexplained)
	require.Equal(t, 2, s.Nodes[0].Processes)
	require.Zero(t, s.Nodes[0].Restarts, "the SIGTERM explains the second process")
	require.Equal(t, uint64(3), s.Nodes[1].Drops)
	require.Equal(t, uint64(2), s.Nodes[1].Unexplained)
	require.Equal(t, 100*time.Second, s.Nodes[1].FirstUnexplained)
	require.Equal(t, []string{
		"node_term at 1m0s: SIGTERM to sync: exit 0 after 1.5s, want exit 0 within 1s",
		"imu_stamps: 2 drops outside every fault's window (first at 1m40s), bound 0",
	}, s.Violations)

	var out bytes.Buffer
	require.NoError(t, s.Write(&out))
	for _, want := range []string{
		"time_jump at 30s: /clock back 5s: recovered after 6s",
		"sync sets/s: 5s (level 10, limit 8, worst 0); imu error: 6s (level 40, limit 280, worst 5e+06)",
		"pid 200, exit 0 after 1.5s",
		"restart of sync: 2s",
		"bounds: 2 broken",
	} {
		require.Contains(t, out.String(), want)
	}
}

// TestSummarizeNotRecovered: a level that does not come back before the
// next fault, and a node that restarts with no fault to explain it.
func TestSummarizeNotRecovered(t *testing.T) {
	r := run{n: 90, change: func(node string, s int, x *Sample) {
		if node == "imu_stamps" && s >= 30 && s < 62 {
			x.Error = math.NaN() // no output
		}
		if node == "sync" && s >= 45 {
			x.PID = 300
		}
	}}
	faults := []Injected{
		{Fault: Fault{Kind: IMUFlood, At: 30 * time.Second, For: 3 * time.Second}, Start: 30 * time.Second, End: 33 * time.Second, Sent: 150000},
		{Fault: Fault{Kind: TimeJump, At: 60 * time.Second}, Start: 60 * time.Second, End: 60 * time.Second},
	}
	s := Summarize(r.samples(), faults, 90*time.Second, summaryConfig())
	require.False(t, s.Faults[0].Recovered)
	require.True(t, s.Faults[1].Recovered)
	require.Equal(t, []string{
		"imu_flood at 30s for 3s: not recovered before 1m0s",
		"sync: 1 restarts no fault explains",
	}, s.Violations)
	var out bytes.Buffer
	require.NoError(t, s.Write(&out))
	require.Contains(t, out.String(), "150000 messages in 3.0 s (50000/s)")
	require.Contains(t, out.String(), "imu error: not back (level 30, limit 260, no figure since the fault)")
}

func TestSummarizeTerms(t *testing.T) {
	ts := []Term{
		{Node: "sync", Phase: 100 * time.Millisecond, Exit: Exit{Seen: true, After: 200 * time.Millisecond, CodeKnown: true}},
		{Node: "sync", Phase: 2 * time.Second, Exit: Exit{Seen: true, After: 900 * time.Millisecond, CodeKnown: true}},
		{Node: "imu_stamps", Phase: time.Second, Exit: Exit{Seen: true, After: 50 * time.Millisecond, CodeKnown: true, Code: -15}},
		{Node: "scan_clock", Phase: time.Second, Exit: Exit{}},
		{Node: "stamp_monitor", Phase: time.Second, Exit: Exit{Seen: true, After: 10 * time.Millisecond, CodeKnown: true}, Errors: 1},
	}
	s := SummarizeTerms(ts, time.Second)
	require.Equal(t, 5, s.N)
	require.Equal(t, 3, s.Clean)
	require.Equal(t, 900*time.Millisecond, s.Slowest)
	require.Equal(t, []string{
		"SIGTERM 3 to imu_stamps 1s after its start: exit -15 after 50ms, want exit 0 within 1s",
		"SIGTERM 4 to scan_clock 1s after its start: no exit seen, want exit 0 within 1s",
		"SIGTERM 5 to stamp_monitor 1s after its start: 1 [ERROR] lines",
	}, s.Violations)
}

func TestRecord(t *testing.T) {
	x := Sample{T: 12 * time.Second, Node: "sync", PID: 42, RSS: 3 << 20, PeakRSS: 4 << 20, CPU: 12.345,
		Status: true, StatusAge: 300 * time.Millisecond, In: 10, Out: 9, Dropped: 1, Rate: 10, Error: math.NaN(), Faults: "imu_flood"}
	require.Len(t, CSVHeader, len(x.Record()))
	require.Equal(t, []string{"12.0", "sync", "42", "3.00", "4.00", "12.3", "0.3", "10", "9", "1", "", "10.0", "", "imu_flood"}, x.Record())
	none := Sample{T: time.Second, Node: "sync", StatusAge: -1, Rate: math.NaN(), Error: math.NaN()}
	require.Equal(t, []string{"1.0", "sync", "", "", "", "", "", "", "", "", "", "", "", ""}, none.Record())
}

// TestSummarizeSteadyLevel: an error whose 10 s before a fault were quieter
// than usual (300 µs against its steady 1000 µs) is back at 2 × its steady
// level + 200 µs, not held to the quiet window; above that it is back only
// when it falls to its steady level again (60 s).
func TestSummarizeSteadyLevel(t *testing.T) {
	for _, tc := range []struct {
		after float64
		back  time.Duration
	}{{1200, 3 * time.Second}, {2150, 3 * time.Second}, {2300, 30 * time.Second}} {
		r := run{n: 120, change: func(node string, s int, x *Sample) {
			if node != "imu_stamps" {
				return
			}
			switch {
			case s >= 20 && s < 30:
				x.Error = 300
			case s >= 30 && s < 33:
				x.Error = 5e6
			case s >= 33 && s < 60:
				x.Error = tc.after
			default:
				x.Error = 1000
			}
		}}
		faults := []Injected{{Fault: Fault{Kind: TimeJump, At: 30 * time.Second, Jump: 5 * time.Second}, Start: 30 * time.Second, End: 30 * time.Second}}
		s := Summarize(r.samples(), faults, 120*time.Second, summaryConfig())
		l := s.Faults[0].Levels[1]
		require.Equal(t, 300.0, l.Before, "after %v", tc.after)
		require.Equal(t, 1000.0, l.Steady, "after %v", tc.after)
		require.Equal(t, 2200.0, l.Limit, "after %v", tc.after)
		require.True(t, l.Back, "after %v", tc.after)
		require.Equal(t, tc.back, l.After, "after %v", tc.after)
	}
}

// TestSummarizeRSSAtRest: a flood that holds 40 MB more while it lasts and
// for the recovery after it (12..30 s, the soak's first seconds after
// warm-up) moves neither RSS reference; memory that grows later is a
// change.
func TestSummarizeRSSAtRest(t *testing.T) {
	for _, tc := range []struct {
		grown  int64 // MB more from 150 s on
		change float64
	}{{0, 0}, {4, 20}} {
		r := run{n: 200, change: func(node string, s int, x *Sample) {
			switch {
			case node != "imu_stamps":
			case s >= 12 && s <= 30:
				x.RSS = 60 << 20
			case s >= 150:
				x.RSS += tc.grown << 20
			}
		}}
		faults := []Injected{{Fault: Fault{Kind: IMUFlood, At: 12 * time.Second, For: 3 * time.Second}, Start: 12 * time.Second, End: 15 * time.Second}}
		s := Summarize(r.samples(), faults, 200*time.Second, summaryConfig())
		n := s.Nodes[1]
		require.Equal(t, "imu_stamps", n.Node)
		require.Equal(t, 20.0, n.RSSWarm, "grown %d MB", tc.grown)
		require.InDelta(t, tc.change, n.Change, 1e-9, "grown %d MB", tc.grown)
	}
}

// TestSummarizeWarmAfterEachKind: a process whose RSS steps up 5 MB at
// its first flood and holds it is warm after its first fault of each
// kind (its change 0, its change from its start the step); one that also
// grows after that round shows the growth; one that never met every kind
// keeps its first samples as the reference.
func TestSummarizeWarmAfterEachKind(t *testing.T) {
	flood := func(at time.Duration) Injected {
		return Injected{Fault: Fault{Kind: IMUFlood, At: at, For: 3 * time.Second}, Start: at, End: at + 3*time.Second}
	}
	jump := func(at time.Duration) Injected {
		return Injected{Fault: Fault{Kind: TimeJump, At: at, Jump: 5 * time.Second}, Start: at, End: at}
	}
	for _, tc := range []struct {
		name   string
		faults []Injected
		grown  int64 // MB more from 250 s on
		warmAt time.Duration
		change float64
	}{
		{"steps once", []Injected{flood(40 * time.Second), jump(70 * time.Second), flood(120 * time.Second)}, 0, 70 * time.Second, 0},
		{"grows after", []Injected{flood(40 * time.Second), jump(70 * time.Second), flood(120 * time.Second)}, 5, 70 * time.Second, 20},
		{"a kind skipped", []Injected{flood(40 * time.Second), jump(70 * time.Second), {Fault: Fault{Kind: ClockStep, At: 90 * time.Second}, Skipped: "no root"}}, 0, 70 * time.Second, 0},
		{"never met every kind", []Injected{flood(40 * time.Second), jump(0)}, 0, 0, 25},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := run{n: 400, change: func(node string, s int, x *Sample) {
				if node != "imu_stamps" {
					return
				}
				if s >= 40 {
					x.RSS += 5 << 20 // the first flood's working set
				}
				if s >= 250 {
					x.RSS += tc.grown << 20
				}
			}}
			s := Summarize(r.samples(), tc.faults, 400*time.Second, summaryConfig())
			n := s.Nodes[1]
			require.Equal(t, "imu_stamps", n.Node)
			require.Equal(t, tc.warmAt, n.WarmAt)
			require.InDelta(t, tc.change, n.Change, 1e-9)
			require.InDelta(t, 20, n.RSSStart, 1e-9)
			require.InDelta(t, 100*(float64(25+tc.grown)-20)/20, n.ChangeFromStart, 1e-9)
		})
	}
}
