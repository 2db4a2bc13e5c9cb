package mav_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/timealign/timealign/internal/testutil/cputime"
	"github.com/timealign/timealign/pkg/mav"
	"github.com/timealign/timealign/pkg/mav/mavsim"
)

// benchLogs is a 10-minute flight whose BIN has 30 IMU records per
// telemetry period (300 Hz) besides ATT and GPS: about 17 MB.
var benchLogs = sync.OnceValue(func() logs {
	s := mavsim.Scenario{Seed: 3, GPS: true, BinExtra: 30}
	var tl bytes.Buffer
	var bin bytes.Buffer
	tr, err := s.Write(&tl, func(int) io.Writer { return &bin })
	if err != nil {
		panic(err)
	}
	return logs{tlog: tl.Bytes(), bins: [][]byte{bin.Bytes()}, truth: tr}
})

// BenchmarkBinRead reads every record of a BIN (MB/s of BIN).
func BenchmarkBinRead(b *testing.B) {
	in := benchLogs().bins[0]
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	cpu := cputime.Start(b, int64(len(in)))
	defer cpu.Stop()
	for b.Loop() {
		r := mav.NewBinReader(bytes.NewReader(in))
		for {
			if _, err := r.Next(); err != nil {
				if !errors.Is(err, io.EOF) {
					b.Fatal(err)
				}
				break
			}
		}
	}
}

// BenchmarkBinJSON reads every record of a BIN and encodes it as JSON:
// the simulated flight (its IMU records are most of it) and the small
// ArduSub log of testdata/mav (real values, many record types), 16 times
// over so that reading its formats once is not most of the work.
func BenchmarkBinJSON(b *testing.B) {
	one, err := os.ReadFile(filepath.Join("..", "..", "testdata", "mav", "ardusub_small.BIN"))
	if err != nil {
		b.Fatal(err)
	}
	real := bytes.Repeat(one, 16)
	for _, c := range []struct {
		name string
		in   []byte
	}{{"sim", benchLogs().bins[0]}, {"ardusub", real}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.in)))
			b.ReportAllocs()
			cpu := cputime.Start(b, int64(len(c.in)))
			defer cpu.Stop()
			var buf []byte
			for b.Loop() {
				r := mav.NewBinReader(bytes.NewReader(c.in))
				for {
					rec, err := r.Next()
					if err != nil {
						if !errors.Is(err, io.EOF) {
							b.Fatal(err)
						}
						break
					}
					buf = rec.AppendJSON(buf[:0])
				}
			}
		})
	}
}

// BenchmarkAlign runs the Aligner over the tlog and the BIN (MB/s of both).
func BenchmarkAlign(b *testing.B) {
	l := benchLogs()
	b.SetBytes(int64(len(l.tlog) + len(l.bins[0])))
	b.ReportAllocs()
	for b.Loop() {
		res := align(b, mav.DefaultConfig(), l.tlog, l.bins[0])
		if res.Err() != nil {
			b.Fatal(res.Err())
		}
	}
}
