package nodeparams

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timealign/timealign/pkg/params"
	"github.com/timealign/timealign/pkg/pll"
)

func parse(t *testing.T, name, yaml string) []*params.File {
	t.Helper()
	f, err := params.ParseFile(name, []byte(yaml))
	require.NoError(t, err)
	return []*params.File{f}
}

// TestConfigFiles: the documented parameter files of the nodes resolve
// offline without a warning (every name is one the node or its runtime
// declares), so one file serves the launch file and bag fix.
func TestConfigFiles(t *testing.T) {
	for _, c := range []struct {
		file    string
		resolve func([]*params.File) ([]string, error)
	}{
		{"timestamp_estimator.yaml", func(fs []*params.File) ([]string, error) {
			_, w, err := TimestampEstimator(fs, "/timestamp_estimator")
			return w, err
		}},
		{"clock_sync.yaml", func(fs []*params.File) ([]string, error) {
			_, w, err := ClockSync(fs, "/clock_sync")
			return w, err
		}},
		{"synchronizer.yaml", func(fs []*params.File) ([]string, error) {
			_, w, err := Synchronizer(fs, "/synchronizer", 2)
			return w, err
		}},
	} {
		t.Run(c.file, func(t *testing.T) {
			path := filepath.Join("..", "..", "config", c.file)
			data, err := os.ReadFile(path)
			require.NoError(t, err)
			f, err := params.ParseFile(path, data)
			require.NoError(t, err)
			n := 0
			for _, np := range f.Nodes {
				n += len(np.Params)
			}
			require.Greater(t, n, 3, "the file sets parameters")
			warnings, err := c.resolve([]*params.File{f})
			require.NoError(t, err)
			require.Empty(t, warnings)
		})
	}
}

// TestResolve: values reach the configurations, node sections and
// wildcards apply as for the running node, unknown names warn, and a value
// the node rejects is an error naming the parameter.
func TestResolve(t *testing.T) {
	fs := parse(t, "p.yaml", `
/**:
  ros__parameters:
    window_sec: 2.0
/robot/imu_estimator:
  ros__parameters:
    period_sec: 0.0025
    stamp_source: receive_time
    inbox.max_messages: 100
    no_such_parameter: 1
/lidar_clock:
  ros__parameters:
    mode: offset
    tick_period_sec: 0.000001
    tick_bits: 32
    when_invalid: passthrough
/sync:
  ros__parameters:
    policy: exact
    queue_size: 7
`)
	e, w, err := TimestampEstimator(fs, "/robot/imu_estimator")
	require.NoError(t, err)
	require.Equal(t, 2*time.Second, e.Config.Window)
	require.Equal(t, 2500*time.Microsecond, e.Config.Period)
	require.True(t, e.ReceiveTime)
	require.Len(t, w, 1)
	require.Contains(t, w[0], "no_such_parameter")

	other, w, err := TimestampEstimator(fs, "/timestamp_estimator")
	require.NoError(t, err)
	require.Empty(t, w)
	require.False(t, other.ReceiveTime)
	require.Equal(t, 2*time.Second, other.Config.Window, "/** applies to every node")

	c, w, err := ClockSync(fs, "/lidar_clock")
	require.NoError(t, err)
	require.Len(t, w, 1, "window_sec is no clock_sync parameter")
	require.Equal(t, pll.Offset, c.PLL.Mode)
	require.Equal(t, time.Microsecond, c.PLL.TickPeriod)
	require.Equal(t, 32, c.PLL.TickBits)
	require.Equal(t, "passthrough", c.WhenInvalid)

	s, _, err := Synchronizer(fs, "/sync", 3)
	require.NoError(t, err)
	require.Equal(t, 3, s.Config.Topics, "inputs defaults to the caller's count")
	require.Equal(t, 7, s.Config.QueueSize)
	require.Equal(t, "exact", s.Config.Policy.String())

	bad := parse(t, "bad.yaml", "/e:\n  ros__parameters:\n    period_sec: 3.0\n    window_sec: 0.5\n")
	_, _, err = TimestampEstimator(bad, "/e")
	require.Error(t, err)
	require.Contains(t, err.Error(), "period_sec")
	require.Contains(t, err.Error(), "bad.yaml")
	_, _, err = ClockSync(parse(t, "m.yaml", "/c:\n  ros__parameters:\n    mode: kalman\n"), "/c")
	require.ErrorContains(t, err, "mode")
	_, _, err = TimestampEstimator(parse(t, "i.yaml", "/e:\n  ros__parameters:\n    inbox.max_messages: -1\n"), "/e")
	require.ErrorContains(t, err, "inbox.max_messages")
}
