package tsest

import (
	"errors"
	"fmt"
	"math"
	"runtime/debug"
	"testing"
	"time"

	"github.com/timealign/timealign/pkg/stamp"
)

// eventsDeadline bounds one input of FuzzEvents and TestExtremeEvents: an
// update is O(1) amortized, so an input of a few thousand events that has
// not finished by then does not terminate.
const eventsDeadline = 10 * time.Second

// maxOps bounds the events of one input.
const maxOps = 4096

// events is one input of FuzzEvents: a configuration, a stream period and
// start, and ops, one event each (see run).
type events struct {
	ops       []byte
	start     int64 // first receive stamp
	period    int64 // stream period, ns (≤ 0: 10 ms)
	window    int64 // Config.Window
	prior     int64 // Config.Period
	minLat    int64 // Config.MinLatency
	bits      uint8 // Config.IndexBits
	threshold uint8 // Config.LossThreshold (low 3 bits), NeverInferLoss (bit 3)
}

func (in events) String() string {
	return fmt.Sprintf("events{ops: %q, start: %d, period: %d, window: %d, prior: %d, minLat: %d, bits: %d, threshold: %d}",
		in.ops, in.start, in.period, in.window, in.prior, in.minLat, in.bits, in.threshold)
}

func (in events) config() Config {
	return Config{
		Window: time.Duration(in.window), Period: time.Duration(in.prior), MinLatency: time.Duration(in.minLat),
		LossThreshold: int(in.threshold & 7), NeverInferLoss: in.threshold&8 != 0, IndexBits: int(in.bits),
	}
}

// run feeds the events and returns the first broken invariant: a bad
// config must be refused with ErrConfig; every sample is estimated except
// a repeated index; estimates never go back but across a restart;
// references are taken or rejected with ErrReference; memory stays bounded
// and the period is a number.
func (in events) run() error {
	e, err := New(in.config())
	if err != nil {
		if !errors.Is(err, ErrConfig) {
			return fmt.Errorf("New: %w, want ErrConfig", err)
		}
		return nil
	}
	period := time.Duration(in.period)
	if period <= 0 {
		period = 10 * time.Millisecond
	}
	now, prev := stamp.Time(in.start), stamp.Min
	ops := in.ops[:min(len(in.ops), maxOps)]
	for i, op := range ops {
		before := e.Status()
		sample, indexed := false, false
		var index uint64
		switch op % 14 {
		case 0, 1, 2:
			now, sample = now.Add(period+time.Duration(op)*50*time.Microsecond), true
		case 3:
			now, sample, indexed, index = now.Add(period), true, true, uint64(i*int(op))
		case 4:
			e.UpdateLoss()
		case 5:
			if err := e.UpdateReference(now.Add(-time.Duration(op) * time.Microsecond)); err != nil && !errors.Is(err, ErrReference) {
				return fmt.Errorf("op %d: UpdateReference: %w", i, err)
			}
		case 6:
			now, sample = now.Add(-time.Duration(op)*time.Millisecond), true // back
		case 7:
			if op > 200 {
				e.Reset()
				prev = stamp.Min
			} else {
				now, sample = now.Add(time.Duration(op)*time.Hour/10), true // a gap
			}
		case 8: // the ends of the stamps
			now, sample = stamp.Max, true
			if op&16 != 0 {
				now = stamp.Min
			}
		case 9: // a jump of 2^62 ns either way
			now, sample = now.Add(time.Duration(1)<<62), true
			if op&16 != 0 {
				now = now.Add(-time.Duration(1) << 63)
			}
		case 10:
			now, sample, indexed, index = now.Add(period), true, true, math.MaxUint64-uint64(op)
		case 12: // the period halves (a rate that doubles)
			period = max(period/2, 1)
			now, sample = now.Add(period), true
		case 13: // the period doubles (a camera from 30 to 15 fps)
			period = min(2*period, time.Duration(math.MaxInt64/4))
			now, sample = now.Add(period), true
		case 11:
			ref := stamp.Max
			if op&16 != 0 {
				ref = stamp.Min
			}
			if err := e.UpdateReference(ref); err != nil && !errors.Is(err, ErrReference) {
				return fmt.Errorf("op %d: UpdateReference: %w", i, err)
			}
		}
		if sample {
			var err error
			var got stamp.Time
			floor := e.lastEst
			if indexed {
				got, err = e.UpdateIndex(now, index)
			} else {
				got, err = e.Update(now)
			}
			after := e.Status()
			restarted := after.Gaps != before.Gaps || after.ClockSteps != before.ClockSteps ||
				after.BaseTimeResets != before.BaseTimeResets || after.Resets != before.Resets
			if err == nil && got < prev && !restarted {
				return fmt.Errorf("op %d: estimate %v went back from %v", i, got, prev)
			}
			if err == nil {
				prev = got
			}
			// Never after its receive stamp, but where estimates that
			// never go back must stay at the previous one (after a stamp
			// that went back got the fit's prediction).
			if err == nil && floor <= now && after.Backward == before.Backward && got > now {
				return fmt.Errorf("op %d: estimate %v after its receive stamp %v", i, got, now)
			}
			switch {
			case errors.Is(err, ErrDuplicateIndex):
				if after.DupIndexes != before.DupIndexes+1 || after.Samples != before.Samples {
					return fmt.Errorf("op %d: a repeated index not counted, or estimated", i)
				}
			case err != nil:
				return fmt.Errorf("op %d: sample at %v: %w", i, now, err)
			case after.Samples != before.Samples+1:
				return fmt.Errorf("op %d: sample at %v not counted", i, now)
			}
		}
		st := e.Status()
		if st.WindowSize > MaxWindowSamples || uint64(st.WindowSize) > st.Samples {
			return fmt.Errorf("op %d: window of %d samples (%d seen)", i, st.WindowSize, st.Samples)
		}
		if math.IsNaN(e.fit.period) || math.IsNaN(e.ref.latency) || e.fit.period < 0 || st.Period < 0 {
			return fmt.Errorf("op %d: period %v, latency %v", i, e.fit.period, e.ref.latency)
		}
		// Without references the latency is MinLatency (to a float64's
		// precision), however large.
		if d := st.Latency - time.Duration(in.minLat); st.References == 0 && (d < -2048 || d > 2048) {
			return fmt.Errorf("op %d: latency %v without references, MinLatency %v", i, st.Latency, time.Duration(in.minLat))
		}
	}
	return nil
}

