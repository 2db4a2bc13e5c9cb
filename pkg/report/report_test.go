package report

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timealign/timealign/pkg/stamp"
)

// TestHistQuantiles: quantiles are within the bucket resolution (3.2 %)
// of the exact ones, for either sign; mean and std are exact.
func TestHistQuantiles(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, gen := range []func() float64{
		func() float64 { return rng.NormFloat64() * 1e6 },
		func() float64 { return rng.ExpFloat64() * 3e6 },
		func() float64 { return float64(rng.IntN(40)) },
	} {
		var h Hist
		var xs []float64
		for range 20000 {
			x := math.Round(gen())
			xs = append(xs, x)
			h.Add(time.Duration(x))
		}
		slices.Sort(xs)
		qs := []float64{0.01, 0.1, 0.5, 0.9, 0.99}
		got := h.Quantiles(qs...)
		for i, q := range qs {
			want := xs[int(q*float64(len(xs)))]
			require.InDelta(t, want, float64(got[i]), math.Abs(want)*0.04+2, "q%.2f", q)
		}
		var mean float64
		for _, x := range xs {
			mean += x
		}
		mean /= float64(len(xs))
		require.InDelta(t, mean, float64(h.Mean()), 1)
		require.Equal(t, time.Duration(xs[0]), h.Min())
		require.Equal(t, time.Duration(xs[len(xs)-1]), h.Max())
	}
	var empty Hist
	require.Equal(t, Summary{}, empty.Summarize())
	var ext Hist
	ext.Add(math.MinInt64)
	ext.Add(math.MaxInt64)
	q := ext.Quantiles(0, 1)
	require.Equal(t, time.Duration(math.MinInt64), q[0])
}

// TestSeriesBounded: a series never holds more than Cap points, keeps the
// extremes, and covers the whole span.
func TestSeriesBounded(t *testing.T) {
	s := Series{Cap: 100}
	for i := range 1_000_000 {
		v := float64(i % 97)
		if i == 500_000 {
			v = 1e6
		}
		s.Add(int64(i)*int64(time.Millisecond), v)
	}
	pts := s.Points()
	require.LessOrEqual(t, len(pts), 100)
	require.Greater(t, len(pts), 40)
	var mx float64
	for _, p := range pts {
		mx = math.Max(mx, p.Max)
	}
	require.Equal(t, 1e6, mx)
	require.Greater(t, pts[len(pts)-1].X, 900*time.Second)
}

// TestAnalyzer: a 100 Hz stream with jitter, one lost sample, a duplicate
// and a stamp going back; a device clock 50 ppm fast; a topic without
// header.
func TestAnalyzer(t *testing.T) {
	a, err := New(DefaultConfig())
	require.NoError(t, err)
	require.NoError(t, a.AddTopic(0, "/imu", "sensor_msgs/msg/Imu", true, "schema"))
	require.NoError(t, a.AddTopic(1, "/dev", "sensor_msgs/msg/LaserScan", true, "schema"))
	require.NoError(t, a.AddTopic(2, "/str", "std_msgs/msg/String", false, "builtin"))
	rng := rand.New(rand.NewPCG(3, 4))
	t0 := stamp.Time(1_700_000_000 * int64(time.Second))
	var prev stamp.Time
	for i := range 3000 {
		if i == 1500 {
			continue // lost
		}
		tr := t0.Add(time.Duration(i) * 10 * time.Millisecond)
		hdr := tr.Add(time.Duration(rng.Float64() * 1e6))
		if i == 2000 {
			hdr = prev // a driver that sent the same stamp twice
		}
		prev = hdr
		a.Add(Message{Topic: 0, LogTime: hdr.Add(200 * time.Microsecond), Header: hdr, HasHeader: true, Size: 300})
		if i%10 == 0 {
			dev := stamp.Time(float64(tr.Sub(t0))*(1+50e-6)) + 5e9
			a.Add(Message{Topic: 1, LogTime: tr.Add(time.Millisecond), Header: dev, HasHeader: true, Size: 2000})
			a.Add(Message{Topic: 2, LogTime: tr, Size: 20})
		}
	}
	r := a.Report()
	imu, dev, str := r.Topics[0], r.Topics[1], r.Topics[2]
	require.InDelta(t, 10e6, float64(imu.Period), 5e3)
	require.Equal(t, uint64(1), imu.Missing)
	t.Logf("gaps %+v %d missing %d", imu.LongestGaps, imu.Gaps, imu.Missing)
	require.Equal(t, uint64(1), imu.Gaps)
	require.Equal(t, uint64(1), imu.Duplicates)
	require.Less(t, imu.JitterAfter.Std, imu.JitterBefore.Std/3)
	require.False(t, imu.DeviceClock)
	require.True(t, dev.DeviceClock)
	require.InDelta(t, 50, dev.SkewPPM, 2)
	require.Equal(t, uint64(0), str.Stamped)
	require.Equal(t, uint64(299), str.Count) // the 1500th was lost with the IMU sample
	require.InDelta(t, 10, str.RateHz, 0.05)
	require.NotNil(t, r.Sync)
	require.NotEmpty(t, r.Sync.Skipped, "one host-stamped topic: nothing to match")
	var buf bytes.Buffer
	require.NoError(t, r.WriteTable(&buf))
	require.Contains(t, buf.String(), "device +50")
	buf.Reset()
	require.NoError(t, r.WriteHTML(&buf, "test"))
	require.Contains(t, buf.String(), "<svg")
}

