package cli

import (
	"fmt"
	"time"

	"github.com/timealign/timealign/pkg/stamp"
)

// Formats that more than one command's text uses.

// HumanSize formats bytes as ros2 bag info does (KiB, MiB, GiB).
func HumanSize(n int64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	f := float64(n)
	i := 0
	for f >= 1024 && i < len(units)-1 {
		f /= 1024
		i++
	}
	if i == 0 {
		return fmt.Sprintf("%d B", n)
	}
	return fmt.Sprintf("%.1f %s", f, units[i])
}

// UTCMicros formats a stamp as an ISO time in UTC with µs.
func UTCMicros(t stamp.Time) string {
	return time.Unix(0, int64(t)).UTC().Format("2006-01-02 15:04:05.000000")
}

// ShortDuration formats a duration with about 3 significant digits.
func ShortDuration(d time.Duration) string {
	a := d
	if a < 0 {
		a = -a
	}
	switch {
	case a >= time.Hour:
		return d.Round(time.Second).String()
	case a >= time.Second:
		return d.Round(time.Millisecond).String()
	case a >= 10*time.Millisecond:
		return d.Round(100 * time.Microsecond).String()
	case a >= time.Millisecond:
		return d.Round(10 * time.Microsecond).String()
	}
	return d.Round(time.Microsecond).String()
}

// Uncertainty formats an uncertainty: "?" when unknown (negative), "<1µs"
// below a microsecond, else as ShortDuration.
func Uncertainty(d time.Duration) string {
	switch {
	case d < 0:
		return "?"
	case d < time.Microsecond:
		return "<1µs"
	}
	return ShortDuration(d)
}
