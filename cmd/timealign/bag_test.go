package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/timealign/timealign/pkg/bag"
	"github.com/timealign/timealign/pkg/stamp"
)

// truthRow is a row of simulate --bag's truth file.
type truthRow struct {
	topic          string
	seq            int
	true_, hdr, lg stamp.Time
}

func readTruth(t *testing.T, path string) []truthRow {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Scan()
	require.Equal(t, "topic,seq,true_ns,header_ns,log_ns", sc.Text())
	var rows []truthRow
	for sc.Scan() {
		p := strings.Split(sc.Text(), ",")
		require.Len(t, p, 5)
		var r truthRow
		r.topic = p[0]
		r.seq, err = strconv.Atoi(p[1])
		require.NoError(t, err)
		for i, dst := range []*stamp.Time{&r.true_, &r.hdr, &r.lg} {
			v, err := strconv.ParseInt(p[2+i], 10, 64)
			require.NoError(t, err)
			*dst = stamp.Time(v)
		}
		rows = append(rows, r)
	}
	return rows
}

// bagMessage is a message read back with its header stamp.
type bagMessage struct {
	topic   string
	log     stamp.Time
	hdr     stamp.Time
	size    int
	hasStmp bool
}

func readBag(t *testing.T, path string) ([]bagMessage, *bag.Bag) {
	t.Helper()
	b, err := bag.Open(path)
	require.NoError(t, err)
	r := b.Records()
	defer r.Close()
	var out []bagMessage
	var rec bag.Record
	for {
		err := r.Next(&rec)
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		if rec.Kind != bag.KindMessage {
			continue
		}
		m := bagMessage{topic: rec.Message.Topic.Name, log: rec.Message.LogTime, size: len(rec.Message.Data)}
		if h, _, err := stamp.Header(rec.Message.Data); err == nil {
			m.hdr, m.hasStmp = h, true
		}
		out = append(out, m)
	}
	return out, b
}

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
			truth := readTruth(t, filepath.Join(dir, "truth.csv"))
			msgs, b := readBag(t, out)
			require.GreaterOrEqual(t, len(b.Files), c.files)
			require.Len(t, msgs, len(truth))
			byTopic := map[string][]truthRow{}
			for _, r := range truth {
				byTopic[r.topic] = append(byTopic[r.topic], r)
			}
			got := map[string][]bagMessage{}
			for _, m := range msgs {
				got[m.topic] = append(got[m.topic], m)
			}
			for topic, rows := range byTopic {
				require.Len(t, got[topic], len(rows), topic)
				for i, r := range rows {
					m := got[topic][i]
					require.True(t, m.hasStmp, topic)
					require.Equal(t, r.hdr, m.hdr, "%s #%d", topic, i)
					require.Equal(t, r.lg, m.log, "%s #%d", topic, i)
				}
			}
		})
	}
}

// mcapCheck runs the independent reader (cmd/timealign/testdata/mcapcheck:
// foxglove's TypeScript MCAP reader and CDR decoder) on MCAP files, or
// skips when it is not installed (node, and npm ci in that directory).
func mcapCheck(t *testing.T, files ...string) []map[string]any {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed: the independent MCAP reader does not run")
	}
	dir, err := filepath.Abs(filepath.Join("testdata", "mcapcheck"))
	require.NoError(t, err)
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@mcap", "core")); err != nil {
		t.Skip("the independent MCAP reader is not installed: run npm ci in cmd/timealign/testdata/mcapcheck")
	}
	cmd := exec.Command(node, append([]string{filepath.Join(dir, "check.mjs")}, files...)...)
	cmd.Dir = dir
	out, err := cmd.Output()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		t.Fatalf("independent reader failed: %v\n%s", err, ee.Stderr)
	}
	require.NoError(t, err)
	var res []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &m), line)
		require.Empty(t, m["errors"], "%s", m["file"])
		res = append(res, m)
	}
	require.Len(t, res, len(files))
	return res
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
		msgs, b := readBag(t, out)
		res := mcapCheck(t, b.Files...)
		counts := map[string]int{}
		for _, m := range msgs {
			counts[m.topic]++
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