func TestConfigValidate(t *testing.T) {
	c := DefaultConfig()
	require.NoError(t, c.Validate())
	c.SyncTopics = []string{"/a"}
	require.ErrorContains(t, c.Validate(), "SyncTopics")
	c = DefaultConfig()
	c.PlotPoints = 1
	require.ErrorIs(t, c.Validate(), ErrConfig)
	c = DefaultConfig()
	c.Estimator.Window = 0
	require.Error(t, c.Validate())
}

// TestWritePage: a page with sections of a command's own (escaped text,
// notes and table rows marked by level, plots over time and histograms),
// the analysis of two topics across which nothing is compared
// (PerTopicOnly), plots drawn for the busier topic only, and the words
// the page is given in place of the bag report's.
func TestWritePage(t *testing.T) {
	cfg := DefaultConfig()
	cfg.PerTopicOnly = true
	a, err := New(cfg)
	require.NoError(t, err)
	require.NoError(t, a.AddTopic(0, "/fast", "dataflash/IMU", true, "FMT"))
	require.NoError(t, a.AddTopic(1, "/slow", "mavlink/ATTITUDE", true, "MAVLink"))
	t0 := stamp.Time(1_700_000_000 * int64(time.Second))
	var lat Hist
	over, flat := Series{Cap: 50}, Series{Cap: 50}
	for i := range 2000 {
		st := t0.Add(time.Duration(i) * 10 * time.Millisecond)
		a.Add(Message{Topic: 0, LogTime: st, Header: st, HasHeader: true, Size: 40})
		if i%4 == 0 {
			d := time.Duration(1+i%7) * time.Millisecond
			a.Add(Message{Topic: 1, LogTime: st.Add(d), Header: st, HasHeader: true, Size: 30})
			lat.Add(d)
			over.Add(int64(st), float64(d)/1e6)
			flat.Add(int64(st), 2)
		}
	}
	r := a.Report()
	require.Nil(t, r.Sync)
	require.Empty(t, r.Offsets, "two host-stamped topics, but no pairs")
	s := &Section{Title: "Clocks & <sources>"}
	s.Text("offset %d µs <b>", 42)
	s.Note(Warn, "a <warning>")
	s.Note(Plain, "plain note")
	s.Table(Table{Caption: "sources", Columns: []string{"source", "offset"},
		Rows: [][]string{{"tlog", "1.5 ms"}, {"gps", "−3 ms"}, {"none", "n/a"}}, Levels: []Level{Good, Bad}})
	s.Hists(HistPlot{Title: "latency", XLabel: "latency", Hists: []*Hist{&lat}, Names: []string{"all"}, Caption: "hist caption"})
	s.Lines(LinePlot{Title: "over time", YLabel: "ms", Series: []*Series{&over, &flat}, Names: []string{"latency", "flat"}})
	s.Lines(LinePlot{Title: "empty", Series: []*Series{{}}, Names: []string{"nothing"}})
	pg := Page{Title: "a.tlog + a.BIN", Heading: "timealign mav report", Stamp: "autopilot stamp",
		Notes: "notes <here>", TimeAxis: "time since the start of the logs (s)", PlotTopics: 1, Sections: []*Section{s}}
	var w1, w2 bytes.Buffer
	require.NoError(t, r.WritePage(&w1, pg))
	require.NoError(t, r.WritePage(&w2, pg))
	out := w1.String()
	require.Equal(t, out, w2.String(), "deterministic")
	require.Contains(t, out, "<h1>timealign mav report</h1>")
	require.Contains(t, out, `<h2 id="section-0">Clocks &amp; &lt;sources&gt;</h2>`)
	require.Contains(t, out, `<a href="#section-0">Clocks &amp; &lt;sources&gt;</a>`, "in the contents")
	require.Contains(t, out, "<p>offset 42 µs &lt;b&gt;</p>")
	require.Contains(t, out, `<p class="note warn">a &lt;warning&gt;</p>`)
	require.Contains(t, out, `<p class="note">plain note</p>`)
	require.Contains(t, out, `<tr class="good"><td>tlog</td><td class="n">1.5 ms</td></tr>`)
	require.Contains(t, out, `<tr class="bad"><td>gps</td><td class="n">−3 ms</td></tr>`)
	require.Contains(t, out, `<tr><td>none</td><td>n/a</td></tr>`)
	require.Contains(t, out, "<figcaption>hist caption</figcaption>")
	require.Contains(t, out, `<p class="muted">notes &lt;here&gt;</p>`)
	require.Contains(t, out, "time since the start of the logs (s)")
	require.Contains(t, out, "interval jitter of the autopilot stamps")
	require.NotContains(t, out, "header stamp")
	require.NotContains(t, out, "ApproximateTime")
	require.Contains(t, out, "the other 1 have their figures only")
	// The section's two plots with data share a row; /fast has its plots
	// (intervals, jitter of the stamps; of the estimates and the
	// correction where it is recommended; no latency histogram: it is
	// always 0), /slow none.
	fastPlots := 2
	if r.Topics[0].Verdict.Action == Estimate {
		fastPlots += 2
	}
	require.Equal(t, 2+fastPlots, strings.Count(out, "<svg"))
	require.Equal(t, 1, strings.Count(out, "latency (min/max)"), "a band where slots hold several values")
	require.Contains(t, out, ">flat<", "one line where they hold one")
	require.NotContains(t, out, "flat (min/max)")
	require.NotContains(t, out, "NaN")
	i, j := strings.Index(out, `<h3 id="topic-0">/fast`), strings.Index(out, `<h3 id="topic-1">/slow`)
	require.True(t, i > 0 && j > i)
	require.Contains(t, out[i:j], "<svg")
	require.NotContains(t, out[j:], "<svg")

	// The bag report's page keeps its words.
	var bag bytes.Buffer
	require.NoError(t, r.WriteHTML(&bag, "b"))
	require.Contains(t, bag.String(), "<h1>timealign bag report</h1>")
	require.Contains(t, bag.String(), "interval jitter of the header stamps")
	require.Contains(t, bag.String(), "log time since the start of the bag (s)")
	require.Greater(t, strings.Count(bag.String(), "<svg"), fastPlots, "every topic drawn")
}

