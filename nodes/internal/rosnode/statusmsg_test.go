//go:build ros2 && timealign_interfaces

package rosnode_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tiiuae/rclgo/pkg/rclgo"
	"github.com/tiiuae/rclgo/pkg/rclgo/types"

	"github.com/timealign/timealign/internal/testutil/cdrtest"
	bimsg "github.com/timealign/timealign/msgs/builtin_interfaces/msg"
	diagmsg "github.com/timealign/timealign/msgs/diagnostic_msgs/msg"
	rclmsg "github.com/timealign/timealign/msgs/rcl_interfaces/msg"
	stdmsg "github.com/timealign/timealign/msgs/std_msgs/msg"
	tamsg "github.com/timealign/timealign/msgs/timealign/msg"
	"github.com/timealign/timealign/nodes/internal/clocksync"
	"github.com/timealign/timealign/nodes/internal/nodekit"
	"github.com/timealign/timealign/nodes/internal/sensorsim"
	sensorsimcfg "github.com/timealign/timealign/nodes/internal/sensorsim/config"
	"github.com/timealign/timealign/nodes/internal/stampmonitor"
	stampmonitorcfg "github.com/timealign/timealign/nodes/internal/stampmonitor/config"
	"github.com/timealign/timealign/nodes/internal/streamaligner"
	streamalignercfg "github.com/timealign/timealign/nodes/internal/streamaligner/config"
	"github.com/timealign/timealign/nodes/internal/synchronizer"
	synchronizercfg "github.com/timealign/timealign/nodes/internal/synchronizer/config"
	"github.com/timealign/timealign/nodes/internal/timestampestimator"
	"github.com/timealign/timealign/pkg/pll"
	"github.com/timealign/timealign/pkg/stamp"
	tsync "github.com/timealign/timealign/pkg/sync"
	"github.com/timealign/timealign/pkg/tsest"
)

// The nodes encode their status messages in Go (ROS-free, no cgo on the
// data path). These tests (build tags ros2 and timealign_interfaces, with the package's colcon
// install sourced for its interfaces; .ci/ros2 runs them) hold those encoders to the interfaces in msg/:
// every field set to a distinct value, encoded by the node's code,
// decoded by the rclgo-gen bindings (rosidl's own deserializer), compared
// field by field. A field added, removed or moved in msg/ and not in the
// encoder fails here.

func rosTime(t *testing.T, s stamp.Time) bimsg.Time {
	t.Helper()
	sec, ns, err := s.ROS()
	require.NoError(t, err)
	return bimsg.Time{Sec: sec, Nanosec: ns}
}

func rosDuration(t *testing.T, d time.Duration) bimsg.Duration {
	t.Helper()
	sec, ns, err := stamp.Time(d).ROS()
	require.NoError(t, err)
	return bimsg.Duration{Sec: sec, Nanosec: ns}
}

// dur returns a distinct duration for field n (negative for odd n: the
// encoders must handle the sign as builtin_interfaces does).
func dur(n int) time.Duration {
	d := time.Duration(n)*time.Second + time.Duration(n)*time.Millisecond + time.Duration(n)
	if n%2 == 1 {
		return -d
	}
	return d
}

const statusNow = stamp.Time(1_700_000_000_123_456_789)

