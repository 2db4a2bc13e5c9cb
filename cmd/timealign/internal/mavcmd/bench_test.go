package mavcmd

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/timealign/timealign/internal/testutil/cputime"
	"github.com/timealign/timealign/pkg/mav/mavsim"
)

// BenchmarkMavMerge merges a 10-minute flight whose BIN has 30 IMU records
// per telemetry period (10 MB) into MCAP or CSV, in-process, files on disk:
// MB/s of BIN input (the target is 100) and CPU ms per MB of BIN;
// mcap-lz4-report adds --report (the Analyzer over every merged message).
func BenchmarkMavMerge(b *testing.B) {
	dir := b.TempDir()
	tlog, bins, _ := mavFiles(b, dir, mavsim.Scenario{Seed: 3, GPS: true, BinExtra: 30})
	fi, err := os.Stat(bins[0])
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name, out, compression string
		report                 bool
	}{
		{"mcap-zstd", "m.mcap", "zstd", false}, {"mcap-lz4", "m.mcap", "lz4", false}, {"mcap-none", "m.mcap", "none", false},
		{"csv", "m.csv", "", false}, {"mcap-lz4-report", "m.mcap", "lz4", true},
	} {
		b.Run(c.name, func(b *testing.B) {
			args := []string{"mav", "merge", tlog, bins[0], "--out", filepath.Join(dir, c.out)}
			if c.compression != "" {
				args = append(args, "--compression", c.compression)
			}
			if c.report {
				args = append(args, "--report", filepath.Join(dir, "r.html"))
			}
			b.SetBytes(fi.Size())
			b.ReportAllocs()
			// CPU time, which other work on a shared machine does not
			// inflate as much as the wall clock: ms per MB of BIN (on 2
			// idle cores the wall clock can be up to twice as fast).
			cpu := cputime.Start(b, fi.Size())
			for b.Loop() {
				if _, errOut, code := runCmd(b, "", args...); code != 0 {
					b.Fatal(errOut)
				}
			}
			cpu.Stop()
		})
	}
}
