package pll

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timealign/timealign/internal/testutil/fuzzcheck"
	"github.com/timealign/timealign/pkg/stamp"
)

// pllSample is one UpdateScan call.
type pllSample struct {
	recv        stamp.Time
	ticks, scan uint64
}

// pllInput is a decoded FuzzPLL input.
type pllInput struct {
	cfg     Config
	samples []pllSample
}

// maxFuzzSamples bounds the work of one input.
const maxFuzzSamples = 2048

// decodePLLInput decodes a configuration from cfgb and samples from sb
// (see fuzzcheck.Bytes: every int64 is tagged, so the int64 extremes, zero
// and repeats are one byte away). The configuration is always valid:
// out-of-range values are folded into range.
//
// cfgb: mode byte (bits 0..1 the mode, bit 2 TrackSkew), TickBits byte (0:
// the default, else 1 + (b−1)%64), then tagged FIFOSize, MaxDeviation,
// MaxInvalid, TickPeriod, a MaxSkewPPM byte (0 default, 1 zero, 2 just
// below 1e6, 3 raw float64 bits), tagged Window, MaxEarly, an OutlierZ
// byte (0 default, 1 zero, 2 1e300, 3 raw float64 bits), tagged
// OutlierMin. An exhausted cfgb leaves the defaults.
//
// sb, per sample: the receive stamp (tagged; the default is the previous
// receive stamp), the ticks (tagged; the default is the previous ticks)
// and a flags byte: bit 0 keeps ticks beyond 2^TickBits (else they are
// masked), bits 1..2 choose the scan ticks: 0 the ticks, 1 the ticks minus
// a byte (masked), 2 any eight bytes.
func decodePLLInput(cfgb, sb []byte) pllInput {
	r := fuzzcheck.New(cfgb)
	c := DefaultConfig()
	m := r.Byte()
	c.Mode, c.TrackSkew = Mode(m%4), m&4 != 0
	if b := r.Byte(); b != 0 {
		c.TickBits = 1 + int(b-1)%64
	}
	c.FIFOSize = 2 + int(fuzzcheck.Abs(r.Int64(int64(c.FIFOSize))-2)%(MaxFIFOSize-1))
	c.MaxDeviation = time.Duration(max(r.NonNeg(int64(c.MaxDeviation)), 1))
	c.MaxInvalid = int(max(r.NonNeg(int64(c.MaxInvalid)), 1))
	c.TickPeriod = time.Duration(max(r.NonNeg(int64(c.TickPeriod)), 1))
	switch r.Byte() % 4 {
	case 1:
		c.MaxSkewPPM = 0
	case 2:
		c.MaxSkewPPM = math.Nextafter(1e6, 0)
	case 3:
		f := math.Abs(math.Float64frombits(r.Uint64()))
		if math.IsNaN(f) || f >= 1e6 {
			f = math.Nextafter(1e6, 0)
		}
		c.MaxSkewPPM = f
	}
	c.Window = 2 + int(fuzzcheck.Abs(r.Int64(int64(c.Window))-2)%(MaxWindow-1))
	c.MaxEarly = min(time.Duration(r.NonNeg(int64(c.MaxEarly))), c.MaxDeviation)
	switch r.Byte() % 4 {
	case 1:
		c.OutlierZ = 0
	case 2:
		c.OutlierZ = 1e300
	case 3:
		f := math.Abs(math.Float64frombits(r.Uint64()))
		if math.IsNaN(f) || math.IsInf(f, 0) {
			f = 0
		}
		c.OutlierZ = f
	}
	c.OutlierMin = time.Duration(r.NonNeg(int64(c.OutlierMin)))
	if c.Mode == Envelope || c.Mode == Offset {
		c.Window = max(c.Window, c.FIFOSize)
	}

	in := pllInput{cfg: c}
	mask := ^uint64(0) >> (64 - c.TickBits)
	r = fuzzcheck.New(sb)
	var prev pllSample
	for r.Len() > 0 && len(in.samples) < maxFuzzSamples {
		s := pllSample{recv: stamp.Time(r.Int64(int64(prev.recv)))}
		s.ticks = uint64(r.Int64(int64(prev.ticks)))
		flags := r.Byte()
		if flags&1 == 0 {
			s.ticks &= mask
		}
		switch flags >> 1 & 3 {
		case 1:
			s.scan = (s.ticks - uint64(r.Byte())) & mask
		case 2:
			s.scan = r.Uint64()
		default:
			s.scan = s.ticks
		}
		in.samples = append(in.samples, s)
		prev = s
	}
	return in
}

