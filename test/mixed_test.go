//go:build ros2 && timealign_interfaces

package test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timealign/timealign/internal/testutil/cdrtest"
	"github.com/timealign/timealign/pkg/stamp"
)

// TestMixedRMW: a graph of two middlewares. The node runs on the other
// installed one of Cyclone DDS and Fast DDS than the test's own publisher
// and subscriber (both speak DDS-RTPS on the same loopback ports), in both
// directions of data: test -> node and node -> test. It skips where only
// one of them is installed.
//
// Discovery across the two is slow one way: a Cyclone DDS reader (here
// the node's input) matches a Fast DDS writer about 3 s after the Fast
// DDS side has matched it (150 warm-up messages at 20 ms on Humble, in 3
// of 3 runs; the other way 8 or 9), and a volatile reader takes nothing
// written before it matched: 200 messages sent within 0.5 s of the test's
// match never reached the node. Once matched, nothing is lost. The nodes
// do nothing about it (it is the middlewares' discovery, and a node only
// sees that its input is silent, which its diagnostics say); the test
// warms up until a message comes back, as the rate tests do.
func TestMixedRMW(t *testing.T) {
	have := installedRMWs()
	if !slices.Contains(have, "rmw_cyclonedds_cpp") || !slices.Contains(have, "rmw_fastrtps_cpp") {
		t.Skipf("needs rmw_cyclonedds_cpp and rmw_fastrtps_cpp; installed: %v", have)
	}
	mine := os.Getenv("RMW_IMPLEMENTATION")
	other := "rmw_fastrtps_cpp"
	if mine == "rmw_fastrtps_cpp" {
		other = "rmw_cyclonedds_cpp"
	}
	t.Logf("the test on %s, the node on %s", rmwName(), other)
	node := startEnv(t, []string{"RMW_IMPLEMENTATION=" + other}, filepath.Join(binDir, "timestamp_estimator"),
		"--ros-args", "-r", "__node:=ta_mixed", "-r", "in:=/ta_test/mixed_in", "-r", "out:=/ta_test/mixed_out",
		"-p", "message_type:=sensor_msgs/msg/Imu", "-p", "qos.in.reliability:=reliable",
		"-p", "qos.in.depth:=1000", "-p", "qos.out.depth:=1000")
	p := newPeer(t, "/ta_test/mixed_in", "/ta_test/mixed_out", "sensor_msgs/msg/Imu")
	// waitDiscovered is not enough (see above): messages go until one
	// comes back, then the measured ones.
	waitDiscovered(t, p)
	base := stamp.Time(time.Now().UnixNano())
	warm := 0
	warmUp(t, func() {
		warm++
		require.NoError(t, p.pub.PublishSerialized(cdrtest.Message(base.Add(time.Duration(warm-100000)*2*time.Millisecond), "warmup", 307)))
	}, p)
	const n = 200
	for i := range n {
		require.NoError(t, p.pub.PublishSerialized(cdrtest.Message(base.Add(time.Duration(i)*2*time.Millisecond), frame(i), 307)))
		time.Sleep(2 * time.Millisecond)
	}
	// Every message back, in any order (those the node's reader dropped
	// come again after the writer's next heartbeat, behind later ones).
	frames := func() (seen map[int]bool, late int) {
		seen = map[int]bool{}
		maxSoFar := -1
		for _, b := range p.received() {
			i := frameIndex(b)
			if i < 0 {
				continue // a warm-up message
			}
			seen[i] = true
			if i < maxSoFar {
				late++
			}
			maxSoFar = max(maxSoFar, i)
		}
		return seen, late
	}
	missing := func() []int {
		seen, _ := frames()
		var out []int
		for i := range n {
			if !seen[i] {
				out = append(out, i)
			}
		}
		return out
	}
	for deadline := time.Now().Add(10 * time.Second); len(missing()) > 0 && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	require.Empty(t, missing(), "messages not back after 10 s (%d received)", len(p.received()))
	_, late := frames()
	t.Logf("%d messages back after a warm-up of %d, %d of them after later ones", n, warm, late)
	node.stop(t)
}

// installedRMWs lists the RMW implementations registered in the ament
// index of AMENT_PREFIX_PATH.
func installedRMWs() []string {
	var out []string
	for _, prefix := range filepath.SplitList(os.Getenv("AMENT_PREFIX_PATH")) {
		entries, _ := os.ReadDir(filepath.Join(prefix, "share/ament_index/resource_index/rmw_typesupport"))
		for _, e := range entries {
			if e.Name() != "rmw_implementation" && !slices.Contains(out, e.Name()) {
				out = append(out, e.Name())
			}
		}
	}
	slices.Sort(out)
	return out
}
