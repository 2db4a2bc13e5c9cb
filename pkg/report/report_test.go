package report

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestHistogramQuantiles(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	lin := NewHistogram(0, 100, 100)
	lg := NewLogHistogram(1, 1e6, 60)
	var vals []float64
	for range 100000 {
		v := r.Float64() * 100
		lin.Add(v)
		e := math.Pow(10, r.Float64()*6) // log-uniform over 1..1e6
		lg.Add(e)
		vals = append(vals, e)
	}
	for _, q := range []float64{0.1, 0.5, 0.9, 0.99} {
		require.InDelta(t, 100*q, lin.Quantile(q), 1.5, "linear q=%v", q)
		// A log-uniform quantile is 10^(6q); bins are 10^0.1 wide.
		want := math.Pow(10, 6*q)
		require.InEpsilon(t, want, lg.Quantile(q), 0.3, "log q=%v", q)
	}
	lin.Add(-1)
	lin.Add(100)
	lin.Add(math.NaN())
	require.Equal(t, int64(1), lin.Under)
	require.Equal(t, int64(1), lin.Over)
	require.Equal(t, int64(100002), lin.Total())
	require.True(t, math.IsNaN(NewHistogram(0, 1, 4).Quantile(0.5)))
	// Every value lands in the bin whose edges hold it.
	h := NewLogHistogram(1e3, 1e11, 64)
	for _, v := range []float64{1e3, 999.9999, 1e11 - 1, 12345, h.Edges[10], math.Nextafter(h.Edges[10], 0)} {
		before := append([]int64(nil), h.Counts...)
		h.Add(v)
		for i := range h.Counts {
			if h.Counts[i] != before[i] {
				require.True(t, v >= h.Edges[i] && v < h.Edges[i+1], "%v in bin %d [%v, %v)", v, i, h.Edges[i], h.Edges[i+1])
			}
		}
	}
}

func TestBuckets(t *testing.T) {
	b := NewBuckets(0, 10, 5)
	for x := 0.0; x < 10; x += 0.5 {
		b.Add(x, x*2)
	}
	b.Add(-5, 100) // into the first bucket
	b.Add(math.NaN(), 1)
	s := b.Series("y", Mean)
	require.Len(t, s.X, 5)
	require.Equal(t, []float64{1, 3, 5, 7, 9}, s.X)
	require.Equal(t, 100.0, s.Hi[0])
	require.Equal(t, 0.0, s.Lo[0])
	require.InDelta(t, (0+1+2+3+100)/5.0, s.Y[0], 1e-9)
	require.Equal(t, 18+1.0, s.Hi[4])
	require.Equal(t, int64(21), b.Count())
	require.Equal(t, []float64{0, 4, 8, 12, 16}, b.Series("min", Min).Y)
}

func TestWriteHTML(t *testing.T) {
	r := New("Timing <report> & more")
	r.Subtitle = "inputs a.tlog"
	s := r.Section("Clocks")
	s.Text("offset %d µs", 42)
	s.Note(Warn, "a <warning>")
	s.Table(Table{Columns: []string{"source", "offset"}, Rows: [][]string{{"tlog", "1.5 ms"}, {"gps", "−3 ms"}}, Status: []Status{Good, Bad}})
	h := NewLogHistogram(1e3, 1e9, 30)
	for i := range 1000 {
		h.Add(float64(1e4 + i*1000))
	}
	b := NewBuckets(1.7e18, 1.7e18+60e9, 50)
	for i := range 600 {
		b.Add(1.7e18+float64(i)*1e8, float64(i%37)*1e5)
	}
	s.Plot(Plot{Title: "latency", X: Axis{Unit: "duration", Log: true}, Y: Axis{Label: "n"}, Series: []Series{h.Series("all")}})
	s.Plot(Plot{Title: "over time", X: Axis{Unit: "time"}, Y: Axis{Unit: "duration"}, Series: []Series{b.Series("lat", Mean), b.Series("min", Min)}})
	s.Plot(Plot{Title: "empty", Series: []Series{{Name: "x", X: []float64{math.NaN()}, Y: []float64{1}}}})
	long := Series{Name: "long"}
	for i := range 100000 {
		long.X = append(long.X, float64(i))
		long.Y = append(long.Y, math.Sin(float64(i)/100))
	}
	s.Plot(Plot{Title: "thinned", Series: []Series{long}})
	var w1, w2 bytes.Buffer
	require.NoError(t, r.WriteHTML(&w1))
	require.NoError(t, r.WriteHTML(&w2))
	out := w1.String()
	require.Equal(t, out, w2.String(), "deterministic")
	require.Contains(t, out, "<title>Timing &lt;report&gt; &amp; more</title>")
	require.Contains(t, out, `<p class="note warn">a &lt;warning&gt;</p>`)
	require.Contains(t, out, `<tr class="bad"><td>gps</td><td class="n">−3 ms</td></tr>`)
	require.Equal(t, 4, strings.Count(out, "<svg"))
	require.Contains(t, out, ">no data</text>")
	require.Contains(t, out, ">10 µs</text>")    // a log tick
	require.Contains(t, out, ">22:13:30</text>") // a clock tick (1.7e18 ns is 22:13:20 UTC)
	require.NotContains(t, out, "NaN")
	require.NotContains(t, out, "Inf")
	require.Less(t, len(out), 400000, "a long series is thinned")
	// One clip path per plot with data, each its own id.
	require.Equal(t, 3, strings.Count(out, `<clipPath id="c`))
	for _, i := range []int{1, 2, 4} {
		require.Contains(t, out, fmt.Sprintf(`<clipPath id="c%d">`, i))
	}
}

func TestDuration(t *testing.T) {
	for _, c := range []struct {
		ns   float64
		want string
	}{{0, "0"}, {512, "512 ns"}, {1500, "1.5 µs"}, {-2.5e6, "-2.5 ms"}, {3.25e9, "3.25 s"}, {1234567, "1.23 ms"}} {
		require.Equal(t, c.want, Duration(c.ns))
	}
}

func ExampleHistogram() {
	h := NewLogHistogram(1e3, 1e9, 60) // 1 µs .. 1 s
	for i := 1; i <= 1000; i++ {
		h.Add(float64(i) * 1e4) // 10 µs .. 10 ms
	}
	fmt.Println(Duration(h.Quantile(0.5)), Duration(h.Quantile(0.99)), h.Total())
	// Output: 5 ms 9.9 ms 1000
}
