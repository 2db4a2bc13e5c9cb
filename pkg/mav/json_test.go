package mav

import (
	"math"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestAppendScaled(t *testing.T) {
	for _, c := range []struct {
		v    int64
		d    int
		want string
	}{
		{0, 2, "0"}, {1234, 2, "12.34"}, {-1234, 2, "-12.34"}, {1250, 2, "12.5"}, {1200, 2, "12"}, {5, 2, "0.05"},
		{-5, 2, "-0.05"}, {-50, 2, "-0.5"}, {473977419, 7, "47.3977419"}, {-1246305732, 7, "-124.6305732"},
		{100000, 7, "0.01"}, {1, 7, "0.0000001"}, {math.MinInt32, 7, "-214.7483648"}, {65535, 2, "655.35"},
	} {
		got := string(appendScaled(nil, c.v, c.d))
		require.Equal(t, c.want, got)
		f, err := strconv.ParseFloat(got, 64)
		require.NoError(t, err)
		require.Equal(t, float64(c.v)/math.Pow10(c.d), f, "parses to the same float64 as the division")
	}
}

func TestAppendFloat(t *testing.T) {
	for _, c := range []struct {
		f    float64
		bits int
		want string
	}{
		{0, 32, "0"}, {math.Copysign(0, -1), 32, "-0"}, {3, 32, "3"}, {-9.81, 32, "-9.81"}, {float64(float32(0.1)), 32, "0.1"},
		{1e20, 64, "1e+20"}, {123456789012345, 64, "123456789012345"}, {1e300, 64, "1e+300"}, {math.NaN(), 32, "null"}, {math.Inf(-1), 64, "null"},
	} {
		require.Equal(t, c.want, string(appendFloat(nil, c.f, c.bits)), "%v", c.f)
	}
}
