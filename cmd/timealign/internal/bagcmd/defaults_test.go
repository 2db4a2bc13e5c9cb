package bagcmd

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/timealign/timealign/cmd/timealign/internal/clitest"
)

// TestBagFixSaysDrops: messages clock_sync drops (when_invalid: drop, its
// default) are named on standard error per topic, with why and what keeps
// them, with --quiet too.
func TestBagFixSaysDrops(t *testing.T) {
	dir := t.TempDir()
	in, _ := simBag(t, dir, "--streams", "imu,lidar", "--duration", "5s")
	for _, quiet := range []bool{false, true} {
		out := filepath.Join(dir, "fixed")
		if quiet {
			out += "_quiet"
		}
		args := []string{"bag", "fix", in, out, "--apply", "/scan=clock_sync"}
		if quiet {
			args = append(args, "--quiet")
		}
		stdout, errOut, code := runCmd(t, "", args...)
		require.Equal(t, 0, code, errOut)
		require.Empty(t, stdout)
		line := clitest.LineWith(t, errOut, "timealign bag fix: /scan: DROPPED ")
		require.Contains(t, line, "of 51 messages (logged ")
		require.Contains(t, line, "the topic's first")
		require.Contains(t, line, "/clock_sync's when_invalid is drop; when_invalid: receive_time keeps them")
		require.False(t, strings.Contains(errOut, "/imu/data_raw: DROPPED"))
	}
}

// TestBagInfoRatePerTopic: bag info's rate is each topic's own, over its
// first to last log time, the rate bag report gives, on MCAP (from the
// chunks' message indexes) and SQLite.
func TestBagInfoRatePerTopic(t *testing.T) {
	dir := t.TempDir()
	for _, storage := range []string{"mcap", "sqlite3"} {
		path := filepath.Join(dir, storage)
		// The IMU stops after 2 s of a 10 s bag.
		_, errOut, code := runCmd(t, "", "simulate", "--bag", path, "--storage", storage, "--streams", "imu,lidar", "--count", "200")
		require.Equal(t, 0, code, errOut)
		info, errOut, code := runCmd(t, "", "bag", "info", path)
		require.Equal(t, 0, code, errOut)
		require.Contains(t, clitest.LineWith(t, info, "Topic information: Topic: /imu/data_raw |"), "| Count: 200 | Rate: 100 Hz |", storage)
		require.Contains(t, clitest.LineWith(t, info, "                   Topic: /scan |"), "| Count: 200 | Rate: 10 Hz |", storage)
	}
}

// TestBagInfoJSON: bag info --json gives per topic the type, count, first
// and last log time, size and rate, equal to what reading every message
// finds (MCAP from the summary and message indexes, SQLite from a query).
func TestBagInfoJSON(t *testing.T) {
	dir := t.TempDir()
	sim := filepath.Join(dir, "sim")
	_, errOut, code := runCmd(t, "", "simulate", "--bag", sim, "--streams", "imu,camera,lidar", "--duration", "3s", "--max-bag-size", "400000")
	require.Equal(t, 0, code, errOut)
	simDB := filepath.Join(dir, "simdb")
	_, errOut, code = runCmd(t, "", "simulate", "--bag", simDB, "--storage", "sqlite3", "--streams", "imu,lidar", "--duration", "2s")
	require.Equal(t, 0, code, errOut)
	for _, path := range []string{sim, simDB, filepath.Join("..", "..", "..", "..", "testdata", "rosbag2", "mcap", "recorded"),
		filepath.Join("..", "..", "..", "..", "testdata", "rosbag2", "sqlite3", "talker")} {
		t.Run(filepath.Base(path), func(t *testing.T) {
			out, errOut, code := runCmd(t, "", "bag", "info", "--json", path)
			require.Equal(t, 0, code, errOut)
			var got bagInfoOut
			require.NoError(t, json.Unmarshal([]byte(out), &got), out)
			msgs, b := clitest.ReadBag(t, path)
			require.Equal(t, string(b.Storage), got.Storage)
			type acc struct {
				n, size     uint64
				first, last int64
			}
			want := map[string]*acc{}
			for _, m := range msgs {
				a := want[m.Topic]
				if a == nil {
					a = &acc{first: int64(m.Log), last: int64(m.Log)}
					want[m.Topic] = a
				}
				a.n++
				a.size += uint64(m.Size)
				a.first, a.last = min(a.first, int64(m.Log)), max(a.last, int64(m.Log))
			}
			require.Equal(t, uint64(len(msgs)), got.MessageCount)
			for _, tp := range got.Topics {
				a := want[tp.Name]
				if a == nil {
					require.Zero(t, tp.Count, tp.Name)
					require.Nil(t, tp.FirstLogNs)
					continue
				}
				require.Equal(t, a.n, tp.Count, tp.Name)
				require.Equal(t, a.size, tp.SizeBytes, tp.Name)
				require.Equal(t, a.first, *tp.FirstLogNs, tp.Name)
				require.Equal(t, a.last, *tp.LastLogNs, tp.Name)
				if a.n > 1 && a.last > a.first {
					require.InDelta(t, float64(a.n-1)/(float64(a.last-a.first)/1e9), tp.RateHz, 1e-9, tp.Name)
				}
				require.NotEmpty(t, tp.Type)
				require.Contains(t, []string{"yes", "no", "unknown"}, tp.HeaderStamp)
			}
		})
	}
}
