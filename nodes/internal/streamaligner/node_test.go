package streamaligner

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timealign/timealign/internal/testutil/cdrtest"
	"github.com/timealign/timealign/nodes/internal/nodekit/memros"
	"github.com/timealign/timealign/pkg/params"
	"github.com/timealign/timealign/pkg/stamp"
)

// TestNode: the stream_aligner's wiring without ROS: two inputs, each
// played on its output in stamp order; once one input falls silent the
// node's tick stops waiting for it; timeout_sec changes live.
func TestNode(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := memros.New()
		s := Spec()
		a, b := g.Advertise("/in0", "sensor_msgs/msg/Imu"), g.Advertise("/in1", "sensor_msgs/msg/LaserScan")
		outA, outB := g.Record("/out0"), g.Record("/out1")
		stop := g.Start(s, "--ros-args", "-p", "silent_after_sec:=0.5", "-p", "periods_sec:=[0.01, 0.05]")
		time.Sleep(300 * time.Millisecond)
		base := stamp.Time(1_700_000_000 * time.Second)
		for k := range 10 {
			require.NoError(t, a.Publish(cdrtest.Message(base+stamp.Time(k)*10_000_000, "imu", 8)))
			time.Sleep(10 * time.Millisecond)
		}
		require.NoError(t, b.Publish(cdrtest.Message(base, "scan", 8)))
		synctest.Wait()
		require.Len(t, outB.Messages(), 1)
		before := len(outA.Messages())
		require.Less(t, before, 10, "IMU messages wait for the scan's lookahead")
		time.Sleep(time.Second) // the lidar is silent: not waited for
		synctest.Wait()
		require.Len(t, outA.Messages(), 10)
		res, err := g.Parameters("/stream_aligner", time.Second).Set(params.Parameter{Name: "timeout_sec", Value: params.DoubleValue(0.25)})
		require.NoError(t, err)
		require.True(t, res[0].Successful, res[0].Reason)
		code, stderr := stop()
		require.Zero(t, code, stderr)
	})
}
