package bagcmd

import (
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/foxglove/mcap/go/mcap"
	"github.com/stretchr/testify/require"

	"github.com/timealign/timealign/cmd/timealign/internal/clitest"
)

// mcapRecord is an outer record of an MCAP file.
type mcapRecord struct {
	op       mcap.OpCode
	off, end int
}

// mcapRecords walks the outer records of a whole MCAP file.
func mcapRecords(t *testing.T, data []byte) []mcapRecord {
	t.Helper()
	var recs []mcapRecord
	for off := 8; off+9 <= len(data); {
		r := mcapRecord{op: mcap.OpCode(data[off]), off: off, end: off + 9 + int(binary.LittleEndian.Uint64(data[off+1:]))}
		require.LessOrEqual(t, r.end, len(data))
		recs = append(recs, r)
		if r.op == mcap.OpFooter {
			break
		}
		off = r.end
	}
	return recs
}

// lastOf returns the last record of op before the data end (or, summary,
// the first after it).
func lastOf(recs []mcapRecord, op mcap.OpCode, summary bool) mcapRecord {
	var found mcapRecord
	inSummary := false
	for _, r := range recs {
		if r.op == mcap.OpDataEnd && op != mcap.OpDataEnd {
			inSummary = true
			continue
		}
		if r.op == op && inSummary == summary {
			found = r
			if summary {
				break
			}
		}
	}
	return found
}

var messagesLine = regexp.MustCompile(`Messages: +(\d+)`)

