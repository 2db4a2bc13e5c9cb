package stamp_test

import (
	"fmt"
	"time"

	"github.com/timealign/timealign/pkg/stamp"
)

func ExampleFromROS() {
	t, err := stamp.FromROS(1_700_000_000, 250_000_000)
	if err != nil {
		panic(err)
	}
	fmt.Println(t, int64(t))
	later := t.Add(1500 * time.Millisecond)
	sec, nanosec, _ := later.ROS()
	fmt.Println(sec, nanosec, later.Sub(t))
	_, err = stamp.FromROS(1, 1_000_000_000)
	fmt.Println(err)
	// Output:
	// 1700000000.250000000 1700000000250000000
	// 1700000001 750000000 1.5s
	// stamp: nanosec out of range [0, 1e9): 1000000000
}

// Rewriting the stamp of a serialized message of any type whose first
// field is a std_msgs/Header.
func ExampleSetHeaderStamp() {
	msg := []byte{
		0x00, 0x01, 0x00, 0x00, // CDR, little endian
		0x01, 0x00, 0x00, 0x00, // header.stamp.sec = 1
		0x02, 0x00, 0x00, 0x00, // header.stamp.nanosec = 2
		0x04, 0x00, 0x00, 0x00, 'i', 'm', 'u', 0x00, // header.frame_id = "imu"
		0x2a, // the rest of the message
	}
	t, frame, _ := stamp.Header(msg)
	fmt.Println(int64(t), string(frame))
	_ = stamp.SetHeaderStamp(msg, t.Add(-time.Millisecond))
	t, _ = stamp.HeaderStamp(msg)
	fmt.Println(int64(t), msg[len(msg)-1])
	// Output:
	// 1000000002 imu
	// 999000002 42
}
