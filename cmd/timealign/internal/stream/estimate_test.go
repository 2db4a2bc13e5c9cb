package stream

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestEstimate(t *testing.T) {
	sim, _, code := runCmd(t, "", "simulate", "--count", "300", "--loss", "0.05", "--announce-loss", "--reference-every", "100")
	require.Equal(t, 0, code)
	status := filepath.Join(t.TempDir(), "status.json")
	out, errOut, code := runCmd(t, sim+"reset,,\n", "estimate", "--window", "1s", "--status", status)
	require.Equal(t, 0, code, errOut)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Equal(t, "stamp_ns,estimate_ns", lines[0])
	require.Equal(t, strings.Count(sim, "\nsample,")+1, len(lines))
	b, err := os.ReadFile(status)
	require.NoError(t, err)
	var st map[string]any
	require.NoError(t, json.Unmarshal(b, &st))
	require.Equal(t, float64(300-strings.Count(sim, "\nloss,")), st["samples"])
	require.Equal(t, float64(1), st["resets"], "one reset row")
	require.Greater(t, st["references"], float64(0))
}

// TestEstimateEveryRow: a stamp going back gets an estimate (the fit's
// prediction) and is counted; only a repeated index leaves the estimate
// empty.
func TestEstimateEveryRow(t *testing.T) {
	var b strings.Builder
	b.WriteString("event,stamp_ns,index\n")
	base := int64(1_700_000_000_000_000_000)
	stampAt := func(i int) int64 { return base + int64(i)*10_000_000 + int64(i*7919%2000)*1000 }
	for i := 0; i < 400; i++ {
		s := stampAt(i)
		if i == 300 {
			s -= 500_000_000 // half a second early: a stamp going back
		}
		fmt.Fprintf(&b, "sample,%d,\n", s)
	}
	fmt.Fprintf(&b, "sample,%d,7\nsample,%d,7\n", stampAt(400), stampAt(401)) // the same index twice
	status := filepath.Join(t.TempDir(), "status.json")
	out, errOut, code := runCmd(t, b.String(), "estimate", "--status", status)
	require.Equal(t, 0, code, errOut)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 1+402)
	prev := int64(0)
	for i, l := range lines[1:] {
		var recv, est int64
		if i == 401 {
			require.Equal(t, fmt.Sprintf("%d,", stampAt(401)), l, "a repeated index has no estimate")
			continue
		}
		_, err := fmt.Sscanf(l, "%d,%d", &recv, &est)
		require.NoError(t, err, "row %d: %q", i, l)
		require.GreaterOrEqual(t, est, prev, "row %d", i)
		prev = est
		if i == 300 {
			require.InDelta(t, float64(stampAt(299)+10_000_000), float64(est), 2e6, "the fit's prediction, not the early stamp")
		}
	}
	raw, err := os.ReadFile(status)
	require.NoError(t, err)
	var st map[string]any
	require.NoError(t, json.Unmarshal(raw, &st))
	require.Equal(t, float64(1), st["rejected_backward"])
	require.Equal(t, float64(1), st["rejected_duplicates"])
	require.Equal(t, float64(401), st["samples"])
}

func TestEstimateErrors(t *testing.T) {
	for _, tc := range []struct {
		in   string
		args []string
		code int
		want string
	}{
		{"event,stamp_ns,index\nsample,abc,\n", nil, 1, `stdin:2:2 (column "stamp_ns")`},
		{"event,stamp_ns,index\njump,1,\n", nil, 1, `stdin:2:1 (column "event"): bad value: unknown event "jump"`},
		{"event,stamp_ns,index\nsample,1,-3\n", nil, 1, `stdin:2:3 (column "index")`},
		{"event,stamp\n", nil, 1, "unexpected header"},
		{"", nil, 1, "empty input"},
		{"", []string{"--window", "-1s"}, 2, "--window is -1s, want > 0"},
		{"", []string{"--loss-threshold", "-1"}, 2, "--loss-threshold is -1"},
		{"", []string{"--window", "soon"}, 2, "invalid value"},
		{"", []string{"/no/such/file.csv"}, 1, "no such file"},
	} {
		_, errOut, code := runCmd(t, tc.in, append([]string{"estimate"}, tc.args...)...)
		require.Equal(t, tc.code, code, tc.want)
		require.Contains(t, errOut, tc.want)
	}
}

// TestEstimateFlags: every Config field has its flag, and indexes wrapping
// at --index-bits count the losses exactly.
func TestEstimateFlags(t *testing.T) {
	var b strings.Builder
	b.WriteString("event,stamp_ns,index\n")
	base := int64(1_700_000_000_000_000_000)
	lost := 0
	for i := 0; i < 300; i++ {
		if i%37 == 5 {
			lost++
			continue // never delivered; its index is skipped
		}
		fmt.Fprintf(&b, "sample,%d,%d\n", base+int64(i)*10_000_000+5_000_000+int64(i*7919%2000)*1000, i%16)
	}
	status := filepath.Join(t.TempDir(), "status.json")
	out, errOut, code := runCmd(t, b.String(), "estimate", "--window", "1s", "--period", "10ms", "--min-latency", "4ms",
		"--loss-threshold", "0", "--never-infer-loss", "--index-bits", "4", "--status", status)
	require.Equal(t, 0, code, errOut)
	raw, err := os.ReadFile(status)
	require.NoError(t, err)
	var st map[string]any
	require.NoError(t, json.Unmarshal(raw, &st))
	require.Equal(t, float64(lost), st["lost_samples_total"])
	require.Equal(t, float64(300-lost), st["samples"])
	// --min-latency: no estimate later than its receive stamp minus 4 ms.
	for _, line := range strings.Split(strings.TrimSpace(out), "\n")[1:] {
		var recv, est int64
		_, err := fmt.Sscanf(line, "%d,%d", &recv, &est)
		require.NoError(t, err, line)
		require.LessOrEqual(t, est, recv-4_000_000, line)
	}
	for _, bad := range [][]string{{"--index-bits", "0"}, {"--index-bits", "65"}, {"--min-latency", "-1ms"}, {"--period", "5s"}} {
		_, errOut, code := runCmd(t, "", append([]string{"estimate"}, bad...)...)
		require.Equal(t, 2, code, "%v: %s", bad, errOut)
	}
}

// TestEstimateWrappingIndexHint: an 8-bit counter read with the default
// 64 bits is not silent: the summary says how often the index went back
// and which --index-bits fits, and with it nothing is said.
func TestEstimateWrappingIndexHint(t *testing.T) {
	in, _, code := runCmd(t, "", "simulate", "--index", "--index-bits", "8", "--count", "3000")
	require.Equal(t, 0, code)
	_, errOut, code := runCmd(t, in, "estimate")
	require.Equal(t, 0, code, errOut)
	require.Regexp(t, `the sample index went back 1[01] times.*the largest index is 255: if the counter wraps there, give --index-bits 8`, errOut)
	_, errOut, code = runCmd(t, in, "estimate", "--index-bits", "8")
	require.Equal(t, 0, code)
	require.Empty(t, errOut)
}
