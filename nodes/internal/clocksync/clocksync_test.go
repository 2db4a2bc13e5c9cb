package clocksync

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timealign/timealign/internal/testutil/cdrtest"
	"github.com/timealign/timealign/nodes/internal/clocksync/config"
	"github.com/timealign/timealign/nodes/internal/nodekit"
	"github.com/timealign/timealign/pkg/params"
	"github.com/timealign/timealign/pkg/pll"
	"github.com/timealign/timealign/pkg/sim"
	"github.com/timealign/timealign/pkg/stamp"
)

// lidar returns a simulated device-clock stream: header.stamp carries the
// device's time since boot.
func lidar(t testing.TB, n int) []sim.Sample {
	p, err := sim.LookupPreset("lidar")
	require.NoError(t, err)
	cfg := p.Config
	cfg.Count = n
	cfg.Clock.TickBits = 64
	s, err := sim.Generate(cfg)
	require.NoError(t, err)
	return sim.Delivered(s)
}

func TestCorrectsDeviceTime(t *testing.T) {
	core, err := New(config.DefaultConfig())
	require.NoError(t, err)
	samples := lidar(t, 600)
	var errs []float64
	published := 0
	for i, s := range samples {
		msg := cdrtest.Message(stamp.Time(s.Device), "laser", 40)
		orig := append([]byte(nil), msg...)
		res, err := core.Process(msg, s.Receive)
		require.NoError(t, err)
		if res == DroppedInvalid {
			require.Less(t, i, 20, "locks within the first FIFOs")
			continue
		}
		require.Equal(t, Published, res)
		published++
		got, frame, err := stamp.Header(msg)
		require.NoError(t, err)
		require.Equal(t, "laser", string(frame))
		require.Equal(t, orig[12:], msg[12:], "only the stamp changes")
		require.False(t, got.After(s.Receive), "never later than the receive time")
		errs = append(errs, float64(got.Sub(s.True)))
	}
	sc := sim.ScoreErrors(errs)
	require.Less(t, sc.Std, 150*time.Microsecond, "%+v", sc)
	require.Less(t, sc.Max, 3*time.Millisecond, "%+v", sc)
	st := core.Status()
	require.Equal(t, uint64(len(samples)), st.MessagesIn)
	require.Equal(t, uint64(published), st.MessagesOut)
	require.Equal(t, st.MessagesIn, st.MessagesOut+st.DroppedInvalid)
	require.True(t, st.PLL.Valid)
	require.InDelta(t, -20, st.PLL.SlopePPM, 5, "a device clock 20 ppm fast: 20 ppm fewer host ns per tick")
}

func TestInvalidPolicies(t *testing.T) {
	samples := lidar(t, 3)
	for _, tc := range []struct {
		policy config.InvalidPolicy
		res    Result
		want   func(s sim.Sample) stamp.Time
	}{
		{config.Drop, DroppedInvalid, nil},
		{config.ReceiveTime, Published, func(s sim.Sample) stamp.Time { return s.Receive }},
		{config.Passthrough, Published, func(s sim.Sample) stamp.Time { return stamp.Time(s.Device) }},
	} {
		t.Run(tc.policy.String(), func(t *testing.T) {
			cfg := config.DefaultConfig()
			cfg.WhenInvalid = tc.policy
			core, err := New(cfg)
			require.NoError(t, err)
			s := samples[0]
			msg := cdrtest.Message(stamp.Time(s.Device), "", 0)
			res, err := core.Process(msg, s.Receive)
			require.NoError(t, err)
			require.Equal(t, tc.res, res)
			if tc.want != nil {
				got, _ := stamp.HeaderStamp(msg)
				require.Equal(t, tc.want(s), got)
			}
			p, err := config.ParseInvalidPolicy(tc.policy.String())
			require.NoError(t, err)
			require.Equal(t, tc.policy, p)
		})
	}
	_, err := config.ParseInvalidPolicy("guess")
	require.ErrorIs(t, err, config.ErrConfig)
}

func TestMalformed(t *testing.T) {
	core, err := New(config.DefaultConfig())
	require.NoError(t, err)
	for _, msg := range [][]byte{nil, {0, 1, 0}, {9, 9, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8}, cdrtest.Message(-5, "", 0)} {
		res, err := core.Process(msg, 1)
		require.Equal(t, DroppedMalformed, res)
		require.Error(t, err)
	}
	st := core.Status()
	require.Equal(t, uint64(4), st.DroppedMalformed)
	require.Contains(t, st.LastError, "negative")
	d := Report{Status: st, Prev: Status{}}.Diagnose()
	require.Equal(t, nodekit.Warn, d.Level)
	require.Contains(t, d.Message, "4 malformed messages dropped")
}