// TestBagCutCLI: a recording killed while it was written (its file cut
// off, no metadata.yaml) is read by info, report and fix. Cut in or after
// records that hold no message, every message is read: notes, exit status
// 0, and fix writes them all. Cut inside a chunk: the loss is named (file,
// byte, record), everything readable is used, exit status 1.
func TestBagCutCLI(t *testing.T) {
	for _, c := range []struct {
		name, compression string
		at                func(recs []mcapRecord) int
		lost              bool
		want              []string
	}{
		{"in a message index", "none", func(r []mcapRecord) int { return lastOf(r, mcap.OpMessageIndex, false).off + 10 }, false,
			[]string{"ends without its summary", "bytes into a", "message index record", "every message in it was read"}},
		{"between records", "zstd", func(r []mcapRecord) int { return lastOf(r, mcap.OpDataEnd, false).off }, false,
			[]string{"ends without its summary", "between two records", "every message in it was read"}},
		{"in the summary", "lz4", func(r []mcapRecord) int {
			c := lastOf(r, mcap.OpChunkIndex, true)
			return (c.off + c.end) / 2
		}, false, []string{"ends inside its summary section", "chunk index record", "every message in it was read"}},
		{"in an uncompressed chunk", "none", func(r []mcapRecord) int {
			c := lastOf(r, mcap.OpChunk, false)
			return (c.off + c.end) / 2
		}, true, []string{"was cut off at byte", "uncompressed chunk at byte", "complete messages at its start were read", "are lost"}},
		{"in a zstd chunk", "zstd", func(r []mcapRecord) int {
			c := lastOf(r, mcap.OpChunk, false)
			return (c.off + c.end) / 2
		}, true, []string{"was cut off at byte", "zstd chunk at byte", "its messages, logged from", "are lost"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			in, _ := simBag(t, dir, "--streams", "imu,camera", "--image-size", "160x120", "--duration", "3s", "--compression", c.compression)
			full, _ := clitest.ReadBag(t, in)
			data, err := os.ReadFile(filepath.Join(in, "in_0.mcap"))
			require.NoError(t, err)
			recs := mcapRecords(t, data)
			p := c.at(recs)
			require.Greater(t, p, 8)
			// What ros2 bag record leaves when it is killed: the file cut
			// off, no metadata.yaml.
			rec := filepath.Join(dir, "rec")
			require.NoError(t, os.Mkdir(rec, 0o755))
			cutFile := filepath.Join(rec, "rec_0.mcap")
			require.NoError(t, os.WriteFile(cutFile, data[:p], 0o644))
			wantCode := 0
			if c.lost {
				wantCode = 1
			}
			at := "at byte " + strconv.Itoa(p)

			out, errOut, code := runCmd(t, "", "bag", "info", rec)
			require.Equal(t, wantCode, code, errOut)
			require.Contains(t, out, "Note:              "+rec+" has no metadata.yaml (rosbag2 writes it when a recording ends")
			m := messagesLine.FindStringSubmatch(out)
			require.NotNil(t, m, out)
			infoCount, _ := strconv.Atoi(m[1])
			prefix := "Note:              " + cutFile
			if c.lost {
				prefix = "Lost:              " + cutFile
				require.Contains(t, errOut, "messages of the bag were lost")
			} else {
				require.Empty(t, errOut)
			}
			line := clitest.LineWith(t, out, prefix)
			require.Contains(t, line, at)
			for _, w := range c.want {
				require.Contains(t, line, w)
			}

			jsonOut, htmlOut := filepath.Join(dir, "r.json"), filepath.Join(dir, "r.html")
			out, errOut, code = runCmd(t, "", "bag", "report", rec, "--json-out", jsonOut, "--html", htmlOut)
			require.Equal(t, wantCode, code, errOut)
			require.Contains(t, out, "/imu/data_raw")
			// The report's files say it too, as stderr does.
			var rj struct {
				Reading []struct {
					Lost bool   `json:"lost"`
					Text string `json:"text"`
				} `json:"reading"`
			}
			js, err := os.ReadFile(jsonOut)
			require.NoError(t, err)
			require.NoError(t, json.Unmarshal(js, &rj))
			require.Len(t, rj.Reading, 2, "the missing metadata.yaml and the cut")
			require.False(t, rj.Reading[0].Lost)
			require.Contains(t, rj.Reading[0].Text, "has no metadata.yaml")
			require.Equal(t, c.lost, rj.Reading[1].Lost)
			require.Contains(t, rj.Reading[1].Text, cutFile+" ")
			require.Contains(t, rj.Reading[1].Text, at)
			page, err := os.ReadFile(htmlOut)
			require.NoError(t, err)
			require.Regexp(t, `<h2 id="section-0">Reading the bag</h2>`, string(page))
			if c.lost {
				require.Contains(t, string(page), `<p class="note bad">`+cutFile)
			}
			require.Contains(t, errOut, "timealign bag report: note: "+rec+" has no metadata.yaml")
			prefix = "timealign bag report: note: " + cutFile
			if c.lost {
				prefix = "timealign bag report: " + cutFile
				require.Contains(t, errOut, "parts of the bag could not be read")
			}
			line = clitest.LineWith(t, errOut, prefix)
			require.Contains(t, line, at)
			for _, w := range c.want {
				require.Contains(t, line, w)
			}

			fixed := filepath.Join(dir, "fixed")
			_, errOut, code = runCmd(t, "", "bag", "fix", rec, fixed, "--apply", "/imu/data_raw=timestamp_estimator")
			require.Equal(t, wantCode, code, errOut)
			prefix = "timealign bag fix: note: " + cutFile
			if c.lost {
				prefix = "timealign bag fix: " + cutFile
			}
			line = clitest.LineWith(t, errOut, prefix)
			for _, w := range c.want {
				require.Contains(t, line, w)
			}
			got, ob := clitest.ReadBag(t, fixed)
			require.NotNil(t, ob.Metadata, "OUT has its metadata.yaml")
			require.Equal(t, uint64(len(got)), ob.Metadata.MessageCount)
			require.Equal(t, infoCount, len(got), "info counts what fix writes")
			if c.lost {
				require.Less(t, len(got), len(full))
				require.Greater(t, len(got), 0)
				require.NotContains(t, line, "OUT was written whole")
			} else {
				require.Len(t, got, len(full), "every message")
				require.Contains(t, line, "; OUT was written whole, its indexes and summary rebuilt")
			}
		})
	}
}

