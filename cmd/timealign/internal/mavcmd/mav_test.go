package mavcmd

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	gosync "sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bluenviron/gomavlib/v3/pkg/dialects/common"
	"github.com/foxglove/mcap/go/mcap"
	"github.com/stretchr/testify/require"

	"github.com/timealign/timealign/cmd/timealign/internal/cli"
	"github.com/timealign/timealign/pkg/mav"
	"github.com/timealign/timealign/pkg/mav/mavsim"
	"github.com/timealign/timealign/pkg/stamp"
)

// mavFiles writes a scenario's tlog and BINs into dir.
func mavFiles(t testing.TB, dir string, s mavsim.Scenario) (tlog string, bins []string, tr mavsim.Truth) {
	t.Helper()
	tlog = filepath.Join(dir, "flight.tlog")
	tf, err := os.Create(tlog)
	require.NoError(t, err)
	var files []*os.File
	tr, err = s.Write(tf, func(boot int) io.Writer {
		p := filepath.Join(dir, "0000000"+string(rune('1'+boot))+".BIN")
		f, err := os.Create(p)
		require.NoError(t, err)
		files = append(files, f)
		bins = append(bins, p)
		return f
	})
	require.NoError(t, err)
	require.NoError(t, tf.Close())
	for _, f := range files {
		require.NoError(t, f.Close())
	}
	return tlog, bins, tr
}

// truthOffset is the true Unix − boot offset (logging computer's clock)
// at boot time b of boot 0, from the nearest sample.
func truthOffset(tr mavsim.Truth, b time.Duration) time.Duration {
	best := 0
	for i := range tr.Device {
		if tr.Boot[i] == 0 && (tr.Device[i]-b).Abs() < (tr.Device[best]-b).Abs() {
			best = i
		}
	}
	return time.Duration(tr.Logger[best]) - tr.Device[best]
}

