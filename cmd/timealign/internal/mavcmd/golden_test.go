package mavcmd

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/timealign/timealign/cmd/timealign/internal/cli"
)

// mergeGolden are the SHA-256 sums of what mav merge wrote for the logs of
// testdata/mav before the CLI was split into packages and its MCAP writer
// moved to pkg/bag (issue 25; computed with the code of commit f614cdf, the
// version string "0.1.0-dev" in the MCAP header): the merged output must
// stay byte-identical. ardusub_small gives 4 chunks uncompressed (lz4 and
// zstd compress 2 MiB chunks in the writer's goroutine). A change of the
// output on purpose updates them, and says so in its commit: the ardusub
// sums changed with pkg/pll's restore of a fit a tilted line had left
// (issue 29), which restores one on that log (the tlog clock's skew
// −14.5 → −26.2 ppm, ± 333 → 296 µs; the first 7358 of 43270 rows 0–5 ms
// later; its latency figures unchanged).
var mergeGolden = []struct {
	name string
	args []string // after mav merge; OUT is the output file
	sum  string
}{
	{"dive lz4", []string{"dive.tlog", "dive.BIN", "--out", "OUT.mcap"}, "e233234bd6118406c82d19f4afda459c7fb54a6ecd63b9826d513c473e6ddcc0"},
	{"ardusub lz4", []string{"--allow-mismatch", "ardusub_small.tlog", "ardusub_small.BIN", "--out", "OUT.mcap"}, "6f7bd8e1f22fa1cc93db90a7afd8a80fc4e46714d3afa0ca19b77fcc9d210ebd"},
	{"ardusub zstd", []string{"--allow-mismatch", "--compression", "zstd", "ardusub_small.tlog", "ardusub_small.BIN", "--out", "OUT.mcap"}, "615be7b1262cf3f9aabda6c491e9532e5bafb7c2c8f303618d428edacffc125c"},
	{"ardusub none", []string{"--allow-mismatch", "--compression", "none", "ardusub_small.tlog", "ardusub_small.BIN", "--out", "OUT.mcap"}, "120117ee3ddabae6613f7ef519fc7105bd97cff6419ab626c645e162d17f5b99"},
	{"ardusub csv", []string{"--allow-mismatch", "ardusub_small.tlog", "ardusub_small.BIN", "--out", "OUT.csv"}, "53c90ca24cbe67629a590555a49a46e36346c21c94efa54e034f63e2cd514998"},
}

// TestMavMergeGolden: mav merge writes, byte for byte, what it wrote before
// its writer and pipeline moved, on one core and on all of them.
func TestMavMergeGolden(t *testing.T) {
	dir := t.TempDir()
	logs := filepath.Join("..", "..", "..", "..", "testdata", "mav")
	for _, procs := range []int{1, runtime.GOMAXPROCS(0)} {
		for _, c := range mergeGolden {
			t.Run(fmt.Sprintf("%s/%dcpu", c.name, procs), func(t *testing.T) {
				defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
				args := []string{"mav", "merge", "--quiet"}
				var out string
				for _, a := range c.args {
					switch {
					case strings.HasPrefix(a, "OUT."):
						out = filepath.Join(dir, a)
						a = out
					case strings.HasSuffix(a, ".tlog") || strings.HasSuffix(a, ".BIN"):
						a = filepath.Join(logs, a)
					}
					args = append(args, a)
				}
				// The version the sums were computed with: the MCAP
				// header names the writer.
				var stdout, stderr bytes.Buffer
				e := &cli.Env{Ctx: context.Background(), Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr, Version: "0.1.0-dev"}
				code, errOut := cli.Run(e, []*cli.Command{Command()}, args), stderr.String()
				require.Equal(t, 0, code, errOut)
				b, err := os.ReadFile(out)
				require.NoError(t, err)
				sum := sha256.Sum256(b)
				require.Equal(t, c.sum, hex.EncodeToString(sum[:]), "%s on %d core(s): the merged output changed", c.name, procs)
			})
		}
	}
}
