package stream

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/timealign/timealign/internal/testutil/benchdata"
)

func TestSyncDropsAndStatus(t *testing.T) {
	streams, _, code := runCmd(t, "", "simulate", "--format", "sync", "--streams", "imu,camera,lidar", "--count", "200")
	require.Equal(t, 0, code)
	dir := t.TempDir()
	drops, status := filepath.Join(dir, "drops.csv"), filepath.Join(dir, "status.json")
	out, errOut, code := runCmd(t, streams, "sync", "--num-topics", "3", "--drops", drops, "--status", status)
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
		{"", []string{"sync", "--num-topics", "1"}, 2, "timealign sync: --num-topics is 1, want 2..1024\n"},
		{"", []string{"sync", "--queue-size", "0"}, 2, "--queue-size is 0"},
		{"", []string{"sync", "--policy", "latest", "--age-penalty", "1"}, 2, "--age-penalty is not used by --policy latest"},
		{"", []string{"sync", "--epsilon", "1ms"}, 2, "--epsilon is not used by --policy approximate (it applies to --policy epsilon)"},
		{"topic,stamp_ns\n0,5\n2,7\n", []string{"sync", "--num-topics", "2"}, 1, "stdin:3:1 (column \"topic\"): bad value: topic 2 is out of range 0..1 (--num-topics 2)"},
		{"topic,stamp_ns\n0,5\n-1,7\n", []string{"sync"}, 1, "stdin:3:1 (column \"topic\"): bad value: topic -1 is out of range"},
		{"topic,stamp_ns\n0,5\n2,7\n", []string{"sync"}, 1, "no message of topic 1"},
		{"topic,stamp_ns\n0,5\n0,7\n", []string{"sync"}, 1, "has only topic 0"},
		{"topic,stamp_ns\n0,5\n1,7\n2,7\n", []string{"sync", "--lower-bounds", "1ms,1ms"}, 2, "--lower-bounds has 2 values, the input 3 topics"},
		{"", []string{"sync", "--policy", "best"}, 2, "--policy: best is not a policy"},
		{"", []string{"sync", "--num-topics", "2", "--lower-bounds", "1s"}, 2, "--lower-bounds has 1 entries, want one per topic (--num-topics 2) or none"},
		{"", []string{"sync", "--lower-bounds", "1s,-1s"}, 2, "value 2 of --lower-bounds is -1s, want ≥ 0"},
		{"", []string{"sync", "--max-interval", "-1s"}, 2, "--max-interval is -1s"},
		{"topic,stamp_ns\n0,5\nx,7\n", []string{"sync"}, 1, "stdin:3:1 (column \"topic\")"},
		{"topic,stamp_ns\n0,5\n1,x\n", []string{"sync"}, 1, "stdin:3:2 (column \"stamp_ns\")"},
		{"topic,stamp_ns,arrival_ns\n0,5,x\n1,5,6\n", []string{"sync"}, 1, "stdin:2:3 (column \"arrival_ns\")"},
		{"topic,stamp\n", []string{"sync"}, 1, "unexpected header"},
		{"", []string{"align"}, 2, "--periods is required"},
		{"", []string{"align", "--periods", "1s", "--buffer-sizes", "1,2"}, 2, "--buffer-sizes has 2 values, --periods 1"},
		{"", []string{"align", "--periods", "0s"}, 2, "value 1 of --buffer-sizes is automatic (-1) but value 1 of --periods is 0"},
		{"", []string{"align", "--periods", "10ms,-100ms"}, 2, "value 2 of --periods is -100ms, want ≥ 0"},
		{"event,stream,stamp_ns\npush,3,5\n", []string{"align", "--periods", "0s", "--buffer-sizes", "0"}, 1, "stdin:2:2 (column \"stream\"): bad value: stream 3 is out of range 0..0"},
		{"event,stream,stamp_ns\nwiggle,,\n", []string{"align", "--periods", "1s"}, 1, `unknown event "wiggle"`},
		{"event,stream,stamp_ns\ndisable,4,\n", []string{"align", "--periods", "1s"}, 1, "stream 4 is out of range 0..0"},
		{"event,stream,stamp_ns\ntimeout,,-5\n", []string{"align", "--periods", "1s"}, 1, "timeout -5 ns is negative"},
	} {
		_, errOut, code := runCmd(t, tc.in, tc.args...)
		require.Equal(t, tc.code, code, "%v: %s", tc.args, errOut)
		require.Contains(t, errOut, tc.want)
	}
	// A push to a removed stream is a counted drop (Rock's semantics), not an error.
	out, errOut, code := runCmd(t, "event,stream,stamp_ns\nremove,1,\npush,1,5\npush,0,6\ndrain,,\n", "align", "--periods", "0s,0s", "--buffer-sizes", "0,0", "--timeout", "0s")
	require.Equal(t, 0, code)
	require.Equal(t, "stream,stamp_ns\n0,6\n", out)
	require.Contains(t, errOut, "dropped: bad_stream 1 (--drops FILE lists them)")
}