func TestNumeric(t *testing.T) {
	for s, want := range map[string]bool{"1.5 ms": true, "−3 ms": true, "+0.2": true, "-14.49": true, "±2": true,
		"": false, "n/a": false, "—": false, "-": false, "tlog": false, " 7": true} {
		require.Equal(t, want, numeric(s), "%q", s)
	}
}

// TestNoPlotsAtOneTime: a topic whose messages all came at one time (the
// unit records at the start of a dataflash log) gets its table, no plots.
func TestNoPlotsAtOneTime(t *testing.T) {
	a, err := New(DefaultConfig())
	require.NoError(t, err)
	require.NoError(t, a.AddTopic(0, "/units", "dataflash/UNIT", true, "FMT"))
	t0 := stamp.Time(1_700_000_000 * int64(time.Second))
	for range 8 {
		a.Add(Message{Topic: 0, LogTime: t0, Header: t0, HasHeader: true, Size: 10})
	}
	var buf bytes.Buffer
	require.NoError(t, a.Report().WriteHTML(&buf, "burst"))
	require.Contains(t, buf.String(), `<td id="topic-0">/units</td><td>UNIT</td><td class="nw">one-off</td><td class="n">8</td>`)
	require.NotContains(t, buf.String(), "<svg")
}

// TestHistBins: the buckets hold exactly the values that fall in them, in
// value order, for either sign and every magnitude.
func TestHistBins(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var h Hist
	count := map[[2]int64]uint64{} // sign, bucket
	for i := range 50000 {
		var d time.Duration
		switch i % 4 {
		case 0:
			d = time.Duration(rng.Int64N(64) - 32)
		case 1:
			d = time.Duration(rng.Int64() >> rng.IntN(63))
		default:
			d = -time.Duration(rng.Int64() >> rng.IntN(63))
		}
		if i == 0 {
			d = math.MinInt64
		} else if i == 1 {
			d = math.MaxInt64
		}
		h.Add(d)
		switch {
		case d > 0:
			count[[2]int64{1, int64(bucket(uint64(d)))}]++
		case d < 0:
			count[[2]int64{-1, int64(bucket(uint64(-(d + 1)) + 1))}]++
		default:
			count[[2]int64{0, 0}]++
		}
	}
	var want []bin
	for k, n := range count {
		lo, hi := bucketRange(int32(k[1]))
		switch k[0] {
		case 1:
			want = append(want, bin{lo, hi, n})
		case -1:
			want = append(want, bin{-hi, -lo, n})
		default:
			want = append(want, bin{0, 0, n})
		}
	}
	slices.SortFunc(want, func(a, b bin) int { return cmp.Compare(a.lo, b.lo) })
	require.Equal(t, want, h.bins())
	require.Equal(t, uint64(50000), h.Count())
}

