package params

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timealign/timealign/pkg/cfgerr"
)

func TestSeconds(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{3 * time.Second, "3.0"},
		{500 * time.Millisecond, "0.5"},
		{time.Nanosecond, "1e-09"},
		{-time.Millisecond, "-0.001"},
		{0, "0.0"},
		{3600 * time.Second, "3600.0"},
	} {
		s := InSeconds(tc.d)
		require.Equal(t, tc.want, fmt.Sprint(s))
		require.Equal(t, tc.want, fmt.Sprintf("%v|%s|%d|%.3f", s, s, s, s)[:len(tc.want)], "every verb")
		require.Equal(t, fmt.Sprintf("%v|%v|%v|%v", s, s, s, s), fmt.Sprintf("%v|%s|%d|%.3f", s, s, s, s))
	}
	require.Equal(t, 7, InSeconds(7), "other values as they are")
	require.Equal(t, "x", InSeconds("x"))
}

func TestNameFields(t *testing.T) {
	kind := errors.New("x: invalid config")
	fields := map[string]string{"Estimator.Period": "period_sec", "Estimator.Window": "window_sec", "Streams.Period": "periods_sec"}
	e := cfgerr.New(kind, "Period", "(%v) must be shorter than {Window} (%v)", 3*time.Second, 500*time.Millisecond)
	e.Nest("Estimator.")
	err := NameFields(fmt.Errorf("wrapped: %w", e), fields)
	require.EqualError(t, err, "period_sec (3.0) must be shorter than window_sec (0.5)")
	require.ErrorIs(t, err, kind)
	got, ok := cfgerr.As(err)
	require.True(t, ok)
	require.Same(t, e, got)

	s := cfgerr.New(kind, "BufferSize", "is %d but {Period} is %v", -1, time.Duration(0))
	s.Nest("Streams[1].")
	require.EqualError(t, NameFields(s, fields), "value 2 of Streams.BufferSize is -1 but value 2 of periods_sec is 0.0", "a field without a parameter keeps its Go name")

	plain := errors.New("plain")
	require.Same(t, plain, NameFields(plain, fields))
	require.NoError(t, NameFields(nil, fields))
}
