package mav

import (
	"math"
	"math/big"
	"math/bits"
)

// appendFloat32 appends the shortest decimal that reads back as f, in the
// form strconv.AppendFloat(dst, float64(f), 'g', -1, 32) writes, byte for
// byte (TestFloat32Exhaustive compares every float32 with strconv when
// asked to; the suite compares millions). Dataflash logs are mostly
// float32 columns, and this is several times faster than strconv's general
// path: the shortest digits come from Ulf Adams' Ryū (PLDI 2018) for
// binary32, written here from the paper's description; the rest is the
// formatting of %g with the shortest precision. NaN and ±Inf are the
// caller's business.
func appendFloat32(dst []byte, f float32) []byte {
	b := math.Float32bits(f)
	if b<<1 == 0 {
		if b != 0 {
			return append(dst, '-', '0')
		}
		return append(dst, '0')
	}
	neg := b>>31 != 0
	digits, e10 := f2d(b&(1<<23-1), b>>23&0xff)
	// The digits as text, most significant first.
	var buf [10]byte
	n := len(buf)
	for v := digits; v > 0; v /= 10 {
		n--
		buf[n] = byte('0' + v%10)
	}
	d := buf[n:]
	nd := len(d)
	dp := nd + int(e10) // digits before the decimal point
	if neg {
		dst = append(dst, '-')
	}
	// %g with the shortest precision: %e when the exponent is below −4
	// or at least 6 (strconv decides with precision 6 when shortest).
	if exp := dp - 1; exp < -4 || exp >= 6 {
		dst = append(dst, d[0])
		if nd > 1 {
			dst = append(dst, '.')
			dst = append(dst, d[1:]...)
		}
		dst = append(dst, 'e')
		if exp < 0 {
			dst = append(dst, '-')
			exp = -exp
		} else {
			dst = append(dst, '+')
		}
		if exp < 10 {
			return append(dst, '0', byte('0'+exp))
		}
		return append(dst, byte('0'+exp/10), byte('0'+exp%10))
	}
	switch {
	case dp <= 0:
		dst = append(dst, '0', '.')
		for range -dp {
			dst = append(dst, '0')
		}
		return append(dst, d...)
	case dp >= nd:
		dst = append(dst, d...)
		for range dp - nd {
			dst = append(dst, '0')
		}
		return dst
	}
	dst = append(dst, d[:dp]...)
	dst = append(dst, '.')
	return append(dst, d[dp:]...)
}

// Ryū for binary32. The multiplications by 5^±q are done with 64-bit
// approximations of 5^q and 5^−q, scaled to powInvBits and powBits bits.
const (
	powInvBits = 59
	powBits    = 61
)

// pow5Inv[q] ≈ 2^(pow5bits(q)−1+powInvBits) / 5^q, rounded up; pow5[i] ≈
// 5^i scaled to powBits bits, rounded down. Computed exactly once.
var pow5Inv, pow5 = func() ([]uint64, []uint64) {
	inv := make([]uint64, 32)
	pos := make([]uint64, 48)
	for q := range inv {
		p := new(big.Int).Exp(big.NewInt(5), big.NewInt(int64(q)), nil)
		num := new(big.Int).Lsh(big.NewInt(1), uint(pow5bits(int32(q))-1+powInvBits))
		num.Div(num, p)
		inv[q] = num.Uint64() + 1
	}
	for i := range pos {
		p := new(big.Int).Exp(big.NewInt(5), big.NewInt(int64(i)), nil)
		s := pow5bits(int32(i)) - powBits
		if s > 0 {
			p.Rsh(p, uint(s))
		} else {
			p.Lsh(p, uint(-s))
		}
		pos[i] = p.Uint64()
	}
	return inv, pos
}()

// pow5bits returns ceil(log2(5^e)) for 0 ≤ e ≤ 3528 (1 for e = 0).
func pow5bits(e int32) int32 { return int32((uint32(e)*1217359)>>19) + 1 }

// log10Pow2 returns floor(log10(2^e)); log10Pow5 floor(log10(5^e)).
func log10Pow2(e int32) int32 { return int32((uint32(e) * 78913) >> 18) }
func log10Pow5(e int32) int32 { return int32((uint32(e) * 732923) >> 20) }

func pow5Factor(v uint32) int32 {
	n := int32(0)
	for v%5 == 0 {
		v /= 5
		n++
	}
	return n
}

func multipleOfPow5(v uint32, p int32) bool { return pow5Factor(v) >= p }
func multipleOfPow2(v uint32, p int32) bool { return v&(1<<uint(p)-1) == 0 }

