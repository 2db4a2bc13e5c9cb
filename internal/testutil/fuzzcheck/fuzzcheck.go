// Package fuzzcheck helps fuzz tests catch hangs and reach extreme values.
//
// [Finish] runs one fuzz input's work under a watchdog and, if the work
// does not finish within a deadline of CPU time, ends the process with a
// panic that describes the input and shows where the work is stuck: a
// loop that never ends is a failure like any other, found by the fuzzer
// (which records the input of a crashed worker) and replayed from the
// corpus by plain go test.
//
// [Bytes] decodes fuzz bytes into values where the int64 extremes, zero and
// "the previous value again" are each one byte away, so the fuzzer reaches
// them without having to guess eight bytes at once.
package fuzzcheck

import (
	"encoding/binary"
	"flag"
	"fmt"
	"math"
	"os"
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

// Deadline is the CPU time one input may use. The work of a fuzz input is
// bounded and takes well under 10 ms here, so 2 s is a margin of over 100×
// (the race detector included); a loop that does not end uses it up within
// about 2 s on an idle machine.
//
// The deadline counts the process's CPU time, not the wall clock, so a
// machine busy with other work (a CI runner, parallel fuzz workers) slows
// the detection of a hang instead of failing an input that merely waited
// for a CPU. WallLimit catches work that blocks without spinning.
const Deadline = 2 * time.Second

// WallLimit is the wall-clock time one input may take whatever CPU it used.
const WallLimit = 60 * time.Second

// T is the test as the work sees it: failures name the input, and Step
// records progress. It satisfies testing.TB (and testify's
// require.TestingT).
type T struct {
	testing.TB
	describe func() string
	step     atomic.Int64
}

// Errorf reports a failure, naming the input.
func (t *T) Errorf(format string, args ...any) {
	t.TB.Helper()
	t.TB.Errorf("%s\ninput: %s", fmt.Sprintf(format, args...), t.describe())
}

// Fatalf reports a failure, naming the input, and ends the test.
func (t *T) Fatalf(format string, args ...any) {
	t.TB.Helper()
	t.TB.Fatalf("%s\ninput: %s", fmt.Sprintf(format, args...), t.describe())
}

// Step records the work's progress (e.g. the index of the message being
// processed), so a hang names the step that did not return.
func (t *T) Step(i int) { t.step.Store(int64(i)) }

// Finish runs work on the test's goroutine under a watchdog. If work has
// not returned when the process has used Deadline of CPU time since it
// started (or WallLimit has passed), the watchdog ends the process with a
// panic that describes the input (describe) and shows every goroutine's
// stack, the stuck one included: a goroutine cannot be stopped, and one
// left spinning would use the CPU budget of every later input. Under the
// fuzzer, the crashed worker's input is recorded as a failure; under go
// test, the package fails. Failures and panics of work are reported as
// usual, failures with the input named.
//
// The CPU deadline holds while fuzzing (-test.fuzz), where one input runs
// at a time in its worker process. Under plain go test the seeds and the
// committed corpus share the process with the package's other tests, run
// in parallel, whose CPU the process count includes: there only
// WallLimit holds.
func Finish(tb testing.TB, describe func() string, work func(t *T)) {
	tb.Helper()
	cpu := Deadline
	if !fuzzing() {
		cpu = WallLimit
	}
	finish(tb, cpu, WallLimit, crash, describe, work)
}

// fuzzing reports whether the test binary runs with -test.fuzz.
func fuzzing() bool {
	f := flag.Lookup("test.fuzz")
	return f != nil && f.Value.String() != ""
}

// crash panics on the watchdog's goroutine (the timer's), which no test
// framework recovers, so the process ends. A fuzz worker's output goes
// nowhere (the fuzzer reports only "fuzzing process hung or terminated
// unexpectedly"), so the message is also appended to the file that
// $FUZZCHECK_LOG names, if set.
func crash(msg string) {
	if name := os.Getenv("FUZZCHECK_LOG"); name != "" {
		if f, err := os.OpenFile(name, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
			fmt.Fprintf(f, "%s pid %d: fuzzcheck: %s\n", time.Now().Format(time.RFC3339), os.Getpid(), msg)
			f.Close()
		}
	}
	panic("fuzzcheck: " + msg)
}

func finish(tb testing.TB, cpuLimit, wallLimit time.Duration, hang func(msg string), describe func() string, work func(t *T)) {
	tb.Helper()
	t := &T{TB: tb, describe: describe}
	t.step.Store(-1)
	wall0 := time.Now()
	// The watchdog is a timer that checks every cpuLimit/8 of wall time,
	// counting CPU time from its first check (so work that ends sooner
	// costs no getrusage call): a spinning goroutine uses up the limit
	// within about 9/8·cpuLimit of wall time on an idle machine, later on
	// a busy one.
	var done atomic.Bool
	var timer *time.Timer
	var cpu0 time.Duration // only the timer's goroutine touches it
	first := true
	armed := make(chan struct{})
	check := func() {
		<-armed
		if done.Load() {
			return
		}
		cpu := processCPU()
		if first {
			cpu0, first = cpu, false
		}
		switch {
		case cpu-cpu0 >= cpuLimit:
			hang(fmt.Sprintf("%s: did not finish within %v of CPU time (stuck at step %d): %s\n%s",
				tb.Name(), cpuLimit, t.step.Load(), describe(), stacks()))
		case time.Since(wall0) >= wallLimit:
			hang(fmt.Sprintf("%s: did not finish within %v (stuck at step %d): %s\n%s",
				tb.Name(), wallLimit, t.step.Load(), describe(), stacks()))
		default:
			timer.Reset(cpuLimit / 8)
		}
	}
	timer = time.AfterFunc(cpuLimit/8, check)
	close(armed)
	defer func() {
		done.Store(true)
		timer.Stop()
	}()
	work(t)
}

// Bytes hands out values decoded from fuzz input; once the input is used
// up every read returns zeros. The zero value is an empty input.
type Bytes struct{ b []byte }

// New returns a reader of b.
func New(b []byte) *Bytes { return &Bytes{b} }

// Len returns how many bytes are left.
func (r *Bytes) Len() int { return len(r.b) }

// Byte returns the next byte.
func (r *Bytes) Byte() byte {
	if len(r.b) == 0 {
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

// Uint64 returns the next eight bytes, little-endian (zero-padded at the end).
func (r *Bytes) Uint64() uint64 {
	var b [8]byte
	n := copy(b[:], r.b)
	r.b = r.b[n:]
	return binary.LittleEndian.Uint64(b[:])
}

// The tags of Int64: each names a family of values.
const (
	TagDefault = iota // the caller's default (also what an exhausted input gives)
	TagRaw            // eight bytes follow: any value
	TagSmall          // a signed byte: −128..127
	TagMax            // MaxInt64 − a byte
	TagMin            // MinInt64 + a byte
	TagPow2           // ±2^k from a byte: bit 7 the sign, k = (bits 0..5) mod 63
	TagMilli          // the default plus a signed 16-bit count of milliseconds, saturating
	TagDelta          // the default plus a signed byte, saturating
	numTags
)

// Int64 decodes a tagged value (see the Tag constants); def is the value
// of TagDefault, and the base of TagMilli and TagDelta (a previous stamp,
// a default).
func (r *Bytes) Int64(def int64) int64 {
	switch r.Byte() % numTags {
	case TagRaw:
		return int64(r.Uint64())
	case TagSmall:
		return int64(int8(r.Byte()))
	case TagMax:
		return math.MaxInt64 - int64(r.Byte())
	case TagMin:
		return math.MinInt64 + int64(r.Byte())
	case TagPow2:
		c := r.Byte()
		v := int64(1) << (c & 0x3f % 63)
		if c&0x80 != 0 {
			v = -v
		}
		return v
	case TagMilli:
		ms := int64(int16(uint16(r.Byte()) | uint16(r.Byte())<<8))
		return SatAdd(def, ms*int64(time.Millisecond))
	case TagDelta:
		return SatAdd(def, int64(int8(r.Byte())))
	}
	return def
}

// NonNeg is Int64 folded onto 0..MaxInt64 (a negative v becomes −v, and
// MinInt64 becomes MaxInt64): for durations that must not be negative.
func (r *Bytes) NonNeg(def int64) int64 { return Abs(r.Int64(def)) }

// Abs returns |v|, with MaxInt64 for MinInt64.
func Abs(v int64) int64 {
	switch {
	case v == math.MinInt64:
		return math.MaxInt64
	case v < 0:
		return -v
	}
	return v
}

// SatAdd returns a+b saturated to the int64 range.
func SatAdd(a, b int64) int64 {
	s := a + b
	if (a >= 0) == (b >= 0) && (s >= 0) != (a >= 0) {
		if a >= 0 {
			return math.MaxInt64
		}
		return math.MinInt64
	}
	return s
}

// Encoder builds inputs for Bytes, to turn test tables into seeds.
type Encoder struct{ B []byte }

// Byte appends a byte.
func (e *Encoder) Byte(c byte) *Encoder { e.B = append(e.B, c); return e }

// Default appends TagDefault.
func (e *Encoder) Default() *Encoder { return e.Byte(TagDefault) }

// Raw appends v with TagRaw, which decodes to v exactly.
func (e *Encoder) Raw(v int64) *Encoder {
	e.B = binary.LittleEndian.AppendUint64(append(e.B, TagRaw), uint64(v))
	return e
}

// Uint64 appends v as 8 little-endian bytes, without a tag (for a field
// the target reads whole, e.g. a float64's bits).
func (e *Encoder) Uint64(v uint64) *Encoder {
	e.B = binary.LittleEndian.AppendUint64(e.B, v)
	return e
}

// stacks returns the stacks of every goroutine (the first 64 KiB).
func stacks() string {
	buf := make([]byte, 64<<10)
	return string(buf[:runtime.Stack(buf, true)])
}

var start = time.Now()

// wallClock is the time since the package was initialized.
func wallClock() time.Duration { return time.Since(start) }