func BenchmarkHistAdd(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	v := make([]time.Duration, 4096)
	for i := range v {
		v[i] = time.Duration(rng.NormFloat64() * 1e6)
	}
	var h Hist
	for i := 0; b.Loop(); i++ {
		h.Add(v[i&4095])
	}
}

// BenchmarkAnalyzerAdd: one message per Add, round robin over a 100 Hz
// IMU with 1 ms of jitter, a 50 Hz camera stamped by a device clock 30 ppm
// fast, and a topic without a Header; the streams repeat, shifted, so the
// analysis stays in its steady state.
func BenchmarkAnalyzerAdd(b *testing.B) {
	a, err := New(DefaultConfig())
	require.NoError(b, err)
	require.NoError(b, a.AddTopic(0, "/imu", "sensor_msgs/msg/Imu", true, "schema"))
	require.NoError(b, a.AddTopic(1, "/cam", "sensor_msgs/msg/Image", true, "schema"))
	require.NoError(b, a.AddTopic(2, "/str", "std_msgs/msg/String", false, "builtin"))
	rng := rand.New(rand.NewPCG(7, 8))
	t0 := stamp.Time(1_700_000_000 * int64(time.Second))
	var msgs []Message
	for i := range 20000 {
		tr := t0.Add(time.Duration(i) * 10 * time.Millisecond)
		hdr := tr.Add(time.Duration(rng.Float64() * 1e6))
		msgs = append(msgs, Message{Topic: 0, LogTime: hdr.Add(200 * time.Microsecond), Header: hdr, HasHeader: true, Size: 300})
		if i%2 == 0 {
			dev := stamp.Time(float64(tr.Sub(t0))*(1+30e-6)) + 5e9
			msgs = append(msgs, Message{Topic: 1, LogTime: tr.Add(3 * time.Millisecond), Header: dev, HasHeader: true, Size: 2000})
		}
		if i%10 == 0 {
			msgs = append(msgs, Message{Topic: 2, LogTime: tr, Size: 20})
		}
	}
	span := 20000 * 10 * time.Millisecond
	b.ReportAllocs()
	j, pass := 0, time.Duration(0)
	for b.Loop() {
		m := msgs[j]
		m.LogTime = m.LogTime.Add(pass)
		m.Header = m.Header.Add(pass)
		a.Add(m)
		if j++; j == len(msgs) {
			j, pass = 0, pass+span
		}
	}
}

