package bagcmd

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestParseApply covers the rule syntax.
func TestParseApply(t *testing.T) {
	r, err := parseApply("/imu=timestamp_estimator", "x")
	require.NoError(t, err)
	require.Equal(t, applyRule{topic: "/imu", kind: kindTsest, node: "/timestamp_estimator", source: "x"}, r)
	r, err = parseApply("/scan=clock_sync:robot/lidar_clock", "x")
	require.NoError(t, err)
	require.Equal(t, "/robot/lidar_clock", r.node)
	r, err = parseApply("/cam=offset:-0.0125", "x")
	require.NoError(t, err)
	require.Equal(t, int64(-12_500_000), int64(r.offset))
	r, err = parseApply("/cam=offset:3ms", "x")
	require.NoError(t, err)
	require.Equal(t, int64(3_000_000), int64(r.offset))
	for _, bad := range []string{"/imu", "=tsest", "/imu=", "/imu=kalman", "/imu=offset", "/imu=offset:abc", "/imu=clock_sync:"} {
		_, err := parseApply(bad, "x")
		require.Error(t, err, bad)
	}
}