// mulShift returns (m · factor) >> shift for shift > 32.
func mulShift(m uint32, factor uint64, shift int32) uint32 {
	hi, lo := bits.Mul64(uint64(m), factor) // at most 96 bits
	if shift >= 64 {
		return uint32(hi >> uint(shift-64))
	}
	return uint32(hi<<uint(64-shift) | lo>>uint(shift))
}

// f2d returns the shortest decimal digits and exponent of a positive
// binary32 with the given mantissa and biased exponent bits.
func f2d(mantissa, exponent uint32) (uint32, int32) {
	const mbits, bias = 23, 127
	var e2 int32
	var m2 uint32
	if exponent == 0 {
		e2 = 1 - bias - mbits - 2
		m2 = mantissa
	} else {
		e2 = int32(exponent) - bias - mbits - 2
		m2 = 1<<mbits | mantissa
	}
	even := m2&1 == 0
	acceptBounds := even
	mv := 4 * m2
	mp := 4*m2 + 2
	mmShift := uint32(0)
	if mantissa != 0 || exponent <= 1 {
		mmShift = 1
	}
	mm := 4*m2 - 1 - mmShift

	var vr, vp, vm uint32
	var e10 int32
	vmTrailingZeros, vrTrailingZeros := false, false
	lastRemoved := uint32(0)
	if e2 >= 0 {
		q := log10Pow2(e2)
		e10 = q
		k := powInvBits + pow5bits(q) - 1
		i := -e2 + q + k
		vr = mulShift(mv, pow5Inv[q], i)
		vp = mulShift(mp, pow5Inv[q], i)
		vm = mulShift(mm, pow5Inv[q], i)
		if q != 0 && (vp-1)/10 <= vm/10 {
			l := powInvBits + pow5bits(q-1) - 1
			lastRemoved = mulShift(mv, pow5Inv[q-1], -e2+q-1+l) % 10
		}
		if q <= 9 {
			switch {
			case mv%5 == 0:
				vrTrailingZeros = multipleOfPow5(mv, q)
			case acceptBounds:
				vmTrailingZeros = multipleOfPow5(mm, q)
			default:
				if multipleOfPow5(mp, q) {
					vp--
				}
			}
		}
	} else {
		q := log10Pow5(-e2)
		e10 = q + e2
		i := -e2 - q
		k := pow5bits(i) - powBits
		j := q - k
		vr = mulShift(mv, pow5[i], j)
		vp = mulShift(mp, pow5[i], j)
		vm = mulShift(mm, pow5[i], j)
		if q != 0 && (vp-1)/10 <= vm/10 {
			j = q - 1 - (pow5bits(i+1) - powBits)
			lastRemoved = mulShift(mv, pow5[i+1], j) % 10
		}
		switch {
		case q <= 1:
			vrTrailingZeros = true
			if acceptBounds {
				vmTrailingZeros = mmShift == 1
			} else {
				vp--
			}
		case q < 31:
			vrTrailingZeros = multipleOfPow2(mv, q-1)
		}
	}

	removed := int32(0)
	var out uint32
	if vmTrailingZeros || vrTrailingZeros {
		for vp/10 > vm/10 {
			vmTrailingZeros = vmTrailingZeros && vm%10 == 0
			vrTrailingZeros = vrTrailingZeros && lastRemoved == 0
			lastRemoved = vr % 10
			vr, vp, vm = vr/10, vp/10, vm/10
			removed++
		}
		if vmTrailingZeros {
			for vm%10 == 0 {
				vrTrailingZeros = vrTrailingZeros && lastRemoved == 0
				lastRemoved = vr % 10
				vr, vp, vm = vr/10, vp/10, vm/10
				removed++
			}
		}
		if vrTrailingZeros && lastRemoved == 5 && vr%2 == 0 && mantissa != 0 {
			// An exact tie rounds to even; strconv rounds the one tie at a
			// power of two (2^-12) up, and so do we.
			lastRemoved = 4
		}
		out = vr
		if vr == vm && (!acceptBounds || !vmTrailingZeros) || lastRemoved >= 5 {
			out++
		}
	} else {
		for vp/10 > vm/10 {
			lastRemoved = vr % 10
			vr, vp, vm = vr/10, vp/10, vm/10
			removed++
		}
		out = vr
		if vr == vm || lastRemoved >= 5 {
			out++
		}
	}
	return out, e10 + removed
}