func TestTimestampEstimatorStatusEncoding(t *testing.T) {
	e := tsest.Status{
		HaveEstimate: true, Stamp: statusNow - 1000, Period: dur(2), Latency: dur(3), LatencyRaw: dur(4),
		MaxJitter: dur(5), LastCorrection: dur(6), WindowSize: 7, WindowCapacity: 8, Samples: 9,
		LostSamplesTotal: 10, ExpectedLosses: 11, RejectedExpectedLosses: 12, BaseTimeResets: 13,
		BaseTimeResetOffset: dur(14), Resets: 15, Backward: 16, DupIndexes: 17, Duplicates: 18, Gaps: 19,
		ClockSteps: 20, IndexResets: 21, Recounts: 22, RejectedReferences: 28, Ambiguous: true, Ambiguities: 29,
		Uncorrected: true, UncorrectedSamples: 31, PeriodChanges: 32,
	}
	st := timestampestimator.Status{Estimator: e, References: 23, MessagesIn: 24, MessagesOut: 25, DroppedMalformed: 26, DroppedRejected: 30}
	b := timestampestimator.Report{Now: statusNow, Status: st, Runtime: nodekit.RuntimeStatus{DroppedQueue: 27}}.AppendStatusMsg(nil)
	got := decode[*tamsg.TimestampEstimatorStatus](t, b, tamsg.TimestampEstimatorStatusTypeSupport)
	want := &tamsg.TimestampEstimatorStatus{
		Header:       stdmsg.Header{Stamp: rosTime(t, statusNow)},
		HaveEstimate: true, LastStamp: rosTime(t, e.Stamp), Period: rosDuration(t, e.Period),
		Latency: rosDuration(t, e.Latency), LatencyRaw: rosDuration(t, e.LatencyRaw),
		MaxJitter: rosDuration(t, e.MaxJitter), LastCorrection: rosDuration(t, e.LastCorrection),
		WindowFill: 7, WindowCapacity: 8, Samples: 9, LostSamples: 10, ExpectedLosses: 11,
		RejectedExpectedLosses: 12, BaseTimeResets: 13, BaseTimeResetOffset: rosDuration(t, e.BaseTimeResetOffset),
		Resets: 15, RejectedBackward: 16, RejectedDuplicate: 17, DuplicateStamps: 18, Gaps: 19,
		ClockSteps: 20, IndexResets: 21, LossRecounts: 22, References: 23, RejectedReferences: 28,
		JitterAmbiguous: true, JitterAmbiguities: 29,
		MessagesIn: 24, MessagesOut: 25, DroppedRejected: 30, DroppedMalformed: 26, DroppedQueue: 27,
		Uncorrected: true, UncorrectedSamples: 31, PeriodChanges: 32,
	}
	require.Equal(t, want, got)
	requireReserialized(t, b, got)
}

func TestClockSyncStatusEncoding(t *testing.T) {
	p := pll.Status{
		Mode: pll.Envelope, Valid: true, Fill: 3, SlopePPM: -4.25, Offset: dur(5), Spread: dur(6),
		Invalid: 7, Resets: 8, FirstTick: 9, LastTick: 10, Duplicates: 11, Stale: 12, TimeBack: 1,
		Reboots: 13, Relocks: 14, Outliers: 15, OutOfRange: 16,
	}
	st := clocksync.Status{PLL: p, MessagesIn: 17, MessagesOut: 18, DroppedInvalid: 19, DroppedMalformed: 20}
	st.Config.PLL.FIFOSize = 21
	b := clocksync.Report{Now: statusNow, Status: st, Runtime: nodekit.RuntimeStatus{DroppedQueue: 22}}.AppendStatusMsg(nil)
	got := decode[*tamsg.ClockSyncStatus](t, b, tamsg.ClockSyncStatusTypeSupport)
	want := &tamsg.ClockSyncStatus{
		Header: stdmsg.Header{Stamp: rosTime(t, statusNow)},
		Mode:   "envelope", Valid: true, FifoFill: 3, FifoSize: 21, SlopePpm: -4.25,
		Offset: rosDuration(t, p.Offset), ResidualSpread: rosDuration(t, p.Spread),
		InvalidCount: 7, Resets: 8, DeviceMinTicks: 9, DeviceMaxTicks: 10, RejectedDuplicate: 11,
		RejectedBackward: 13, Reboots: 13, Relocks: 14, Outliers: 15, RejectedOutOfRange: 16,
		MessagesIn: 17, MessagesOut: 18, DroppedInvalid: 19, DroppedMalformed: 20, DroppedQueue: 22,
	}
	require.Equal(t, want, got)
	requireReserialized(t, b, got)
}

