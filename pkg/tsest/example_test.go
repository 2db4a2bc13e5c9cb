package tsest_test

import (
	"fmt"
	"time"

	"github.com/timealign/timealign/pkg/stamp"
	"github.com/timealign/timealign/pkg/tsest"
)

// A 100 Hz stream received 5 ms late with up to 3 ms of jitter: the first
// samples keep their receive stamps (the fit is too young to be trusted);
// once it covers a quarter window the estimates sit on the 10 ms grid of
// the earliest arrivals.
func Example() {
	e, err := tsest.New(tsest.DefaultConfig())
	if err != nil {
		panic(err)
	}
	jitter := []time.Duration{3, 0, 2, 1, 3, 0, 1, 2, 0, 3, 1, 2}
	for range 5 {
		jitter = append(jitter, jitter[:12]...)
	}
	start := stamp.Time(1_700_000_000_000_000_000)
	for i, j := range jitter {
		acquired := start.Add(time.Duration(i) * 10 * time.Millisecond)
		received := acquired.Add(5*time.Millisecond + j*time.Millisecond)
		est, _ := e.Update(received)
		if i == 0 || i >= len(jitter)-4 {
			fmt.Printf("sample %d: received +%v, estimate +%v\n", i, received.Sub(acquired), est.Sub(acquired))
		}
	}
	fmt.Println("period", e.Period())
	// Output:
	// sample 0: received +8ms, estimate +8ms
	// sample 68: received +5ms, estimate +5ms
	// sample 69: received +8ms, estimate +5ms
	// sample 70: received +6ms, estimate +5ms
	// sample 71: received +7ms, estimate +5ms
	// period 10ms
}