func TestMavAlign(t *testing.T) {
	dir := t.TempDir()
	tlog, bins, tr := mavFiles(t, dir, mavsim.Scenario{Seed: 5, SkewPPM: 30, GPS: true})
	out, errOut, code := runCmd(t, "", "mav", "align", tlog, bins[0])
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "boot 1: uptime 40.0s")
	require.Contains(t, out, "won")
	require.Contains(t, out, ": boot 1\n")
	require.Contains(t, out, "+ same boot: STAT_BOOTCNT 7")
	require.Empty(t, errOut)

	out, errOut, code = runCmd(t, "", "mav", "align", "--json", tlog, bins[0])
	require.Equal(t, 0, code, errOut)
	var j struct {
		Boots []struct {
			Winner  string `json:"winner"`
			Sources []struct {
				Source        string `json:"source"`
				OffsetUS      int64  `json:"offset_us"`
				RefBootUS     int64  `json:"ref_boot_us"`
				UncertaintyUS *int64 `json:"uncertainty_us"`
				Samples       int    `json:"samples"`
				Status        string `json:"status"`
			} `json:"sources"`
		} `json:"boots"`
		Bins []struct {
			Boot    int    `json:"boot"`
			Belongs string `json:"belongs"`
		} `json:"bins"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &j))
	require.Len(t, j.Boots, 1)
	require.Equal(t, "tlog", j.Boots[0].Winner)
	src := j.Boots[0].Sources[0]
	require.Equal(t, "tlog", src.Source)
	want := truthOffset(tr, time.Duration(src.RefBootUS)*time.Microsecond)
	require.InDelta(t, want.Microseconds(), src.OffsetUS, 2000, "offset within 2 ms")
	require.NotNil(t, src.UncertaintyUS)
	require.Equal(t, "gps", j.Boots[0].Sources[1].Source)
	require.Equal(t, 1, j.Bins[0].Boot)
	require.Equal(t, "yes", j.Bins[0].Belongs)

	// The report of align reads the tlog once more for its latencies.
	rep := filepath.Join(dir, "align.html")
	_, errOut, code = runCmd(t, "", "mav", "align", "--report", rep, tlog, bins[0])
	require.Equal(t, 0, code, errOut)
	html, err := os.ReadFile(rep)
	require.NoError(t, err)
	// The bag report's page: the clocks' sections, then the tlog's topics.
	page := string(html)
	require.Contains(t, page, "<h1>timealign mav report</h1>")
	require.Regexp(t, `<h2 id="section-\d+">Boot 1</h2>`, page)
	require.Regexp(t, `<h3 id="topic-\d+">/tlog/1/1/ATTITUDE <span`, page)
	require.NotContains(t, page, "/bin/", "align analyses the tlog only")
	require.NotContains(t, page, "ApproximateTime")
	// Plots: the offset of gps against tlog, the latency histogram and
	// its course, and up to 4 per topic.
	require.Greater(t, strings.Count(page, "<svg"), 3)
	// The latency above the floor: exponential of mean 20 ms (median
	// 13.9 ms), time_boot_ms truncated to the ms.
	m := regexp.MustCompile(`above the fitted floor[^<]*p50 ([0-9.]+)ms`).FindStringSubmatch(page)
	require.NotNil(t, m, "the latency paragraph")
	p50, err := strconv.ParseFloat(m[1], 64)
	require.NoError(t, err)
	require.InDelta(t, 13.9, p50, 2.5)
}

// TestMavMergeReportInstances: in merge's report, each instance of a BIN
// type with an instance column (two IMUs logged under IMU, at the same
// TimeUS) is a topic of its own, with its own rate and no duplicate
// stamps; the merged output keeps one topic per type.
func TestMavMergeReportInstances(t *testing.T) {
	dir := t.TempDir()
	tlog, bins, _ := mavFiles(t, dir, mavsim.Scenario{Seed: 8, Duration: 2 * time.Minute, BinExtra: 3, BinIMUs: 2})
	rep := filepath.Join(dir, "report.html")
	_, errOut, code := runCmd(t, "", "mav", "merge", tlog, bins[0], "--out", filepath.Join(dir, "m.csv"), "--report", rep)
	require.Equal(t, 0, code, errOut)
	page, err := os.ReadFile(rep)
	require.NoError(t, err)
	rows := map[string][]string{}
	for _, l := range strings.Split(html.UnescapeString(string(page)), "\n") {
		if f := strings.Fields(l); len(f) > 10 && strings.HasPrefix(f[0], "/bin/IMU") && f[1] == "IMU" { // the table's rows
			rows[f[0]] = f
		}
	}
	require.Len(t, rows, 2, "one row per instance: %v", rows)
	// The topic counts say which counts instances apart, and agree.
	top := regexp.MustCompile(`messages on (\d+) topics \(each instance of a BIN type counted apart.*the merged stream has (\d+) topics`).FindStringSubmatch(string(page))
	require.NotNil(t, top, "the first line says how topics are counted")
	require.Contains(t, string(page), fmt.Sprintf("messages on %s topics (%s in the timing report below", top[2], top[1]))
	inst, _ := strconv.Atoi(top[1])
	merged, _ := strconv.Atoi(top[2])
	require.Equal(t, merged+1, inst, "two IMU instances: one topic more")
	for _, name := range []string{"/bin/IMU[0]", "/bin/IMU[1]"} {
		f := rows[name]
		require.NotNil(t, f, name)
		n, err := strconv.Atoi(f[2])
		require.NoError(t, err)
		require.Greater(t, n, 1000, "%s: messages", name)
		require.Equal(t, rows["/bin/IMU[0]"][2], f[2], "as many of each")
		require.Equal(t, "0", f[len(f)-2], "%s: no duplicate stamps (%v)", name, f)
	}
	csv, err := os.ReadFile(filepath.Join(dir, "m.csv"))
	require.NoError(t, err)
	require.Contains(t, string(csv), ",/bin/IMU,", "the merged stream keeps one topic per type")
	require.NotContains(t, string(csv), "/bin/IMU[")
}

func TestMavMergeMCAP(t *testing.T) {
	dir := t.TempDir()
	tlog, bins, tr := mavFiles(t, dir, mavsim.Scenario{Seed: 6, Duration: 3 * time.Minute, SkewPPM: -40, BinExtra: 3})
	out := filepath.Join(dir, "merged.mcap")
	rep := filepath.Join(dir, "report.html")
	_, errOut, code := runCmd(t, "", "mav", "merge", tlog, bins[0], "--out", out, "--report", rep)
	require.Equal(t, 0, code, errOut)
	f, err := os.Open(out)
	require.NoError(t, err)
	defer f.Close()
	r, err := mcap.NewReader(f)
	require.NoError(t, err)
	it, err := r.Messages(mcap.UsingIndex(false))
	require.NoError(t, err)
	topics := map[string]int{}
	var last uint64
	var attErr []float64
	for {
		schema, ch, msg, err := it.NextInto(nil)
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		require.Equal(t, "jsonschema", schema.Encoding)
		if topics[ch.Topic] == 0 {
			// Every message's fields are its schema's properties.
			var sc struct {
				Properties map[string]json.RawMessage `json:"properties"`
			}
			require.NoError(t, json.Unmarshal(schema.Data, &sc), "%s", schema.Data)
			var fields map[string]json.RawMessage
			require.NoError(t, json.Unmarshal(msg.Data, &fields))
			require.Len(t, fields, len(sc.Properties), ch.Topic)
			for k := range fields {
				require.Contains(t, sc.Properties, k, ch.Topic)
			}
		}
		require.Equal(t, "json", ch.MessageEncoding)
		require.GreaterOrEqual(t, msg.LogTime, last, "time order")
		last = msg.LogTime
		topics[ch.Topic]++
		require.True(t, json.Valid(msg.Data), "%s: %s", ch.Topic, msg.Data)
		if ch.Topic == "/bin/ATT" {
			var a struct{ TimeUS int64 }
			require.NoError(t, json.Unmarshal(msg.Data, &a))
			want := time.Duration(truthOffset(tr, time.Duration(a.TimeUS)*time.Microsecond)) + time.Duration(a.TimeUS)*time.Microsecond
			attErr = append(attErr, float64(int64(msg.LogTime)-int64(want)))
		}
	}
	// The summary: statistics and chunk indexes agree with the messages.
	info, err := r.Info()
	require.NoError(t, err)
	total := 0
	for _, n := range topics {
		total += n
	}
	require.Equal(t, uint64(total), info.Statistics.MessageCount)
	require.Equal(t, uint32(len(topics)), info.Statistics.ChannelCount)
	require.NotEmpty(t, info.ChunkIndexes)
	idx, err := r.Messages(mcap.UsingIndex(true), mcap.WithTopics([]string{"/bin/ATT"}))
	require.NoError(t, err)
	n := 0
	for {
		_, _, _, err := idx.NextInto(nil)
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		n++
	}
	require.Equal(t, topics["/bin/ATT"], n, "read through the index")
	require.Greater(t, topics["/tlog/1/1/ATTITUDE"], 1500)
	require.Equal(t, 1800, topics["/bin/ATT"])
	require.Equal(t, 5400, topics["/bin/IMU"])
	require.NotContains(t, topics, "/bin/FMT")
	worst := 0.0
	for _, e := range attErr {
		worst = math.Max(worst, math.Abs(e))
	}
	// The truth is taken at the nearest sample (within 50 ms of boot time,
	// 40 ppm of skew: 2 µs).
	require.Less(t, worst, 2e6, "BIN records mapped within 2 ms")
	html, err := os.ReadFile(rep)
	require.NoError(t, err)
	require.Contains(t, string(html), "<svg")
	// The merged stream's timing: /bin/ATT at 10 Hz, no record missing.
	row := regexp.MustCompile(`(?m)^/bin/ATT +ATT +1800 +10 Hz +[0-9.]+ms .* 0 \(0\) .*$`)
	require.Regexp(t, row, string(html))
	require.Regexp(t, `<h2 id="section-\d+">Merged stream</h2>`, string(html))
	require.NotContains(t, string(html), "offsets between host-stamped streams", "no pairs of 90 topics")
}

// mergeCSV runs the command args, which writes the CSV file after its
// --out, and returns that file's rows.
func mergeCSV(t *testing.T, args ...string) [][]string {
	t.Helper()
	_, errOut, code := runCmd(t, "", args...)
	require.Equal(t, 0, code, errOut)
	out := args[slices.Index(args, "--out")+1]
	b, err := os.ReadFile(out)
	require.NoError(t, err)
	rows, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	require.NoError(t, err)
	return rows
}

func TestMavMergeCSV(t *testing.T) {
	dir := t.TempDir()
	tlog, bins, _ := mavFiles(t, dir, mavsim.Scenario{Seed: 7, Duration: time.Minute})
	out := filepath.Join(dir, "merged.csv")
	rows := mergeCSV(t, "mav", "merge", tlog, bins[0], "--out", out)
	require.Equal(t, []string{"log_time_ns", "publish_time_ns", "topic", "boot_us", "data"}, rows[0][:5])
	seen := map[string]bool{}
	for _, r := range rows[1:] {
		require.True(t, json.Valid([]byte(r[4])), r[4])
		checkFieldColumns(t, rows[0], r)
		seen[r[2]] = true
		if r[2] == "/tlog/1/1/ATTITUDE" {
			require.NotEmpty(t, r[3])
		}
	}
	require.True(t, seen["/bin/ATT"] && seen["/tlog/1/1/ATTITUDE"] && seen["/tlog/255/190/HEARTBEAT"])
}

// checkFieldColumns: a merged CSV row holds each field of its message's
// JSON (data) in the column <topic>/<field>, as written in the JSON (a
// string as its text, null empty), and nothing in other topics' columns.
func checkFieldColumns(t *testing.T, header, r []string) {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(r[4]))
	dec.UseNumber()
	var fields map[string]any
	require.NoError(t, dec.Decode(&fields))
	n := 0
	for i := 5; i < len(header); i++ {
		field, ok := strings.CutPrefix(header[i], r[2]+"/")
		if !ok || strings.Contains(field, "/") {
			require.Empty(t, r[i], "%s in a row of %s", header[i], r[2])
			continue
		}
		v, has := fields[field]
		require.True(t, has, "%s: %s", header[i], r[4])
		n++
		switch x := v.(type) {
		case nil:
			require.Empty(t, r[i])
		case json.Number:
			require.Equal(t, x.String(), r[i], header[i])
		case string:
			require.Equal(t, x, r[i], header[i])
		default:
			b, err := json.Marshal(x)
			require.NoError(t, err)
			require.JSONEq(t, string(b), r[i], header[i])
		}
	}
	require.Equal(t, len(fields), n, "every field of %s has its column", r[2])
}

func TestMavMergeRefuses(t *testing.T) {
	dir := t.TempDir()
	tlog, _, _ := mavFiles(t, dir, mavsim.Scenario{Seed: 8, Duration: 2 * time.Minute})
	other := t.TempDir()
	_, bins, _ := mavFiles(t, other, mavsim.Scenario{Seed: 9, Duration: 2 * time.Minute, BinBootCount: 3, BinAttitudePhase: 2})
	out := filepath.Join(dir, "m.mcap")
	_, errOut, code := runCmd(t, "", "mav", "merge", tlog, bins[0], "--out", out)
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "does not belong to")
	require.Contains(t, errOut, "another boot: STAT_BOOTCNT 3 in the BIN, 7 in the tlog")
	require.NoFileExists(t, out)
	_, errOut, code = runCmd(t, "", "mav", "merge", "--allow-mismatch", tlog, bins[0], "--out", out)
	require.Equal(t, 0, code, errOut)
	require.FileExists(t, out)
}

func TestMavBadInput(t *testing.T) {
	dir := t.TempDir()
	tlog, bins, _ := mavFiles(t, dir, mavsim.Scenario{Seed: 10, Duration: time.Minute})
	good, err := os.ReadFile(tlog)
	require.NoError(t, err)
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, b, 0o644))
		return p
	}
	// Damage: garbage in the middle, a flipped byte, a truncated end.
	bad := append(append(append([]byte{}, good[:5000]...), []byte("garbage bytes")...), good[5000:len(good)-7]...)
	bad[9000] ^= 0x55
	damaged := write("damaged.tlog", bad)
	out, errOut, code := runCmd(t, "", "mav", "align", damaged, bins[0])
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "won")
	require.Contains(t, errOut, "bytes of no frame skipped")
	require.Contains(t, errOut, "the last record is truncated")

	binBytes, err := os.ReadFile(bins[0])
	require.NoError(t, err)
	// A BIN whose FMT records are gone: records from the first ATT on.
	noFMT := write("nofmt.BIN", binBytes[bytes.Index(binBytes, []byte{0xa3, 0x95, 131}):])
	_, errOut, code = runCmd(t, "", "mav", "align", tlog, noFMT)
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "nofmt.BIN: no FMT records (not a dataflash log, or its start is missing)")

	// A tlog without time_boot_ms messages and a BIN without GPS.
	var tl bytes.Buffer
	w := mavsim.NewTlogWriter(&tl)
	for i := range 30 {
		w.Write(stamp.Time(1.7e18)+stamp.Time(i)*stamp.Time(time.Second), 1, 1, &common.MessageHeartbeat{Type: common.MAV_TYPE_SUBMARINE, Autopilot: common.MAV_AUTOPILOT_ARDUPILOTMEGA})
	}
	hb := write("heartbeats.tlog", tl.Bytes())
	_, errOut, code = runCmd(t, "", "mav", "align", hb, bins[0])
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "no alignment possible: the tlog has no message with time_boot_ms")
	require.Contains(t, errOut, "00000001.BIN: no GPS records")

	// The BIN given first.
	_, errOut, code = runCmd(t, "", "mav", "align", bins[0], tlog)
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "not a telemetry log (.tlog) (the tlog comes first: mav align TLOG BIN)")

	// An output that is an input, a missing --out, standard input.
	_, errOut, code = runCmd(t, "", "mav", "merge", tlog, bins[0], "--format", "mcap", "--out", bins[0])
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "is the input file")
	_, errOut, code = runCmd(t, "", "mav", "merge", tlog, bins[0])
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "needs --out")
	_, errOut, code = runCmd(t, "", "mav", "align", "-")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "must be files")
	_, errOut, code = runCmd(t, "", "mav", "frob")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, `unknown subcommand "frob"`)
	_, errOut, code = runCmd(t, "", "mav", "align", "--window-samples", "3", tlog)
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "--window-samples is 3, want 8..")
	_, errOut, code = runCmd(t, "", "mav", "merge", "--compression", "lz4", tlog, bins[0], "--out", filepath.Join(dir, "x.csv"))
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "--compression is not used by --format csv")
	require.True(t, strings.HasPrefix(errOut, "timealign mav merge:"), errOut)
}

// TestRealLogs runs mav on the real ArduSub logs of testdata/mav: a tlog
// of QGroundControl and a BIN of another board and firmware.
func TestRealLogs(t *testing.T) {
	dir := filepath.Join("..", "..", "..", "..", "testdata", "mav")
	tlog, bin := filepath.Join(dir, "ardusub_small.tlog"), filepath.Join(dir, "ardusub_small.BIN")
	tb, err := os.ReadFile(tlog)
	require.NoError(t, err)
	bb, err := os.ReadFile(bin)
	require.NoError(t, err)
	// The banners, as the files hold them.
	require.Contains(t, string(tb), "ArduSub V4.1.1 BETA5 (66c674c1)")
	require.Contains(t, string(bb), "ArduSub V4.1.0 (89639005)")

	out, errOut, code := runCmd(t, "", "mav", "align", "--json", tlog, bin)
	require.Equal(t, 0, code, errOut)
	var j struct {
		Tlog struct {
			Read struct {
				Messages  int            `json:"messages"`
				Bytes     int            `json:"bytes"`
				BadCRCIDs map[string]int `json:"bad_crc_ids"`
			} `json:"read"`
		} `json:"tlog"`
		Autopilot struct {
			Firmware string `json:"firmware"`
		} `json:"autopilot"`
		Boots []struct {
			Winner  string `json:"winner"`
			Sources []struct {
				OffsetUS  int64 `json:"offset_us"`
				RefBootUS int64 `json:"ref_boot_us"`
			} `json:"sources"`
		} `json:"boots"`
		Bins []struct {
			Belongs  string `json:"belongs"`
			Firmware string `json:"firmware"`
			Evidence []struct {
				What    string `json:"what"`
				Verdict int    `json:"verdict"`
			} `json:"evidence"`
		} `json:"bins"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &j))
	require.Equal(t, len(tb), j.Tlog.Read.Bytes)
	require.Greater(t, j.Tlog.Read.Messages, 30000)
	for id := range j.Tlog.Read.BadCRCIDs {
		// Only the camera protocol's messages of the camera manager.
		require.Contains(t, []string{"259", "260", "262", "269"}, id)
	}
	require.Equal(t, "ArduSub V4.1.1 BETA5 (66c674c1)", j.Autopilot.Firmware)
	require.Equal(t, "ArduSub V4.1.0 (89639005)", j.Bins[0].Firmware)
	require.Equal(t, "no", j.Bins[0].Belongs)
	against := map[string]bool{}
	for _, ev := range j.Bins[0].Evidence {
		if ev.Verdict < 0 {
			against[ev.What] = true
		}
	}
	require.True(t, against["firmware"] && against["board"], "%v", j.Bins[0].Evidence)
	// The fit lies within a few ms of the lowest receive − boot of the log
	// (its clocks drift by about 15 ppm over 4 minutes).
	require.Len(t, j.Boots, 1)
	require.Equal(t, "tlog", j.Boots[0].Winner)
	require.InDelta(t, minReceiveMinusBoot(tb).Microseconds(), j.Boots[0].Sources[0].OffsetUS, 10000)

	_, errOut, code = runCmd(t, "", "mav", "merge", tlog, bin, "--out", filepath.Join(t.TempDir(), "m.mcap"))
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "does not belong to")
	require.Contains(t, errOut, "another firmware")
}

