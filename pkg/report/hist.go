package report

import (
	"math"
	"math/bits"
	"time"
)

// Hist is a histogram of durations in bounded memory: logarithmic buckets
// with 32 linear steps per power of two (a relative error under 3.2 %),
// exact below 32 ns, for either sign. It also keeps the exact count, min,
// max, mean and standard deviation. The zero value is an empty histogram
// ready to use. Add costs O(1) (an index, an increment: no map); memory
// is a block of 32 counts per power of two used, per sign (at most 59).
type Hist struct {
	n        uint64
	min, max time.Duration
	mean, m2 float64 // Welford, in ns
	pos, neg counts
	zero     uint64
}

// counts counts values by bucket: bucket b is count b&31 of block b>>5
// (block 0 holds the exact values below 32, block k > 0 the 32 steps of
// [2^(k+4), 2^(k+5))); blocks are made on first use.
type counts struct {
	blocks []*[1 << subBits]uint64
	used   int // buckets with a count
}

func (c *counts) add(b int32) {
	k := int(b >> subBits)
	if k >= len(c.blocks) {
		c.blocks = append(c.blocks, make([]*[1 << subBits]uint64, k+1-len(c.blocks))...)
	}
	blk := c.blocks[k]
	if blk == nil {
		blk = new([1 << subBits]uint64)
		c.blocks[k] = blk
	}
	if blk[b&(1<<subBits-1)] == 0 {
		c.used++
	}
	blk[b&(1<<subBits-1)]++
}

// each calls f for every bucket with a count, in increasing order of
// bucket (of magnitude), or decreasing if down.
func (c *counts) each(down bool, f func(b int32, n uint64)) {
	for i := range c.blocks {
		k := i
		if down {
			k = len(c.blocks) - 1 - i
		}
		blk := c.blocks[k]
		if blk == nil {
			continue
		}
		for j := range blk {
			if down {
				j = len(blk) - 1 - j
			}
			if blk[j] > 0 {
				f(int32(k<<subBits+j), blk[j])
			}
		}
	}
}

const subBits = 5 // 32 sub-buckets

// bucket returns the bucket of a positive value and its range [lo, hi).
func bucket(v uint64) int32 {
	if v < 1<<subBits {
		return int32(v)
	}
	e := bits.Len64(v) - 1 // ≥ subBits
	sub := (v >> (uint(e) - subBits)) & (1<<subBits - 1)
	return int32(1<<subBits + (e-subBits)<<subBits + int(sub))
}

// bucketRange returns the values of bucket b: [lo, hi).
func bucketRange(b int32) (lo, hi float64) {
	if b < 1<<subBits {
		return float64(b), float64(b) + 1
	}
	k := int(b) - 1<<subBits
	e := k>>subBits + subBits
	sub := k & (1<<subBits - 1)
	w := math.Ldexp(1, e-subBits)
	lo = math.Ldexp(1, e) + float64(sub)*w
	return lo, lo + w
}

// Add adds one value.
func (h *Hist) Add(d time.Duration) {
	if h.n == 0 || d < h.min {
		h.min = d
	}
	if h.n == 0 || d > h.max {
		h.max = d
	}
	h.n++
	x := float64(d)
	delta := x - h.mean
	h.mean += delta / float64(h.n)
	h.m2 += delta * (x - h.mean)
	switch {
	case d > 0:
		h.pos.add(bucket(uint64(d)))
	case d < 0:
		u := uint64(-(d + 1)) + 1 // |d| without overflow at MinInt64
		h.neg.add(bucket(u))
	default:
		h.zero++
	}
}

// Count returns the number of values.
func (h *Hist) Count() uint64 { return h.n }

// Min and Max return the extremes (0 when empty).
func (h *Hist) Min() time.Duration { return h.min }

// Max returns the largest value.
func (h *Hist) Max() time.Duration { return h.max }

// Mean returns the mean.
func (h *Hist) Mean() time.Duration { return time.Duration(math.Round(h.mean)) }

// Std returns the population standard deviation.
func (h *Hist) Std() time.Duration {
	if h.n < 2 {
		return 0
	}
	return time.Duration(math.Round(math.Sqrt(h.m2 / float64(h.n))))
}

// bin is one bucket in value order.
type bin struct {
	lo, hi float64 // ns
	n      uint64
}

// bins returns the non-empty buckets in value order.
func (h *Hist) bins() []bin {
	out := make([]bin, 0, h.neg.used+h.pos.used+1)
	h.neg.each(true, func(b int32, n uint64) {
		lo, hi := bucketRange(b)
		out = append(out, bin{-hi, -lo, n})
	})
	if h.zero > 0 {
		out = append(out, bin{0, 0, h.zero})
	}
	h.pos.each(false, func(b int32, n uint64) {
		lo, hi := bucketRange(b)
		out = append(out, bin{lo, hi, n})
	})
	return out
}

// Quantiles returns the values at the given quantiles (0..1), each within
// its bucket's width of the exact one and never beyond Min or Max.
func (h *Hist) Quantiles(qs ...float64) []time.Duration {
	out := make([]time.Duration, len(qs))
	if h.n == 0 {
		return out
	}
	bs := h.bins()
	for i, q := range qs {
		target := q * float64(h.n)
		var cum float64
		v := float64(h.max)
		for _, b := range bs {
			if cum+float64(b.n) >= target {
				frac := 0.5
				if b.n > 0 {
					frac = (target - cum) / float64(b.n)
				}
				v = b.lo + frac*(b.hi-b.lo)
				break
			}
			cum += float64(b.n)
		}
		d := time.Duration(math.Round(v))
		d = max(h.min, min(h.max, d))
		out[i] = d
	}
	return out
}

// Summary is a histogram's figures, as reports show them (durations in
// ns in JSON).
type Summary struct {
	Count uint64        `json:"count"`
	Min   time.Duration `json:"min_ns"`
	P1    time.Duration `json:"p1_ns"`
	P50   time.Duration `json:"p50_ns"`
	P90   time.Duration `json:"p90_ns"`
	P99   time.Duration `json:"p99_ns"`
	Max   time.Duration `json:"max_ns"`
	Mean  time.Duration `json:"mean_ns"`
	Std   time.Duration `json:"std_ns"`
}

// Summarize returns h's figures.
func (h *Hist) Summarize() Summary {
	q := h.Quantiles(0.01, 0.5, 0.9, 0.99)
	return Summary{Count: h.n, Min: h.min, P1: q[0], P50: q[1], P90: q[2], P99: q[3], Max: h.max, Mean: h.Mean(), Std: h.Std()}
}
