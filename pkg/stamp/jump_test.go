package stamp_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timealign/timealign/pkg/stamp"
)

const s = stamp.Time(time.Second)

// jumpCases feed TestJumpDetector and FuzzJumpDetector's seeds.
var jumpCases = []struct {
	name    string
	confirm int
	stamps  []stamp.Time
	jumps   []int           // indexes of the stamps that confirm a jump
	back    []time.Duration // how far each went back
	outlier uint64
}{
	{"steady", 1, []stamp.Time{1 * s, 2 * s, 3 * s}, nil, nil, 0},
	{"jitter back less than the threshold", 1, []stamp.Time{10 * s, 9*s + s/2, 11 * s}, nil, nil, 0},
	{"a clock reset (bag loop)", 1, []stamp.Time{100 * s, 101 * s, 102 * s, 42 * s, 43 * s}, []int{3}, []time.Duration{60 * time.Second}, 0},
	{"back by exactly the threshold is not a jump", 1, []stamp.Time{10 * s, 9 * s}, nil, nil, 0},
	{"back by 1 ns more is", 1, []stamp.Time{10 * s, 9*s - 1}, []int{1}, []time.Duration{time.Second + 1}, 0},
	{"oscillating clock: every step back", 1, []stamp.Time{100 * s, 10 * s, 100 * s, 10 * s}, []int{1, 3}, []time.Duration{90 * time.Second, 90 * time.Second}, 0},
	{"stream: confirmed by the next stamp", 2, []stamp.Time{100 * s, 101 * s, 40 * s, 40*s + s/10, 41 * s}, []int{3}, []time.Duration{61 * time.Second}, 0},
	{"stream: a 0 stamp between good ones is an outlier", 2, []stamp.Time{100 * s, 0, 101 * s, 102 * s}, nil, nil, 1},
	{"stream: two wild stamps apart are outliers", 2, []stamp.Time{100 * s, 0, 50 * s, 101 * s}, nil, nil, 2},
	{"stream: two loops", 2, []stamp.Time{10 * s, 11 * s, 2 * s, 3 * s, 11 * s, 2 * s, 2*s + 1}, []int{3, 6}, []time.Duration{9 * time.Second, 9 * time.Second}, 0},
	{"stream: the latest before the jump is the reference, not the first", 2, []stamp.Time{1 * s, 50 * s, 20 * s, 20 * s}, []int{3}, []time.Duration{30 * time.Second}, 0},
}

func TestJumpDetector(t *testing.T) {
	for _, tc := range jumpCases {
		t.Run(tc.name, func(t *testing.T) {
			d := stamp.JumpDetector{Threshold: time.Second, Confirm: tc.confirm}
			var at []int
			var back []time.Duration
			for i, st := range tc.stamps {
				if j, ok := d.Observe(st); ok {
					at = append(at, i)
					back = append(back, j.Back)
					require.Greater(t, j.Back, time.Second)
					require.Equal(t, j.Back, j.From.Sub(j.To))
				}
			}
			require.Equal(t, tc.jumps, at)
			require.Equal(t, tc.back, back)
			require.Equal(t, tc.outlier, d.Outliers())
		})
	}
}

func TestJumpDetectorReset(t *testing.T) {
	d := stamp.JumpDetector{Threshold: time.Second, Confirm: 1}
	d.Observe(100 * s)
	d.Reset()
	_, ok := d.Observe(10 * s)
	require.False(t, ok, "a new timeline after Reset")
	_, ok = d.Observe(5 * s)
	require.True(t, ok)
}

func TestStepDetector(t *testing.T) {
	d := stamp.StepDetector{Threshold: time.Second}
	wall := 1_700_000_000 * s
	var steps []time.Duration
	for i := range 100 {
		mono := time.Duration(i) * time.Second
		w := wall.Add(mono)
		w = w.Add(time.Duration(i) * 500 * time.Microsecond) // slewing at 500 ppm
		switch {
		case i >= 70:
			w = w.Add(-2 * time.Second) // +5 s at 30, -7 s at 70
		case i >= 30:
			w = w.Add(5 * time.Second)
		}
		if st, ok := d.Observe(w, mono); ok {
			steps = append(steps, st.Round(10*time.Millisecond))
		}
	}
	require.Equal(t, []time.Duration{5 * time.Second, -7 * time.Second}, steps)
}

func ExampleJumpDetector() {
	// A 100 Hz stream from a bag played with --loop: the stamps restart 8 s
	// earlier after the last message.
	d := stamp.JumpDetector{Threshold: time.Second, Confirm: 2}
	t0 := stamp.Time(1_700_000_000 * time.Second)
	for i := range 1600 {
		st := t0.Add(time.Duration(i%800) * 10 * time.Millisecond)
		if j, ok := d.Observe(st); ok {
			fmt.Printf("message %d: time jumped back %.2f s\n", i, j.Back.Seconds())
		}
	}
	// Output: message 801: time jumped back 7.99 s
}

func FuzzJumpDetector(f *testing.F) {
	for _, tc := range jumpCases {
		b := make([]byte, 0, 8*len(tc.stamps))
		for _, st := range tc.stamps {
			b = fmt.Appendf(b, "%08x", uint32(st/s))
		}
		f.Add(b, uint8(tc.confirm))
	}
	f.Fuzz(func(t *testing.T, data []byte, confirm uint8) {
		d := stamp.JumpDetector{Threshold: time.Second, Confirm: int(confirm%2) + 1}
		var prevMax stamp.Time
		first := true
		for len(data) >= 8 {
			var v int64
			for _, c := range data[:8] {
				v = v<<8 | int64(c)
			}
			data = data[8:]
			st := stamp.Time(v)
			j, ok := d.Observe(st)
			if ok {
				// A jump goes back by more than the threshold from the
				// latest stamp seen since the last jump.
				require.Greater(t, j.Back, time.Second)
				require.Equal(t, prevMax, j.From)
				require.Less(t, j.To, j.From)
			}
			if first || ok {
				prevMax = st
				if ok {
					prevMax = max(j.To, st)
				}
				first = false
			} else if st >= prevMax.Add(-time.Second) {
				prevMax = max(prevMax, st)
			}
		}
	})
}