// TestBagCutEmptySplitCLI: a split file created but never written to (the
// recorder killed before its first write reached the file) is a note.
func TestBagCutEmptySplitCLI(t *testing.T) {
	dir := t.TempDir()
	in, _ := simBag(t, dir, "--streams", "imu", "--duration", "1s")
	full, _ := clitest.ReadBag(t, in)
	rec := filepath.Join(dir, "rec")
	require.NoError(t, os.Mkdir(rec, 0o755))
	require.NoError(t, os.Rename(filepath.Join(in, "in_0.mcap"), filepath.Join(rec, "rec_0.mcap")))
	require.NoError(t, os.WriteFile(filepath.Join(rec, "rec_1.mcap"), nil, 0o644))
	out, errOut, code := runCmd(t, "", "bag", "info", rec)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "Note:              "+filepath.Join(rec, "rec_1.mcap")+" is empty: the recording was cut off before anything was written to it")
	require.Contains(t, out, "Messages:          "+strconv.Itoa(len(full)))
	_, errOut, code = runCmd(t, "", "bag", "fix", rec, filepath.Join(dir, "o"), "--apply", "/imu/data_raw=timestamp_estimator")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, errOut, "timealign bag fix: note: "+filepath.Join(rec, "rec_1.mcap")+" is empty")
	got, _ := clitest.ReadBag(t, filepath.Join(dir, "o"))
	require.Len(t, got, len(full))
}

// TestBagKilledRecordingsCLI: the recordings ros2 bag record wrote until
// it was killed (testdata/rosbag2/*/killed*): info, report and fix exit 0
// when no message was lost and 1 when one was, and fix writes what info
// counts.
func TestBagKilledRecordingsCLI(t *testing.T) {
	for _, c := range []struct {
		name string
		lost bool
		want string
	}{
		{"mcap/killed_index", false, "ends without its summary"},
		{"mcap/killed_chunk", true, "complete messages at its start were read"},
		{"mcap/killed_lz4", true, "lz4 chunk at byte"},
		{"mcap/killed_fastwrite", true, "message record of /imu"},
		{"sqlite3/killed", false, "has no metadata.yaml"},
		{"sqlite3/killed_wal", false, "its write-ahead log"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			// A copy: SQLite may rewrite a WAL file's shared-memory index.
			in := filepath.Join(dir, filepath.Base(c.name))
			require.NoError(t, os.CopyFS(in, os.DirFS(filepath.Join("..", "..", "..", "..", "testdata", "rosbag2", c.name))))
			wantCode := 0
			if c.lost {
				wantCode = 1
			}
			out, errOut, code := runCmd(t, "", "bag", "info", in)
			require.Equal(t, wantCode, code, errOut)
			require.Contains(t, out, c.want)
			m := messagesLine.FindStringSubmatch(out)
			require.NotNil(t, m, out)
			_, errOut, code = runCmd(t, "", "bag", "report", in)
			require.Equal(t, wantCode, code, errOut)
			require.Contains(t, errOut, c.want)
			_, errOut, code = runCmd(t, "", "bag", "fix", in, filepath.Join(dir, "fixed"), "--apply", "/imu=timestamp_estimator")
			require.Equal(t, wantCode, code, errOut)
			require.Contains(t, errOut, c.want)
			got, _ := clitest.ReadBag(t, filepath.Join(dir, "fixed"))
			require.Equal(t, m[1], strconv.Itoa(len(got)))
		})
	}
}

// TestBagFixUnreadableTopicCLI: a topic to correct that is missing because
// its file could not be read is not a usage error: the reason comes first,
// and the exit status is 1, with no OUT.
func TestBagFixUnreadableTopicCLI(t *testing.T) {
	dir := t.TempDir()
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "testdata", "rosbag2", "sqlite3", "killed", "killed_0.db3"))
	require.NoError(t, err)
	rec := filepath.Join(dir, "rec")
	require.NoError(t, os.Mkdir(rec, 0o755))
	// Half a SQLite file: what a file system can leave after a power cut.
	require.NoError(t, os.WriteFile(filepath.Join(rec, "rec_0.db3"), data[:len(data)/2], 0o644))
	out := filepath.Join(dir, "fixed")
	_, errOut, code := runCmd(t, "", "bag", "fix", rec, out, "--apply", "/imu=timestamp_estimator")
	require.Equal(t, 1, code, errOut)
	require.Contains(t, errOut, "rec_0.db3")
	require.Contains(t, errOut, "malformed")
	require.Contains(t, errOut, "no topic /imu in what could be read of the bag")
	_, err = os.Stat(out)
	require.ErrorIs(t, err, os.ErrNotExist)
}
