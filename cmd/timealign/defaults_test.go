package main

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/foxglove/mcap/go/mcap"
	"github.com/stretchr/testify/require"

	"github.com/timealign/timealign/pkg/bag"
	"github.com/timealign/timealign/pkg/mav/mavsim"
)

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
		line := lineWith(t, errOut, "timealign bag fix: /scan: DROPPED ")
		require.Contains(t, line, "of 51 messages (logged ")
		require.Contains(t, line, "the topic's first")
		require.Contains(t, line, "/clock_sync's when_invalid is drop; when_invalid: receive_time keeps them")
		require.False(t, strings.Contains(errOut, "/imu/data_raw: DROPPED"))
	}
}

// TestMavSchemaUnits: the merged MCAP's JSON schema describes the values
// it holds: a column the JSON holds scaled (ATT's centidegrees, written as
// degrees) has its unit and no multiplier; one written raw (TimeUS) keeps
// its multiplier. bag info says plainly that such topics carry no Header.
func TestMavSchemaUnits(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "m.mcap")
	_, errOut, code := runCmd(t, "", "mav", "merge", "--quiet", "--out", out,
		filepath.Join("..", "..", "testdata", "mav", "dive.tlog"), filepath.Join("..", "..", "testdata", "mav", "dive.BIN"))
	require.Equal(t, 0, code, errOut)
	b, err := bag.Open(out)
	require.NoError(t, err)
	s, err := b.Summarize()
	require.NoError(t, err)
	var att *bag.Topic
	for _, ts := range s.Topics {
		if ts.Topic.Name == "/bin/ATT" {
			att = ts.Topic
		}
	}
	require.NotNil(t, att)
	var sc struct {
		Properties map[string]struct {
			Description string `json:"description"`
		} `json:"properties"`
	}
	require.NoError(t, json.Unmarshal(att.Schema.Data, &sc))
	require.Equal(t, "unit: deg", sc.Properties["Roll"].Description)
	require.Equal(t, "unit: s, multiplier: 1e-06", sc.Properties["TimeUS"].Description)

	info, errOut, code := runCmd(t, "", "bag", "info", out)
	require.Equal(t, 0, code, errOut)
	line := lineWith(t, info, "                   Topic: /bin/ATT |")
	require.Contains(t, line, "| Rate: 10 Hz |")
	require.True(t, strings.HasSuffix(line, "| Header stamp: no Header (JSON schema)"), line)
	require.NotContains(t, info, "does not parse")
	require.Contains(t, info, "Rate:              per topic, over its own first to last log time")
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
		require.Contains(t, lineWith(t, info, "Topic information: Topic: /imu/data_raw |"), "| Count: 200 | Rate: 100 Hz |", storage)
		require.Contains(t, lineWith(t, info, "                   Topic: /scan |"), "| Count: 200 | Rate: 10 Hz |", storage)
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
	for _, path := range []string{sim, simDB, filepath.Join("..", "..", "testdata", "rosbag2", "mcap", "recorded"),
		filepath.Join("..", "..", "testdata", "rosbag2", "sqlite3", "talker")} {
		t.Run(filepath.Base(path), func(t *testing.T) {
			out, errOut, code := runCmd(t, "", "bag", "info", "--json", path)
			require.Equal(t, 0, code, errOut)
			var got bagInfoOut
			require.NoError(t, json.Unmarshal([]byte(out), &got), out)
			msgs, b := readBag(t, path)
			require.Equal(t, string(b.Storage), got.Storage)
			type acc struct {
				n, size     uint64
				first, last int64
			}
			want := map[string]*acc{}
			for _, m := range msgs {
				a := want[m.topic]
				if a == nil {
					a = &acc{first: int64(m.log), last: int64(m.log)}
					want[m.topic] = a
				}
				a.n++
				a.size += uint64(m.size)
				a.first, a.last = min(a.first, int64(m.log)), max(a.last, int64(m.log))
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

// TestMavMergeLocationFix: GPS positions are also written as
// foxglove.LocationFix (Foxglove's map), one message per GPS record with a
// fix, at the record's merged log time, in degrees and meters.
func TestMavMergeLocationFix(t *testing.T) {
	dir := t.TempDir()
	tlog, bins, _ := mavFiles(t, dir, mavsim.Scenario{Seed: 5, Duration: time.Minute, GPS: true})
	out := filepath.Join(dir, "m.mcap")
	_, errOut, code := runCmd(t, "", "mav", "merge", "--quiet", tlog, bins[0], "--out", out)
	require.Equal(t, 0, code, errOut)
	msgs := map[string][]mcapMsg{}
	for _, m := range readMCAP(t, out) {
		msgs[m.topic] = append(msgs[m.topic], m)
	}
	gps, fixes := msgs["/bin/GPS"], msgs["/bin/GPS[0]/fix"]
	require.NotEmpty(t, gps)
	require.Len(t, fixes, len(gps))
	for i, f := range fixes {
		require.Equal(t, "foxglove.LocationFix", f.schema)
		require.Equal(t, gps[i].logTime, f.logTime)
		var v struct {
			Timestamp                     struct{ Sec, Nsec int64 }
			Latitude, Longitude, Altitude float64
			PositionCovariance            []float64 `json:"position_covariance"`
		}
		require.NoError(t, json.Unmarshal(f.data, &v), "%s", f.data)
		require.Equal(t, int64(f.logTime), v.Timestamp.Sec*1e9+v.Timestamp.Nsec)
		require.InDelta(t, 47.3977419, v.Latitude, 1e-7)
		require.InDelta(t, 8.5455938, v.Longitude, 1e-7)
		require.InDelta(t, 12.0, v.Altitude, 1e-6)
		require.Len(t, v.PositionCovariance, 9)
	}
	// CSV has no LocationFix rows.
	csvOut := filepath.Join(dir, "m.csv")
	_, errOut, code = runCmd(t, "", "mav", "merge", "--quiet", tlog, bins[0], "--out", csvOut)
	require.Equal(t, 0, code, errOut)
	require.NotContains(t, string(readFile(t, csvOut)), "/fix,")
}

// TestMavMergeTypes: --types writes only the types named (BIN or MAVLink
// names); a name that matches nothing is a usage error and writes nothing.
func TestMavMergeTypes(t *testing.T) {
	dir := t.TempDir()
	tlog, bin := filepath.Join("..", "..", "testdata", "mav", "dive.tlog"), filepath.Join("..", "..", "testdata", "mav", "dive.BIN")
	out := filepath.Join(dir, "m.csv")
	_, errOut, code := runCmd(t, "", "mav", "merge", tlog, bin, "--out", out, "--types", "ATT,ATTITUDE")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, errOut, "of other types than --types left out")
	topics := map[string]int{}
	for _, l := range strings.Split(strings.TrimSpace(string(readFile(t, out))), "\n")[1:] {
		topics[strings.Split(l, ",")[2]]++
	}
	require.Equal(t, map[string]int{"/bin/ATT": 1201, "/tlog/1/1/ATTITUDE": 1183}, topics)

	bad := filepath.Join(dir, "bad.csv")
	_, errOut, code = runCmd(t, "", "mav", "merge", tlog, bin, "--out", bad, "--types", "ATT,GSP")
	require.Equal(t, 2, code, errOut)
	require.Contains(t, errOut, "timealign mav merge: --types: no message of type GSP in the logs (they hold ATT, ATTITUDE,")
	require.NoFileExists(t, bad)
}

// mcapMsg is a message of an MCAP file with its channel's topic and schema.
type mcapMsg struct {
	topic, schema string
	logTime       uint64
	data          []byte
}

// readMCAP reads every message of an MCAP file in file order.
func readMCAP(t *testing.T, path string) []mcapMsg {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	r, err := mcap.NewReader(f)
	require.NoError(t, err)
	it, err := r.Messages(mcap.UsingIndex(false))
	require.NoError(t, err)
	var out []mcapMsg
	for {
		s, ch, msg, err := it.NextInto(nil)
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		out = append(out, mcapMsg{topic: ch.Topic, schema: s.Name, logTime: msg.LogTime, data: append([]byte(nil), msg.Data...)})
	}
	return out
}
