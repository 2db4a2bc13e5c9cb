package sync_test

import (
	"fmt"
	"time"

	"github.com/timealign/timealign/pkg/stamp"
	tsync "github.com/timealign/timealign/pkg/sync"
)

// A camera at 10 Hz and an IMU at 50 Hz, matched by message_filters'
// ApproximateTime: each set holds the IMU sample closest to a frame.
func Example() {
	cfg := tsync.DefaultConfig() // approximate, 2 topics, queue 10, age penalty 0.1
	s, err := tsync.New(cfg, func(set []tsync.Message[string]) {
		fmt.Printf("%s @%v + %s @%v\n", set[0].Value, ms(set[0].Stamp), set[1].Value, ms(set[1].Stamp))
	}, nil)
	if err != nil {
		panic(err)
	}
	for i := 0; i < 15; i++ {
		t := stamp.Time(i) * stamp.Time(20*time.Millisecond)
		s.Add(tsync.Message[string]{Topic: 1, Stamp: t + 3e6, Arrival: t, Value: "imu"})
		if i%5 == 0 {
			s.Add(tsync.Message[string]{Topic: 0, Stamp: t, Arrival: t, Value: "frame"})
		}
	}
	fmt.Println(s.Status().Sets, "sets")
	// Output:
	// frame @0s + imu @3ms
	// frame @100ms + imu @103ms
	// frame @200ms + imu @203ms
	// 3 sets
}

func ms(t stamp.Time) string { return time.Duration(t).String() }
