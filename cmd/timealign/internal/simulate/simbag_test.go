package simulate

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/timealign/timealign/cmd/timealign/internal/clitest"
)

// TestSimulateBag: the simulated bag holds one message per truth row, with
// the header stamps and log times the truth file names, in every storage
// format, split as asked.
func TestSimulateBag(t *testing.T) {
	for _, c := range []struct {
		args  []string
		files int
	}{
		{[]string{"--streams", "imu,camera,lidar"}, 1},
		{[]string{"--streams", "imu,autopilot", "--storage", "sqlite3", "--max-bag-size", "40000"}, 3},
		{[]string{"--streams", "imu,lidar", "--compression", "zstd"}, 1},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			dir := t.TempDir()
			out := filepath.Join(dir, "sim")
			args := append([]string{"simulate", "--bag", out, "--duration", "2s", "--truth", filepath.Join(dir, "truth.csv")}, c.args...)
			_, errOut, code := runCmd(t, "", args...)
			require.Equal(t, 0, code, errOut)
			truth := clitest.ReadTruth(t, filepath.Join(dir, "truth.csv"))
			msgs, b := clitest.ReadBag(t, out)
			require.GreaterOrEqual(t, len(b.Files), c.files)
			require.Len(t, msgs, len(truth))
			byTopic := map[string][]clitest.TruthRow{}
			for _, r := range truth {
				byTopic[r.Topic] = append(byTopic[r.Topic], r)
			}
			got := map[string][]clitest.BagMessage{}
			for _, m := range msgs {
				got[m.Topic] = append(got[m.Topic], m)
			}
			for topic, rows := range byTopic {
				require.Len(t, got[topic], len(rows), topic)
				for i, r := range rows {
					m := got[topic][i]
					require.True(t, m.HasStamp, topic)
					require.Equal(t, r.Hdr, m.Hdr, "%s #%d", topic, i)
					require.Equal(t, r.Log, m.Log, "%s #%d", topic, i)
				}
			}
		})
	}
}

// TestIndependentReaderSimulated: every MCAP file simulate --bag writes is
// accepted by an independent reader, which decodes every message with the
// schema the file carries and finds the same header stamps.
func TestIndependentReaderSimulated(t *testing.T) {
	dir := t.TempDir()
	for _, comp := range []string{"none", "zstd", "lz4"} {
		out := filepath.Join(dir, "sim-"+comp)
		_, errOut, code := runCmd(t, "", "simulate", "--bag", out, "--streams", "imu,camera,lidar,autopilot", "--duration", "3s",
			"--compression", comp, "--max-bag-size", "300000")
		require.Equal(t, 0, code, errOut)
		msgs, b := clitest.ReadBag(t, out)
		res := clitest.MCAPCheck(t, b.Files...)
		counts := map[string]int{}
		for _, m := range msgs {
			counts[m.Topic]++
		}
		seen := map[string]int{}
		for _, r := range res {
			for topic, v := range r["topics"].(map[string]any) {
				tv := v.(map[string]any)
				require.Equal(t, tv["count"], tv["decoded"], topic)
				seen[topic] += int(tv["count"].(float64))
			}
		}
		require.Equal(t, counts, seen)
	}
}
