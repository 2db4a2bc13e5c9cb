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
// output on purpose updates them, and says so in its commit.
var mergeGolden = []struct {
	name string
	args []string // after mav merge; OUT is the output file
	sum  string
}{
	{"dive lz4", []string{"dive.tlog", "dive.BIN", "--out", "OUT.mcap"}, "e233234bd6118406c82d19f4afda459c7fb54a6ecd63b9826d513c473e6ddcc0"},
	{"ardusub lz4", []string{"--allow-mismatch", "ardusub_small.tlog", "ardusub_small.BIN", "--out", "OUT.mcap"}, "4e22c760fa7d14dfab78ae7b7832c61e679010c3c6535af1f589eaec91c11557"},
	{"ardusub zstd", []string{"--allow-mismatch", "--compression", "zstd", "ardusub_small.tlog", "ardusub_small.BIN", "--out", "OUT.mcap"}, "dbae9b37cbc4d1fb30eafde8cb68572f63aa849637166edd6e0f50e75a28ad6d"},
	{"ardusub none", []string{"--allow-mismatch", "--compression", "none", "ardusub_small.tlog", "ardusub_small.BIN", "--out", "OUT.mcap"}, "a7f6abc9f86986d665ee7b99d6f03fba6a60063fd24a327e447219155b9d2443"},
	{"ardusub csv", []string{"--allow-mismatch", "ardusub_small.tlog", "ardusub_small.BIN", "--out", "OUT.csv"}, "694f705bc215324f5c8ea0d6f1709afe33c361a26df301038677298f0a03fd23"},
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
