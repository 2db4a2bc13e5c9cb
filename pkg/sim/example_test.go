package sim_test

import (
	"fmt"
	"time"

	"github.com/timealign/timealign/pkg/sim"
)

// A 100 Hz sensor whose stamps are taken on arrival: 5 ms latency plus
// uniform jitter of up to 2 ms.
func Example() {
	cfg := sim.DefaultConfig()
	cfg.Count = 10000
	samples, err := sim.Generate(cfg)
	if err != nil {
		panic(err)
	}
	errs := make([]float64, 0, len(samples))
	for _, s := range sim.Delivered(samples) {
		errs = append(errs, float64(s.Receive.Sub(s.True)))
	}
	sc := sim.ScoreErrors(errs)
	fmt.Printf("bias %.1f ms, std %.2f ms, worst %.1f ms\n",
		sc.Bias.Seconds()*1e3, sc.Std.Seconds()*1e3, sc.Max.Seconds()*1e3)
	// Output: bias 6.0 ms, std 0.58 ms, worst 7.0 ms
}

// Two streams at different rates, merged in the order they reach the host,
// as a synchronizer sees them.
func ExampleMerge() {
	imu, cam := sim.DefaultConfig(), sim.DefaultConfig()
	imu.Count, cam.Count = 6, 2
	cam.Period, cam.Seed = 30*time.Millisecond, 2
	a, _ := sim.Generate(imu)
	b, _ := sim.Generate(cam)
	for _, s := range sim.Merge(a, b) {
		fmt.Printf("topic %d sample %d\n", s.Topic, s.Seq)
	}
	// Output:
	// topic 1 sample 0
	// topic 0 sample 0
	// topic 0 sample 1
	// topic 0 sample 2
	// topic 1 sample 1
	// topic 0 sample 3
	// topic 0 sample 4
	// topic 0 sample 5
}

// An hour of a 30 Hz camera, streamed in the order its frames reach the
// host: the run is never held in memory, so it may be as long as needed.
func ExampleNewDelivery() {
	p, err := sim.LookupPreset("camera")
	if err != nil {
		panic(err)
	}
	cfg := p.Config
	cfg.Count, cfg.Duration = 0, time.Hour // the run's length: one of the two
	d, err := sim.NewDelivery(cfg)
	if err != nil {
		panic(err)
	}
	var frames int
	var worst time.Duration
	for s, ok := d.Next(); ok; s, ok = d.Next() {
		frames++
		worst = max(worst, s.Receive.Sub(s.True))
	}
	fmt.Printf("%d of %d frames delivered, worst latency %v\n",
		frames, (time.Hour+cfg.Period-1)/cfg.Period, worst.Round(time.Millisecond))
	// Output: 106875 of 108001 frames delivered, worst latency 51ms
}

// The streams of ExampleMerge, merged as they are simulated.
func ExampleNewMergedDelivery() {
	imu, cam := sim.DefaultConfig(), sim.DefaultConfig()
	imu.Count, cam.Count = 6, 2
	cam.Period, cam.Seed = 30*time.Millisecond, 2
	m, err := sim.NewMergedDelivery(imu, cam)
	if err != nil {
		panic(err)
	}
	for s, ok := m.Next(); ok; s, ok = m.Next() {
		fmt.Printf("topic %d sample %d\n", s.Topic, s.Seq)
	}
	// Output:
	// topic 1 sample 0
	// topic 0 sample 0
	// topic 0 sample 1
	// topic 0 sample 2
	// topic 1 sample 1
	// topic 0 sample 3
	// topic 0 sample 4
	// topic 0 sample 5
}
