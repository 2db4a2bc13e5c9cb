// Package cdrtest builds serialized ROS 2 messages with a leading
// std_msgs/Header for tests and benchmarks.
package cdrtest

import (
	"encoding/binary"

	"github.com/timealign/timealign/pkg/stamp"
)

// Message returns a little-endian CDR message: encapsulation header, a
// std_msgs/Header with stamp t and frame_id, then payload bytes 0, 1, 2, …
// (a sensor_msgs/Imu body is 304 bytes). A stamp outside the int32 seconds
// of builtin_interfaces/Time panics: tests pass valid stamps.
func Message(t stamp.Time, frameID string, payload int) []byte {
	sec, ns, err := t.ROS()
	if err != nil {
		panic(err)
	}
	b := []byte{0x00, 0x01, 0x00, 0x00}
	b = binary.LittleEndian.AppendUint32(b, uint32(sec))
	b = binary.LittleEndian.AppendUint32(b, ns)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(frameID)+1))
	b = append(b, frameID...)
	b = append(b, 0)
	for i := 0; i < payload; i++ {
		b = append(b, byte(i))
	}
	return b
}

// TimeReference returns a little-endian CDR sensor_msgs/msg/TimeReference:
// header (stamp t, frameID), time_ref ref and source, laid out as rclpy
// serializes it. Stamps outside builtin_interfaces/Time panic.
func TimeReference(t stamp.Time, frameID string, ref stamp.Time, source string) []byte {
	b := Message(t, frameID, 0)
	for (len(b)-4)%4 != 0 {
		b = append(b, 0)
	}
	sec, ns, err := ref.ROS()
	if err != nil {
		panic(err)
	}
	b = binary.LittleEndian.AppendUint32(b, uint32(sec))
	b = binary.LittleEndian.AppendUint32(b, ns)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(source)+1))
	b = append(b, source...)
	return append(b, 0)
}