// minReceiveMinusBoot is the lowest receive − time_boot_ms of the
// messages of autopilot 1/1 in a tlog: one global minimum.
func minReceiveMinusBoot(tlog []byte) time.Duration {
	r := mav.NewTlogReader(bytes.NewReader(tlog))
	lo := time.Duration(math.MaxInt64)
	for m, err := r.Next(); err == nil; m, err = r.Next() {
		if b, ok := m.TimeBootMs(); ok && m.SysID == 1 && m.CompID == 1 {
			lo = min(lo, time.Duration(m.Receive)-time.Duration(b)*time.Millisecond)
		}
	}
	return lo
}

// TestMavMergeReboots merges two boots' BINs: each record lands on its
// boot's clock, the stream stays in time order, and --source system_time
// moves the tlog's stamps onto the autopilot's clock.
func TestMavMergeReboots(t *testing.T) {
	dir := t.TempDir()
	s := mavsim.Scenario{Seed: 12, Duration: 4 * time.Minute, Reboots: []time.Duration{2 * time.Minute},
		RTC: new(time.Duration), LoggerOffset: 30 * time.Second}
	tlog, bins, tr := mavFiles(t, dir, s)
	require.Len(t, bins, 2)
	for _, c := range []struct {
		source string
		clock  func(i int) stamp.Time // the truth on the merged clock
	}{
		{"", func(i int) stamp.Time { return tr.Logger[i] }},
		{"system_time", func(i int) stamp.Time { return tr.UTC[i] }},
	} {
		out := filepath.Join(dir, "m"+c.source+".csv")
		args := []string{"mav", "merge", tlog, bins[1], bins[0], "--out", out}
		if c.source != "" {
			args = append(args, "--source", c.source)
		}
		rows := mergeCSV(t, args...)
		// The truth of each ATT record, by boot time (the BINs' ATT are
		// the simulated samples themselves).
		truth := map[int64][]stamp.Time{}
		for i, d := range tr.Device {
			truth[d.Microseconds()] = append(truth[d.Microseconds()], c.clock(i))
		}
		var last int64
		worst := 0.0
		n := 0
		for _, r := range rows[1:] {
			ts, err := strconv.ParseInt(r[0], 10, 64)
			require.NoError(t, err)
			require.GreaterOrEqual(t, ts, last, "time order")
			last = ts
			if r[2] != "/bin/ATT" {
				continue
			}
			us, err := strconv.ParseInt(r[3], 10, 64)
			require.NoError(t, err)
			// Two boots share boot times: the nearest truth is the one.
			best := math.Inf(1)
			for _, want := range truth[us] {
				best = math.Min(best, math.Abs(float64(ts-int64(want))))
			}
			worst = math.Max(worst, best)
			n++
		}
		require.Equal(t, len(tr.Device), n)
		limit := 2e6
		if c.source == "system_time" {
			limit = 1.5e6 // time_boot_ms truncation and the RTC's ms
		}
		require.Less(t, worst, limit, "source %q", c.source)
	}
}