// syncVectors lists the vectors of message_filters' originals: the oracle
// vectors (all four policies) and the upstream unit tests
// (testdata/reference/sync at the module root).
func syncVectors(t *testing.T) []string {
	files, err := filepath.Glob(filepath.Join("..", "..", "testdata", "sync_oracle", "*.args"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	dir := benchdata.Dir(t, "sync")
	up, err := filepath.Glob(filepath.Join(dir, "*.args"))
	require.NoError(t, err)
	require.NotEmpty(t, up, "no *.args in %s", dir)
	return append(files, up...)
}

// TestSyncOracleVectors requires the sets message_filters publishes, and
// checks the accounting: every input message is in a set, dropped (with a
// reason, in the --drops file) or still queued.
func TestSyncOracleVectors(t *testing.T) {
	for _, af := range syncVectors(t) {
		name := strings.TrimSuffix(af, ".args")
		t.Run(filepath.Base(name), func(t *testing.T) {
			args, err := os.ReadFile(af)
			require.NoError(t, err)
			want, err := os.ReadFile(name + ".sets.csv")
			require.NoError(t, err)
			in, err := os.ReadFile(name + ".csv")
			require.NoError(t, err)
			dir := t.TempDir()
			drops, status := filepath.Join(dir, "drops.csv"), filepath.Join(dir, "status.json")
			argv := append([]string{"sync", "--drops", drops, "--status", status}, strings.Fields(string(args))...)
			out, errOut, code := runCmd(t, string(in), argv...)
			require.Equal(t, 0, code, "%s.csv with %s: %s", name, af, errOut)
			require.Equal(t, string(want), out, "output of %s.csv differs from %s.sets.csv", name, name)

			b, err := os.ReadFile(status)
			require.NoError(t, err)
			var st struct {
				Policy    string           `json:"policy"`
				Sets      int              `json:"sets"`
				Received  []int            `json:"received"`
				QueueFill []int            `json:"queue_fill"`
				Drops     []map[string]int `json:"drops"`
			}
			require.NoError(t, json.Unmarshal(b, &st))
			d, err := os.ReadFile(drops)
			require.NoError(t, err)
			dropRows := strings.Split(strings.TrimSpace(string(d)), "\n")[1:]
			perTopic := make([]int, len(st.Received))
			for _, row := range dropRows {
				var topic int
				_, err := fmt.Sscanf(row, "%d,", &topic)
				require.NoError(t, err, row)
				perTopic[topic]++
			}
			for topic, n := range st.Received {
				counted := 0
				for _, k := range st.Drops[topic] {
					counted += k
				}
				require.Equal(t, perTopic[topic], counted, "topic %d: drops file vs status", topic)
				if st.Policy == "latest" {
					continue // a latest message can be in many sets
				}
				require.Equal(t, n, st.Sets+perTopic[topic]+st.QueueFill[topic], "topic %d: received = in sets + dropped + queued", topic)
			}
		})
	}
}

// TestSyncTopicsFromData: without --num-topics the number of topics is the
// input's, from a file or from standard input (buffered to read it twice).
func TestSyncTopicsFromData(t *testing.T) {
	in := "topic,stamp_ns\n0,5\n2,5\n1,5\n0,9\n1,9\n"
	path := filepath.Join(t.TempDir(), "in.csv")
	require.NoError(t, os.WriteFile(path, []byte(in), 0o644))
	for _, args := range [][]string{{"sync"}, {"sync", path}, {"sync", "--num-topics", "3"}} {
		out, errOut, code := runCmd(t, in, args...)
		require.Equal(t, 0, code, errOut)
		require.Equal(t, "t0,t1,t2\n5,5,5\n", out, args)
		require.Contains(t, errOut, "timealign sync: 5 messages, 1 sets; 2 still queued at the end of the input")
	}
	_, errOut, code := runCmd(t, in, "sync", "--quiet")
	require.Equal(t, 0, code)
	require.Empty(t, errOut)
}
