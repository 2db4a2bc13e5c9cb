package hull

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

func TestFitRecoversLine(t *testing.T) {
	// A line with one-sided noise: the fit lies under every point and
	// close to the true line.
	r := rand.New(rand.NewPCG(1, 2))
	var h Lower
	const m, c = 10.0, 5.0
	pts := make([][2]float64, 0, 1000)
	for i := 0; i < 1000; i++ {
		x := float64(i)
		y := c + m*x + r.Float64()*2
		pts = append(pts, [2]float64{x, y})
		h.Push(x, y)
	}
	l, ok := h.Fit(math.Inf(-1), math.Inf(1))
	require.True(t, ok)
	for _, p := range pts {
		require.LessOrEqual(t, l.At(p[0]), p[1]+1e-9)
	}
	require.InDelta(t, m, l.M, 0.001)
	require.InDelta(t, c, l.At(0), 0.05)
	require.InDelta(t, c+m*999, l.At(999), 0.05)
	require.Equal(t, 1000, h.Count())
	require.Less(t, h.Vertices(), 40)
}

func TestFitClampAndEdgeCases(t *testing.T) {
	var h Lower
	_, ok := h.Fit(0, 1)
	require.False(t, ok)
	h.Push(1, 10)
	l, ok := h.Fit(2, 3)
	require.True(t, ok)
	require.Equal(t, Line{M: 2, X0: 1, Y0: 10}, l)
	h.Push(1, 8) // same x, lower: replaces
	h.Push(1, 9) // same x, higher: ignored
	require.Equal(t, 1, h.Vertices())
	h.Push(2, 100)
	h.Push(3, 20)
	// Hull: (1,8), (3,20); the edge slope 6 clamped to 4 touches (1,8).
	l, _ = h.Fit(0, 4)
	require.Equal(t, 4.0, l.M)
	require.Equal(t, 8.0, l.Y0)
	l, _ = h.Fit(7, 9)
	require.Equal(t, 7.0, l.M)
	require.Equal(t, 20.0, l.Y0, "a steep line touches the right end")
	h.Shift(1, 8)
	l, _ = h.Fit(math.Inf(-1), math.Inf(1))
	require.Equal(t, Line{M: 6, X0: 0, Y0: 0}, l)
	x0, y0 := h.First()
	require.Equal(t, [2]float64{0, 2}, [2]float64{x0, y0}, "the first point pushed, (1,10), shifted")
	require.Equal(t, 2.0, h.Span())
	mx, my := h.Mean() // of every point pushed, (1,10) (1,8) (1,9) (2,100) (3,20), shifted
	require.InDelta(t, 0.6, mx, 1e-12)
	require.InDelta(t, 21.4, my, 1e-12)
	require.Equal(t, 2.0, h.Last())
	h.Clear()
	require.Zero(t, h.Count())
	require.Zero(t, h.Span())
}

func TestSwitching(t *testing.T) {
	var s Switching
	for i := 0; i < 10; i++ {
		s.Push(float64(i), float64(i))
	}
	require.Equal(t, 10, s.Answering().Count())
	s.Switch()
	require.Equal(t, 10, s.Answering().Count(), "the younger had every point too")
	require.Zero(t, s.Young().Count())
	s.Push(10, 10)
	require.Equal(t, 11, s.Answering().Count())
	require.Equal(t, 1, s.Young().Count())
}

// Property: the fitted line is under every point, whatever the points.
func TestFitUnderAllPoints(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var h Lower
		n := rapid.IntRange(1, 200).Draw(t, "n")
		x := 0.0
		var pts [][2]float64
		for i := 0; i < n; i++ {
			x += rapid.Float64Range(0, 10).Draw(t, "dx")
			y := rapid.Float64Range(-1e6, 1e6).Draw(t, "y")
			pts = append(pts, [2]float64{x, y})
			h.Push(x, y)
		}
		lo := rapid.Float64Range(-1e5, 1e5).Draw(t, "lo")
		hi := lo + rapid.Float64Range(0, 1e5).Draw(t, "w")
		l, ok := h.Fit(lo, hi)
		if !ok {
			t.Fatal("no fit")
		}
		if len(pts) > 1 && (l.M < lo-1e-9 || l.M > hi+1e-9) {
			t.Fatalf("slope %v outside [%v, %v]", l.M, lo, hi)
		}
		for _, p := range pts {
			if l.At(p[0]) > p[1]+1e-6*math.Max(1, math.Abs(p[1])) {
				t.Fatalf("line %v above point %v", l, p)
			}
		}
	})
}

