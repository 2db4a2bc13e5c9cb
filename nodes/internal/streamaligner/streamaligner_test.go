package streamaligner

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timealign/timealign/internal/testutil/cdrtest"
	"github.com/timealign/timealign/nodes/internal/nodekit"
	"github.com/timealign/timealign/nodes/internal/streamaligner/config"
	"github.com/timealign/timealign/pkg/params"
	"github.com/timealign/timealign/pkg/stamp"
	tsync "github.com/timealign/timealign/pkg/sync"
)

const ms = stamp.Time(time.Millisecond)

type played struct {
	input int
	msg   []byte
}

func newCore(t testing.TB, cfg config.Config) (*Core, *[]played) {
	var out []played
	c, err := New(cfg, func(i int, msg []byte) { out = append(out, played{i, append([]byte(nil), msg...)}) })
	require.NoError(t, err)
	return c, &out
}

// TestPlaysInStampOrder: an IMU at 100 Hz and a lidar at 10 Hz whose
// messages arrive 30 ms late come out in stamp order across both inputs,
// unchanged, exactly as pkg/sync's StreamAligner plays the same pushes.
func TestPlaysInStampOrder(t *testing.T) {
	cfg := config.DefaultConfig()
	cfg.Aligner.Streams[0].Period = 10 * time.Millisecond
	cfg.Aligner.Streams[1].Period = 100 * time.Millisecond
	c, out := newCore(t, cfg)
	ref, err := tsync.NewStreamAligner[[]byte](cfg.Aligner)
	require.NoError(t, err)
	var want []played
	type arrival struct {
		at    stamp.Time
		input int
		msg   []byte
	}
	var arrivals []arrival
	base := 1_700_000_000 * stamp.Time(time.Second)
	for k := stamp.Time(0); k < 300; k++ {
		st := base + k*10*ms
		arrivals = append(arrivals, arrival{st + 2*ms, 0, cdrtest.Message(st, "imu", 40)})
		if k%10 == 0 {
			arrivals = append(arrivals, arrival{st + 30*ms, 1, cdrtest.Message(st+ms, "lidar", 700)})
		}
	}
	// In arrival order.
	for i := 1; i < len(arrivals); i++ {
		for j := i; j > 0 && arrivals[j].at < arrivals[j-1].at; j-- {
			arrivals[j], arrivals[j-1] = arrivals[j-1], arrivals[j]
		}
	}
	for _, a := range arrivals {
		require.NoError(t, c.Add(a.input, a.msg, a.at))
		st, _ := stamp.HeaderStamp(a.msg)
		ref.Push(a.input, st, a.msg)
		ref.Drain(func(x tsync.StreamSample[[]byte]) { want = append(want, played{x.Stream, x.Value}) })
	}
	require.Equal(t, want, *out)
	require.Greater(t, len(*out), 300)
	var last stamp.Time
	for _, p := range *out {
		st, err := stamp.HeaderStamp(p.msg)
		require.NoError(t, err)
		require.GreaterOrEqual(t, st, last, "stamp order")
		last = st
	}
	st := c.Status()
	require.Equal(t, uint64(len(*out)), st.Aligner.Played)
	require.Equal(t, nodekit.OK, Report{Status: st, Prev: Status{}, Runtime: nodekit.RuntimeStatus{Inputs: []string{"/imu", "/scan"}}}.Diagnose().Level)
}

// TestSilentInput: an input that never sends is waited for (Rock's
// timeout counts in stamps, which stand still when little arrives) until
// it has been silent for SilentAfter; then what is buffered plays, the
// diagnostics name it, and its next message makes it waited for again.
func TestSilentInput(t *testing.T) {
	c, out := newCore(t, config.DefaultConfig())
	base := 1_700_000_000 * stamp.Time(time.Second)
	for k := stamp.Time(0); k < 5; k++ {
		require.NoError(t, c.Add(0, cdrtest.Message(base+k*100*ms, "a", 8), k*100*ms+1))
	}
	require.Empty(t, *out, "waiting for input 1")
	require.Zero(t, c.Tick(1900*ms))
	require.Equal(t, 5, c.Tick(2001*ms))
	st := c.Status()
	require.Equal(t, []bool{false, true}, st.Silent)
	d := Report{Status: st, Prev: Status{}, Runtime: nodekit.RuntimeStatus{Inputs: []string{"/a", "/b"}}}.Diagnose()
	require.Equal(t, nodekit.Warn, d.Level)
	require.Contains(t, d.Message, "input /b is silent: not waited for")
	require.NoError(t, c.Add(1, cdrtest.Message(base+600*ms, "b", 8), 2100*ms))
	require.Equal(t, []bool{false, false}, c.Status().Silent)
	require.Len(t, *out, 5, "b's message waits for a (no period: due at once)")
	require.NoError(t, c.Add(0, cdrtest.Message(base+700*ms, "a", 8), 2200*ms))
	require.Len(t, *out, 6, "b's message played; a's waits for b again")
	require.Equal(t, 1, (*out)[5].input)
}