// countdown is a context that is canceled after its Err has been asked
// n times: a deterministic interruption in the middle of a run.
type countdown struct {
	context.Context
	n    atomic.Int64
	once gosync.Once
	done chan struct{}
}

func newCountdown(n int64) *countdown {
	c := &countdown{Context: context.Background(), done: make(chan struct{})}
	c.n.Store(n)
	return c
}

func (c *countdown) Err() error {
	if c.n.Add(-1) < 0 {
		c.once.Do(func() { close(c.done) })
		return context.Canceled
	}
	return nil
}

func (c *countdown) Done() <-chan struct{} { return c.done }

// TestMavMergeInterrupted: an interruption in the middle of a merge ends
// every goroutine, exits 130 and leaves no file behind.
func TestMavMergeInterrupted(t *testing.T) {
	dir := t.TempDir()
	tlog, bins, _ := mavFiles(t, dir, mavsim.Scenario{Seed: 13, Duration: 2 * time.Minute, BinExtra: 20})
	before := runtime.NumGoroutine()
	// How often a whole merge asks; then interrupt it at a quarter, half
	// and three quarters of that.
	probe := newCountdown(1 << 40)
	var o, e bytes.Buffer
	require.Equal(t, 0, cli.Run(&cli.Env{Ctx: probe, Stdin: strings.NewReader(""), Stdout: &o, Stderr: &e}, []*cli.Command{Command()},
		[]string{"mav", "merge", tlog, bins[0], "--out", filepath.Join(dir, "probe.mcap")}), e.String())
	total := 1<<40 - probe.n.Load()
	require.Greater(t, total, int64(8))
	for _, n := range []int64{total / 4, total / 2, total * 3 / 4} {
		out := filepath.Join(dir, "m.mcap")
		var o, e bytes.Buffer
		code := cli.Run(&cli.Env{Ctx: newCountdown(n), Stdin: strings.NewReader(""), Stdout: &o, Stderr: &e}, []*cli.Command{Command()}, []string{"mav", "merge", tlog, bins[0], "--out", out})
		require.Equal(t, cli.ExitInterrupted, code, "after %d reads: %s", n, e.String())
		require.NoFileExists(t, out)
		entries, err := os.ReadDir(dir)
		require.NoError(t, err)
		for _, en := range entries {
			require.False(t, strings.Contains(en.Name(), ".tmp-"), "temporary file left: %s", en.Name())
		}
	}
	// Every goroutine of the merges has ended.
	// (Polled here: assert.Eventually runs its condition in goroutines.)
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		buf := make([]byte, 1<<20)
		t.Fatalf("%d goroutines left, %d before:\n%s", n, before, buf[:runtime.Stack(buf, true)])
	}
}

