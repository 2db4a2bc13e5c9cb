package nodekit

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timealign/timealign/pkg/stamp"
)

func TestDiagnostic(t *testing.T) {
	var d Diagnostic
	d.Raise(OK, "ok")
	require.Equal(t, OK, d.Level)
	d.Raise(Warn, "input in1 silent for 2s")
	d.Raise(OK, "fine")
	require.Equal(t, "input in1 silent for 2s", d.Message)
	d.Raise(Warn, "dropping 30%")
	require.Equal(t, "input in1 silent for 2s; dropping 30%", d.Message)
	d.Raise(Error, "no estimate")
	require.Equal(t, Error, d.Level)
	require.Equal(t, "no estimate", d.Message)
	d.Add("period", 10*time.Millisecond)
	d.Add("share", 0.123456789)
	d.Add("n", uint64(3))
	d.Add("valid", true)
	require.Equal(t, []KeyValue{{"period", "10ms"}, {"share", "0.123457"}, {"n", "3"}, {"valid", "true"}}, d.Values)
	require.Equal(t, "WARN", Warn.String())
	require.Equal(t, "Level(9)", Level(9).String())
}

func TestRate(t *testing.T) {
	var r Rate
	require.Zero(t, r.Update(100, time.Second))
	require.InDelta(t, 50, r.Update(200, 3*time.Second), 1e-9)
	require.Zero(t, r.Update(100, 4*time.Second), "a counter reset gives 0, not a huge rate")
	require.Zero(t, r.Update(200, 4*time.Second), "no time passed")
	require.Equal(t, 0.25, Share(1, 4))
	require.Zero(t, Share(1, 0))
}

func TestDiagnosticArrayCDR(t *testing.T) {
	d := Diagnostic{Level: Warn, Name: "n: x", Message: "m", HardwareID: "hw", Values: []KeyValue{{"k", "v"}}}
	b := AppendDiagnosticArray(nil, 1_500_000_000, d)
	want := []byte{0, 1, 0, 0, // encapsulation
		1, 0, 0, 0, 0x00, 0x65, 0xcd, 0x1d, // stamp 1.5 s
		1, 0, 0, 0, 0, // frame_id ""
		0, 0, 0, // pad
		1, 0, 0, 0, // 1 status
		1,                                          // level WARN
		0, 0, 0, 5, 0, 0, 0, 'n', ':', ' ', 'x', 0, // name
		0, 0, 0, 2, 0, 0, 0, 'm', 0, // message
		0, 0, 3, 0, 0, 0, 'h', 'w', 0, // hardware_id
		0, 1, 0, 0, 0, // pad, 1 value
		2, 0, 0, 0, 'k', 0, 0, 0, 2, 0, 0, 0, 'v', 0}
	require.Equal(t, want, b)
	ts, err := stamp.HeaderStamp(b)
	require.NoError(t, err)
	require.Equal(t, stamp.Time(1_500_000_000), ts)
}

func TestThrottle(t *testing.T) {
	th := Throttle{Every: time.Second}
	sec := stamp.Time(time.Second)
	ok, n := th.Allow("/a", 10*sec)
	require.True(t, ok)
	require.Zero(t, n)
	for i := 1; i <= 5; i++ {
		ok, _ = th.Allow("/a", 10*sec+stamp.Time(i)*sec/10)
		require.False(t, ok)
	}
	ok, _ = th.Allow("/b", 10*sec+sec/2)
	require.True(t, ok, "keys are independent")
	ok, n = th.Allow("/a", 11*sec)
	require.True(t, ok)
	require.Equal(t, 5, n, "the suppressed lines are counted")
	ok, n = th.Allow("/a", 12*sec+1)
	require.True(t, ok)
	require.Zero(t, n)
}
