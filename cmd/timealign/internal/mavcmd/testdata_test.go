package mavcmd

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timealign/timealign/pkg/mav/mavsim"
	"github.com/timealign/timealign/pkg/sim"
)

// mavDive is the simulated dive of testdata/mav (the examples of docs/ardupilot.md):
// two minutes of telemetry, a boot clock 25 ppm fast,
// latency 3 ms + exponential 15 ms, 1 % loss, no GPS, the autopilot's
// clock never set (SYSTEM_TIME without Unix time), as underwater.
var mavDive = mavsim.Scenario{Seed: 2024, Duration: 2 * time.Minute, SkewPPM: 25, Loss: 0.01,
	Latency: sim.Latency{Base: 3 * time.Millisecond, Kind: sim.Exponential, Scale: 15 * time.Millisecond}}

// TestMavTestdata checks that testdata/mav/dive.tlog and dive.BIN are what
// mavDive writes (TIMEALIGN_UPDATE_TESTDATA=1 rewrites them).
func TestMavTestdata(t *testing.T) {
	var tl, bin bytes.Buffer
	_, err := mavDive.Write(&tl, func(int) io.Writer { return &bin })
	require.NoError(t, err)
	dir := filepath.Join("..", "..", "..", "..", "testdata", "mav")
	for name, b := range map[string][]byte{"dive.tlog": tl.Bytes(), "dive.BIN": bin.Bytes()} {
		p := filepath.Join(dir, name)
		if os.Getenv("TIMEALIGN_UPDATE_TESTDATA") == "1" {
			require.NoError(t, os.WriteFile(p, b, 0o644))
		}
		got, err := os.ReadFile(p)
		require.NoError(t, err)
		require.True(t, bytes.Equal(b, got), "%s differs from what mavDive writes (TIMEALIGN_UPDATE_TESTDATA=1 rewrites it)", p)
	}
}