// TestSyncEncodings: the synchronizer's SyncStatus and MatchedSet, from a
// core that has matched and dropped messages.
func TestSyncEncodings(t *testing.T) {
	cfg := synchronizercfg.DefaultConfig()
	cfg.Sync.Topics = 3
	cfg.Sync.QueueSize = 2
	var matched [][]byte
	core, err := synchronizer.New(cfg, func(_ [][]byte, m func() []byte) { matched = append(matched, m()) })
	require.NoError(t, err)
	ms := stamp.Time(time.Millisecond)
	base := statusNow - 10*stamp.Time(time.Second)
	for k := stamp.Time(0); k < 20; k++ {
		for i := 0; i < 3; i++ {
			if i == 2 && k > 8 && k < 14 {
				continue // topic 2 goes quiet: the others overflow their queues
			}
			require.NoError(t, core.Add(i, msgAt(base+k*100*ms+stamp.Time(i)*ms), base+k*100*ms))
		}
	}
	require.Error(t, core.Add(1, []byte{0, 1, 0}, base))
	st := core.Status()
	require.NotZero(t, st.Sync.Sets)
	require.NotZero(t, st.Sync.DroppedPerTopic()[0])

	// /scan silent for 3 s while the others deliver: it blocks every set.
	st.LastArrival = []stamp.Time{statusNow - ms, statusNow - ms, statusNow - 3*stamp.Time(time.Second)}
	inputs := []string{"/camera", "/imu", "/scan"}
	rates := []float64{10, 10.5, 4.25}
	r := synchronizer.Report{Now: statusNow, Status: st, Rates: rates, SetRate: 3.5, Runtime: nodekit.RuntimeStatus{Inputs: inputs, DroppedQueue: 24}}
	b := r.AppendStatusMsg(nil)
	got := decode[*tamsg.SyncStatus](t, b, tamsg.SyncStatusTypeSupport)
	want := &tamsg.SyncStatus{
		Header: stdmsg.Header{Stamp: rosTime(t, statusNow)},
		Policy: "approximate", Sets: st.Sync.Sets, SetRate: 3.5,
		MeanSpread: rosDuration(t, st.Sync.MeanSpread), MaxSpread: rosDuration(t, st.Sync.MaxSpread),
		MeanLatency: rosDuration(t, st.Sync.MeanLatency), MaxLatency: rosDuration(t, st.Sync.MaxLatency),
		Inputs: inputs, Received: st.Sync.Received, Rates: rates, DroppedMalformed: st.DroppedMalformed,
		Dropped: st.Sync.DroppedPerTopic(), BlockingInput: "/scan", DroppedQueue: 24,
	}
	for _, n := range st.Sync.QueueFill {
		want.QueueFill = append(want.QueueFill, uint32(n))
	}
	for _, s := range st.Sync.LastStamp {
		want.LastStamp = append(want.LastStamp, rosTime(t, s))
	}
	by := st.Sync.DropsByReason()
	for _, r := range tsync.Reasons() {
		want.DropReasons = append(want.DropReasons, r.String())
		want.DropsByReason = append(want.DropsByReason, by[r])
	}
	require.Contains(t, want.DropReasons, "queue_full")
	require.Equal(t, want, got)
	requireReserialized(t, b, got)

	require.NotEmpty(t, matched)
	for k, b := range matched {
		m := decode[*tamsg.MatchedSet](t, b, tamsg.MatchedSetTypeSupport)
		require.Equal(t, uint64(k), m.Sequence)
		require.Len(t, m.Stamps, 3)
		var lo, hi stamp.Time
		for i, s := range m.Stamps {
			st, err := stamp.FromROS(s.Sec, s.Nanosec)
			require.NoError(t, err)
			if i == 0 || st < lo {
				lo = st
			}
			if i == 0 || st > hi {
				hi = st
			}
		}
		require.Equal(t, rosTime(t, hi), m.Header.Stamp, "the header stamp is the newest member's")
		require.Equal(t, rosDuration(t, hi.Sub(lo)), m.Spread)
		requireReserialized(t, b, m)
	}
}

