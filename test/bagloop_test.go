//go:build ros2 && timealign_interfaces

package test

import (
	"encoding/binary"
	"encoding/csv"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	tamsg "github.com/timealign/timealign/msgs/timealign/msg"
	"github.com/timealign/timealign/pkg/bag"
	"github.com/timealign/timealign/pkg/cdr"
	"github.com/timealign/timealign/pkg/sim"
	"github.com/timealign/timealign/pkg/stamp"
)

// loopBag is a simulated bag of the demo's sensors, read back: its
// messages in log-time order, and the true acquisition time of each IMU
// sample by its bytes after the stamp (the IMU's orientation encodes its
// sample number, so no two are alike).
type loopBag struct {
	dir    string
	msgs   []loopMsg
	length time.Duration         // log time from the first message to the last
	truth  map[string]stamp.Time // IMU message bytes after the stamp → true time
	header map[string]stamp.Time // IMU message bytes after the stamp → header.stamp in the bag
	types  map[string]string     // topic → type
	counts map[string]int        // topic → messages
}

type loopMsg struct {
	topic string
	data  []byte
	log   stamp.Time
}

// imuKey identifies an IMU message whatever its stamp: the bytes after
// the encapsulation and the stamp.
func imuKey(b []byte) string {
	if len(b) < 12 {
		return ""
	}
	return string(b[12:])
}

// simulateLoopBag writes the bag with `timealign simulate --bag`: an IMU at
// 100 Hz stamped on arrival (5 ms latency, 0–2 ms jitter), a lidar stamped
// by its own wrapping 32-bit clock, a 30 Hz camera, for d.
func simulateLoopBag(t *testing.T, storage string, d time.Duration) *loopBag {
	t.Helper()
	cli := timealignCLI(t)
	dir := t.TempDir()
	lb := &loopBag{dir: filepath.Join(dir, "loop"), truth: map[string]stamp.Time{}, header: map[string]stamp.Time{},
		types: map[string]string{}, counts: map[string]int{}}
	truthPath := filepath.Join(dir, "truth.csv")
	runTool(t, os.Environ(), 2*time.Minute, cli, "simulate", "--bag", lb.dir, "--storage", storage,
		"--streams", "imu,lidar,camera", "--duration", d.String(), "--seed", "29", "--truth", truthPath, "--quiet")

	f, err := os.Open(truthPath)
	require.NoError(t, err)
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	require.NoError(t, err)
	require.Equal(t, []string{"topic", "seq", "true_ns", "header_ns", "log_ns"}, rows[0])
	type truthRow struct{ header, truth stamp.Time }
	var imuTruth []truthRow
	for _, r := range rows[1:] {
		if r[0] != "/imu/data_raw" {
			continue
		}
		tr, err := strconv.ParseInt(r[2], 10, 64)
		require.NoError(t, err)
		h, err := strconv.ParseInt(r[3], 10, 64)
		require.NoError(t, err)
		imuTruth = append(imuTruth, truthRow{stamp.Time(h), stamp.Time(tr)})
	}

	b, err := bag.Open(lb.dir)
	require.NoError(t, err)
	r := b.Records()
	defer r.Close()
	var rec bag.Record
	imu := 0
	for {
		err := r.Next(&rec)
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		if rec.Kind != bag.KindMessage {
			continue
		}
		m := loopMsg{rec.Message.Topic.Name, append([]byte(nil), rec.Message.Data...), rec.Message.LogTime}
		lb.msgs = append(lb.msgs, m)
		lb.types[m.topic] = rec.Message.Topic.Type
		lb.counts[m.topic]++
		if m.topic == "/imu/data_raw" {
			h, err := stamp.HeaderStamp(m.data)
			require.NoError(t, err)
			// The truth file's rows of a topic are its messages in order.
			require.Less(t, imu, len(imuTruth))
			require.Equal(t, imuTruth[imu].header, h, "IMU message %d: the bag and the truth file agree", imu)
			lb.truth[imuKey(m.data)] = imuTruth[imu].truth
			lb.header[imuKey(m.data)] = h
			imu++
		}
	}
	require.Equal(t, len(imuTruth), imu)
	lb.length = lb.msgs[len(lb.msgs)-1].log.Sub(lb.msgs[0].log)
	return lb
}

