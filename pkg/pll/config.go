package pll

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/timealign/timealign/pkg/cfgerr"
)

// Mode selects the estimator.
type Mode int

const (
	// Sick reproduces SICK's SoftwarePLL (sick_scan_xd): a regression slope
	// over a FIFO, every stamp anchored at the oldest FIFO sample.
	Sick Mode = iota
	// Regression is least squares over the FIFO with its own intercept.
	Regression
	// Envelope fits the lower envelope (convex hull) of a sliding window.
	Envelope
	// Offset is a boot clock of known rate: offset = min(receive − device
	// time) over a sliding window.
	Offset
)

var modeNames = []string{"sick", "regression", "envelope", "offset"}

// ModeNames returns the names of the modes, indexed by Mode: what
// [ParseMode] reads and [Mode.String] writes. The slice is a copy.
func ModeNames() []string { return slices.Clone(modeNames) }

// choices writes names as "a, b, c or d".
func choices(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

func (m Mode) String() string {
	if m >= 0 && int(m) < len(modeNames) {
		return modeNames[m]
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// MarshalText implements encoding.TextMarshaler (for JSON status).
func (m Mode) MarshalText() ([]byte, error) { return []byte(m.String()), nil }

// ErrMode is returned by [ParseMode] for an unknown name.
var ErrMode = errors.New("pll: unknown mode")

// ParseMode returns the Mode named s: sick, regression, envelope or offset.
func ParseMode(s string) (Mode, error) {
	for i, n := range modeNames {
		if s == n {
			return Mode(i), nil
		}
	}
	return 0, fmt.Errorf("%w %q (want %s)", ErrMode, s, choices(modeNames))
}

// Limits on the sizes, so memory stays bounded.
const (
	MaxFIFOSize = 1 << 16
	MaxWindow   = 1 << 20
)

// Config configures a [PLL]. Start from [DefaultConfig].
type Config struct {
	// Mode selects the estimator. It defaults to Envelope, the most
	// accurate for a clock of unknown rate (on SICK's own reference
	// scenarios its error std is 22 to 26 times smaller than Sick's); Sick
	// reproduces SICK's SoftwarePLL.
	Mode Mode
	// FIFOSize is the number of samples of the FIFO: SICK's regression
	// window, the regression mode's intercept window, and in every mode the
	// samples that must agree (within MaxDeviation) before an estimate is
	// valid, and the samples needed to lock or re-lock. It defaults to 7
	// (SICK's standard mode; SICK's segment mode uses 101). 2..MaxFIFOSize.
	FIFOSize int
	// MaxDeviation is how far a sample's receive time may lie from the
	// fitted line and still count as consistent. It defaults to 100 ms.
	MaxDeviation time.Duration
	// MaxInvalid is the number of consecutive inconsistent samples after
	// which the estimator starts over. It defaults to 20.
	MaxInvalid int
	// TickBits is the width of the device's tick counter, 1..64; ticks wrap
	// at 2^TickBits and ticks ≥ 2^TickBits are rejected. It defaults to 32.
	TickBits int
	// TickPeriod is the nominal duration of one tick: the device clock's
	// rate in the Offset mode, and the rate the Regression and Envelope
	// slopes are held near (see MaxSkewPPM). Sick ignores it. It defaults
	// to 1 µs.
	TickPeriod time.Duration
	// MaxSkewPPM bounds the fitted rate of the Regression, Envelope and
	// Offset (with TrackSkew) modes to TickPeriod·(1 ± MaxSkewPPM·1e-6), so
	// a few noisy samples can never tilt the line far. It defaults to 1000
	// (0.1 %; crystal oscillators are within ±100 ppm).
	MaxSkewPPM float64
	// Window is the number of recent accepted samples the Envelope and
	// Offset modes fit (the Envelope uses two switching windows of this
	// size, so it looks back between Window and 2·Window samples), and the
	// memory of the Regression mode's slope. It defaults to 256.
	Window int
	// MaxEarly is how far before the Envelope or Offset line a sample may
	// arrive (a new latency minimum) before it counts as inconsistent (a
	// host clock step back). Only those modes use it, and they cap it at
	// MaxDeviation, so it never conflicts with a valid MaxDeviation. It
	// defaults to 10 ms.
	MaxEarly time.Duration
	// TrackSkew makes the Offset mode fit the rate too (within MaxSkewPPM)
	// instead of trusting TickPeriod; it is then the Envelope fit. It
	// defaults to false.
	TrackSkew bool
	// OutlierZ is the Regression mode's outlier filter: a sample within
	// MaxDeviation whose residual lies more than OutlierZ robust standard
	// deviations from the FIFO's median residual (a modified z-score,
	// Iglewicz & Hoaglin: σ̂ = 1.4826·MAD of the FIFO's residuals) does not
	// enter the fit; Status.Outliers counts it. FIFOSize outliers in a row
	// that agree re-lock, as rejected samples do. 0 disables the filter. It
	// defaults to 3.5.
	OutlierZ float64
	// OutlierMin is the least deviation from the median residual that can
	// count as an outlier, so quantized or noiseless streams (a MAD near 0)
	// lose nothing. It defaults to 1 ms.
	OutlierMin time.Duration
}

// DefaultConfig returns the Envelope mode with SICK's defaults for what
// every mode shares (FIFO 7, max deviation 100 ms, max invalid 20, 32-bit
// 1 µs ticks). Set Mode to Sick for SICK's SoftwarePLL itself.
func DefaultConfig() Config {
	return Config{
		Mode:         Envelope,
		FIFOSize:     7,
		MaxDeviation: 100 * time.Millisecond,
		MaxInvalid:   20,
		TickBits:     32,
		TickPeriod:   time.Microsecond,
		MaxSkewPPM:   1000,
		Window:       256,
		MaxEarly:     10 * time.Millisecond,
		OutlierZ:     3.5,
		OutlierMin:   time.Millisecond,
	}
}

// SickConfig returns SICK's SoftwarePLL with its defaults: the Sick mode of
// [DefaultConfig].
func SickConfig() Config {
	c := DefaultConfig()
	c.Mode = Sick
	return c
}

// ErrConfig is wrapped by every error of [Config.Validate].
var ErrConfig = errors.New("pll: invalid config")

func bad(field, format string, args ...any) error {
	return cfgerr.New(ErrConfig, field, format, args...)
}

// Validate reports the first bad field of c.
func (c Config) Validate() error {
	switch {
	case c.Mode < Sick || c.Mode > Offset:
		return bad("Mode", "is %v, want %s", c.Mode, choices(modeNames))
	case c.FIFOSize < 2 || c.FIFOSize > MaxFIFOSize:
		return bad("FIFOSize", "is %d, want 2..%d", c.FIFOSize, MaxFIFOSize)
	case c.MaxDeviation <= 0:
		return bad("MaxDeviation", "is %v, want > 0", c.MaxDeviation)
	case c.MaxInvalid < 1:
		return bad("MaxInvalid", "is %d, want ≥ 1", c.MaxInvalid)
	case c.TickBits < 1 || c.TickBits > 64:
		return bad("TickBits", "is %d, want 1..64", c.TickBits)
	case c.TickPeriod <= 0:
		return bad("TickPeriod", "is %v, want > 0", c.TickPeriod)
	case math.IsNaN(c.MaxSkewPPM) || c.MaxSkewPPM < 0 || c.MaxSkewPPM >= 1e6:
		return bad("MaxSkewPPM", "is %v, want 0 ≤ ppm < 1e6", c.MaxSkewPPM)
	case c.Window < 2 || c.Window > MaxWindow:
		return bad("Window", "is %d, want 2..%d", c.Window, MaxWindow)
	case c.MaxEarly < 0:
		return bad("MaxEarly", "is %v, want ≥ 0", c.MaxEarly)
	case math.IsNaN(c.OutlierZ) || math.IsInf(c.OutlierZ, 0) || c.OutlierZ < 0:
		return bad("OutlierZ", "is %v, want ≥ 0 (0: no outlier filter)", c.OutlierZ)
	case c.OutlierMin < 0:
		return bad("OutlierMin", "is %v, want ≥ 0", c.OutlierMin)
	case (c.Mode == Envelope || c.Mode == Offset) && c.Window < c.FIFOSize:
		return bad("Window", "(%d) cannot be smaller than {FIFOSize} (%d) in %v mode", c.Window, c.FIFOSize, c.Mode)
	}
	return nil
}
