package clocksync

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timealign/timealign/internal/testutil/cdrtest"
	"github.com/timealign/timealign/nodes/internal/nodekit/memros"
	"github.com/timealign/timealign/pkg/stamp"
)

// TestNode: clock_sync's wiring without ROS: device stamps in, host
// stamps out once the fit is valid (the first ones dropped, as
// when_invalid says by default).
func TestNode(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := memros.New()
		s := Spec()
		in, out := g.Advertise("/scan_raw", "sensor_msgs/msg/LaserScan"), g.Record("/scan")
		stop := g.Start(s, "--ros-args", "-r", "in:=/scan_raw", "-r", "out:=/scan", "-p", "message_type:=sensor_msgs/msg/LaserScan")
		time.Sleep(100 * time.Millisecond)
		for k := range 50 {
			dev := stamp.Time(1234*time.Second) + stamp.Time(k)*20_000_000
			require.NoError(t, in.Publish(cdrtest.Message(dev, "laser", 8)))
			time.Sleep(20 * time.Millisecond)
		}
		synctest.Wait()
		got := out.Messages()
		require.NotEmpty(t, got)
		require.Less(t, len(got), 50, "dropped while the fit was not valid")
		now := stamp.Time(time.Now().UnixNano())
		for _, m := range got {
			st, err := stamp.HeaderStamp(m)
			require.NoError(t, err)
			require.InDelta(t, float64(now), float64(st), float64(2*time.Second), "host time, not device time")
		}
		code, stderr := stop()
		require.Zero(t, code, stderr)
	})
}