func TestDoubleQuotes(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for range 20000 {
		d := make([]byte, r.IntN(40))
		for i := range d {
			d[i] = `"a{:,"\0é`[r.IntN(10)]
		}
		prefix := []byte("x,")
		b := make([]byte, len(prefix), len(prefix)+2*len(d)+8)
		copy(b, prefix)
		got := doubleQuotes(b, d)
		require.Equal(t, "x,"+strings.ReplaceAll(string(d), `"`, `""`), string(got), "%q", d)
	}
}

// TestMavMergeCompressions: lz4 (several chunks, compressed in parallel),
// zstd and uncompressed MCAP and CSV hold the same messages, in the same
// order, with the same stamps and bytes.
func TestMavMergeCompressions(t *testing.T) {
	dir := t.TempDir()
	tlog, bins, _ := mavFiles(t, dir, mavsim.Scenario{Seed: 14, Duration: 4 * time.Minute, GPS: true, BinExtra: 40})
	type row struct {
		topic    string
		log, pub uint64
		data     string
	}
	var want []row
	for _, comp := range []string{"none", "lz4", "zstd"} {
		out := filepath.Join(dir, comp+".mcap")
		_, errOut, code := runCmd(t, "", "mav", "merge", tlog, bins[0], "--out", out, "--compression", comp)
		require.Equal(t, 0, code, errOut)
		f, err := os.Open(out)
		require.NoError(t, err)
		r, err := mcap.NewReader(f)
		require.NoError(t, err)
		info, err := r.Info()
		require.NoError(t, err)
		require.Greater(t, len(info.ChunkIndexes), 2, "several chunks")
		for _, ci := range info.ChunkIndexes {
			require.Equal(t, comp, map[string]string{"": "none", "lz4": "lz4", "zstd": "zstd"}[string(ci.Compression)])
		}
		_, err = f.Seek(0, io.SeekStart) // Info read the summary at the end
		require.NoError(t, err)
		r, err = mcap.NewReader(f)
		require.NoError(t, err)
		it, err := r.Messages(mcap.UsingIndex(false))
		require.NoError(t, err)
		var got []row
		ids := map[uint16]bool{}
		for {
			_, ch, msg, err := it.NextInto(nil)
			if errors.Is(err, io.EOF) {
				break
			}
			require.NoError(t, err)
			got = append(got, row{ch.Topic, msg.LogTime, msg.PublishTime, string(msg.Data)})
			if !ids[ch.ID] {
				// Channels are numbered in the order of their first message.
				ids[ch.ID] = true
				require.Equal(t, uint16(len(ids)), ch.ID, "%s: %s", comp, ch.Topic)
			}
		}
		require.NoError(t, f.Close())
		require.Greater(t, len(got), 50000, comp)
		if want == nil {
			want = got
			continue
		}
		require.Equal(t, len(want), len(got), comp)
		for i := range want {
			require.Equal(t, want[i], got[i], "%s: message %d", comp, i)
		}
	}
	// CSV has no foxglove.LocationFix messages (MCAP's for Foxglove's map).
	fixes := 0
	for _, w := range want {
		if strings.HasSuffix(w.topic, "/fix") {
			fixes++
		}
	}
	require.Greater(t, fixes, 0)
	want = slices.DeleteFunc(want, func(w row) bool { return strings.HasSuffix(w.topic, "/fix") })
	out := filepath.Join(dir, "m.csv")
	rows := mergeCSV(t, "mav", "merge", tlog, bins[0], "--out", out)
	require.Equal(t, len(want)+1, len(rows), "rows")
	for i, w := range want {
		r := rows[i+1]
		require.Len(t, r, len(rows[0]))
		require.Equal(t, strconv.FormatUint(w.log, 10), r[0], "row %d", i+1)
		require.Equal(t, strconv.FormatUint(w.pub, 10), r[1], "row %d", i+1)
		require.Equal(t, w.topic, r[2], "row %d", i+1)
		require.Equal(t, w.data, r[4], "row %d", i+1)
		if i%97 == 0 {
			checkFieldColumns(t, rows[0], r)
		}
	}
}

