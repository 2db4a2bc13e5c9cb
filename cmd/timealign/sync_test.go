package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSyncDropsAndStatus(t *testing.T) {
	streams, _, code := runCmd(t, "", "simulate", "--format", "sync", "--streams", "imu,camera,lidar", "--count", "200")
	require.Equal(t, 0, code)
	dir := t.TempDir()
	drops, status := filepath.Join(dir, "drops.csv"), filepath.Join(dir, "status.json")
	out, errOut, code := runCmd(t, streams, "sync", "--topics", "3", "--drops", drops, "--status", status)
	require.Equal(t, 0, code, errOut)
	sets := strings.Count(out, "\n") - 1
	require.Greater(t, sets, 5)
	d, err := os.ReadFile(drops)
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(string(d), "topic,stamp_ns,reason\n"))
	b, err := os.ReadFile(status)
	require.NoError(t, err)
	var st map[string]any
	require.NoError(t, json.Unmarshal(b, &st))
	require.Equal(t, float64(sets), st["sets"])
	// Every message is in a set, dropped, or still queued.
	received := 0.0
	for _, r := range st["received"].([]any) {
		received += r.(float64)
	}
	queued := 0.0
	for _, q := range st["queue_fill"].([]any) {
		queued += q.(float64)
	}
	require.Equal(t, received, float64(3*sets)+float64(strings.Count(string(d), "\n")-1)+queued)
}

func TestSyncAlignErrors(t *testing.T) {
	for _, tc := range []struct {
		in   string
		args []string
		code int
		want string
	}{
		{"", []string{"sync", "--topics", "1"}, 2, "Topics is 1"},
		{"", []string{"sync", "--queue-size", "0"}, 2, "QueueSize"},
		{"", []string{"sync", "--policy", "best"}, 2, `Policy "best" is unknown`},
		{"", []string{"sync", "--lower-bounds", "1s"}, 2, "LowerBounds has 1 entries"},
		{"", []string{"sync", "--max-interval", "-1s"}, 2, "MaxInterval"},
		{"topic,stamp_ns\n0,5\n2,7\n", []string{"sync"}, 1, "stdin:3:1 (column \"topic\"): bad value: topic 2 is out of range 0..1"},
		{"topic,stamp\n", []string{"sync"}, 1, "unexpected header"},
		{"", []string{"align"}, 2, "--periods is required"},
		{"", []string{"align", "--periods", "1s", "--buffer-sizes", "1,2"}, 2, "--buffer-sizes has 2 entries"},
		{"", []string{"align", "--periods", "0s"}, 2, "BufferSize is automatic"},
		{"event,stream,stamp_ns\nwiggle,,\n", []string{"align", "--periods", "1s"}, 1, `unknown event "wiggle"`},
		{"event,stream,stamp_ns\ndisable,4,\n", []string{"align", "--periods", "1s"}, 1, "no such stream: 4"},
		{"event,stream,stamp_ns\ntimeout,,-5\n", []string{"align", "--periods", "1s"}, 1, "Timeout is -5ns"},
	} {
		_, errOut, code := runCmd(t, tc.in, tc.args...)
		require.Equal(t, tc.code, code, "%v: %s", tc.args, errOut)
		require.Contains(t, errOut, tc.want)
	}
	// A push to a stream that does not exist is a counted drop, not an error.
	out, _, code := runCmd(t, "event,stream,stamp_ns\npush,3,5\npush,0,6\ndrain,,\n", "align", "--periods", "0s", "--buffer-sizes", "0", "--timeout", "0s")
	require.Equal(t, 0, code)
	require.Equal(t, "stream,stamp_ns\n0,6\n", out)
}
