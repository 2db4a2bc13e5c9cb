package report

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/timealign/timealign/pkg/stamp"
)

// stream makes synthetic times from intervals (ms) given by gen for n
// messages.
func stream(n int, gen func(i int) float64) []stamp.Time {
	t := stamp.Time(1_700_000_000 * int64(time.Second))
	out := make([]stamp.Time, 0, n)
	for i := range n {
		if i > 0 {
			t = t.Add(time.Duration(gen(i) * 1e6))
		}
		out = append(out, t)
	}
	return out
}

func classifyTimes(ts []stamp.Time) (Class, string) {
	var c TimingCounter
	for _, t := range ts {
		c.Add(t)
	}
	return Classify(c.Timing())
}

// TestClassify: synthetic streams of each kind, and the borders.
func TestClassify(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	jittered := func(period, jitter, loss float64) []stamp.Time {
		// acquisition on a grid, stamped late by a uniform jitter,
		// samples lost at random
		var out []stamp.Time
		t0 := stamp.Time(1_700_000_000 * int64(time.Second))
		for i := range 3000 {
			if rng.Float64() < loss {
				continue
			}
			out = append(out, t0.Add(time.Duration((float64(i)*period+rng.Float64()*jitter)*1e6)))
		}
		return out
	}
	bursts := func(nb, size int) []stamp.Time {
		var out []stamp.Time
		t0 := stamp.Time(1_700_000_000 * int64(time.Second))
		for b := range nb {
			start := t0.Add(time.Duration(b)*time.Second + time.Duration(rng.IntN(500))*time.Millisecond)
			for k := range size {
				out = append(out, start.Add(time.Duration(k)*3*time.Microsecond))
			}
		}
		return out
	}
	periodChange := stream(2000, func(i int) float64 {
		if i < 1000 {
			return 10
		}
		return 25
	})
	dups := jittered(10, 1, 0)
	for i := 100; i < len(dups); i += 37 {
		dups[i] = dups[i-1] // a driver that sent a stamp twice
	}
	batches := stream(800, func(i int) float64 { // 8 values per stamp at 2 Hz
		if i%8 == 0 {
			return 500
		}
		return 0
	})
	for _, c := range []struct {
		name string
		ts   []stamp.Time
		want Class
	}{
		{"periodic", stream(500, func(int) float64 { return 10 }), Periodic},
		{"jitter 30 % and 5 % loss", jittered(10, 3, 0.05), Periodic},
		{"jitter 20 % and 20 % loss", jittered(10, 2, 0.2), Periodic},
		{"period change half-way", periodChange, Periodic},
		{"duplicate stamps", dups, Periodic},
		{"a long pause half-way", stream(2000, func(i int) float64 {
			if i == 1000 {
				return 15_000
			}
			return 10
		}), Periodic},
		{"event-driven (Poisson)", stream(1000, func(int) float64 { return rng.ExpFloat64() * 100 }), Bursty},
		{"bursts of 5 every second", bursts(60, 5), Bursty},
		{"batches sharing a stamp", batches, Bursty},
		{"one message", stream(1, nil), OneOff},
		{"a handful", stream(8, func(int) float64 { return 1000 }), OneOff},
		{"15 regular ones", stream(15, func(int) float64 { return 10 }), OneOff},
		{"a parameter dump in two bursts", bursts(2, 400), OneOff},
		{"a table written in 90 µs", stream(34, func(int) float64 { return 0.003 }), OneOff},
		{"all at one time", stream(100, func(int) float64 { return 0 }), OneOff},
	} {
		got, why := classifyTimes(c.ts)
		assert.Equal(t, c.want, got, "%s: %s", c.name, why)
		assert.NotEmpty(t, why, c.name)
	}
}

// TestClassifyRegularPair: the borders of a regular pair.
func TestClassifyRegularPair(t *testing.T) {
	ms := time.Millisecond
	assert.True(t, regularPair(10*ms, 15*ms))
	assert.False(t, regularPair(10*ms, 16*ms))
	assert.True(t, regularPair(20*ms, 10*ms))
	assert.True(t, regularPair(10*ms, 33*ms))
	assert.False(t, regularPair(10*ms, 40*ms))
}

// A sensor at 10 Hz, and a parameter table written in one burst at start-up.
func ExampleClassify() {
	t0 := stamp.Time(1_700_000_000 * int64(time.Second))
	var sensor, params TimingCounter
	for i := range 100 {
		sensor.Add(t0.Add(time.Duration(i) * 100 * time.Millisecond))
	}
	for i := range 300 {
		params.Add(t0.Add(time.Duration(i) * 3 * time.Microsecond))
	}
	params.Add(t0.Add(time.Minute)) // one changed later
	fmt.Println(Classify(sensor.Timing()))
	fmt.Println(Classify(params.Timing()))
	// Output:
	// periodic regular intervals (100 % of consecutive ones alike)
	// one-off 301 messages in 2 bursts
}