// clockMsg is a rosgraph_msgs/msg/Clock of t; clockTime decodes one.
func clockMsg(t stamp.Time) []byte {
	e := cdr.NewEncoder(nil)
	e.Time(t)
	return e.B
}

func clockTime(b []byte) (stamp.Time, bool) {
	if len(b) < 12 {
		return 0, false
	}
	sec := int64(int32(binary.LittleEndian.Uint32(b[4:])))
	nsec := int64(binary.LittleEndian.Uint32(b[8:]))
	return stamp.Time(sec*1e9 + nsec), true
}

// playLoops plays the bag loops times with /clock: `ros2 bag play --loop
// --clock` where rosbag2 is installed, else the test's own player
// (publishing /clock at 100 Hz and each message at its log time), which it
// says. It returns once the last loop is over.
func playLoops(t *testing.T, lb *loopBag, loops int, qosFile string) {
	t.Helper()
	if _, err := exec.LookPath("ros2"); err == nil && exec.Command("ros2", "bag", "list", "storage").Run() == nil {
		t.Logf("playing with ros2 bag play --loop --clock 100")
		cmd := exec.Command("ros2", "bag", "play", "--loop", "--clock", "100", "--qos-profile-overrides-path", qosFile, lb.dir)
		var out output
		cmd.Stdout, cmd.Stderr = &out, &out
		require.NoError(t, cmd.Start())
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			t.Fatalf("ros2 bag play ended early: %v\n%s", err, out.String())
		case <-time.After(time.Duration(loops)*lb.length + 4*time.Second): // its start-up, and the last loop
		}
		_ = cmd.Process.Signal(syscall.SIGINT)
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill() // (rosbag2 on Jazzy was seen to ignore SIGINT)
			<-done
		}
		return
	}
	t.Logf("rosbag2 (ros2 bag) is not installed here: the test plays the bag itself, publishing /clock")
	pubs := map[string]*peer{}
	for topic, typ := range lb.types {
		pubs[topic] = newPeer(t, topic, "/loop/unused"+topic, typ)
	}
	clock := newPeer(t, "/clock", "/loop/unused_clock", "rosgraph_msgs/msg/Clock")
	time.Sleep(2 * time.Second) // discovery
	first := lb.msgs[0].log
	for range loops {
		began := time.Now()
		next := 0
		for tick := time.Duration(0); tick <= lb.length; tick += 10 * time.Millisecond {
			if d := time.Until(began.Add(tick)); d > 0 {
				time.Sleep(d)
			}
			now := first.Add(tick)
			require.NoError(t, clock.pub.PublishSerialized(clockMsg(now)))
			for ; next < len(lb.msgs) && lb.msgs[next].log <= now; next++ {
				require.NoError(t, pubs[lb.msgs[next].topic].pub.PublishSerialized(lb.msgs[next].data))
			}
		}
	}
}

