package clitest

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

// TruthRow is a row of simulate --bag's truth file.
type TruthRow struct {
	Topic          string
	Seq            int
	True, Hdr, Log stamp.Time
}

// ReadTruth reads simulate --bag's truth file.
func ReadTruth(t testing.TB, path string) []TruthRow {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Scan()
	require.Equal(t, "topic,seq,true_ns,header_ns,log_ns", sc.Text())
	var rows []TruthRow
	for sc.Scan() {
		p := strings.Split(sc.Text(), ",")
		require.Len(t, p, 5)
		var r TruthRow
		r.Topic = p[0]
		r.Seq, err = strconv.Atoi(p[1])
		require.NoError(t, err)
		for i, dst := range []*stamp.Time{&r.True, &r.Hdr, &r.Log} {
			v, err := strconv.ParseInt(p[2+i], 10, 64)
			require.NoError(t, err)
			*dst = stamp.Time(v)
		}
		rows = append(rows, r)
	}
	return rows
}

// BagMessage is a message read back with its header stamp.
type BagMessage struct {
	Topic    string
	Log      stamp.Time
	Hdr      stamp.Time
	Size     int
	HasStamp bool
}

// ReadBag reads every message of the bag at path.
func ReadBag(t testing.TB, path string) ([]BagMessage, *bag.Bag) {
	t.Helper()
	b, err := bag.Open(path)
	require.NoError(t, err)
	r := b.Records()
	defer r.Close()
	var out []BagMessage
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
		m := BagMessage{Topic: rec.Message.Topic.Name, Log: rec.Message.LogTime, Size: len(rec.Message.Data)}
		if h, _, err := stamp.Header(rec.Message.Data); err == nil {
			m.Hdr, m.HasStamp = h, true
		}
		out = append(out, m)
	}
	return out, b
}

// LineWith returns the one line of text that starts with prefix.
func LineWith(t testing.TB, text, prefix string) string {
	t.Helper()
	var found []string
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, prefix) {
			found = append(found, l)
		}
	}
	require.Len(t, found, 1, "a line starting %q in:\n%s", prefix, text)
	return found[0]
}

// moduleDir returns the module's root: the first directory up from the
// test's working directory that holds go.mod.
func moduleDir(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	require.NoError(t, err)
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		up := filepath.Dir(dir)
		require.NotEqual(t, dir, up, "no go.mod above the test's directory")
		dir = up
	}
}

// MCAPCheck runs the independent reader (cmd/timealign/testdata/mcapcheck:
// foxglove's TypeScript MCAP reader and CDR decoder) on MCAP files, or
// skips when it is not installed (node, and npm ci in that directory).
func MCAPCheck(t testing.TB, files ...string) []map[string]any {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed: the independent MCAP reader does not run")
	}
	dir := filepath.Join(moduleDir(t), "cmd", "timealign", "testdata", "mcapcheck")
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
