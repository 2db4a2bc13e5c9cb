package timestampestimator

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timealign/timealign/internal/testutil/cdrtest"
	"github.com/timealign/timealign/nodes/internal/nodekit"
	"github.com/timealign/timealign/nodes/internal/timestampestimator/config"
	"github.com/timealign/timealign/pkg/params"
	"github.com/timealign/timealign/pkg/sim"
	"github.com/timealign/timealign/pkg/stamp"
	"github.com/timealign/timealign/pkg/tsest"
)

func imu(t testing.TB, n int) []sim.Sample {
	c := sim.DefaultConfig()
	c.Count = n
	s, err := sim.Generate(c)
	require.NoError(t, err)
	return sim.Delivered(s)
}

func TestRewritesStamps(t *testing.T) {
	for _, src := range []config.Source{config.HeaderStamp, config.ReceiveTime} {
		t.Run(src.String(), func(t *testing.T) {
			cfg := config.DefaultConfig()
			cfg.Source = src
			core, err := New(cfg)
			require.NoError(t, err)
			var errs []float64
			for i, s := range imu(t, 1000) {
				hdr := s.Receive
				if src == config.ReceiveTime {
					hdr = 42 // garbage in the header: the receive time is used
				}
				msg := cdrtest.Message(hdr, "imu", 304)
				orig := append([]byte(nil), msg...)
				pub, err := core.Process(msg, s.Receive)
				require.NoError(t, err)
				require.True(t, pub)
				got, frame, err := stamp.Header(msg)
				require.NoError(t, err)
				require.Equal(t, "imu", string(frame))
				require.Equal(t, orig[12:], msg[12:], "only the stamp changes")
				if i >= 200 {
					errs = append(errs, float64(got.Sub(s.True)))
				}
			}
			sc := sim.ScoreErrors(errs)
			require.Less(t, sc.Std, 40*time.Microsecond)
			st := core.Status()
			require.Equal(t, uint64(1000), st.MessagesIn)
			require.Equal(t, uint64(1000), st.MessagesOut)
		})
	}
}

func TestBadInput(t *testing.T) {
	core, err := New(config.DefaultConfig())
	require.NoError(t, err)
	pub, err := core.Process([]byte{1, 2}, 0)
	require.False(t, pub)
	require.Error(t, err)
	_, err = core.Process(cdrtest.Message(2e9, "", 0), 0)
	require.NoError(t, err)
	pub, err = core.Process(cdrtest.Message(1e9, "", 0), 0) // back in time: still published
	require.NoError(t, err)
	require.True(t, pub)
	// A std_msgs/String "hello": no Header, though its first bytes parse as a stamp.
	_, err = core.Process([]byte{0, 1, 0, 0, 6, 0, 0, 0, 'h', 'e', 'l', 'l', 'o', 0, 0, 0}, 0)
	require.ErrorIs(t, err, stamp.ErrTruncated)
	require.Error(t, core.Reference(nil))
	require.ErrorIs(t, core.Reference(cdrtest.Message(1e9, "", 0)), stamp.ErrTruncated, "a Header alone is not a TimeReference")
	require.NoError(t, core.Reference(cdrtest.TimeReference(5e9, "", 1e9, "pps")))
	st := core.Status()
	require.Equal(t, uint64(4), st.DroppedMalformed)
	require.Zero(t, st.DroppedRejected)
	require.Equal(t, uint64(2), st.MessagesOut)
	require.Equal(t, uint64(1), st.Estimator.Backward)
	require.Equal(t, uint64(1), st.References)
	d := Report{Status: st, Prev: Status{}}.Diagnose()
	require.Equal(t, nodekit.Warn, d.Level)
	require.Contains(t, d.Message, "4 malformed messages dropped")
	require.Contains(t, d.Message, "1 stamps went back")
	_, err = config.ParseSource("gps")
	require.ErrorIs(t, err, config.ErrConfig)
	cfg := config.DefaultConfig()
	cfg.Estimator.Window = 0
	_, err = New(cfg)
	require.Error(t, err)
}

// TestReferencesAndStampsGoingBack: every message is published, a stamp
// that went back too (stamped from the fit); references make the stamps
// absolute; one from before the fit is rejected, counted and reported.
// References are the time_ref of a TimeReference (whose header.stamp is
// something else), or the header.stamp of another type.
func TestReferencesAndStampsGoingBack(t *testing.T) {
	for _, timeRef := range []bool{true, false} {
		t.Run(fmt.Sprint("time_ref=", timeRef), func(t *testing.T) { testReferences(t, timeRef) })
	}
}

func testReferences(t *testing.T, timeRef bool) {
	cfg := config.DefaultConfig()
	cfg.ReferenceTimeRef = timeRef
	core, err := New(cfg)
	require.NoError(t, err)
	ref := func(st stamp.Time) []byte {
		if timeRef {
			return cdrtest.TimeReference(st.Add(time.Hour), "gps", st, "pps")
		}
		return cdrtest.Message(st, "", 0)
	}
	var errs []float64
	for i, s := range imu(t, 1000) {
		if i%10 == 0 {
			require.NoError(t, core.Reference(ref(s.True.Add(20*time.Microsecond))))
		}
		recv := s.Receive
		if i == 600 {
			recv = recv.Add(-300 * time.Millisecond)
		}
		msg := cdrtest.Message(recv, "imu", 304)
		pub, err := core.Process(msg, 0)
		require.NoError(t, err)
		require.True(t, pub, "message %d", i)
		got, _, err := stamp.Header(msg)
		require.NoError(t, err)
		if i >= 200 {
			errs = append(errs, float64(got.Sub(s.True)))
		}
	}
	require.Less(t, sim.ScoreErrors(errs).RMS, 50*time.Microsecond, "absolute, with the message whose stamp went back")
	err = core.Reference(ref(imu(t, 1)[0].True)) // from 10 s before
	require.ErrorIs(t, err, tsest.ErrReference)
	st := core.Status()
	require.Equal(t, uint64(1000), st.MessagesOut)
	require.Equal(t, uint64(1), st.Estimator.Backward)
	require.Equal(t, uint64(1), st.Estimator.RejectedReferences)
	d := Report{Status: st, Prev: Status{}}.Diagnose()
	require.Contains(t, d.Message, "1 stamps went back")
	require.Contains(t, d.Message, "1 references rejected")
}