// TestMavMergeTies: messages of equal log time are in the order of the
// inputs (the tlog's, then each BIN's), whatever the batches the readers
// cut: the BIN's stamps come from a fit whose knots are tlog messages, so
// ties are many.
func TestMavMergeTies(t *testing.T) {
	dir := t.TempDir()
	tlog, bins, _ := mavFiles(t, dir, mavDive)
	out := filepath.Join(dir, "m.csv")
	rows := mergeCSV(t, "mav", "merge", tlog, bins[0], "--out", out)
	ties := 0
	for i := 2; i < len(rows); i++ {
		if rows[i][0] != rows[i-1][0] {
			continue
		}
		ties++
		require.False(t, strings.HasPrefix(rows[i-1][2], "/bin/") && strings.HasPrefix(rows[i][2], "/tlog/"),
			"row %d: %s after %s at the same log time", i, rows[i][2], rows[i-1][2])
	}
	require.Greater(t, ties, 100)
}

// TestLogsLabel: the progress bar names the tlog and its BIN, or counts
// the BINs.
func TestLogsLabel(t *testing.T) {
	for _, c := range []struct {
		names []string
		want  string
	}{
		{[]string{"logs/a.tlog"}, "a.tlog"},
		{[]string{"logs/a.tlog", "logs/00000001.BIN"}, "a.tlog + 00000001.BIN"},
		{[]string{"a.tlog", "1.BIN", "2.BIN", "3.BIN"}, "a.tlog + 3 BINs"},
	} {
		require.Equal(t, c.want, logsLabel(c.names))
	}
}