// TestBagLoop: a bag of the demo's sensors, 8 s long, played three times
// in a row with /clock (`ros2 bag play --loop --clock`, the most common way
// to test a pipeline), through the demo's timestamp_estimator, clock_sync
// and synchronizer on use_sim_time. At each loop /clock and every stamp go
// back 8 s: every node detects it, logs it once and counts it in
// /diagnostics (time_jumps); one window after each jump the estimator's
// stamps are as accurate as in the first loop (against the bag's ground
// truth), none of its outputs is ever more than a second from its input's
// stamp, and the synchronizer publishes sets again within a second.
func TestBagLoop(t *testing.T) {
	storage := "sqlite3"
	if exec.Command("ros2", "bag", "list", "storage").Run() == nil {
		out, _ := exec.Command("ros2", "bag", "list", "storage").CombinedOutput()
		if strings.Contains(string(out), "mcap") {
			storage = "mcap"
		}
	}
	lb := simulateLoopBag(t, storage, 8*time.Second)
	t.Logf("bag: %v of %v", lb.length.Round(time.Millisecond), lb.counts)

	simTime := []string{"-p", "use_sim_time:=true", "-p", "qos.in.reliability:=reliable", "-p", "qos.in.depth:=1000", "-p", "qos.out.depth:=1000"}
	nodes := map[string]*proc{
		"loop_imu": start(t, "timestamp_estimator", append([]string{"--ros-args", "-r", "__node:=loop_imu",
			"-r", "in:=/imu/data_raw", "-r", "out:=/loop/imu", "-p", "message_type:=sensor_msgs/msg/Imu",
			"-p", "window_sec:=2.0", "-p", "period_sec:=0.01"}, simTime...)...),
		"loop_scan": start(t, "clock_sync", append([]string{"--ros-args", "-r", "__node:=loop_scan",
			"-r", "in:=/scan", "-r", "out:=/loop/scan", "-p", "message_type:=sensor_msgs/msg/LaserScan",
			"-p", "mode:=envelope", "-p", "tick_period_sec:=0.000001", "-p", "tick_bits:=32"}, simTime...)...),
		"loop_sync": start(t, "synchronizer", append([]string{"--ros-args", "-r", "__node:=loop_sync",
			"-r", "in0:=/loop/imu", "-r", "in1:=/loop/scan", "-r", "in2:=/camera/image_raw",
			"-r", "out0:=/loop/synced_imu", "-r", "out1:=/loop/synced_scan", "-r", "out2:=/loop/synced_image",
			"-p", "inputs:=3", "-p", "message_types:=[sensor_msgs/msg/Imu, sensor_msgs/msg/LaserScan, sensor_msgs/msg/Image]",
			"-p", "policy:=approximate", "-p", "queue_size:=100", "-p", "max_drop_share:=1.0"}, simTime...)...),
	}
	statusOf := map[string]*peer{
		"loop_imu":  newPeer(t, "/loop/unused_s1", "/loop_imu/status", "timealign/msg/TimestampEstimatorStatus"),
		"loop_scan": newPeer(t, "/loop/unused_s2", "/loop_scan/status", "timealign/msg/ClockSyncStatus"),
		"loop_sync": newPeer(t, "/loop/unused_s3", "/loop_sync/status", "timealign/msg/SyncStatus"),
	}
	imuOut := newPeer(t, "/loop/unused_imu", "/loop/imu", "sensor_msgs/msg/Imu")
	syncOut := newPeer(t, "/loop/unused_sync", "/loop/synced_imu", "sensor_msgs/msg/Imu")
	diag := newPeer(t, "/loop/unused_diag", "/diagnostics", "diagnostic_msgs/msg/DiagnosticArray")
	waitFor(t, 20*time.Second, "every node's diagnostics", func() bool {
		for name := range nodes {
			if _, ok := diagValue(t, diag, "/"+name, "time_jumps"); !ok {
				return false
			}
		}
		return true
	})

	// Watch, in wall time, the loops start (the estimator's first output of
	// a loop: its sample's true time goes back) and the synchronizer's sets
	// arrive.
	var mu sync.Mutex
	var jumps []time.Time  // when a loop's first estimate came
	var setsAt []time.Time // when new sets came
	stop := make(chan struct{})
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		var last stamp.Time
		seenImu, seenSets := 0, 0
		for {
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
			now := time.Now()
			got := imuOut.received()
			for _, b := range got[seenImu:] {
				tr := lb.truth[imuKey(b)]
				if tr < last-stamp.Time(time.Second) {
					mu.Lock()
					jumps = append(jumps, now)
					mu.Unlock()
				}
				last = tr
			}
			seenImu = len(got)
			if n := len(syncOut.received()); n > seenSets {
				mu.Lock()
				setsAt = append(setsAt, now)
				mu.Unlock()
				seenSets = n
			}
		}
	}()
	const loops = 3
	playLoops(t, lb, loops, reliableQoS(t, []string{"/imu/data_raw", "/scan", "/camera/image_raw", "/clock"}))
	time.Sleep(time.Second)
	close(stop)
	<-watched

	// Every node saw every jump: logged once each, counted.
	mu.Lock()
	defer mu.Unlock()
	t.Logf("%d estimator outputs, %d sets, %d loops begun again", len(imuOut.received()), len(syncOut.received()), len(jumps))
	require.GreaterOrEqual(t, len(jumps), loops-1, "the estimator's outputs of each loop")
	for name := range nodes {
		v, ok := diagValue(t, diag, "/"+name, "time_jumps")
		require.True(t, ok, "%s: time_jumps in /diagnostics", name)
		n, err := strconv.Atoi(v)
		require.NoError(t, err)
		require.GreaterOrEqual(t, n, len(jumps), "%s: every jump counted", name)
		require.LessOrEqual(t, n, len(jumps)+1, "%s: a jump counted once (one more: a loop begun as the play stopped)", name)
		var inStatus uint64
		switch name {
		case "loop_imu":
			st, ok := latest[*tamsg.TimestampEstimatorStatus](t, statusOf[name], tamsg.TimestampEstimatorStatusTypeSupport)
			require.True(t, ok)
			inStatus = st.TimeJumps
		case "loop_scan":
			st, ok := latest[*tamsg.ClockSyncStatus](t, statusOf[name], tamsg.ClockSyncStatusTypeSupport)
			require.True(t, ok)
			inStatus = st.TimeJumps
		case "loop_sync":
			st, ok := latest[*tamsg.SyncStatus](t, statusOf[name], tamsg.SyncStatusTypeSupport)
			require.True(t, ok)
			inStatus = st.TimeJumps
		}
		require.EqualValues(t, n, inStatus, "%s: ~/status counts the jumps as /diagnostics does", name)
		logged := strings.Count(nodes[name].output.String(), " (/clock): ") // the event's line ("time jumped back 8.0 s (/clock): estimator reset")
		require.Equal(t, n, logged, "%s: each jump logged once:\n%s", name, nodes[name].output.String())
	}

	// The estimator, loop by loop (a loop starts where the samples' true
	// times go back).
	type loopErrs struct {
		first  stamp.Time
		errs   []float64 // one window after the loop's first sample
		farOff int       // outputs more than a second from their input's stamp
	}
	var ls []*loopErrs
	var prev stamp.Time
	for _, b := range imuOut.received() {
		k := imuKey(b)
		tr, ok := lb.truth[k]
		require.True(t, ok, "an output of the estimator is a message of the bag")
		est, err := stamp.HeaderStamp(b)
		require.NoError(t, err)
		if len(ls) == 0 || tr < prev {
			ls = append(ls, &loopErrs{first: tr})
		}
		prev = tr
		l := ls[len(ls)-1]
		if est.Sub(lb.header[k]).Abs() > time.Second {
			l.farOff++
		}
		if tr.Sub(l.first) >= 2*time.Second {
			l.errs = append(l.errs, float64(est.Sub(tr)))
		}
	}
	require.GreaterOrEqual(t, len(ls), loops, "the estimator's outputs of every loop")
	steady := sim.ScoreErrors(ls[0].errs)
	for i, l := range ls {
		s := sim.ScoreErrors(l.errs)
		t.Logf("loop %d: %d outputs from one window on: error std %v, max %v, bias %v (first loop: %v, %v, %v); %d more than 1 s from their input's stamp",
			i+1, len(l.errs), s.Std, s.Max, s.Bias, steady.Std, steady.Max, steady.Bias, l.farOff)
		require.Zero(t, l.farOff, "loop %d: outputs more than a second from their input's stamp", i+1)
		if i == 0 || i == len(ls)-1 && len(l.errs) < len(ls[0].errs)/2 { // (the play's end may cut the last loop short)
			continue
		}
		require.LessOrEqual(t, s.Std, 2*steady.Std+20*time.Microsecond, "loop %d: as accurate as the first one window after the jump", i+1)
		require.LessOrEqual(t, s.Max, 2*steady.Max+50*time.Microsecond, "loop %d", i+1)
		require.InDelta(t, float64(steady.Bias), float64(s.Bias), float64(100*time.Microsecond), "loop %d", i+1)
	}

	// The synchronizer: sets again soon after each jump.
	require.NotEmpty(t, setsAt, "sets")
	for i, j := range jumps {
		var after time.Duration = -1
		for _, s := range setsAt {
			if s.After(j) {
				after = s.Sub(j)
				break
			}
		}
		t.Logf("jump %d: the first set %v after it", i+1, after.Round(time.Millisecond))
		if i == len(jumps)-1 && after < 0 {
			continue // the play's end
		}
		require.GreaterOrEqual(t, after, time.Duration(0), "jump %d: sets after it", i+1)
		require.LessOrEqual(t, after, time.Second, "jump %d: sets again within a second", i+1)
	}
	for _, p := range nodes {
		p.stop(t)
	}
}
