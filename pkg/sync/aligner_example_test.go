package sync_test

import (
	"fmt"
	"time"

	"github.com/timealign/timealign/pkg/stamp"
	tsync "github.com/timealign/timealign/pkg/sync"
)

// An IMU at 100 Hz and a lidar at 25 Hz whose scans arrive late: the
// aligner plays both in stamp order, waiting for the lidar only while its
// next scan may still come (its period) and never longer than the timeout.
func ExampleStreamAligner() {
	cfg := tsync.DefaultAlignerConfig()
	cfg.Timeout = 100 * time.Millisecond
	cfg.Streams = []tsync.StreamConfig{
		tsync.DefaultStreamConfig(10 * time.Millisecond), // imu
		tsync.DefaultStreamConfig(40 * time.Millisecond), // lidar
	}
	a, err := tsync.NewStreamAligner[string](cfg)
	if err != nil {
		panic(err)
	}
	ms := stamp.Time(time.Millisecond)
	play := func(x tsync.StreamSample[string]) { fmt.Println(x.Value, time.Duration(x.Stamp)) }
	a.Push(0, 0, "imu")
	a.Push(1, 0, "lidar")
	a.Push(0, 10*ms, "imu")
	a.Drain(play) // the lidar is not due before 40 ms: play up to there
	a.Push(0, 40*ms, "imu")
	a.Push(0, 50*ms, "imu")
	a.Drain(play) // 40 ms waits for the lidar scan stamped 40 ms
	a.Push(1, 40*ms, "lidar")
	a.Drain(play)
	if _, why := a.Push(1, 30*ms, "lidar"); why != tsync.AlignerNoDrop {
		fmt.Println("dropped:", why)
	}
	fmt.Println("latency:", a.Latency())
	// Output:
	// imu 0s
	// lidar 0s
	// imu 10ms
	// imu 40ms
	// lidar 40ms
	// imu 50ms
	// dropped: late
	// latency: 0s
}
