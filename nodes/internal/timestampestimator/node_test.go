package timestampestimator

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timealign/timealign/internal/testutil/cdrtest"
	"github.com/timealign/timealign/nodes/internal/nodekit"
	"github.com/timealign/timealign/nodes/internal/nodekit/memros"
	"github.com/timealign/timealign/nodes/internal/timestampestimator/config"
	"github.com/timealign/timealign/pkg/params"
	"github.com/timealign/timealign/pkg/stamp"
	"github.com/timealign/timealign/pkg/tsest"
)

// TestNode: the node's wiring without ROS: `in` (its type from the graph)
// stamped by the estimator on `out`, hardware references on `reference`
// (sensor_msgs/msg/TimeReference by default) moving the estimates,
// ~/status once a second, a parameter set restarting the estimator.
func TestNode(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := memros.New()
		p := config.DefaultParams()
		in := g.Advertise("/imu_raw", "sensor_msgs/msg/Imu")
		ref := g.Advertise("/reference", config.TimeReferenceType)
		out, status := g.Record("/imu"), g.Record("/timestamp_estimator/status")
		stop := g.Start(spec(&p), "--ros-args", "-r", "in:=/imu_raw", "-r", "out:=/imu", "-p", "window_sec:=1.0")
		time.Sleep(300 * time.Millisecond) // discovery
		cfg := tsest.DefaultConfig()
		cfg.Window = time.Second
		est, err := tsest.New(cfg)
		require.NoError(t, err)
		plain, err := tsest.New(cfg) // without the references
		require.NoError(t, err)
		var want []stamp.Time
		moved := false
		for i := range 80 {
			st := stamp.Time(1_700_000_000*time.Second) + stamp.Time(i)*10_000_000 + stamp.Time(i%3)*100_000
			require.NoError(t, in.Publish(cdrtest.Message(st, "imu", 8)))
			e, err := est.Update(st)
			require.NoError(t, err)
			e0, err := plain.Update(st)
			require.NoError(t, err)
			want = append(want, e)
			moved = moved || e != e0
			time.Sleep(10 * time.Millisecond)
			if i >= 40 && i%10 == 0 { // a pulse 3 ms before the sample's reception
				pulse := st - 3_000_000
				require.NoError(t, ref.Publish(cdrtest.TimeReference(st, "pps", pulse, "gps")))
				_ = est.UpdateReference(pulse) // rejected ones are counted: the node does the same
				time.Sleep(10 * time.Millisecond)
			}
		}
		require.True(t, moved, "the references move the estimates")
		time.Sleep(time.Second)
		synctest.Wait()
		got := out.Messages()
		require.Len(t, got, len(want))
		for i, m := range got {
			st, err := stamp.HeaderStamp(m)
			require.NoError(t, err)
			require.Equal(t, want[i], st, "message %d", i)
		}
		require.NotEmpty(t, status.Messages())
		res, err := g.Parameters("/timestamp_estimator", time.Second).Set(params.Parameter{Name: "window_sec", Value: params.DoubleValue(0.5)})
		require.NoError(t, err)
		require.True(t, res[0].Successful, res[0].Reason)
		require.Equal(t, 500*time.Millisecond, p.Config.Estimator.Window)
		code, stderr := stop()
		require.Zero(t, code, stderr)
	})
}

// TestReferenceType: the reference port takes reference_type, which is
// never empty (the node would wait for a publisher of reference to learn
// it before stamping anything).
func TestReferenceType(t *testing.T) {
	p := config.DefaultParams()
	ins, _, err := ports(&p)
	require.NoError(t, err)
	require.Equal(t, nodekit.Port{Topic: "reference", Type: config.TimeReferenceType, QoS: p.In, TypeParam: "reference_type"}, ins[1])
	srv := params.NewServer(params.Options{Node: "/ts", Overrides: map[string]params.Override{
		"reference_type": {Value: params.StringValue(""), Source: "-p"},
	}})
	b := params.NewBinder(srv, p.Validate)
	p.Bind(b)
	require.NoError(t, b.Declare())
	require.Len(t, srv.Issues(), 1)
	require.Contains(t, srv.Issues()[0].String(), "reference_type is empty")
	require.Equal(t, config.TimeReferenceType, p.ReferenceType)
	require.True(t, p.Config.ReferenceTimeRef)

	p = config.DefaultParams()
	srv = params.NewServer(params.Options{Node: "/ts", Overrides: map[string]params.Override{
		"reference_type": {Value: params.StringValue("sensor_msgs/msg/Imu"), Source: "-p"},
	}})
	b = params.NewBinder(srv, p.Validate)
	p.Bind(b)
	require.NoError(t, b.Declare())
	require.Empty(t, srv.Issues())
	require.False(t, p.Config.ReferenceTimeRef, "header.stamp of the Header-first type")
	ins, _, err = ports(&p)
	require.NoError(t, err)
	require.Equal(t, "sensor_msgs/msg/Imu", ins[1].Type)
}