// encodePLLInput is the inverse of decodePLLInput (raw values, ticks not
// masked, scan ticks as eight bytes), to turn tables into seeds.
func encodePLLInput(in pllInput) (cfgb, sb []byte) {
	c := in.cfg
	var e fuzzcheck.Encoder
	m := byte(c.Mode)
	if c.TrackSkew {
		m |= 4
	}
	e.Byte(m).Byte(byte(c.TickBits))
	e.Raw(int64(c.FIFOSize)).Raw(int64(c.MaxDeviation)).Raw(int64(c.MaxInvalid)).Raw(int64(c.TickPeriod))
	e.Byte(3)
	e.Uint64(math.Float64bits(c.MaxSkewPPM))
	e.Raw(int64(c.Window)).Raw(int64(c.MaxEarly)).Byte(3)
	e.Uint64(math.Float64bits(c.OutlierZ))
	e.Raw(int64(c.OutlierMin))
	cfgb = e.B
	e = fuzzcheck.Encoder{}
	for _, s := range in.samples {
		e.Raw(int64(s.recv)).Raw(int64(s.ticks)).Byte(1 | 2<<1)
		e.Uint64(s.scan)
	}
	return cfgb, e.B
}

func (in pllInput) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%+v; %d samples (receive_ns ticks scan_ticks):", in.cfg, len(in.samples))
	for i, s := range in.samples {
		if i == 64 {
			b.WriteString(" …")
			break
		}
		fmt.Fprintf(&b, " (%d %d %d)", int64(s.recv), s.ticks, s.scan)
	}
	return b.String()
}

// runPLL feeds in's samples to a PLL within fuzzcheck.Deadline and checks
// after every sample: no NaN, no negative or saturated estimate, bounded
// state, consistent counts. It returns the outcome of every sample.
func runPLL(tb testing.TB, in pllInput) []Outcome {
	tb.Helper()
	var outs []Outcome
	fuzzcheck.Finish(tb, in.String, func(t *fuzzcheck.T) {
		c := in.cfg
		p, err := New(c)
		require.NoError(t, err)
		for i, s := range in.samples {
			t.Step(i)
			outs = append(outs, p.UpdateScan(s.recv, s.ticks, s.scan))
			for _, tk := range []uint64{s.scan, s.ticks} {
				if est, ok := p.Corrected(tk); ok {
					require.GreaterOrEqual(t, int64(est), int64(0))
					require.Less(t, est, stamp.Max)
				}
			}
			st := p.Status()
			require.False(t, math.IsNaN(st.SlopePPM))
			require.LessOrEqual(t, st.Fill, c.FIFOSize)
			require.GreaterOrEqual(t, st.Spread, time.Duration(0))
			require.Equal(t, i+1, st.Updates)
			require.LessOrEqual(t, st.Accepted+st.Rejected+st.Duplicates+st.Outliers+st.OutOfRange, st.Updates)
			// Memory stays what New allocated.
			require.Len(t, p.rb.fifo.buf, cap(p.rb.fifo.buf))
			require.LessOrEqual(t, p.rb.env.Answering().Vertices(), 2*c.Window+1) // what New reserved
			require.LessOrEqual(t, p.rb.env.Young().Vertices(), 2*c.Window+1)
			require.LessOrEqual(t, p.rb.omin.size, len(p.rb.omin.v))
			require.LessOrEqual(t, p.rb.cand.count, c.FIFOSize)
			require.LessOrEqual(t, p.sk.fifo.count, c.FIFOSize)
		}
	})
	return outs
}

// FuzzPLL feeds arbitrary samples (receive stamps and ticks at the int64
// and uint64 extremes, equal, going back) with arbitrary configurations
// (every mode, TickBits 1..64, zero and huge periods, deviations, FIFO
// sizes and windows) to a PLL: each input finishes within
// fuzzcheck.Deadline and keeps the invariants runPLL checks.
func FuzzPLL(f *testing.F) {
	for _, tc := range badInputs {
		for _, m := range []Mode{Sick, Regression, Envelope, Offset} {
			in := pllInput{cfg: DefaultConfig()}
			in.cfg.Mode, in.cfg.TickBits = m, tc.bits
			for _, s := range tc.steps {
				in.samples = append(in.samples, pllSample{base.Add(time.Duration(s.ms) * time.Millisecond), s.ticks, s.ticks})
			}
			cfgb, sb := encodePLLInput(in)
			f.Add(cfgb, sb)
		}
	}
	for _, tc := range extremeInputs {
		for _, m := range []Mode{Sick, Regression, Envelope, Offset} {
			cfgb, sb := encodePLLInput(tc.input(m))
			f.Add(cfgb, sb)
		}
	}
	f.Fuzz(func(t *testing.T, cfgb, sb []byte) {
		in := decodePLLInput(cfgb, sb)
		require.NoError(t, in.cfg.Validate())
		runPLL(t, in)
	})
}

// extremeInput is a case of TestExtremeInputs, run in every mode.
type extremeInput struct {
	name    string
	cfg     func(*Config)
	samples []pllSample
	// want, if set, checks the outcomes in one mode.
	want func(t *testing.T, m Mode, outs []Outcome)
}

func (tc extremeInput) input(m Mode) pllInput {
	in := pllInput{cfg: DefaultConfig(), samples: tc.samples}
	in.cfg.Mode = m
	if tc.cfg != nil {
		tc.cfg(&in.cfg)
	}
	if m == Envelope || m == Offset {
		in.cfg.Window = max(in.cfg.Window, in.cfg.FIFOSize)
	}
	return in
}

