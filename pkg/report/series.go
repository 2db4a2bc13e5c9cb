package report

import "time"

// Series is a time series in bounded memory for plots: at most Cap points,
// each the minimum and maximum of the values in its slot of time; when the
// series outgrows Cap slots, neighbouring slots merge and the slot width
// doubles. A plot of the min/max envelope shows every spike however long
// the recording. Add costs O(1) amortized.
type Series struct {
	// Cap is the most points kept (default 1024).
	Cap    int
	start  int64
	width  int64 // ns of x per slot
	points []Point
	begun  bool
}

// Point is one slot of a Series: x is the slot's start in ns from the
// series' first x, Min and Max the values in it.
type Point struct {
	X        time.Duration `json:"x_ns"`
	Min, Max float64
}

// Add adds value v at x (ns, e.g. a log time). Values at an x before the
// first go into the first slot.
func (s *Series) Add(x int64, v float64) {
	if s.Cap <= 0 {
		s.Cap = 1024
	}
	if !s.begun {
		s.begun, s.start, s.width = true, x, int64(time.Millisecond)
	}
	off := x - s.start
	if off < 0 {
		off = 0
	}
	for off/s.width >= int64(2*s.Cap) {
		s.merge()
	}
	slot := off / s.width
	if n := len(s.points); n > 0 {
		last := &s.points[n-1]
		if int64(last.X)/s.width == slot {
			last.Min, last.Max = min(last.Min, v), max(last.Max, v)
			return
		}
		if int64(last.X)/s.width > slot { // late x: into the last slot
			last.Min, last.Max = min(last.Min, v), max(last.Max, v)
			return
		}
	}
	if len(s.points) >= s.Cap {
		s.merge()
		s.Add(x, v)
		return
	}
	s.points = append(s.points, Point{X: time.Duration(slot * s.width), Min: v, Max: v})
}

// merge doubles the slot width.
func (s *Series) merge() {
	s.width *= 2
	out := s.points[:0]
	for _, p := range s.points {
		slot := int64(p.X) / s.width
		if n := len(out); n > 0 && int64(out[n-1].X)/s.width == slot {
			out[n-1].Min, out[n-1].Max = min(out[n-1].Min, p.Min), max(out[n-1].Max, p.Max)
			continue
		}
		out = append(out, Point{X: time.Duration(slot * s.width), Min: p.Min, Max: p.Max})
	}
	s.points = out
}

// Points returns the points (shared; do not modify).
func (s *Series) Points() []Point { return s.points }

// Start returns the x of the series' origin.
func (s *Series) Start() int64 { return s.start }
