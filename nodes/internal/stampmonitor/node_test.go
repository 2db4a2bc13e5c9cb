package stampmonitor

import (
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timealign/timealign/nodes/internal/clocksync"
	"github.com/timealign/timealign/nodes/internal/nodekit"
	"github.com/timealign/timealign/nodes/internal/nodekit/memros"
	"github.com/timealign/timealign/nodes/internal/nodetest"
	"github.com/timealign/timealign/nodes/internal/sensorsim"
	"github.com/timealign/timealign/nodes/internal/stampmonitor/config"
	"github.com/timealign/timealign/nodes/internal/timestampestimator"
	"github.com/timealign/timealign/pkg/params"
	"github.com/timealign/timealign/pkg/sim/payload"
	"github.com/timealign/timealign/pkg/stamp"
)

// specOf is the node's spec on p; node is set to the node's core.
func specOf(p *config.Params, node **Node) nodekit.Spec {
	s := spec(p)
	newNode := s.New
	s.New = func(pub nodekit.Publish) (nodekit.Core, error) {
		c, err := newNode(pub)
		if err == nil {
			*node = c.(*Node)
		}
		return c, err
	}
	return s
}

// TestPipeline: the demo's pipeline on the in-memory graph (no DDS: the
// receive times are the publication times): sensor_sim, a
// timestamp_estimator for the IMU with the reference pulses, clock_sync for
// the lidar, and the monitor on both corrected topics. The monitor finds
// the IMU's jitter removed and the lidar's device clock mapped to host
// time; the camera, not corrected, has a row of its raw errors; the table
// is logged.
func TestPipeline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := memros.New()
		ns := []string{"--ros-args", "-r", "__ns:=/demo"}
		stopSim := g.Start(sensorsim.Spec(),
			append(ns, "-r", "imu:=imu/data_raw", "-r", "scan:=scan_raw", "-r", "image:=camera/image_raw",
				"-r", "reference:=imu/reference", "-p", "camera.width:=64", "-p", "camera.height:=48")...)
		est := timestampestimator.Spec()
		est.Name = "imu_stamps"
		stopEst := g.Start(est,
			append(ns, "-r", "in:=imu/data_raw", "-r", "out:=imu/data", "-r", "reference:=imu/reference",
				"-p", "message_type:=sensor_msgs/msg/Imu")...)
		clk := clocksync.Spec()
		clk.Name = "scan_clock"
		stopClock := g.Start(clk,
			append(ns, "-r", "in:=scan_raw", "-r", "out:=scan", "-p", "message_type:=sensor_msgs/msg/LaserScan",
				"-p", "tick_period_sec:=1e-6", "-p", "tick_bits:=32")...)
		mp := config.DefaultParams()
		var mon *Node
		stopMon := g.Start(specOf(&mp, &mon), append(ns, "-p", "inputs:=2", "-p", "labels:=[imu, lidar]",
			"-p", "message_types:=[sensor_msgs/msg/Imu, sensor_msgs/msg/LaserScan]",
			"-r", "in0:=imu/data", "-r", "in1:=scan")...)
		time.Sleep(12 * time.Second)
		synctest.Wait()
		for _, stop := range []func() (int, string){stopSim, stopEst, stopClock, stopMon} {
			code, stderr := stop()
			require.Zero(t, code, stderr)
		}
		rows := mon.core.Summary(mon.core.st.LastTruth)
		require.Len(t, rows, 4, "imu, lidar, then the camera and the pulses uncorrected")
		imu, lidar := rows[0], rows[1]
		var camera, pulses TopicErrors
		for _, r := range rows[2:] {
			switch r.TruthTopic {
			case "/demo/camera/image_raw":
				camera = r
			case "/demo/imu/reference":
				pulses = r
			}
		}
		require.Less(t, pulses.Raw.Worst, 20e3, "the pulses' jitter")
		require.Equal(t, "imu", imu.Name)
		require.Equal(t, "/demo/imu/data", imu.Topic)
		require.Equal(t, "/demo/imu/data_raw", imu.TruthTopic)
		require.InDelta(t, 4800, imu.Matched, 100, "12 s at 400 Hz")
		require.InDelta(t, 4000, imu.Raw.Count, 10, "the last 10 s")
		require.InDelta(t, 577e3, imu.Raw.Std, 50e3, "uniform 0–2 ms: std 2 ms/√12")
		require.Less(t, imu.Corrected.Std, imu.Raw.Std/10)
		require.Less(t, abs(imu.Corrected.Mean), 100e3, "the pulses give the latency: no bias left")
		require.Equal(t, "/demo/scan_raw", lidar.TruthTopic)
		require.Less(t, lidar.Raw.Mean, -1e15, "device time: 1234 s since boot, not host time")
		require.Less(t, abs(lidar.Corrected.Mean), 5e6, "host time, within the lidar's latency")
		require.Less(t, lidar.Corrected.Std, 1e6)
		require.Equal(t, "/demo/camera/image_raw", camera.TruthTopic)
		require.Empty(t, camera.Topic)
		require.Zero(t, camera.Corrected.Count)
		require.InDelta(t, 300, camera.Raw.Count, 15)
		require.Greater(t, camera.Raw.Mean, 15e6, "stamped on arrival: late by its latency")
		var table string
		for _, l := range g.Node("/demo/stamp_monitor").Logs() {
			if strings.HasPrefix(l.Text, "stamp − true acquisition time") {
				table = l.Text
			}
		}
		require.Regexp(t, `\n  imu +/demo/imu/data +4\d\d\d +\S+ \S+ → `, table)
		require.Regexp(t, `\n  /demo/camera/image_raw +\(not corrected\) +\d+ +\S+ ms +\S+ ms`, table)
		t.Logf("the monitor's table:\n%s", table)
	})
}

