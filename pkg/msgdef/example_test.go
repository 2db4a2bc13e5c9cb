package msgdef_test

import (
	"fmt"

	"github.com/timealign/timealign/pkg/msgdef"
)

func ExampleHeaderFirst() {
	imu := "# This is a message to hold data from an IMU\nstd_msgs/Header header\ngeometry_msgs/Quaternion orientation\n"
	fmt.Println(msgdef.HeaderFirst(imu))
	str := "string data\n"
	fmt.Println(msgdef.HeaderFirst(str))
	// Output:
	// std_msgs/Header header true
	// string data false
}