func BenchmarkPushFit(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	var s Switching
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		s.Push(float64(i), float64(i)*10+r.Float64()*2)
		s.Answering().Fit(math.Inf(-1), math.Inf(1))
		if i++; i%400 == 0 {
			s.Switch()
		}
	}
}

// TestFitMatchesFresh: a hull that lives through pushes, fits, supports,
// shifts and clears (so its hints and its cached edge carry over) answers
// exactly what a hull built afresh from the same points answers.
func TestFitMatchesFresh(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var h Lower
		var pts [][2]float64
		x := 0.0
		for range rapid.IntRange(1, 300).Draw(t, "ops") {
			switch rapid.IntRange(0, 9).Draw(t, "op") {
			case 0:
				dx, dy := float64(rapid.IntRange(-5, 5).Draw(t, "sdx")), float64(rapid.IntRange(-50, 50).Draw(t, "sdy"))
				h.Shift(dx, dy)
				x -= dx
				for i := range pts {
					pts[i][0] -= dx
					pts[i][1] -= dy
				}
			case 1:
				if rapid.IntRange(0, 9).Draw(t, "clear") == 0 {
					h.Clear()
					pts = nil
				}
			case 2, 3:
				var fresh Lower
				for _, p := range pts {
					fresh.Push(p[0], p[1])
				}
				lo := float64(rapid.IntRange(-20, 20).Draw(t, "lo"))
				hi := lo + float64(rapid.IntRange(0, 20).Draw(t, "w"))
				l, ok := h.Fit(lo, hi)
				fl, fok := fresh.Fit(lo, hi)
				if l != fl || ok != fok {
					t.Fatalf("Fit(%v, %v) = %v %v, afresh %v %v", lo, hi, l, ok, fl, fok)
				}
				if len(pts) > 0 {
					m := float64(rapid.IntRange(-20, 20).Draw(t, "m"))
					if s, fs := h.Support(m), fresh.Support(m); s != fs {
						t.Fatalf("Support(%v) = %v, afresh %v", m, s, fs)
					}
				}
				if h.Vertices() != fresh.Vertices() || h.Last() != fresh.Last() || h.Span() != fresh.Span() || h.Count() != fresh.Count() {
					t.Fatalf("vertices %d/%d last %v/%v span %v/%v", h.Vertices(), fresh.Vertices(), h.Last(), fresh.Last(), h.Span(), fresh.Span())
				}
			default:
				x += float64(rapid.IntRange(0, 3).Draw(t, "dx")) // equal x too
				y := float64(rapid.IntRange(-100, 100).Draw(t, "y")) + 7*x
				h.Push(x, y)
				pts = append(pts, [2]float64{x, y})
			}
		}
	})
}

// TestGrow: after Grow(n), n pushes do not allocate; a hull grows past
// what it reserved; Last is 0 for an empty hull.
func TestGrow(t *testing.T) {
	var s Switching
	s.Grow(1000)
	i := 0
	allocs := testing.AllocsPerRun(900, func() {
		s.Push(float64(i), float64(i%7)) // every point a vertex now and then
		i++
	})
	require.Zero(t, allocs)
	var h Lower
	require.Zero(t, h.Last())
	for j := range 5000 {
		h.Push(float64(j), float64(j*j)) // convex: every point a vertex
	}
	require.Equal(t, 5000, h.Vertices())
	require.Equal(t, 4999.0, h.Last())
	h.Clear()
	require.Zero(t, h.Last())
}
