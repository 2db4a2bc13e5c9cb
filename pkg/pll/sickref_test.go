package pll

import (
	"path/filepath"
	"time"

	"github.com/stretchr/testify/require"
	"testing"
)

// sickCases are the SICK reference vectors under testdata/sick: inputs made
// with pkg/sim (and SICK's own testbed), each run through the unmodified
// upstream SoftwarePLL (sick_scan_xd, driver/src/softwarePLL.cpp) to give
// NAME.sick.csv. fifo is the FIFO size the reference ran with.
var sickCases = []struct {
	name string
	fifo int
}{
	{"upstream_testbed", 7}, // SoftwarePLL::testbed(): 1 s host jumps from the 8th sample
	{"wrap", 7},             // 32-bit µs ticks wrap after 8 s
	{"hoststep", 7},         // host clock +5 s at 8 s, −2 s at 16 s
	{"scanticks", 7},        // scan (generation) ticks 5 ms before transmit ticks
	{"outliers", 7},         // uniform 20 ms latency, 5 % outliers up to 300 ms
	{"reboot", 7},           // the device reboots at 10 s: ticks restart at 0
	{"reorder", 7},          // exponential 30 ms latency with reordering: ticks go back
	{"fifo101", 101},        // SICK's segment mode FIFO
}

func TestSickMatchesReference(t *testing.T) {
	for _, c := range sickCases {
		t.Run(c.name, func(t *testing.T) {
			base := filepath.Join("testdata", "sick", c.name)
			in := readInputs(t, base+".csv")
			refEst, refOK := readStamps(t, base+".sick.csv", "estimate_ns", true)
			cfg := SickConfig()
			cfg.FIFOSize = c.fifo
			compareSick(t, cfg, in, refEst, refOK)
		})
	}
}

// TestSickWrapStale is the case where SICK is wrong: a tick from before a
// 32-bit wrap arriving after it. SICK unwraps it 2^32 ticks too far and
// every later stamp is about +4300 s off yet valid (19 rows, until its
// invalid counter resets it). Sick mode unwraps to the nearest value
// instead: the stale tick lands 40 ms back, and the rest follows SICK's
// rules. Rows before the stale tick must equal SICK's; every valid stamp
// must stay near the truth.
func TestSickWrapStale(t *testing.T) {
	base := filepath.Join("testdata", "sick", "wrapstale")
	in := readInputs(t, base+".csv")
	refEst, refOK := readStamps(t, base+".sick.csv", "estimate_ns", true)
	truth, _ := readStamps(t, base+".truth.csv", "truth_ns", false)
	stale := -1
	for i := 1; i < len(in); i++ {
		if in[i].t > 1<<31 && in[i-1].t < 1<<20 {
			stale = i
			break
		}
	}
	require.Positive(t, stale, "the vector has a stale pre-wrap tick")
	compareSick(t, SickConfig(), in[:stale], refEst[:stale], refOK[:stale])

	sickBad := 0
	for i := stale; i < len(in); i++ {
		if refOK[i] && refEst[i].Sub(truth[i]) > time.Hour {
			sickBad++
		}
	}
	require.Greater(t, sickBad, 10, "SICK's output shows the bug")

	est, ok := run(t, SickConfig(), in)
	for i := stale; i < len(in); i++ {
		require.True(t, ok[i], "row %d", i+2)
		e := est[i].Sub(truth[i])
		require.Less(t, max(e, -e), 50*time.Millisecond, "row %d: %v off", i+2, e)
	}
}