// check runs in under eventsDeadline, failing with the input described on
// a broken invariant, a panic or a hang.
func (in events) check(t *testing.T) {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				done <- fmt.Errorf("panic: %v\n%s", r, debug.Stack())
			}
		}()
		done <- in.run()
	}()
	timer := time.NewTimer(eventsDeadline)
	defer timer.Stop()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("%v: %v", in, err)
		}
	case <-timer.C:
		t.Fatalf("%v: not finished after %v: it does not terminate", in, eventsDeadline)
	}
}

// extremeEvents are inputs at the ends of every range: stamps at and
// around ±2^63, windows, periods and latencies of 1 ns and of 2^63−1 ns,
// every index width's ends, and events of every kind.
var extremeEvents = func() []events {
	every := []byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 15, 16, 20, 24, 27, 0, 0, 3, 3, 6, 0, 5, 0, 17, 0, 201, 0, 0, 12, 0, 0, 13, 13, 0, 0}
	long := make([]byte, 600)
	for i := range long {
		long[i] = byte(i*7) % 14
		if i%97 == 0 {
			long[i] = 8 + 16 // to the end and back
		}
	}
	const day = int64(24 * time.Hour)
	var out []events
	for _, start := range []int64{0, 1_700_000_000_000_000_000, math.MaxInt64, math.MinInt64, math.MaxInt64 - day, math.MinInt64 + day} {
		for _, c := range []struct{ period, window, prior, minLat int64 }{
			{0, int64(time.Second), 0, 0},
			{1, 2, 1, 0},                         // 1 ns period, 2 ns window
			{1, 1, 0, math.MaxInt64},             // the least window, the largest latency
			{math.MaxInt64, math.MaxInt64, 0, 0}, // the largest period and window
			{int64(time.Second), math.MaxInt64, math.MaxInt64 - 1, math.MaxInt64},
			{int64(time.Millisecond), int64(time.Second), int64(time.Second) - 1, int64(time.Hour)},
			{0, 0, 0, 0},                    // refused: no window
			{0, int64(time.Second), -1, -1}, // refused
		} {
			for _, bits := range []uint8{1, 63, 64, 0, 65} {
				for _, ops := range [][]byte{every, long} {
					out = append(out, events{ops: ops, start: start, period: c.period, window: c.window,
						prior: c.prior, minLat: c.minLat, bits: bits, threshold: uint8(len(out) % 16)})
				}
			}
		}
	}
	return out
}()

// TestExtremeEvents: inputs at the ends of every range finish, without a
// panic and with every invariant of FuzzEvents.
func TestExtremeEvents(t *testing.T) {
	for _, in := range extremeEvents {
		in.check(t)
	}
}

// FuzzEvents feeds arbitrary event sequences and configurations (periods
// that halve and double among them): never a panic or a hang, every sample
// estimated but repeated indexes, never after its receive stamp, memory
// bounded.
func FuzzEvents(f *testing.F) {
	for i := range scenarios {
		f.Add([]byte{byte(i), 0, 1, 2, 3, 200, 4, 0}, int64(1_700_000_000_000_000_000), int64(10_000_000), int64(time.Second), int64(0), int64(0), uint8(64), uint8(2))
	}
	f.Add([]byte{255, 254, 0, 0, 0, 1}, int64(0), int64(1), int64(time.Second), int64(0), int64(0), uint8(8), uint8(0))
	for i := 0; i < len(extremeEvents); i += 7 {
		in := extremeEvents[i]
		f.Add(in.ops, in.start, in.period, in.window, in.prior, in.minLat, in.bits, in.threshold)
	}
	f.Fuzz(func(t *testing.T, ops []byte, start, period, window, prior, minLat int64, bits, threshold uint8) {
		events{ops: ops, start: start, period: period, window: window, prior: prior, minLat: minLat, bits: bits, threshold: threshold}.check(t)
	})
}