func TestAlignerStatusEncoding(t *testing.T) {
	cfg := streamalignercfg.DefaultConfig()
	cfg.Aligner.Streams = append(cfg.Aligner.Streams, streamalignercfg.DefaultStream(0))
	cfg.Aligner.Streams[0].Period = 10 * time.Millisecond
	cfg.SilentAfter = 500 * time.Millisecond
	core, err := streamaligner.New(cfg, func(int, []byte) {})
	require.NoError(t, err)
	ms := stamp.Time(time.Millisecond)
	base := statusNow - 10*stamp.Time(time.Second)
	for k := stamp.Time(0); k < 30; k++ {
		at := 4*stamp.Time(time.Second) + k*10*ms // node time
		require.NoError(t, core.Add(0, msgAt(base+k*10*ms), at))
		if k%3 == 0 {
			require.NoError(t, core.Add(1, msgAt(base+k*10*ms+ms), at))
		}
	}
	require.NoError(t, core.Add(1, msgAt(base), 4300*ms)) // backward in time
	require.Error(t, core.Add(0, []byte{0, 1}, 1))
	core.Tick(4600 * ms) // input 2 never sent: silent; 0 and 1 sent within 500 ms
	st := core.Status()
	require.NotZero(t, st.Aligner.Played)
	inputs := []string{"/imu", "/scan", "/gps"}
	b := streamaligner.Report{Now: statusNow, Status: st, Runtime: nodekit.RuntimeStatus{Inputs: inputs, DroppedQueue: 7}}.AppendStatusMsg(nil)
	got := decode[*tamsg.AlignerStatus](t, b, tamsg.AlignerStatusTypeSupport)
	want := &tamsg.AlignerStatus{
		Header:  stdmsg.Header{Stamp: rosTime(t, statusNow)},
		Timeout: rosDuration(t, st.Aligner.Timeout), Latency: rosDuration(t, st.Aligner.Latency),
		LastPlayed: rosTime(t, st.Aligner.Current), Played: st.Aligner.Played, Streams: inputs,
		Silent: st.Silent, DroppedMalformed: st.DroppedMalformed, DroppedQueue: 7,
	}
	if w := st.Aligner.Waiting; w >= 0 {
		want.WaitingFor = inputs[w]
	}
	for _, s := range st.Aligner.Streams {
		want.Received = append(want.Received, s.Received)
		want.BufferFill = append(want.BufferFill, uint32(s.BufferFill))
		want.BufferSize = append(want.BufferSize, uint32(s.BufferSize))
		want.DroppedLate = append(want.DroppedLate, s.Late)
		want.DroppedBackward = append(want.DroppedBackward, s.Backward)
		want.DroppedFull = append(want.DroppedFull, s.Full)
	}
	require.Equal(t, []bool{false, false, true}, got.Silent)
	require.Equal(t, uint64(1), got.DroppedBackward[1])
	require.Equal(t, want, got)
	requireReserialized(t, b, got)
}

// TestDiagnosticArrayEncoding: /diagnostics as diagnostic_msgs decodes it.
func TestDiagnosticArrayEncoding(t *testing.T) {
	d := nodekit.Diagnostic{Name: "/imu/ts: timestamp estimator", HardwareID: "imu0"}
	d.Raise(nodekit.Warn, "no period estimate yet")
	d.Add("period", 10*time.Millisecond)
	d.Add("messages_in", uint64(42))
	ok := nodekit.Diagnostic{Name: "/sync: synchronizer"}
	ok.Raise(nodekit.OK, "matching")
	b := nodekit.AppendDiagnosticArray(nil, statusNow, d, ok)
	got := decode[*diagmsg.DiagnosticArray](t, b, diagmsg.DiagnosticArrayTypeSupport)
	require.Equal(t, rosTime(t, statusNow), got.Header.Stamp)
	require.Len(t, got.Status, 2)
	require.Equal(t, diagmsg.DiagnosticStatus_WARN, got.Status[0].Level)
	require.Equal(t, "/imu/ts: timestamp estimator", got.Status[0].Name)
	require.Equal(t, "no period estimate yet", got.Status[0].Message)
	require.Equal(t, "imu0", got.Status[0].HardwareId)
	require.Equal(t, []diagmsg.KeyValue{{Key: "period", Value: "10ms"}, {Key: "messages_in", Value: "42"}}, got.Status[0].Values)
	require.Equal(t, diagmsg.DiagnosticStatus_OK, got.Status[1].Level)
	requireReserialized(t, b, got)
}