// TestVerdicts: each topic is classified first, and only a periodic one
// gets an estimate and a recommendation: jittery host stamps are
// corrected (their gaps cost the estimates nothing), clean ones (a jitter
// of a microsecond) are kept, a device clock is mapped; a
// one-off and an event-driven topic get their count, span and rate only.
// Every message of a matched topic is accounted for in the ApproximateTime
// figures.
func TestVerdicts(t *testing.T) {
	a, err := New(DefaultConfig())
	require.NoError(t, err)
	names := []string{"/jittery", "/clean", "/device", "/oneoff", "/events"}
	for i, n := range names {
		require.NoError(t, a.AddTopic(i, n, "sensor_msgs/msg/Imu", true, "schema"))
	}
	rng := rand.New(rand.NewPCG(5, 6))
	t0 := stamp.Time(1_700_000_000 * int64(time.Second))
	nextEvent := t0
	for i := range 3000 {
		tr := t0.Add(time.Duration(i) * 10 * time.Millisecond)
		hdr := tr.Add(time.Duration(rng.Float64() * 2e6))
		a.Add(Message{Topic: 0, LogTime: hdr.Add(100 * time.Microsecond), Header: hdr, HasHeader: true, Size: 100})
		if i%300 != 7 { // a sample lost now and then
			clean := tr.Add(time.Duration(rng.IntN(1000)))
			a.Add(Message{Topic: 1, LogTime: clean.Add(3 * time.Millisecond), Header: clean, HasHeader: true, Size: 100})
		}
		if i%10 == 0 {
			dev := stamp.Time(float64(tr.Sub(t0))*(1-30e-6)) + 7e9
			a.Add(Message{Topic: 2, LogTime: tr.Add(time.Duration(rng.Float64() * 1e6)), Header: dev, HasHeader: true, Size: 100})
		}
		if i < 4 {
			a.Add(Message{Topic: 3, LogTime: tr, Header: tr, HasHeader: true, Size: 10})
		}
		if tr >= nextEvent {
			a.Add(Message{Topic: 4, LogTime: tr, Header: tr, HasHeader: true, Size: 10})
			nextEvent = tr.Add(time.Duration(rng.ExpFloat64() * 3e8))
		}
	}
	r := a.Report()
	by := map[string]*TopicReport{}
	for _, tr := range r.Topics {
		by[tr.Name] = tr
	}
	want := map[string]struct {
		class  Class
		action Action
	}{
		"/jittery": {Periodic, Estimate}, "/clean": {Periodic, Keep}, "/device": {Periodic, ClockSync},
		"/oneoff": {OneOff, NoAction}, "/events": {Bursty, NoAction},
	}
	for n, w := range want {
		tr := by[n]
		require.Equal(t, w.class, tr.Class, "%s: %s", n, tr.ClassWhy)
		require.Equal(t, w.action, tr.Verdict.Action, "%s: %s", n, tr.Verdict.Text)
		if w.class != Periodic {
			require.Zero(t, tr.Period, n)
			require.Zero(t, tr.Gaps, n)
			require.Zero(t, tr.JitterBefore.Count, n)
			require.Empty(t, tr.Verdict.Apply, n)
		}
	}
	clean := by["/clean"]
	require.NotZero(t, clean.Gaps, "the clean stream loses samples")
	require.Zero(t, clean.Worse.AtGaps, "gaps cost the estimates nothing: %+v", clean.Worse)
	require.Contains(t, clean.Verdict.Text, "keep the stamps")
	require.Equal(t, "/jittery=timestamp_estimator", by["/jittery"].Verdict.Apply)
	require.Equal(t, "/device=clock_sync", by["/device"].Verdict.Apply)
	all := r.SetFixCommand(func(apply []string) string { return "fix IN OUT --apply " + strings.Join(apply, " --apply ") })
	require.Equal(t, "fix IN OUT --apply /jittery=timestamp_estimator --apply /device=clock_sync", all)
	require.Equal(t, "fix IN OUT --apply /device=clock_sync", by["/device"].Verdict.Command)

	s := r.Sync
	require.NotNil(t, s)
	require.Empty(t, s.Skipped)
	for i, n := range s.Topics {
		sum := s.Sets + s.Unmatched[i] + s.Before[i] + s.NoStamp[i]
		for _, d := range s.Drops[n] {
			sum += d
		}
		require.Equal(t, by[n].Count, sum, "%s: every message accounted for", n)
		require.Contains(t, s.counts(i), fmt.Sprintf("%d messages:", by[n].Count))
	}
	require.Len(t, s.Notes, 2, "the one-off and the bursty topic were matched: %v", s.Notes)
	require.Contains(t, s.Notes[0], "/oneoff is one-off")
	var buf bytes.Buffer
	require.NoError(t, r.WriteTable(&buf))
	require.Contains(t, buf.String(), "not periodic")
	require.Contains(t, buf.String(), "fix IN OUT --apply /jittery=timestamp_estimator\n")
	buf.Reset()
	require.NoError(t, json.NewEncoder(&buf).Encode(r))
	require.Contains(t, buf.String(), `"class":"one-off"`)
	require.Contains(t, buf.String(), `"action":"clock_sync"`)
}