// TestUnstampedInput: messages whose header.stamp is left at 0 (what
// `ros2 topic pub` sends) are passed on, but the node has no estimate and
// its diagnostics say why.
func TestUnstampedInput(t *testing.T) {
	core, err := New(config.DefaultConfig())
	require.NoError(t, err)
	for range 100 {
		pub, err := core.Process(cdrtest.Message(0, "imu", 304), 0)
		require.NoError(t, err)
		require.True(t, pub)
	}
	st := core.Status()
	require.False(t, st.Estimator.HaveEstimate)
	require.Equal(t, uint64(99), st.Estimator.Duplicates)
	d := Report{Status: st, Prev: Status{}}.Diagnose()
	require.Equal(t, nodekit.Warn, d.Level)
	require.Contains(t, d.Message, "99 of 100 stamps repeat the previous one: is header.stamp set?")
	// A stamped stream is healthy: no such warning.
	core, err = New(config.DefaultConfig())
	require.NoError(t, err)
	for _, s := range imu(t, 300) {
		_, err := core.Process(cdrtest.Message(s.Receive, "imu", 304), 0)
		require.NoError(t, err)
	}
	d = Report{Status: core.Status(), Prev: Status{}}.Diagnose()
	require.Equal(t, nodekit.OK, d.Level, d.Message)
}

// BenchmarkProcess measures the data path without ROS on a
// sensor_msgs/Imu-sized message (target: under 2 µs).
func BenchmarkProcess(b *testing.B) {
	core, err := New(config.DefaultConfig())
	require.NoError(b, err)
	samples := imu(b, 10000)
	msg := cdrtest.Message(samples[0].Receive, "imu_link", 304)
	span := samples[len(samples)-1].Receive.Sub(samples[0].Receive) + 10*time.Millisecond
	b.ReportAllocs()
	i, pass := 0, time.Duration(0)
	for b.Loop() {
		r := samples[i].Receive.Add(pass)
		_ = stamp.SetHeaderStamp(msg, r)
		if _, err := core.Process(msg, r); err != nil {
			b.Fatal(err)
		}
		if i++; i == len(samples) {
			i, pass = 0, pass+span
		}
	}
}

func TestParams(t *testing.T) {
	p := config.DefaultParams()
	srv := params.NewServer(params.Options{Node: "/imu/ts", Overrides: map[string]params.Override{}})
	b := params.NewBinder(srv, p.Validate)
	p.Bind(b)
	require.NoError(t, b.Declare())
	require.Empty(t, srv.Issues())
	res := srv.SetParameters(params.SetParametersRequest{Parameters: []params.ParameterMsg{
		{Name: "window_sec", Value: params.DoubleValue(0.5).Msg()},
	}})
	require.True(t, res.Results[0].Successful, res.Results[0].Reason)
	require.Equal(t, 500*time.Millisecond, p.Config.Estimator.Window)
	res = srv.SetParameters(params.SetParametersRequest{Parameters: []params.ParameterMsg{
		{Name: "period_sec", Value: params.DoubleValue(0.6).Msg()},
	}})
	require.False(t, res.Results[0].Successful, "a period longer than the window is rejected")
	require.Equal(t, "period_sec (0.6) must be shorter than window_sec (0.5)", res.Results[0].Reason)
	require.Equal(t, time.Duration(0), p.Config.Estimator.Period)
}

// TestDiagnoseShortWindow: a window of fewer than 8 periods seldom lets the
// fit mature: the diagnostics say so and name the parameter; a stream
// whose period changed raises a warning with the new period.
func TestDiagnoseShortWindow(t *testing.T) {
	cfg := config.DefaultConfig()
	cfg.Estimator.Window = 50 * time.Millisecond // 5 periods of the 100 Hz IMU
	core, err := New(cfg)
	require.NoError(t, err)
	for _, s := range imu(t, 300) {
		_, err := core.Process(cdrtest.Message(s.Receive, "imu", 4), s.Receive)
		require.NoError(t, err)
	}
	st := core.Status()
	require.Positive(t, st.Estimator.UncorrectedSamples, "stamps left as received")
	d := Report{Status: st, Prev: Status{}}.Diagnose()
	require.Equal(t, nodekit.Warn, d.Level)
	require.Contains(t, d.Message, "window_sec")

	// A period that doubles half-way (the rate halves).
	core, err = New(config.DefaultConfig())
	require.NoError(t, err)
	tt := sim.DefaultStart
	var prev Status
	for i := range 3000 {
		p := 10 * time.Millisecond
		if i >= 1500 {
			p = 20 * time.Millisecond
		}
		tt = tt.Add(p)
		if i == 1499 {
			prev = core.Status()
		}
		_, err := core.Process(cdrtest.Message(tt.Add(time.Duration(i*7919%1000)*time.Microsecond), "imu", 4), tt)
		require.NoError(t, err)
	}
	d = Report{Status: core.Status(), Prev: prev}.Diagnose()
	require.Contains(t, d.Message, "the period changed")
}
