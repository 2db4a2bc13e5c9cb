package bag

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/timealign/timealign/internal/testutil/fuzzcheck"
)

// FuzzMCAP: any bytes as an MCAP file give messages or an error naming
// the file, never a panic or a hang.
func FuzzMCAP(f *testing.F) {
	t := &testing.T{}
	f.Add(writeTestMCAP(t, 20, CompressionNone))
	f.Add(writeTestMCAP(t, 20, CompressionZSTD))
	f.Add(writeTestMCAP(t, 20, CompressionLZ4))
	if b, err := os.ReadFile(filepath.Join(rosbag2Dir("mcap/talker"), "talker.mcap")); err == nil {
		f.Add(b)
	}
	f.Add([]byte("\x89MCAP0\r\n"))
	// Lengths up to the real limit (256 MiB) only cost allocations, which
	// would slow the fuzzer to a crawl: 1 MiB finds the same bugs.
	chunkLimit = 1 << 20
	f.Fuzz(func(tt *testing.T, data []byte) {
		fuzzcheck.Finish(tt, func() string { return fmt.Sprintf("%d bytes: %q", len(data), data[:min(len(data), 200)]) }, func(t *fuzzcheck.T) {
			fuzzMCAP(tt, t, data)
		})
	})
}

func fuzzMCAP(tt *testing.T, t *fuzzcheck.T, data []byte) {
	{
		p := filepath.Join(tt.TempDir(), "f.mcap")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		b, err := Open(p)
		if err != nil {
			return
		}
		r := b.Records()
		defer r.Close()
		var rec Record
		for n := 0; n < 1_000_000; n++ {
			err := r.Next(&rec)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				var fe *FileError
				if !errors.As(err, &fe) && !errors.Is(err, ErrFormat) && !errors.Is(err, ErrUnsupported) {
					t.Fatalf("error without file or sentinel: %v", err)
				}
				r.SkipFile(err)
			}
		}
		_, _ = b.Summarize()
	}
}

// FuzzMetadata: any metadata.yaml parses or is an ErrFormat error, and
// what parses marshals and parses again to the same.
func FuzzMetadata(f *testing.F) {
	for _, name := range rosbag2Bags {
		if b, err := os.ReadFile(filepath.Join(rosbag2Dir(name), MetadataFile)); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("rosbag2_bagfile_information: {version: 5}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ParseMetadata("m.yaml", data)
		if err != nil {
			if !errors.Is(err, ErrFormat) {
				t.Fatalf("error without ErrFormat: %v", err)
			}
			return
		}
		out, err := m.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		m2, err := ParseMetadata("m2.yaml", out)
		if err != nil {
			t.Fatalf("re-parse: %v\n%s", err, out)
		}
		if m2.MessageCount != m.MessageCount || len(m2.Topics) != len(m.Topics) || len(m2.RelativeFilePaths) != len(m.RelativeFilePaths) {
			t.Fatalf("round trip changed the metadata")
		}
	})
}
