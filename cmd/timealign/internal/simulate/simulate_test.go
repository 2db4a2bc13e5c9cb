package simulate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timealign/timealign/pkg/bag"
)

func TestSimulateFormats(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args   []string
		header string
		rows   int // data rows of the output
		truth  string
	}{
		{[]string{"--count", "50"}, "event,stamp_ns,index", 50, "truth_ns"},
		{[]string{"--count", "50", "--loss", "0.2", "--announce-loss", "--index", "--reference-every", "10"}, "event,stamp_ns,index", -1, "truth_ns"},
		{[]string{"--format", "pll", "--preset", "lidar", "--count", "30"}, "receive_ns,ticks", 30, "truth_ns"},
		{[]string{"--format", "pll", "--preset", "lidar", "--count", "30", "--send-delay", "1ms"}, "receive_ns,ticks,scan_ticks", 30, "truth_ns"},
		{[]string{"--format", "sync", "--count", "20"}, "topic,stamp_ns", -1, "topic,seq,true_ns,receive_ns"},
		{[]string{"--format", "align", "--streams", "imu,lidar", "--count", "10"}, "event,stream,stamp_ns", 40, "topic,seq,true_ns,receive_ns"},
		{[]string{"--format", "samples", "--count", "7"}, "seq,index,true_ns", 7, ""},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			truth := filepath.Join(dir, "truth.csv")
			args := append([]string{"simulate", "--truth", truth}, tc.args...)
			out, errOut, code := runCmd(t, "", args...)
			require.Equal(t, 0, code, errOut)
			lines := strings.Split(strings.TrimSpace(out), "\n")
			require.True(t, strings.HasPrefix(lines[0], tc.header), lines[0])
			if tc.rows >= 0 {
				require.Len(t, lines, tc.rows+1)
			}
			if tc.truth != "" {
				tr, err := os.ReadFile(truth)
				require.NoError(t, err)
				require.True(t, strings.HasPrefix(string(tr), tc.truth+"\n"))
			}
			again, _, _ := runCmd(t, "", args...)
			require.Equal(t, out, again, "same seed, same output")
		})
	}
}

func TestSimulateAnnouncesLoss(t *testing.T) {
	out, _, code := runCmd(t, "", "simulate", "--count", "1000", "--loss", "0.1", "--announce-loss")
	require.Equal(t, 0, code)
	losses := strings.Count(out, "\nloss,")
	samples := strings.Count(out, "\nsample,")
	// Losses after the last delivered sample cannot be announced.
	require.LessOrEqual(t, losses+samples, 1000)
	require.Greater(t, losses+samples, 980)
	require.InDelta(t, 100, losses, 40)
}

// TestSimulateBagDefaultSpan: simulate --bag without --count or --duration
// gives every stream the same span of time, not the same count.
func TestSimulateBagDefaultSpan(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sim")
	_, errOut, code := runCmd(t, "", "simulate", "--bag", dir, "--streams", "imu,camera,lidar")
	require.Equal(t, 0, code, errOut)
	b, err := bag.Open(dir)
	require.NoError(t, err)
	s, err := b.Summarize()
	require.NoError(t, err)
	require.Len(t, s.Topics, 3)
	for _, ts := range s.Topics {
		span := time.Duration(ts.End - ts.Start)
		require.InDelta(t, defaultBagDuration.Seconds(), span.Seconds(), 0.2, "%s spans %v", ts.Topic.Name, span)
	}
}