func TestDiagnose(t *testing.T) {
	core, err := New(config.DefaultConfig())
	require.NoError(t, err)
	require.Equal(t, "no input yet", Report{Status: core.Status(), Prev: Status{}}.Diagnose().Message)
	samples := lidar(t, 50)
	core.Process(cdrtest.Message(stamp.Time(samples[0].Device), "", 0), samples[0].Receive)
	d := Report{Status: core.Status(), Prev: Status{}}.Diagnose()
	require.Equal(t, nodekit.Warn, d.Level)
	require.Contains(t, d.Message, "no valid estimate yet")
	for _, s := range samples[1:] {
		core.Process(cdrtest.Message(stamp.Time(s.Device), "", 0), s.Receive)
	}
	prev := core.Status()
	d = Report{Status: prev, Prev: prev}.Diagnose()
	require.Equal(t, nodekit.OK, d.Level, d.Message)
	lost := prev
	lost.PLL.Valid = false
	lost.PLL.Resets++
	require.Equal(t, nodekit.Error, Report{Status: lost, Prev: prev}.Diagnose().Level)
}

func TestValidate(t *testing.T) {
	cfg := config.DefaultConfig()
	cfg.PLL.FIFOSize = 0
	_, err := New(cfg)
	require.ErrorIs(t, err, pll.ErrConfig)
	cfg = config.DefaultConfig()
	cfg.WhenInvalid = 7
	require.ErrorIs(t, cfg.Validate(), config.ErrConfig)
}

// BenchmarkProcess measures the node's data path without ROS: read the
// stamp, update the PLL, rewrite the stamp, on a sensor_msgs/Imu-sized
// message. The target is under 2 µs per message.
func BenchmarkProcess(b *testing.B) {
	for _, mode := range []pll.Mode{pll.Sick, pll.Regression, pll.Envelope, pll.Offset} {
		b.Run(mode.String(), func(b *testing.B) {
			cfg := config.DefaultConfig()
			cfg.PLL.Mode = mode
			core, err := New(cfg)
			if err != nil {
				b.Fatal(err)
			}
			samples := lidar(b, 4000)
			msgs := make([][]byte, len(samples))
			for i, s := range samples {
				msgs[i] = cdrtest.Message(stamp.Time(s.Device), "imu_link", 304)
			}
			// Replaying the stream from the start would be a device reboot;
			// shift each pass forward by the stream's span instead.
			span := samples[len(samples)-1].Receive.Sub(samples[0].Receive) + 100*time.Millisecond
			b.ReportAllocs()
			i, pass := 0, 0
			for b.Loop() {
				s := samples[i]
				shift := time.Duration(pass) * span
				_ = stamp.SetHeaderStamp(msgs[i], stamp.Time(s.Device).Add(shift))
				core.Process(msgs[i], s.Receive.Add(shift))
				if i++; i == len(samples) {
					i, pass = 0, pass+1
				}
			}
		})
	}
}

func TestParams(t *testing.T) {
	p := config.DefaultParams()
	srv := params.NewServer(params.Options{Node: "/lidar/clock_sync", Overrides: map[string]params.Override{
		"mode": {Value: params.StringValue("regression")},
	}})
	b := params.NewBinder(srv, p.Validate)
	p.Bind(b)
	require.NoError(t, b.Declare())
	require.Empty(t, srv.Issues())
	require.Equal(t, pll.Regression, p.Config.PLL.Mode)
	res := srv.SetParameters(params.SetParametersRequest{Parameters: []params.ParameterMsg{
		{Name: "mode", Value: params.StringValue("psychic").Msg()},
	}})
	require.False(t, res.Results[0].Successful)
	require.Equal(t, pll.Regression, p.Config.PLL.Mode)
	res = srv.SetParameters(params.SetParametersRequest{Parameters: []params.ParameterMsg{
		{Name: "when_invalid", Value: params.StringValue("receive_time").Msg()},
	}})
	require.True(t, res.Results[0].Successful, res.Results[0].Reason)
	require.Equal(t, config.ReceiveTime, p.Config.WhenInvalid)
}