// TestReportsOfOddRecordings: a recording of one-off topics only (one of
// them a single message), one whose every stamp repeats, and an empty one
// each give a table and a page that say what they are.
func TestReportsOfOddRecordings(t *testing.T) {
	t0 := stamp.Time(1_700_000_000 * int64(time.Second))
	cases := map[string]func(a *Analyzer){
		"one-off only": func(a *Analyzer) {
			require.NoError(t, a.AddTopic(0, "/map", "nav_msgs/msg/OccupancyGrid", true, "schema"))
			require.NoError(t, a.AddTopic(1, "/params", "rcl_interfaces/msg/ParameterEvent", false, "builtin"))
			a.Add(Message{Topic: 0, LogTime: t0, Header: t0, HasHeader: true, Size: 100})
			for i := range 5 {
				a.Add(Message{Topic: 1, LogTime: t0.Add(time.Duration(i) * time.Second), Size: 10})
			}
		},
		"stamps never set": func(a *Analyzer) {
			require.NoError(t, a.AddTopic(0, "/imu", "sensor_msgs/msg/Imu", true, "schema"))
			for i := range 500 {
				a.Add(Message{Topic: 0, LogTime: t0.Add(time.Duration(i) * 10 * time.Millisecond), HasHeader: true, Size: 100})
			}
			require.Contains(t, a.Report().Topics[0].ClassWhy, "never set")
		},
		"empty": func(*Analyzer) {},
	}
	for name, fill := range cases {
		a, err := New(DefaultConfig())
		require.NoError(t, err)
		fill(a)
		r := a.Report()
		for _, tr := range r.Topics {
			require.NotEqual(t, Periodic, tr.Class, "%s: %s", name, tr.Name)
			require.Equal(t, NoAction, tr.Verdict.Action, "%s: %s", name, tr.Name)
			require.Zero(t, tr.Period, name)
		}
		var tbl, page bytes.Buffer
		require.NoError(t, r.WriteTable(&tbl), name)
		require.Contains(t, tbl.String(), "no periodic topic", name)
		require.NoError(t, r.WriteHTML(&page, name), name)
		require.Contains(t, page.String(), "0 periodic", name)
		require.NotContains(t, page.String(), "NaN", name)
	}
}

// TestReportSaysThePeriodChanged: a camera switched from 30 to 15 fps
// half-way: its verdict says that the period changed, and the JSON counts
// it.
func TestReportSaysThePeriodChanged(t *testing.T) {
	a, err := New(DefaultConfig())
	require.NoError(t, err)
	require.NoError(t, a.AddTopic(0, "/camera", "sensor_msgs/msg/Image", true, "schema"))
	rng := rand.New(rand.NewPCG(7, 8))
	tr := stamp.Time(1_700_000_000 * int64(time.Second))
	for i := range 3000 {
		p := time.Second / 30
		if i >= 1500 {
			p = time.Second / 15
		}
		tr = tr.Add(p)
		hdr := tr.Add(time.Duration(rng.Float64() * 2e6))
		a.Add(Message{Topic: 0, LogTime: hdr.Add(100 * time.Microsecond), Header: hdr, HasHeader: true, Size: 100})
	}
	r := a.Report()
	cam := r.Topics[0]
	require.Positive(t, cam.PeriodChanges)
	require.Contains(t, cam.Verdict.Text, "the period changed")
	require.InDelta(t, float64(time.Second/15), float64(cam.Period), float64(time.Millisecond))
	var buf bytes.Buffer
	require.NoError(t, json.NewEncoder(&buf).Encode(r))
	require.Contains(t, buf.String(), `"period_changes":`)
}