// requireReserialized: rosidl serializes the decoded message to the same
// bytes (up to the final padding DDS adds), so the Go encoding is the
// interface's canonical one, not merely readable.
func requireReserialized(t *testing.T, b []byte, m types.Message) {
	t.Helper()
	again, err := rclgo.Serialize(m)
	require.NoError(t, err)
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	for len(again)%4 != 0 {
		again = append(again, 0)
	}
	require.Equal(t, again, b)
}

// decode deserializes a message with its generated type support.
func decode[T types.Message](t *testing.T, b []byte, ts types.MessageTypeSupport) T {
	t.Helper()
	m, err := rclgo.Deserialize(b, ts)
	require.NoError(t, err)
	v, ok := m.(T)
	require.True(t, ok, "decoded a %T", m)
	return v
}

// TestLogEncoding: the /rosout line (rosnode publishes it itself, see
// rosout.go) as rcl_interfaces/msg/Log, with rcutils' severities.
func TestLogEncoding(t *testing.T) {
	b := nodekit.AppendLogMsg(nil, statusNow, nodekit.LogWarn, "ns.timestamp_estimator", "no input yet")
	got := decode[*rclmsg.Log](t, b, rclmsg.LogTypeSupport)
	want := &rclmsg.Log{Stamp: rosTime(t, statusNow), Level: rclmsg.Log_WARN, Name: "ns.timestamp_estimator", Msg: "no input yet"}
	require.Equal(t, want, got)
	requireReserialized(t, b, got)
	for l, sev := range map[nodekit.LogLevel]uint8{nodekit.LogDebug: rclmsg.Log_DEBUG, nodekit.LogInfo: rclmsg.Log_INFO,
		nodekit.LogWarn: rclmsg.Log_WARN, nodekit.LogError: rclmsg.Log_ERROR} {
		require.Equal(t, sev, l.RosoutSeverity(), "%v", l)
	}
}

// msgAt is a small Header-first message stamped st.
func msgAt(st stamp.Time) []byte { return cdrtest.Message(st, "f", 8) }

