package fuzzcheck

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// fakeTB records failures instead of failing the test.
type fakeTB struct {
	testing.TB
	failed []string
}

func (f *fakeTB) Helper()      {}
func (f *fakeTB) Name() string { return "TestX" }

func (f *fakeTB) Errorf(format string, args ...any) {
	f.failed = append(f.failed, fmt.Sprintf(format, args...))
}

func (f *fakeTB) Fatalf(format string, args ...any) {
	f.Errorf(format, args...)
	runtime.Goexit()
}

// run calls finish on a fakeTB (on a goroutine of its own: Fatalf ends
// it) with a watchdog that records the hang and releases the work, and
// returns the failures and the hang.
func run(wall time.Duration, work func(t *T, release chan struct{})) (failed []string, hung string) {
	f := &fakeTB{}
	release := make(chan struct{})
	hang := func(msg string) { hung = msg; close(release) }
	done := make(chan struct{})
	go func() {
		defer close(done)
		finish(f, 50*time.Millisecond, wall, hang, func() string { return "the input" },
			func(t *T) { work(t, release) })
	}()
	<-done
	return f.failed, hung
}

func TestFinish(t *testing.T) {
	for _, c := range []struct {
		name   string
		work   func(t *T, release chan struct{})
		failed []string // the failures
		hung   []string // substrings of the hang report; none: no hang
	}{
		{"returns", func(t *T, _ chan struct{}) { t.Step(3) }, nil, nil},
		{"spins", func(t *T, release chan struct{}) {
			t.Step(7)
			for {
				select {
				case <-release:
					return
				default:
				}
			}
		}, nil, []string{"TestX: did not finish within 50ms of CPU time", "step 7", "the input", "fuzzcheck_test.go"}},
		{"blocks", func(t *T, release chan struct{}) { t.Step(2); <-release },
			nil, []string{"TestX: did not finish within 300ms (stuck at step 2)", "the input"}},
		{"fails", func(t *T, _ chan struct{}) { t.Errorf("first"); t.Fatalf("second %d", 2); t.Errorf("not reached") },
			[]string{"first\ninput: the input", "second 2\ninput: the input"}, nil},
	} {
		// A spinning input must hit the CPU budget however loaded the
		// machine is (a short wall cap would fire first); the blocked one
		// uses no CPU and must hit the wall cap.
		wall := time.Minute
		if c.name == "blocks" {
			wall = 300 * time.Millisecond
		}
		failed, hung := run(wall, c.work)
		if !slices.Equal(failed, c.failed) {
			t.Errorf("%s: failures %q, want %q", c.name, failed, c.failed)
		}
		if len(c.hung) == 0 && hung != "" {
			t.Errorf("%s: hung: %s", c.name, hung)
		}
		for _, w := range c.hung {
			if !strings.Contains(hung, w) {
				t.Errorf("%s: hang report %q does not contain %q", c.name, hung, w)
			}
		}
	}
}

func TestInt64(t *testing.T) {
	for _, c := range []struct {
		in   []byte
		def  int64
		want int64
	}{
		{nil, 42, 42},
		{[]byte{TagDefault}, -5, -5},
		{[]byte{TagRaw, 1, 0, 0, 0, 0, 0, 0, 0x80}, 0, math.MinInt64 + 1},
		{[]byte{TagRaw, 1}, 0, 1}, // zero-padded
		{[]byte{TagSmall, 0xff}, 9, -1},
		{[]byte{TagMax, 0}, 0, math.MaxInt64},
		{[]byte{TagMax, 7}, 0, math.MaxInt64 - 7},
		{[]byte{TagMin, 0}, 0, math.MinInt64},
		{[]byte{TagMin, 3}, 0, math.MinInt64 + 3},
		{[]byte{TagPow2, 62}, 0, 1 << 62},
		{[]byte{TagPow2, 0x80 | 10}, 0, -1024},
		{[]byte{TagMilli, 0xff, 0xff}, 5, 5 - 1_000_000},
		{[]byte{TagMilli, 1, 0}, math.MaxInt64 - 10, math.MaxInt64},
		{[]byte{TagDelta, 0x80}, math.MinInt64 + 5, math.MinInt64},
		{[]byte{TagDelta, 2}, 40, 42},
		{[]byte{numTags + TagMax, 0}, 0, math.MaxInt64}, // tags wrap
	} {
		if got := New(c.in).Int64(c.def); got != c.want {
			t.Errorf("Int64(%v, def %d) = %d, want %d", c.in, c.def, got, c.want)
		}
	}
	if got := New([]byte{TagMin, 0}).NonNeg(0); got != math.MaxInt64 {
		t.Errorf("NonNeg(MinInt64) = %d", got)
	}
	var e Encoder
	for _, v := range []int64{0, -1, math.MinInt64, math.MaxInt64, 12345} {
		e.Raw(v)
	}
	e.Default()
	r := New(e.B)
	for _, v := range []int64{0, -1, math.MinInt64, math.MaxInt64, 12345, 77} {
		if got := r.Int64(77); got != v {
			t.Errorf("Encoder round trip: got %d, want %d", got, v)
		}
	}
	if r.Len() != 0 || r.Byte() != 0 || r.Uint64() != 0 {
		t.Error("an exhausted input reads zeros")
	}
}
