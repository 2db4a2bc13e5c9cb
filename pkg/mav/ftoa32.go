package mav

import (
	"encoding/binary"
	"math"
	"math/big"
	"math/bits"
	"slices"
	"strconv"
)

// appendFloat32 appends the shortest decimal that reads back as f, in the
// form strconv.AppendFloat(dst, float64(f), 'g', -1, 32) writes, byte for
// byte (TestFloat32Exhaustive compares every float32 with strconv when
// asked to; the suite compares millions). Dataflash logs are mostly
// float32 columns, and this is several times faster than strconv's general
// path: the digits by Schubfach (below), written nine at a time into room
// reserved once, the layout by moves of eight bytes. NaN and ±Inf are the
// caller's business.
func appendFloat32(dst []byte, f float32) []byte {
	b := math.Float32bits(f)
	if b<<1 == 0 {
		if b != 0 {
			return append(dst, '-', '0')
		}
		return append(dst, '0')
	}
	if b>>23&0xff == 0 {
		// Subnormals (below 1.2e-38) are rare in logs; near the bottom
		// their rounding interval is wider than the method below allows.
		return strconv.AppendFloat(dst, float64(f), 'g', -1, 32)
	}
	digits, k := shortest32(b)
	// The digits scaled to exactly nine, x the exponent of the first.
	// Schubfach's digits are 7 to 9: about c·2^q·10^−k with
	// 2^23 ≤ c < 2^24 and 1 ≤ 2^q·10^−k < 10.
	x := k + 6
	switch {
	case digits >= 1e8:
		x += 2
	case digits >= 1e7:
		digits *= 10
		x++
	default:
		digits *= 100
	}
	n := len(dst)
	if cap(dst)-n < 32 {
		dst = slices.Grow(dst, 32)
	}
	o := dst[n : n+32]
	i := 0
	if b>>31 != 0 {
		o[0] = '-'
		i = 1
	}
	// The first digit, and the other eight as the bytes of w (in
	// registers: nothing written is read back); sig counts those of them
	// before the trailing zeros, which the layouts below leave out.
	d0 := digits / 1e8
	w := eightDigits(digits - d0*1e8)
	sig := 8 - bits.LeadingZeros64(w^0x3030303030303030)/8
	c0 := byte('0' + d0)
	// %g with the shortest precision: %e when the exponent is below −4
	// or at least 6 (strconv decides with precision 6 when shortest).
	if x < -4 || x >= 6 {
		o[i], o[i+1] = c0, '.'
		binary.LittleEndian.PutUint64(o[i+2:], w)
		i += 1 + sig
		if sig > 0 {
			i++ // the point stays
		}
		o[i] = 'e'
		if x < 0 {
			o[i+1] = '-'
			x = -x
		} else {
			o[i+1] = '+'
		}
		o[i+2] = byte('0' + x/10)
		o[i+3] = byte('0' + x%10)
		return dst[:n+i+4]
	}
	if x < 0 {
		// "0.", −x−1 zeros, the nine digits.
		binary.LittleEndian.PutUint64(o[i:], 0x3030303030302e30) // "0.000000"
		t := i + 1 - int(x)
		binary.LittleEndian.PutUint64(o[t:], uint64(c0)|w<<8)
		o[t+8] = byte(w >> 56)
		return dst[:n+t+1+sig]
	}
	// The first digit, x more, the point, the rest: nine or ten bytes
	// (the last store holds the one that does not fit in eight).
	o[i] = c0
	if sig <= int(x) {
		binary.LittleEndian.PutUint64(o[i+1:], w) // digits, then zeros
		return dst[:n+i+1+int(x)]
	}
	sh := 8 * uint(x)
	low := w & (1<<sh - 1)
	binary.LittleEndian.PutUint64(o[i+1:], low|'.'<<sh|(w>>sh)<<(sh+8))
	o[i+9] = byte(w >> 56)
	return dst[:n+i+1+sig+1]
}

// eightDigits returns the eight decimal digits of v < 10^8, leading zeros
// included, as the bytes of a little-endian word (the first digit in the
// low byte): the two halves, then their halves, independently.
func eightDigits(v uint32) uint64 {
	hi := v / 10000
	lo := v - hi*10000
	a, c := hi/100, lo/100
	b, d := hi-a*100, lo-c*100
	return uint64(digitPairs16[a]) | uint64(digitPairs16[b])<<16 | uint64(digitPairs16[c])<<32 | uint64(digitPairs16[d])<<48
}

// digitPairs16 holds "00" to "99" as little-endian 16-bit words.
var digitPairs16 = func() (t [100]uint16) {
	for i := range t {
		t[i] = uint16('0'+i/10) | uint16('0'+i%10)<<8
	}
	return t
}()

// digitPairs holds "00" to "99".
const digitPairs = "00010203040506070809101112131415161718192021222324252627282930313233343536373839" +
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879" +
	"8081828384858687888990919293949596979899"

// putDigits writes v's decimal digits into b, which is exactly as long.
// The last four digits and the ones before are worked out apart, so that
// the divisions do not wait on each other.
func putDigits(b []byte, v uint32) {
	i := len(b)
	for v >= 10000 {
		q := v / 10000
		r := v - q*10000
		hi, lo := r/100, r%100
		b[i-1], b[i-2] = digitPairs[2*lo+1], digitPairs[2*lo]
		b[i-3], b[i-4] = digitPairs[2*hi+1], digitPairs[2*hi]
		i -= 4
		v = q
	}
	if v >= 100 {
		q := v / 100
		r := v - q*100
		b[i-1], b[i-2] = digitPairs[2*r+1], digitPairs[2*r]
		i -= 2
		v = q
	}
	if v >= 10 {
		b[i-1], b[i-2] = digitPairs[2*v+1], digitPairs[2*v]
		return
	}
	b[i-1] = byte('0' + v)
}