func TestDrops(t *testing.T) {
	cfg := config.DefaultConfig()
	cfg.SilentAfter = 0
	c, out := newCore(t, cfg)
	require.Error(t, c.Add(0, []byte{0, 1, 0, 0, 6, 0, 0, 0, 'h', 'e', 'l', 'l', 'o', 0, 0, 0}, 1))
	require.Error(t, c.Add(7, cdrtest.Message(1, "a", 8), 1))
	require.NoError(t, c.Add(0, cdrtest.Message(5*ms, "a", 8), 1))
	require.NoError(t, c.Add(0, cdrtest.Message(4*ms, "a", 8), 2)) // backward
	require.Zero(t, c.Tick(stamp.Time(time.Hour)), "SilentAfter 0: only the timeout releases")
	require.Empty(t, *out)
	st := c.Status()
	require.Equal(t, []uint64{1, 0}, st.DroppedMalformed)
	require.Equal(t, uint64(1), st.Aligner.Streams[0].Backward)
	d := Report{Status: st, Prev: Status{}, Runtime: nodekit.RuntimeStatus{Inputs: []string{"/a", "/b"}}}.Diagnose()
	require.Contains(t, d.Message, "input /a: 0 late, 1 backward in time")
	require.Contains(t, d.Message, "input /a: 1 malformed messages dropped")
	// Diagnostics count since the previous status.
	require.NotContains(t, Report{Status: st, Prev: st, Runtime: nodekit.RuntimeStatus{Inputs: []string{"/a", "/b"}}}.Diagnose().Message, "malformed")
}

func TestParams(t *testing.T) {
	bind := func(overrides map[string]params.Override) (*params.Server, *config.Params) {
		p := config.DefaultParams()
		srv := params.NewServer(params.Options{Node: "/al", Overrides: overrides})
		b := params.NewBinder(srv, p.Validate)
		p.Bind(b)
		require.NoError(t, b.Declare())
		return srv, &p
	}
	srv, p := bind(map[string]params.Override{
		"inputs":      {Value: params.IntValue(3), Source: "-p"},
		"periods_sec": {Value: params.DoublesValue([]float64{0.01, 0.1, 0.02}), Source: "-p"},
		"priorities":  {Value: params.IntsValue([]int64{1}), Source: "-p"},
	})
	require.Empty(t, srv.Issues())
	require.Len(t, p.Config.Aligner.Streams, 3)
	require.Equal(t, 100*time.Millisecond, p.Config.Aligner.Streams[1].Period)
	require.Equal(t, 1, p.Config.Aligner.Streams[2].Priority)
	require.Equal(t, -1, p.Config.Aligner.Streams[2].BufferSize)
	_, err := New(p.Config, func(int, []byte) {})
	require.NoError(t, err)

	res := srv.SetParameters(params.SetParametersRequest{Parameters: []params.ParameterMsg{
		{Name: "timeout_sec", Value: params.DoubleValue(0.25).Msg()}}})
	require.True(t, res.Results[0].Successful, res.Results[0].Reason)
	require.Equal(t, 250*time.Millisecond, p.Config.Aligner.Timeout)
	res = srv.SetParameters(params.SetParametersRequest{Parameters: []params.ParameterMsg{
		{Name: "silent_after_sec", Value: params.DoubleValue(-1).Msg()}}})
	require.False(t, res.Results[0].Successful)

	// Arrays of the wrong length are rejected (the defaults kept), with the reason.
	srv, p = bind(map[string]params.Override{
		"inputs":      {Value: params.IntValue(3), Source: "f.yaml:2"},
		"periods_sec": {Value: params.DoublesValue([]float64{0.01, 0.1}), Source: "f.yaml:3"},
	})
	require.NotEmpty(t, srv.Issues())
	require.Contains(t, srv.Issues()[0].Err.Error(), "periods_sec has 2 entries")
	require.Len(t, p.Config.Aligner.Streams, 3)
}

func TestReconfigure(t *testing.T) {
	c, out := newCore(t, config.DefaultConfig())
	base := 1_700_000_000 * stamp.Time(time.Second)
	for k := stamp.Time(0); k < 5; k++ {
		require.NoError(t, c.Add(0, cdrtest.Message(base+k*100*ms, "a", 8), 1))
	}
	require.Empty(t, *out)
	cfg := config.DefaultConfig()
	cfg.Aligner.Timeout = 300 * time.Millisecond
	require.NoError(t, c.Reconfigure(cfg))
	require.NotEmpty(t, *out, "the newest stamp is now a timeout ahead")
	cfg.SilentAfter = -1
	require.ErrorIs(t, c.Reconfigure(cfg), config.ErrConfig)
}

// BenchmarkAdd measures the data path without ROS: parse the stamp,
// push, play (target: under 2 µs per message).
func BenchmarkAdd(b *testing.B) {
	cfg := config.DefaultConfig()
	cfg.Aligner.Streams[0].Period = 10 * time.Millisecond
	cfg.Aligner.Streams[1].Period = 10 * time.Millisecond
	c, err := New(cfg, func(int, []byte) {})
	require.NoError(b, err)
	msgs := [2][]byte{cdrtest.Message(0, "imu", 300), cdrtest.Message(0, "imu", 300)}
	b.ReportAllocs()
	k := stamp.Time(0)
	for b.Loop() {
		i := int(k % 2)
		st := 1_700_000_000*stamp.Time(time.Second) + (k/2)*10*ms
		_ = stamp.SetHeaderStamp(msgs[i], st)
		if err := c.Add(i, msgs[i], st); err != nil {
			b.Fatal(err)
		}
		k++
	}
}