// TestSensorSimEncodings: sensor_sim's SensorSimStatus and GroundTruth.
func TestSensorSimEncodings(t *testing.T) {
	cfg := sensorsimcfg.DefaultConfig()
	cfg.Camera.Enabled = false
	st := sensorsim.Status{Running: true, Restarts: 2, Truths: 9, Config: cfg}
	st.Sensors[sensorsimcfg.IMU] = sensorsim.SensorStatus{Published: 3, Lost: 4}
	st.Sensors[sensorsimcfg.Lidar] = sensorsim.SensorStatus{Published: 5, Lost: 6}
	st.Sensors[3] = sensorsim.SensorStatus{Published: 7}
	r := sensorsim.Report{Now: statusNow, Status: st, Rates: [4]float64{400.5, 10.25, 0, 9.75},
		Outputs: []string{"/imu", "/scan", "/image", "/pps", "/truth"}, Runtime: nodekit.RuntimeStatus{DroppedQueue: 11}}
	b := r.AppendStatusMsg(nil)
	got := decode[*tamsg.SensorSimStatus](t, b, tamsg.SensorSimStatusTypeSupport)
	want := &tamsg.SensorSimStatus{Header: stdmsg.Header{Stamp: rosTime(t, statusNow)}, Running: true, Restarts: 2,
		Sensors: []string{"imu", "lidar", "reference"}, Topics: []string{"/imu", "/scan", "/pps"},
		Published: []uint64{3, 5, 7}, Lost: []uint64{4, 6, 0}, Rates: []float64{400.5, 10.25, 9.75}, Truths: 9, DroppedQueue: 11}
	require.Equal(t, want, got)
	requireReserialized(t, b, got)

	s := sensorsim.Sample{Number: 12, True: statusNow - 5000, Stamp: statusNow + 7000, Fingerprint: 0xfedcba9876543210, FrameID: "laser"}
	b = sensorsim.AppendGroundTruth(nil, statusNow, "/demo/scan_raw", s)
	gt := decode[*tamsg.GroundTruth](t, b, tamsg.GroundTruthTypeSupport)
	require.Equal(t, &tamsg.GroundTruth{Header: stdmsg.Header{Stamp: rosTime(t, statusNow), FrameId: "laser"}, Topic: "/demo/scan_raw",
		Sample: 12, TrueStamp: rosTime(t, s.True), Stamp: rosTime(t, s.Stamp), Fingerprint: s.Fingerprint}, gt)
	requireReserialized(t, b, gt)
	parsed, err := stampmonitor.ParseTruth(b)
	require.NoError(t, err)
	require.Equal(t, s.Fingerprint, parsed.Fingerprint)
}

// TestStampMonitorEncoding: stamp_monitor's StampMonitorStatus, nested
// rows and all.
func TestStampMonitorEncoding(t *testing.T) {
	e := func(k float64) stampmonitor.Errors {
		return stampmonitor.Errors{Count: int(k), Mean: -k * 1000, Std: k * 2000, Min: -k * 3000, Max: k * 4000,
			P50: k * 5000, P90: k * 6000, P99: k * 7000, Worst: k * 8000}
	}
	us := func(k float64) tamsg.StampErrors {
		return tamsg.StampErrors{Count: uint32(k), MeanUs: -k, StdUs: 2 * k, MinUs: -3 * k, MaxUs: 4 * k, P50Us: 5 * k,
			P90Us: 6 * k, P99Us: 7 * k, WorstUs: 8 * k}
	}
	rows := []stampmonitor.TopicErrors{
		{Name: "imu", Topic: "/imu", TruthTopic: "/imu_raw", Raw: e(1), Corrected: e(2), Received: 3, Matched: 4, Unmatched: 5},
		{Name: "/cam", TruthTopic: "/cam", Raw: e(6), Received: 7},
	}
	cfg := stampmonitorcfg.DefaultConfig()
	st := stampmonitor.Status{Truths: 8, TruthsUnmatched: 9, Pending: 10, DroppedPending: 11, DroppedMalformed: 12, Config: cfg}
	b := stampmonitor.Report{Now: statusNow, Status: st, Rows: rows, Runtime: nodekit.RuntimeStatus{DroppedQueue: 13}}.AppendStatusMsg(nil)
	got := decode[*tamsg.StampMonitorStatus](t, b, tamsg.StampMonitorStatusTypeSupport)
	want := &tamsg.StampMonitorStatus{Header: stdmsg.Header{Stamp: rosTime(t, statusNow)}, Window: rosDuration(t, cfg.Window),
		Topics: []tamsg.TopicStampErrors{
			{Name: "imu", Topic: "/imu", TruthTopic: "/imu_raw", Raw: us(1), Corrected: us(2), Received: 3, Matched: 4, Unmatched: 5},
			{Name: "/cam", TruthTopic: "/cam", Raw: us(6), Received: 7},
		},
		Truths: 8, TruthsUnmatched: 9, Pending: 10, DroppedPending: 11, DroppedMalformed: 12, DroppedQueue: 13}
	require.Equal(t, want, got)
	requireReserialized(t, b, got)
}