// onLine returns n samples: receive r0 + i·dr, ticks t0 + i·dt (wrapping
// at 64 bits; the caller masks).
func onLine(n int, r0 stamp.Time, dr time.Duration, t0, dt uint64) []pllSample {
	var s []pllSample
	for i := range n {
		tk := t0 + uint64(i)*dt
		s = append(s, pllSample{r0.Add(time.Duration(i) * dr), tk, tk})
	}
	return s
}

func masked(s []pllSample, bits int) []pllSample {
	mask := ^uint64(0) >> (64 - bits)
	for i := range s {
		s[i].ticks &= mask
		s[i].scan &= mask
	}
	return s
}

var extremeInputs = []extremeInput{
	{name: "receive stamps at MaxInt64",
		samples: onLine(30, stamp.Max-20*stamp.Time(time.Millisecond), time.Millisecond, 0, 1000)},
	{name: "receive stamps at MinInt64 and 0",
		samples: append(onLine(10, stamp.Min, time.Millisecond, 0, 1000), onLine(10, 0, time.Millisecond, 10_000, 1000)...)},
	{name: "receive wraps from MaxInt64 to MinInt64",
		// Locked on samples 20 ms before MaxInt64 at 1 ms a tick·1000;
		// sample 25 comes at MinInt64 + 4 ms: in wrapping int64 that is
		// 25 ms after the base, right on the line, but it is 2^64 ns
		// before it. The robust modes reject it.
		samples: append(onLine(7, stamp.Max-20*stamp.Time(time.Millisecond), time.Millisecond, 0, 1000),
			pllSample{stamp.Min + 4*stamp.Time(time.Millisecond), 25_000, 25_000}),
		want: func(t *testing.T, m Mode, outs []Outcome) {
			if m != Sick { // Sick's uint32 seconds wrap by design
				require.Equal(t, Accepted, outs[6], "%v: locked", m)
				require.Equal(t, Rejected, outs[7], "%v: a receive time 2^64 ns off", m)
			}
		}},
	{name: "every receive stamp the same, ticks racing",
		samples: onLine(40, 5, 0, 0, 1<<58)},
	{name: "ticks at the uint64 extremes, 64-bit ticks",
		cfg:     func(c *Config) { c.TickBits = 64 },
		samples: append(onLine(10, base, time.Millisecond, math.MaxUint64-5000, 1000), onLine(10, base.Add(time.Second), time.Millisecond, 0, 1)...)},
	{name: "1-bit ticks, every sample a wrap",
		cfg:     func(c *Config) { c.TickBits = 1 },
		samples: masked(onLine(40, base, time.Millisecond, 0, 1), 1)},
	{name: "huge tick period and deviations",
		cfg: func(c *Config) {
			c.TickPeriod, c.MaxDeviation, c.MaxEarly = math.MaxInt64, math.MaxInt64, math.MaxInt64
			c.MaxSkewPPM, c.OutlierMin, c.MaxInvalid = math.Nextafter(1e6, 0), math.MaxInt64, math.MaxInt
		},
		samples: append(onLine(10, stamp.Min, math.MaxInt64/20, 0, 1), onLine(10, stamp.Max, -math.MaxInt64/20, 100, 1)...)},
	{name: "1 ns everything, FIFO of 2, window of 2",
		cfg: func(c *Config) {
			c.TickPeriod, c.MaxDeviation, c.MaxEarly, c.MaxInvalid, c.FIFOSize, c.Window = 1, 1, 0, 1, 2, 2
			c.MaxSkewPPM, c.OutlierZ, c.OutlierMin = 0, 0, 0
		},
		samples: append(onLine(10, base, 1, 0, 1), onLine(10, base, -1, 5, 1)...)},
	{name: "largest FIFO and window",
		cfg:     func(c *Config) { c.FIFOSize, c.Window = MaxFIFOSize, MaxWindow },
		samples: onLine(50, base, time.Millisecond, 0, 1000)},
	{name: "receive going back across the range",
		samples: []pllSample{{stamp.Max, 1, 1}, {stamp.Min, 2, 2}, {stamp.Max, 3, 3}, {0, 4, 4}, {stamp.Min, 5, 5}, {stamp.Max, 6, 6},
			{stamp.Max, 7, 7}, {stamp.Min, 8, 8}, {stamp.Max, 9, 9}}},
}

// TestExtremeInputs runs the extreme inputs in every mode: each finishes
// within fuzzcheck.Deadline, keeps runPLL's invariants, and gives the
// outcomes the case wants.
func TestExtremeInputs(t *testing.T) {
	for _, tc := range extremeInputs {
		t.Run(tc.name, func(t *testing.T) {
			for _, m := range []Mode{Sick, Regression, Envelope, Offset} {
				in := tc.input(m)
				require.NoError(t, in.cfg.Validate())
				outs := runPLL(t, in)
				require.Len(t, outs, len(in.samples))
				if tc.want != nil {
					tc.want(t, m, outs)
				}
			}
		})
	}
}
