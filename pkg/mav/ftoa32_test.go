package mav

import (
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"
	"sync"
	"testing"
)

// float32Cases are values where shortest formatting is easy to get wrong:
// subnormals, powers of two (the lower gap is half), exact halves, the
// extremes, numbers near the %e / %f boundaries.
var float32Cases = []float32{
	1, -1, 0.1, 0.3, 1.5, -9.81, 100000, 999999, 1e6, 1234567, 16777216, 16777217, 1e-4, 9.999999e-5, 1e-5,
	math.MaxFloat32, math.SmallestNonzeroFloat32, -math.SmallestNonzeroFloat32, 1.1754942e-38, 1.17549435e-38,
	3.4028235e38, 6.1e-5, 33554432, 8388608, 8388607.5, 0.5, 0.25, 0.125, 2.5, 1e10, 1.0e-10, 123456.789,
}

func checkFloat32(t testing.TB, b uint32) {
	f := math.Float32frombits(b)
	if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
		return
	}
	want := strconv.AppendFloat(nil, float64(f), 'g', -1, 32)
	got := appendFloat32(nil, f)
	if string(got) != string(want) {
		t.Fatalf("%#08x (%v): got %s, want %s", b, f, got, want)
	}
}

func TestAppendFloat32(t *testing.T) {
	for _, f := range float32Cases {
		checkFloat32(t, math.Float32bits(f))
		checkFloat32(t, math.Float32bits(-f))
		checkFloat32(t, math.Float32bits(f)+1)
		checkFloat32(t, math.Float32bits(f)-1)
	}
	// Every exponent, with random mantissas; every small subnormal and the
	// neighbourhood of every power of two.
	r := rand.New(rand.NewPCG(7, 8))
	for e := uint32(0); e < 255; e++ {
		for range 2000 {
			checkFloat32(t, e<<23|r.Uint32()&(1<<23-1))
		}
		for d := uint32(0); d < 64; d++ {
			checkFloat32(t, e<<23|d)
			checkFloat32(t, e<<23|(1<<23-1-d))
		}
	}
	for b := uint32(0); b < 100000; b++ {
		checkFloat32(t, b)
	}
}

// TestFloat32Exhaustive compares every float32 with strconv (minutes on
// two cores): TIMEALIGN_FTOA32_ALL=1 go test -run Exhaustive ./pkg/mav.
func TestFloat32Exhaustive(t *testing.T) {
	if os.Getenv("TIMEALIGN_FTOA32_ALL") != "1" {
		t.Skip("set TIMEALIGN_FTOA32_ALL=1 to compare all 2^32 values")
	}
	n := runtime.GOMAXPROCS(0)
	var wg sync.WaitGroup
	for w := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var got, want []byte
			for b := uint64(w); b < 1<<32; b += uint64(n) {
				f := math.Float32frombits(uint32(b))
				if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
					continue
				}
				want = strconv.AppendFloat(want[:0], float64(f), 'g', -1, 32)
				got = appendFloat32(got[:0], f)
				if string(got) != string(want) {
					t.Errorf("%#08x: got %s, want %s", b, got, want)
					return
				}
			}
		}()
	}
	wg.Wait()
}

func BenchmarkAppendFloat32(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	v := make([]float32, 4096)
	for i := range v {
		v[i] = float32(r.NormFloat64() * math.Pow(10, float64(r.IntN(6)-3)))
	}
	var buf []byte
	b.Run("ryu", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			buf = appendFloat32(buf[:0], v[i&4095])
		}
	})
	b.Run("strconv", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			buf = strconv.AppendFloat(buf[:0], float64(v[i&4095]), 'g', -1, 32)
		}
	})
}
