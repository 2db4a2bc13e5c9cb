package bagcmd

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// The throughput of bag report and bag fix on a generated bag (MiB/s of
// bag, b.SetBytes). TIMEALIGN_BENCH_MB sets the bag's size (default 64;
// docs/performance.md's figures are for 1 GB, measured with .ci/bagbench against
// foxglove's own reader). TIMEALIGN_BENCH_KIND is "images" (a camera,
// an IMU and a lidar; bytes dominated by 720p images) or "imu" (four 1 kHz
// IMUs: the most messages per byte). Run:
//
//	go test -run '^$' -bench BenchmarkBag -benchmem ./cmd/timealign/internal/bagcmd

func benchBag(b *testing.B) (string, int64) {
	b.Helper()
	mb := 64
	if s := os.Getenv("TIMEALIGN_BENCH_MB"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v < 1 {
			b.Fatalf("TIMEALIGN_BENCH_MB=%q", s)
		}
		mb = v
	}
	kind := os.Getenv("TIMEALIGN_BENCH_KIND")
	if kind == "" {
		kind = "images"
	}
	out := filepath.Join(b.TempDir(), "bag")
	var args []string
	switch kind {
	case "images":
		// 720p mono images at 30 Hz: 27.7 MB/s of recording.
		args = []string{"--streams", "imu,camera,lidar", "--image-size", "1280x720", "--duration", strconv.FormatFloat(float64(mb)/27.7, 'f', 3, 64) + "s"}
	case "imu":
		// 4 kHz of 324-byte messages: 1.48 MB/s of recording.
		args = []string{"--streams", "imu,imu,imu,imu", "--period", "1ms", "--jitter-scale", "200us", "--duration", strconv.FormatFloat(float64(mb)/1.48, 'f', 3, 64) + "s"}
	default:
		b.Fatalf("TIMEALIGN_BENCH_KIND=%q, want images or imu", kind)
	}
	if _, errOut, code := runCmd(b, "", append([]string{"simulate", "--bag", out}, args...)...); code != 0 {
		b.Fatal(errOut)
	}
	fi, err := os.Stat(filepath.Join(out, "bag_0.mcap"))
	if err != nil {
		b.Fatal(err)
	}
	return out, fi.Size()
}

func BenchmarkBagReport(b *testing.B) {
	in, size := benchBag(b)
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		if _, errOut, code := runCmd(b, "", "bag", "report", "--quiet", in); code != 0 {
			b.Fatal(errOut)
		}
	}
}

func BenchmarkBagFix(b *testing.B) {
	in, size := benchBag(b)
	out := filepath.Join(b.TempDir(), "out")
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		os.RemoveAll(out)
		if _, errOut, code := runCmd(b, "", "bag", "fix", "--quiet", in, out, "--apply", "/imu/data_raw=timestamp_estimator"); code != 0 {
			b.Fatal(errOut)
		}
	}
}
