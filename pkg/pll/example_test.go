package pll_test

import (
	"fmt"
	"time"

	"github.com/timealign/timealign/pkg/pll"
	"github.com/timealign/timealign/pkg/stamp"
)

// A 25 Hz device with a 1 µs tick clock, received 2 ms (±1 ms) late: the
// envelope mode stamps each scan at its device time on the host's clock.
func Example() {
	cfg := pll.DefaultConfig()
	cfg.Mode = pll.Envelope
	p, err := pll.New(cfg)
	if err != nil {
		panic(err)
	}
	start := stamp.Time(1_700_000_000 * int64(time.Second))
	for i := range 20 {
		acquired := start.Add(time.Duration(i) * 40 * time.Millisecond)
		latency := 2*time.Millisecond + time.Duration(i%3-1)*time.Millisecond
		p.Update(acquired.Add(latency), uint64(5_000_000+i*40_000))
	}
	est, ok := p.Corrected(5_000_000 + 19*40_000)
	fmt.Println(ok, est.Sub(start))
	s := p.Status()
	fmt.Println(s.Mode, s.Valid, s.Fill, s.Accepted)
	// Output:
	// true 761ms
	// envelope true 7 14
}

// SICK's SoftwarePLL, as in sick_scan_xd: no stamp until the FIFO of 7
// samples agrees within 100 ms.
func ExampleMode_sick() {
	p, _ := pll.New(pll.DefaultConfig())
	start := stamp.Time(1_700_000_000 * int64(time.Second))
	for i := range 8 {
		p.Update(start.Add(time.Duration(i)*40*time.Millisecond), uint64(1000+i*40_000))
		_, ok := p.Corrected(uint64(1000 + i*40_000))
		fmt.Print(ok, " ")
	}
	fmt.Println()
	// Output:
	// false false false false false false true true
}
