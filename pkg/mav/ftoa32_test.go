package mav

import (
	"math"
	"math/big"
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

// TestFloorLogs checks the floor-log formulas of ftoa32.go with exact
// arithmetic over the exponents float32s need.
func TestFloorLogs(t *testing.T) {
	pow := func(base, e int64) *big.Rat { // base^e
		p := new(big.Int).Exp(big.NewInt(base), big.NewInt(max(e, -e)), nil)
		if e < 0 {
			return new(big.Rat).SetFrac(big.NewInt(1), p)
		}
		return new(big.Rat).SetInt(p)
	}
	// floor(log_base x) == k: base^k ≤ x < base^(k+1).
	check := func(name string, arg int32, x *big.Rat, base, k int64) {
		if pow(base, k).Cmp(x) > 0 || x.Cmp(pow(base, k+1)) >= 0 {
			t.Fatalf("%s(%d) = %d is not the floor of the log", name, arg, k)
		}
	}
	for q := int32(-160); q <= 110; q++ {
		check("flog10pow2", q, pow(2, int64(q)), 10, int64(flog10pow2(q)))
		tq := new(big.Rat).Mul(pow(2, int64(q)), big.NewRat(3, 4))
		check("flog10threeQuartersPow2", q, tq, 10, int64(flog10threeQuartersPow2(q)))
	}
	for e := int32(g32Min); e <= g32Max; e++ {
		check("flog2pow10", e, pow(10, int64(e)), 2, int64(flog2pow10(e)))
	}
	// Every normal float32's −k is in the table.
	for ef := int32(1); ef <= 254; ef++ {
		for _, k := range []int32{flog10pow2(ef - 150), flog10threeQuartersPow2(ef - 150)} {
			if -k < g32Min || -k > g32Max {
				t.Fatalf("exponent %d: 10^%d is not in the table", ef, -k)
			}
		}
	}
}

// TestPutUint compares putUint and putInt with strconv: every power of
// ten and its neighbours (where the digit count changes), the extremes,
// random values of every length, behind a prefix and with and without
// spare capacity.
func TestPutUint(t *testing.T) {
	var cases []uint64
	for p := uint64(1); ; p *= 10 {
		cases = append(cases, p-1, p, p+1)
		if p > math.MaxUint64/10 {
			break
		}
	}
	cases = append(cases, 0, math.MaxUint64, math.MaxUint64-1, 1<<32-1, 1<<32, 1<<63-1, 1<<63)
	r := rand.New(rand.NewPCG(3, 4))
	for range 20000 {
		cases = append(cases, r.Uint64()>>r.IntN(64))
	}
	for _, v := range cases {
		for _, prefix := range [][]byte{nil, []byte("ab"), make([]byte, 3, 5)} {
			want := strconv.AppendUint(append([]byte(nil), prefix...), v, 10)
			if got := putUint(append([]byte(nil), prefix...), v); string(got) != string(want) {
				t.Fatalf("putUint(%d) = %q, want %q", v, got, want)
			}
			want = strconv.AppendInt(append([]byte(nil), prefix...), int64(v), 10)
			if got := putInt(prefix[:len(prefix):len(prefix)], int64(v)); string(got) != string(want) {
				t.Fatalf("putInt(%d) = %q, want %q", int64(v), got, want)
			}
		}
	}
}

// BenchmarkPutUint formats boot times in µs (ten digits), small counts
// and 64-bit values.
func BenchmarkPutUint(b *testing.B) {
	for _, c := range []struct {
		name string
		v    uint64
	}{{"small", 37}, {"timeus", 1234567890}, {"big", 18446744073709551615}} {
		b.Run(c.name, func(b *testing.B) {
			buf := make([]byte, 0, 64)
			for b.Loop() {
				buf = putUint(buf[:0], c.v)
			}
		})
	}
}
