package demo

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timealign/timealign/nodes/internal/stampmonitor"
	"github.com/timealign/timealign/pkg/params"
	"github.com/timealign/timealign/pkg/stamp"
)

// File reads config/demo.yaml.
func file(t *testing.T) []*params.File {
	path := filepath.Join("..", "..", "config", "demo.yaml")
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	f, err := params.ParseFile(path, data)
	require.NoError(t, err)
	return []*params.File{f}
}

// TestConfig: config/demo.yaml resolves for every node of the demo
// without a warning: every name is one the node declares, every value one
// it takes.
func TestConfig(t *testing.T) {
	sc, warnings, err := Load(file(t), "/demo")
	require.NoError(t, err)
	require.Empty(t, warnings)
	require.Equal(t, 400.0, sc.Sim.IMU.Rate)
	require.Equal(t, "mono8", sc.Sim.Image.Encoding)
	require.Equal(t, 32, sc.Clock.PLL.TickBits)
	require.Equal(t, time.Microsecond, sc.Clock.PLL.TickPeriod)
	// The sections match the nodes in any namespace.
	other, _, err := Load(file(t), "/robot/sim")
	require.NoError(t, err)
	require.Equal(t, sc, other)
}

// TestOffline: the demo's figures without ROS, from 5 to 15 s after the
// start (the monitor's 10 s window at 15 s): the IMU's jitter removed (its
// std from the uniform 0–2 ms jitter's 577 µs to a few µs) and its latency
// measured by the pulses (no bias left), the lidar's device clock (4288 s
// since boot, wrapping 7 s in) mapped to host time within its latency, the
// camera left as it was stamped. The live demo's test holds the monitor's
// figures to these.
func TestOffline(t *testing.T) {
	sc, _, err := Load(file(t), "/demo")
	require.NoError(t, err)
	rows, err := Replay(sc, stamp.Time(1_800_000_000*time.Second), 15*time.Second)
	require.NoError(t, err)
	t.Logf("config/demo.yaml offline, the monitor's table at 15 s:\n%s", stampmonitor.Table(rows, sc.Monitor.Window))
	imu, lidar := rows[RowIMU], rows[RowLidar]
	require.InDelta(t, 4000, imu.Raw.Count, 5)
	require.InDelta(t, 577e3, imu.Raw.Std, 30e3, "uniform 0–2 ms")
	require.Less(t, imu.Corrected.Std, 10e3)
	require.Less(t, imu.Corrected.Worst, 50e3)
	require.Less(t, max(imu.Corrected.Mean, -imu.Corrected.Mean), 10e3)
	require.InDelta(t, 100, lidar.Raw.Count, 2)
	require.Greater(t, lidar.Raw.Std, 1e12, "the wrap: a jump of 4295 s in the raw stamps")
	require.Less(t, lidar.Corrected.Std, 100e3)
	require.InDelta(t, 1e6, lidar.Corrected.Mean, 0.5e6, "the lidar's 1 ms latency remains: no fit can see it")
	var camera *stampmonitor.TopicErrors
	for i := range rows {
		if rows[i].TruthTopic == "camera/image_raw" {
			camera = &rows[i]
		}
	}
	require.NotNil(t, camera)
	require.InDelta(t, 18e6, camera.Raw.Mean, 1e6, "15 ms + exponential 3 ms")
}
