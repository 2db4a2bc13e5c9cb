package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/timealign/timealign/pkg/params"
)

// TestBagParamsMatchConfigFiles: bag fix declares every parameter the
// documented parameter files of the nodes set (config/*.yaml), with values
// it accepts, so one file serves the launch file and the offline fix. The
// declarations mirror the nodes' Params.Bind: a parameter added to or
// renamed in a node and its config file fails here until bagparams.go
// follows.
func TestBagParamsMatchConfigFiles(t *testing.T) {
	for _, c := range []struct {
		file string
		bind func(b *params.Binder)
		val  func() error
	}{
		{"timestamp_estimator.yaml", func(b *params.Binder) { p := defaultTsestParams(); p.bind(b) }, nil},
		{"clock_sync.yaml", func(b *params.Binder) { p := defaultClockParams(); p.bind(b) }, nil},
		{"synchronizer.yaml", func(b *params.Binder) { p := defaultSyncParams(2); p.bind(b) }, nil},
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
			require.Greater(t, n, 3)
			warnings, err := paramFiles{f}.declare("/node", c.bind, c.val)
			require.NoError(t, err)
			require.Empty(t, warnings, "every parameter of %s is one bag fix knows", c.file)
		})
	}
}

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
