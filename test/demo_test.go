//go:build ros2 && timealign_interfaces

package test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tiiuae/rclgo/pkg/rclgo"

	bimsg "github.com/timealign/timealign/msgs/builtin_interfaces/msg"
	tamsg "github.com/timealign/timealign/msgs/timealign/msg"
	"github.com/timealign/timealign/nodes/demo"
	"github.com/timealign/timealign/pkg/params"
	"github.com/timealign/timealign/pkg/stamp"
)

// listener records the messages of several topics, serialized, with the
// time each reached this process.
type listener struct {
	ctx  *rclgo.Context
	mu   sync.Mutex
	msgs map[string][]received
	stop context.CancelFunc
	wg   sync.WaitGroup
}

type received struct {
	at  time.Time
	msg []byte
}

// listen subscribes to topics (topic → "pkg/msg/Type"), best effort with
// deep queues: what a ROS tool would see.
func listen(t *testing.T, topics map[string]string) *listener {
	ctx, err := rclgo.NewContext(rclgo.ClockTypeROSTime, nil)
	require.NoError(t, err)
	node, err := ctx.NewNode(fmt.Sprintf("timealign_test_listener_%d", peers.Add(1)), "")
	require.NoError(t, err)
	l := &listener{ctx: ctx, msgs: map[string][]received{}}
	ws, err := ctx.NewWaitSet()
	require.NoError(t, err)
	for topic, typ := range topics {
		pkgName, msgName, _ := strings.Cut(strings.Replace(typ, "/msg/", "/", 1), "/")
		ts, err := rclgo.LoadDynamicMessageTypeSupport(pkgName, msgName)
		require.NoError(t, err)
		opts := rclgo.NewDefaultSubscriptionOptions()
		opts.Qos.Depth = 1000
		opts.Qos.Reliability = rclgo.ReliabilityBestEffort
		sub, err := node.NewSubscription(topic, ts, opts, func(s *rclgo.Subscription) {
			for {
				b, _, err := s.TakeSerializedMessage()
				if err != nil {
					return
				}
				l.mu.Lock()
				l.msgs[topic] = append(l.msgs[topic], received{time.Now(), b})
				l.mu.Unlock()
			}
		})
		require.NoError(t, err)
		ws.AddSubscriptions(sub)
	}
	c, cancel := context.WithCancel(context.Background())
	l.stop = cancel
	l.wg.Add(1)
	go func() { defer l.wg.Done(); _ = ws.Run(c) }()
	t.Cleanup(func() { l.stop(); l.wg.Wait(); l.ctx.Close() })
	return l
}

func (l *listener) get(topic string) []received {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.msgs[topic])
}