// putDigitsPadded writes v's decimal digits into b, with leading zeros to
// fill it; v must have no more digits than b is long.
func putDigitsPadded(b []byte, v uint32) {
	for i := len(b); i > 0; {
		if i >= 2 {
			q := v / 100
			r := v - q*100
			b[i-1], b[i-2] = digitPairs[2*r+1], digitPairs[2*r]
			i -= 2
			v = q
			continue
		}
		b[0] = byte('0' + v)
		i--
	}
}

// decimalLen32 returns the number of decimal digits of v > 0.
func decimalLen32(v uint32) int {
	// bits.Len32·1233/4096 is log10 up to one too few.
	n := (bits.Len32(v) * 1233) >> 12
	if v >= pow10u32[n] {
		n++
	}
	return n
}

var pow10u32 = [...]uint32{1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9}

// The shortest decimal of a normal float32, by Raffaello Giulietti's
// Schubfach method ("The Schubfach way to render doubles", 2020), written
// here from the paper. A float v = c·2^q rounds from the interval
// [c−½, c+½]·2^q (for c = 2^23, the lower half is [c−¼, c]·2^q: the
// float below is closer), whose ends belong to it when c is even. Scaled
// by 10^−k for the k with 10^k ≤ 2^q (or ¾·2^q) < 10^(k+1), the interval
// is between 1 and 10 units wide: it holds at most one multiple of 10
// (the shortest decimal if it is in: one digit fewer than any other) and
// else one or both of s = ⌊v·10^−k⌋ and s+1, of which the closer to v
// wins. The scaling multiplies by a 63-bit approximation of 10^−k from
// above, keeping a sticky bit, which the paper shows is exact enough for
// every comparison below.

// Scale factors: g32[e−g32Min] = ⌊10^e·2^(62−⌊log2 10^e⌋)⌋ + 1, for the
// e = −k that normal float32s need. Computed exactly once.
const g32Min, g32Max = -32, 46

var g32 = func() []uint64 {
	g := make([]uint64, g32Max-g32Min+1)
	for e := g32Min; e <= g32Max; e++ {
		// 10^e·2^s with s = 62 − ⌊log2 10^e⌋, as a fraction num/den.
		num, den := big.NewInt(1), big.NewInt(1)
		p := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(abs(e))), nil)
		if e >= 0 {
			num.Set(p)
		} else {
			den.Set(p)
		}
		s := 62 - int(flog2pow10(int32(e)))
		if s >= 0 {
			num.Lsh(num, uint(s))
		} else {
			den.Lsh(den, uint(-s))
		}
		g[e-g32Min] = new(big.Int).Quo(num, den).Uint64() + 1
	}
	return g
}()

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// flog10pow2 is ⌊log10 2^q⌋, flog10threeQuartersPow2 ⌊log10 ¾·2^q⌋ and
// flog2pow10 ⌊log2 10^e⌋, for the exponents of float32s (checked against
// exact arithmetic by TestFloorLogs).
func flog10pow2(q int32) int32              { return (q * 78913) >> 18 }
func flog10threeQuartersPow2(q int32) int32 { return (q*78913 - 32752) >> 18 }
func flog2pow10(e int32) int32              { return (e * 1741647) >> 19 }

// scale32 returns g·cp / 2^95 with a sticky last bit: set when the
// division left a remainder.
func scale32(g, cp uint64) uint64 {
	hi, _ := bits.Mul64(g, cp)
	return hi>>31 | (hi&(1<<32-1)+(1<<32-1))>>32
}

// shortest32 returns the shortest decimal digits and exponent of the
// normal float32 with bits b (the sign ignored), the digits possibly with
// trailing zeros.
func shortest32(b uint32) (uint32, int32) {
	ef := int32(b >> 23 & 0xff)
	c := uint64(b&(1<<23-1) | 1<<23)
	q := ef - 150
	odd := c & 1
	cb := c << 2
	cbr := cb + 2
	var cbl uint64
	var k int32
	irregular := c == 1<<23 && ef > 1
	if irregular {
		cbl = cb - 1
		k = flog10threeQuartersPow2(q)
	} else {
		cbl = cb - 2
		k = flog10pow2(q)
	}
	h := uint(q + flog2pow10(-k) + 33)
	g := g32[-k-g32Min]
	vb := scale32(g, cb<<h)
	vbl := scale32(g, cbl<<h)
	vbr := scale32(g, cbr<<h)
	s := vb >> 2
	// A multiple of 10 in the interval is the one shortest decimal.
	sp := s / 10 * 10
	tp := sp + 10
	upin := vbl+odd <= sp<<2
	wpin := tp<<2+odd <= vbr
	if upin != wpin {
		if upin {
			return uint32(sp), k
		}
		return uint32(tp), k
	}
	t := s + 1
	uin := vbl+odd <= s<<2
	win := t<<2+odd <= vbr
	if uin != win {
		if uin {
			return uint32(s), k
		}
		return uint32(t), k
	}
	// Both: the closer; a tie goes to the even one, except at a power of
	// two, where strconv (Dragonbox) takes the upper.
	mid := (s + t) << 1
	if vb < mid || vb == mid && s&1 == 0 && !irregular {
		return uint32(s), k
	}
	return uint32(t), k
}