func abs(x float64) float64 { return max(x, -x) }

// TestSaysWhatIsMissing: no ground truth, an input that sends nothing, an
// input whose messages match no ground truth: the diagnostics say which
// topic, and the health changes are logged.
func TestSaysWhatIsMissing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := memros.New()
		mp := config.DefaultParams()
		var mon *Node
		stop := g.Start(specOf(&mp, &mon), "--ros-args", "-p", "inputs:=2", "-p", "message_types:=[sensor_msgs/msg/Imu]",
			"-r", "in0:=/imu", "-r", "in1:=/scan", "-r", "truth:=/sim/truth")
		diag := g.Record("/diagnostics")
		time.Sleep(1500 * time.Millisecond)
		synctest.Wait()
		require.Contains(t, lastDiag(diag), "no ground truth on /sim/truth yet")
		require.Contains(t, lastDiag(diag), "no messages on /imu (in0) yet")
		imu := g.Advertise("/imu", "sensor_msgs/msg/Imu")
		truth := g.Advertise("/sim/truth", TruthType)
		for n := range 300 {
			_, tm := sampleMsg("/raw", n)
			require.NoError(t, truth.Publish(tm))
			m, _ := sampleMsg("/other", n+10_000)
			require.NoError(t, imu.Publish(m))
			time.Sleep(10 * time.Millisecond)
		}
		synctest.Wait()
		d := lastDiag(diag)
		require.Contains(t, d, "no message on /imu (in0) matches a ground truth")
		require.NotContains(t, d, "no ground truth")
		time.Sleep(5 * time.Second)
		synctest.Wait()
		require.Contains(t, lastDiag(diag), "no ground truth on /sim/truth for more than 3s")
		code, stderr := stop()
		require.Zero(t, code, stderr)
		logs := fmt.Sprint(g.Node("/stamp_monitor").Logs())
		require.Contains(t, logs, "no ground truth on /sim/truth yet")
		require.Contains(t, logs, "no messages on /scan (in1)")
	})
}

func sampleMsg(topic string, n int) (msg, truth []byte) {
	p, _ := payload.New(payload.Options{ImageWidth: 1, ImageHeight: 1})
	msg = p.Imu(nil, stamp.Time(1_800_000_000*time.Second), "imu", n)
	fp, _ := stamp.Fingerprint(msg)
	truth = sensorsim.AppendGroundTruth(nil, 0, topic, sensorsim.Sample{Number: uint64(n), Fingerprint: fp, FrameID: "imu",
		True: stamp.Time(1_800_000_000 * time.Second), Stamp: stamp.Time(1_800_000_000*time.Second) + 5_000_000})
	return msg, truth
}

func lastDiag(r *memros.Recorder) string {
	ms := r.Messages()
	if len(ms) == 0 {
		return ""
	}
	return string(ms[len(ms)-1])
}

// TestEveryWritableParameterIsLive: each writable parameter, set at run
// time, is what the node runs with; the wiring is read-only.
func TestEveryWritableParameterIsLive(t *testing.T) {
	node := nodetest.Live(t, Spec(),
		params.Parameter{Name: "window_sec", Value: params.DoubleValue(30)},
		params.Parameter{Name: "max_samples", Value: params.IntValue(5000)},
		params.Parameter{Name: "match_timeout_sec", Value: params.DoubleValue(0.5)},
		params.Parameter{Name: "max_pending", Value: params.IntValue(1000)},
		params.Parameter{Name: "silent_after_sec", Value: params.DoubleValue(10)},
		params.Parameter{Name: "log_period_sec", Value: params.DoubleValue(1)},
	).(*Node)
	require.Equal(t, 30*time.Second, node.core.Status().Config.Window)
}

// TestRejected: out-of-range values and inconsistent wiring are refused
// with the parameter's name and the reason.
func TestRejected(t *testing.T) {
	p := config.DefaultParams()
	srv := nodetest.Declare(t, &p, map[string]params.Override{
		"window_sec":     {Value: params.DoubleValue(0), Source: "-p"},
		"log_period_sec": {Value: params.DoubleValue(-5), Source: "-p"},
		"inputs":         {Value: params.IntValue(2), Source: "-p"},
		"labels":         {Value: params.StringsValue([]string{"a", "b", "c"}), Source: "-p"},
	})
	all := fmt.Sprint(srv.Issues())
	for _, want := range []string{"window_sec", "0.0 is not in [0.001, 3600.0]", "log_period_sec", "-5.0 is not in [0.1, 3600.0]",
		"labels has 3 entries, want none (the topics) or one per input (2)"} {
		require.Contains(t, all, want)
	}
}