// TestDemoLaunch: `ros2 launch timealign demo.launch.py` as a user starts
// it. After 15 s of the simulated sensors, stamp_monitor's figures (its 10
// s window) meet what the same scenario gives offline (nodes/demo: the
// nodes' cores on config/demo.yaml without ROS), with allowances derived
// from that scenario and from the delivery delay this run measures; each
// node's output is checked against the ground truth by this test itself;
// the synchronizer's sets hold IMU samples and scans acquired together;
// SIGINT to ros2 launch stops every node cleanly and ros2 launch exits 0.
func TestDemoLaunch(t *testing.T) {
	if os.Getenv("TIMEALIGN_INSTALL") == "" {
		t.Skip("the demo is launched from the package's install: set TIMEALIGN_INSTALL (.ci/ros2 does)")
	}
	if _, err := exec.LookPath("ros2"); err != nil {
		t.Skip("ros2 (the ROS 2 command line) is not on PATH")
	}
	// The offline figures of the same scenario, 15 s in.
	data, err := os.ReadFile(filepath.Join("..", "config", "demo.yaml"))
	require.NoError(t, err)
	f, err := params.ParseFile("demo.yaml", data)
	require.NoError(t, err)
	ns := fmt.Sprintf("/ta_demo_%d", rand.IntN(1_000_000))
	sc, warnings, err := demo.Load([]*params.File{f}, ns)
	require.NoError(t, err)
	require.Empty(t, warnings)
	const span = 15 * time.Second
	offline, err := demo.Replay(sc, stamp.Time(1_800_000_000*time.Second), span)
	require.NoError(t, err)

	topic := func(rel string) string { return ns + "/" + rel }
	l := listen(t, map[string]string{
		topic("stamp_monitor/status"): "timealign/msg/StampMonitorStatus",
		topic("truth"):                "timealign/msg/GroundTruth",
		topic("imu/data"):             "sensor_msgs/msg/Imu",
		topic("scan"):                 "sensor_msgs/msg/LaserScan",
		topic("scan_raw"):             "sensor_msgs/msg/LaserScan",
		topic("sync/matched"):         "timealign/msg/MatchedSet",
	})
	cmd := exec.Command("ros2", "launch", "timealign", "demo.launch.py", "namespace:="+strings.TrimPrefix(ns, "/"))
	var out output
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(t, cmd.Start())
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Signal(syscall.SIGINT)
			select {
			case <-done:
			case <-time.After(15 * time.Second):
				_ = cmd.Process.Kill()
				<-done
			}
		}
		if t.Failed() {
			t.Logf("ros2 launch output:\n%s", out.String())
		}
	})

	// sensor_sim's start: the true time of IMU sample 0 (400 Hz, no skew).
	imuPeriod := time.Duration(math.Round(1e9 / sc.Sim.IMU.Rate))
	var start stamp.Time
	waitFor(t, 30*time.Second, "ground truth of the IMU", func() bool {
		for _, r := range l.get(topic("truth")) {
			g := decode[*tamsg.GroundTruth](t, r.msg, tamsg.GroundTruthTypeSupport)
			if g.Topic == topic("imu/data_raw") {
				start = rosStamp(t, g.TrueStamp).Add(-time.Duration(g.Sample) * imuPeriod)
				return true
			}
		}
		return false
	})
	// The monitor's first status 15 s after the start.
	var status *tamsg.StampMonitorStatus
	waitFor(t, span+20*time.Second, "the monitor's status 15 s into the demo", func() bool {
		for _, r := range l.get(topic("stamp_monitor/status")) {
			s := decode[*tamsg.StampMonitorStatus](t, r.msg, tamsg.StampMonitorStatusTypeSupport)
			if rosStamp(t, s.Header.Stamp) >= start.Add(span) {
				status = s
				return true
			}
		}
		return false
	})

	// SIGINT to ros2 launch: every node exits cleanly, and so does it.
	require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
	select {
	case err := <-done:
		require.NoError(t, err, "ros2 launch's exit status")
	case <-time.After(15 * time.Second):
		t.Fatal("ros2 launch did not exit within 15 s of SIGINT")
	}
	log := out.String()
	for _, node := range []string{"sensor_sim", "timestamp_estimator", "clock_sync", "synchronizer", "stamp_monitor"} {
		require.Regexp(t, `\[`+node+`-\d\]: process has finished cleanly`, log, "%s exits 0 on SIGINT", node)
	}
	require.NotContains(t, log, "process has died")
	require.NotContains(t, log, "[ERROR]")
	require.Contains(t, log, "stamp − true acquisition time over the last 10s, raw → corrected:", "the monitor's table")

	// The delivery delay of this run: how much later than sensor_sim
	// published them the raw scans reached this process (clock_sync sees
	// such a delay on top of the simulated latency; the offline replay
	// has none).
	truths := map[uint64]*tamsg.GroundTruth{}
	cameraByStamp := map[stamp.Time]stamp.Time{}
	for _, r := range l.get(topic("truth")) {
		g := decode[*tamsg.GroundTruth](t, r.msg, tamsg.GroundTruthTypeSupport)
		truths[g.Fingerprint] = g
		if g.Topic == topic("camera/image_raw") {
			cameraByStamp[rosStamp(t, g.Stamp)] = rosStamp(t, g.TrueStamp)
		}
	}
	var delays []float64
	for _, r := range l.get(topic("scan_raw")) {
		fp, err := stamp.Fingerprint(r.msg)
		require.NoError(t, err)
		if g, ok := truths[fp]; ok {
			delays = append(delays, float64(r.at.UnixNano()-int64(rosStamp(t, g.Header.Stamp))))
		}
	}
	require.Greater(t, len(delays), 100, "raw scans with their ground truth")
	slices.Sort(delays)
	pct := func(p int) time.Duration { return time.Duration(delays[len(delays)*p/100]) }
	// What clock_sync's fit may sit above the simulated latency: the tail
	// of the delays, not their bulk. Its lower envelope ends on an edge
	// between two recent samples, and where both came late (a busy second,
	// the start-up of five processes) the fit's offset rests on them until
	// earlier samples are passed again: the delays' p90 was too tight on a
	// busy CI machine (mean 1.65 ms against 1.01 offline, worst 2.4 ms).
	allowance := float64(pct(99))
	t.Logf("delivery delay of the raw scans to a subscriber: p10 %v, median %v, p90 %v, p99 %v (load %s)",
		pct(10), pct(50), pct(90), pct(99), loadAvg())

	// The monitor's figures against the offline ones (µs).
	row := func(name string) tamsg.TopicStampErrors {
		for _, r := range status.Topics {
			if r.Name == name {
				return r
			}
		}
		t.Fatalf("no row %s in the monitor's status", name)
		return tamsg.TopicStampErrors{}
	}
	imu, lidar := row("imu"), row("lidar")
	oi, ol := offline[demo.RowIMU], offline[demo.RowLidar]
	us := func(ns float64) float64 { return ns / 1e3 }
	t.Logf("imu:   raw std %.1f µs → %.2f µs (offline %.2f µs), mean %.2f µs (offline %.2f µs), p99 %.2f µs (offline %.2f µs)",
		imu.Raw.StdUs, imu.Corrected.StdUs, us(oi.Corrected.Std), imu.Corrected.MeanUs, us(oi.Corrected.Mean), imu.Corrected.P99Us, us(oi.Corrected.P99))
	t.Logf("lidar: raw mean %.4g s → %.1f µs (offline %.1f µs), std %.1f µs (offline %.1f µs), worst %.1f µs (offline %.1f µs)",
		lidar.Raw.MeanUs/1e6, lidar.Corrected.MeanUs, us(ol.Corrected.Mean), lidar.Corrected.StdUs, us(ol.Corrected.Std), lidar.Corrected.WorstUs, us(ol.Corrected.Worst))
	// The IMU's correction reads header stamps only, not delivery times:
	// it keeps 95 % of the jitter reduction it has offline.
	budget := us(oi.Raw.Std) / 20
	require.InDelta(t, us(oi.Raw.Std), imu.Raw.StdUs, us(oi.Raw.Std)/10, "the IMU's simulated jitter")
	require.GreaterOrEqual(t, float64(imu.Corrected.Count), 0.9*float64(oi.Corrected.Count))
	require.LessOrEqual(t, imu.Corrected.StdUs, us(oi.Corrected.Std)+budget)
	require.LessOrEqual(t, math.Abs(imu.Corrected.MeanUs), math.Abs(us(oi.Corrected.Mean))+budget)
	require.LessOrEqual(t, imu.Corrected.P99Us, us(oi.Corrected.P99)+2*budget)
	// The lidar's correction fits delivery times: the delay adds to the
	// simulated latency.
	a := us(allowance)
	require.GreaterOrEqual(t, float64(lidar.Corrected.Count), 0.9*float64(ol.Corrected.Count))
	require.LessOrEqual(t, lidar.Corrected.StdUs, us(ol.Corrected.Std)+a)
	require.InDelta(t, us(ol.Corrected.Mean), lidar.Corrected.MeanUs, a)
	require.LessOrEqual(t, lidar.Corrected.WorstUs, us(ol.Corrected.Worst)+2*a)
	for _, r := range offline[2:] {
		if strings.HasSuffix(r.TruthTopic, "camera/image_raw") {
			cam := row(topic("camera/image_raw"))
			require.InDelta(t, us(r.Raw.Mean), cam.Raw.MeanUs, us(r.Raw.Std)/4, "the camera as simulated")
		}
	}

	// Each node's output against the ground truth, by this test: every
	// corrected IMU sample and scan it received after the first 5 s.
	corrected := map[string]map[stamp.Time]stamp.Time{} // topic → corrected stamp → true stamp
	for _, name := range []string{"imu/data", "scan"} {
		corrected[name] = map[stamp.Time]stamp.Time{}
		var errs []float64
		for _, r := range l.get(topic(name)) {
			st, err := stamp.HeaderStamp(r.msg)
			require.NoError(t, err)
			fp, _ := stamp.Fingerprint(r.msg)
			g, ok := truths[fp]
			if !ok {
				continue
			}
			tr := rosStamp(t, g.TrueStamp)
			corrected[name][st] = tr
			if tr >= start.Add(5*time.Second) && tr < start.Add(span) {
				errs = append(errs, float64(st.Sub(tr)))
			}
		}
		require.Greater(t, len(errs), 50, name)
		mean, std := meanStd(errs)
		t.Logf("%s against the ground truth, 5–15 s: %d samples, mean %.2f µs, std %.2f µs", name, len(errs), mean/1e3, std/1e3)
		if name == "imu/data" {
			require.LessOrEqual(t, std, oi.Corrected.Std+budget*1e3)
		} else {
			require.LessOrEqual(t, std, ol.Corrected.Std+allowance)
		}
	}
	// The synchronizer's sets: the IMU sample and the scan of a set were
	// acquired no further apart than the set's spread says, give or take
	// their remaining errors (the IMU's worst offline with its budget, the
	// lidar's latency and the delivery delay). (ApproximateTime minimizes
	// the spread of all three members; the camera's stamps are late by its
	// latency, not corrected in the demo, so a set's IMU sample may lie
	// anywhere between its scan and its frame.)
	errBound := time.Duration(oi.Corrected.Worst + budget*1e3 + math.Abs(ol.Corrected.Mean) + allowance)
	sets, checked := 0, 0
	var camOffsets []float64
	var farthest time.Duration
	for _, r := range l.get(topic("sync/matched")) {
		m := decode[*tamsg.MatchedSet](t, r.msg, tamsg.MatchedSetTypeSupport)
		require.Len(t, m.Stamps, 3)
		sets++
		ti, ok1 := corrected["imu/data"][rosStamp(t, m.Stamps[0])]
		ts, ok2 := corrected["scan"][rosStamp(t, m.Stamps[1])]
		tc, ok3 := cameraByStamp[rosStamp(t, m.Stamps[2])]
		if !ok1 || !ok2 || !ok3 {
			continue
		}
		checked++
		spread := time.Duration(m.Spread.Sec)*time.Second + time.Duration(m.Spread.Nanosec)
		d := ti.Sub(ts)
		require.LessOrEqual(t, max(d, -d), spread+errBound, "set %d: IMU and scan acquired %v apart, spread %v", m.Sequence, d, spread)
		farthest = max(farthest, d, -d)
		camOffsets = append(camOffsets, float64(tc.Sub(ts)))
	}
	require.Greater(t, checked, 50, "sets with every member's ground truth (of %d)", sets)
	camMean, _ := meanStd(camOffsets)
	t.Logf("synchronizer: %d sets, %d checked against the truth: IMU and scan acquired at most %v apart; the uncorrected camera's frames %.1f ms from their scans on average",
		sets, checked, farthest, camMean/1e6)
}

func rosStamp(t *testing.T, v bimsg.Time) stamp.Time {
	t.Helper()
	st, err := stamp.FromROS(v.Sec, v.Nanosec)
	require.NoError(t, err)
	return st
}

func meanStd(x []float64) (mean, std float64) {
	if len(x) == 0 {
		return 0, 0
	}
	for _, v := range x {
		mean += v
	}
	mean /= float64(len(x))
	for _, v := range x {
		std += (v - mean) * (v - mean)
	}
	return mean, math.Sqrt(std / float64(len(x)))
}
