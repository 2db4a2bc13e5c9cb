package stampmonitor_test

import (
	"encoding/binary"
	"math"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timealign/timealign/internal/testutil/cdrtest"
	"github.com/timealign/timealign/nodes/internal/sensorsim"
	"github.com/timealign/timealign/nodes/internal/stampmonitor"
	"github.com/timealign/timealign/nodes/internal/stampmonitor/config"
	"github.com/timealign/timealign/pkg/stamp"
)

const t0 = stamp.Time(1_800_000_000 * time.Second)

// sample is a simulated sample: its message as published and its ground
// truth message.
func sample(topic string, n int, true_, published stamp.Time) (msg, truth []byte) {
	msg = cdrtest.Message(published, "imu", 40)
	binary.LittleEndian.PutUint64(msg[len(msg)-8:], uint64(n)) // every sample distinct
	fp, _ := stamp.Fingerprint(msg)
	truth = sensorsim.AppendGroundTruth(nil, published, topic, sensorsim.Sample{Number: uint64(n), True: true_,
		Stamp: published, Fingerprint: fp, FrameID: "imu"})
	return msg, truth
}

func restamped(msg []byte, t stamp.Time) []byte {
	m := append([]byte(nil), msg...)
	if err := stamp.SetHeaderStamp(m, t); err != nil {
		panic(err)
	}
	return m
}

func TestParseTruth(t *testing.T) {
	s := sensorsim.Sample{Number: 7, True: t0, Stamp: t0 + 5_000_123, Fingerprint: 0xfeedface12345678, FrameID: "laser"}
	msg := sensorsim.AppendGroundTruth(nil, t0+6_000_000, "/demo/scan_raw", s)
	got, err := stampmonitor.ParseTruth(msg)
	require.NoError(t, err)
	require.Equal(t, stampmonitor.Truth{At: t0 + 6_000_000, FrameID: "laser", Topic: "/demo/scan_raw", Sample: 7,
		True: s.True, Stamp: s.Stamp, Fingerprint: s.Fingerprint}, got)

	// Big endian, as another machine's middleware may send it.
	be := []byte{0, 0, 0, 0}
	u32 := func(v uint32) { be = binary.BigEndian.AppendUint32(be, v) }
	u64 := func(v uint64) {
		for (len(be)-4)%8 != 0 {
			be = append(be, 0)
		}
		be = binary.BigEndian.AppendUint64(be, v)
	}
	str := func(s string) {
		for (len(be)-4)%4 != 0 {
			be = append(be, 0)
		}
		u32(uint32(len(s) + 1))
		be = append(append(be, s...), 0)
	}
	u32(1_800_000_000)
	u32(6_000_000)
	str("laser")
	str("/x")
	u64(7)
	u32(1_800_000_000)
	u32(0)
	u32(1_800_000_000)
	u32(5_000_123)
	u64(0xfeedface12345678)
	got, err = stampmonitor.ParseTruth(be)
	require.NoError(t, err)
	require.Equal(t, "/x", got.Topic)
	require.Equal(t, s.Stamp, got.Stamp)
	require.Equal(t, s.Fingerprint, got.Fingerprint)

	for n := 0; n < len(msg); n++ {
		_, err := stampmonitor.ParseTruth(msg[:n])
		require.Error(t, err, "cut at %d", n)
	}
	_, err = stampmonitor.ParseTruth(cdrtest.Message(t0, "x", 3))
	require.ErrorIs(t, err, stampmonitor.ErrTruth)
}

// TestMatch: a corrected message finds its ground truth whichever comes
// first; two inputs may carry the same sample; the errors before and
// after are the stamps published and corrected minus the true one.
func TestMatch(t *testing.T) {
	cfg := config.DefaultConfig()
	c, err := stampmonitor.New(cfg, []string{"imu", "synced"}, []string{"/imu", "/synced/imu"})
	require.NoError(t, err)
	var rawErrs, fixedErrs []float64
	now := t0
	for n := range 200 {
		true_ := t0 + stamp.Time(n)*2_500_000
		raw := true_ + 5_000_000 + stamp.Time(n%7)*100_000 // late, jittery
		fixed := true_ + stamp.Time(n%3)*1000              // almost true
		msg, truth := sample("/imu_raw", n, true_, raw)
		corr := restamped(msg, fixed)
		now = raw
		if n%2 == 0 {
			require.NoError(t, c.Truth(truth, now))
			require.NoError(t, c.Input(0, corr, now+1000))
		} else {
			require.NoError(t, c.Input(0, corr, now))
			require.NoError(t, c.Truth(truth, now+1000))
		}
		if n < 50 {
			require.NoError(t, c.Input(1, restamped(msg, raw), now+2000)) // republished unchanged
		}
		rawErrs = append(rawErrs, float64(raw-true_))
		fixedErrs = append(fixedErrs, float64(fixed-true_))
	}
	rows := c.Summary(now)
	require.Len(t, rows, 2, "both inputs; the truth topic is linked")
	r := rows[0]
	require.Equal(t, "imu", r.Name)
	require.Equal(t, "/imu", r.Topic)
	require.Equal(t, "/imu_raw", r.TruthTopic)
	require.EqualValues(t, 200, r.Matched)
	wantRaw, _ := stampmonitor.Summarize(rawErrs, nil)
	wantFixed, _ := stampmonitor.Summarize(fixedErrs, nil)
	require.Equal(t, wantRaw, r.Raw)
	require.Equal(t, wantFixed, r.Corrected)
	require.EqualValues(t, 50, rows[1].Matched)
	require.Equal(t, rows[1].Raw, rows[1].Corrected, "republished unchanged")
	// The second input's other samples never come: the truths wait out
	// their timeout, matched by the first input (not counted unmatched).
	c.Summary(now.Add(cfg.MatchTimeout + time.Second))
	st := c.Status()
	require.Zero(t, st.Pending)
	require.Zero(t, st.TruthsUnmatched)
	require.EqualValues(t, 200, st.Truths)
}

func TestSummarize(t *testing.T) {
	e, _ := stampmonitor.Summarize([]float64{-4, 1, 2, 3}, nil)
	require.Equal(t, 4, e.Count)
	require.InDelta(t, 0.5, e.Mean, 1e-12)
	require.InDelta(t, math.Sqrt((4.5*4.5+0.25+2.25+6.25)/4), e.Std, 1e-12)
	require.Equal(t, -4.0, e.Min)
	require.Equal(t, 3.0, e.Max)
	require.Equal(t, 2.0, e.P50, "nearest rank of |e| = 1 2 3 4")
	require.Equal(t, 4.0, e.P90)
	require.Equal(t, 4.0, e.P99)
	require.Equal(t, 4.0, e.Worst)
	z, _ := stampmonitor.Summarize(nil, nil)
	require.Zero(t, z)
}

// TestUnmatched: messages with no ground truth, and ground truths whose
// sample never comes, are counted once they have waited MatchTimeout.
func TestUnmatched(t *testing.T) {
	cfg := config.DefaultConfig()
	c, err := stampmonitor.New(cfg, []string{"scan"}, []string{"/scan"})
	require.NoError(t, err)
	for n := range 20 {
		msg, truth := sample("/scan_raw", n, t0+stamp.Time(n)*100_000_000, t0+stamp.Time(n)*100_000_000+1_000_000)
		now := t0 + stamp.Time(n)*100_000_000 + 2_000_000
		require.NoError(t, c.Truth(truth, now))
		if n%4 != 0 { // clock_sync dropped every fourth
			require.NoError(t, c.Input(0, msg, now))
		}
		other, _ := sample("/other", 1000+n, 0, now)
		require.NoError(t, c.Input(0, other, now)) // no ground truth
	}
	rows := c.Summary(t0.Add(10 * time.Second))
	require.EqualValues(t, 15, rows[0].Matched)
	require.EqualValues(t, 20, rows[0].Unmatched)
	require.EqualValues(t, 35, rows[0].Received)
	require.EqualValues(t, 5, c.Status().TruthsUnmatched)
	require.ErrorIs(t, c.Truth([]byte{0, 1, 0, 0, 1, 2}, t0), stamp.ErrTruncated)
	require.Error(t, c.Input(0, []byte{0, 1, 0, 0, 1, 2}, t0))
	require.EqualValues(t, 2, c.Status().DroppedMalformed)
}

// TestBoundedMemory: a topic that stops empties its window; a flood of
// messages that match nothing is held to MaxPending; ground truth of more
// topics than MaxTruthTopics is dropped and counted.
func TestBoundedMemory(t *testing.T) {
	cfg := config.DefaultConfig()
	cfg.MaxPending = 1000
	cfg.MaxSamples = 500
	c, err := stampmonitor.New(cfg, []string{"imu"}, []string{"/imu"})
	require.NoError(t, err)
	now := t0
	for n := range 5000 {
		now = t0 + stamp.Time(n)*100_000 // 10 kHz, faster than the timeout ends the waits
		msg, truth := sample("/imu_raw", n, now, now)
		require.NoError(t, c.Truth(truth, now))
		require.NoError(t, c.Input(0, msg, now))
		junk, _ := sample("/junk", n+1_000_000, now, now)
		require.NoError(t, c.Input(0, junk, now))
	}
	st := c.Status()
	require.LessOrEqual(t, st.Pending, cfg.MaxPending)
	require.Positive(t, st.DroppedPending)
	rows := c.Summary(now)
	require.Equal(t, cfg.MaxSamples, rows[0].Raw.Count, "the window holds at most max_samples")
	rows = c.Summary(now.Add(cfg.Window + time.Second))
	require.Zero(t, rows[0].Raw.Count, "the topic stopped: its window is empty")
	require.Zero(t, c.Status().Pending)
	for k := range stampmonitor.MaxTruthTopics + 10 {
		_, truth := sample("/t"+string(rune('a'+k%26))+string(rune('a'+k/26)), k, now, now)
		require.NoError(t, c.Truth(truth, now))
	}
	require.EqualValues(t, 11, c.Status().DroppedTopics, "64 topics kept, /imu_raw among them")
}

// TestFloodLeavesNoMemory: a flood of messages that match nothing (the
// soak's 30,000 Imu/s for 3 s on a corrected topic) fills the pending
// samples; once they have timed out and the window has moved past the
// flood, the Core holds what it held before it (Go's maps keep their
// buckets after deletes, rings their length: both must be let go).
func TestFloodLeavesNoMemory(t *testing.T) {
	cfg := config.DefaultConfig()
	c, err := stampmonitor.New(cfg, []string{"imu"}, []string{"/imu"})
	require.NoError(t, err)
	n, now := 0, t0
	steady := func(d time.Duration) { // 400 Hz, each sample matched
		for end := now.Add(d); now < end; now = now.Add(2500 * time.Microsecond) {
			msg, truth := sample("/imu_raw", n, now, now)
			n++
			require.NoError(t, c.Truth(truth, now))
			require.NoError(t, c.Input(0, msg, now))
		}
	}
	steady(20 * time.Second)
	before, pending := heapAlloc(), c.Status().Pending
	for range 3 {
		for end := now.Add(time.Second); now < end; now = now.Add(2500 * time.Microsecond) {
			for range 75 { // 30 kHz of messages without a ground truth
				junk, _ := sample("/junk", n, now, now)
				n++
				require.NoError(t, c.Input(0, junk, now))
			}
			msg, truth := sample("/imu_raw", n, now, now)
			n++
			require.NoError(t, c.Truth(truth, now))
			require.NoError(t, c.Input(0, msg, now))
		}
	}
	require.Greater(t, c.Status().Pending, 50_000, "the flood waits")
	steady(cfg.Window + cfg.MatchTimeout + time.Second)
	require.LessOrEqual(t, c.Status().Pending, pending+1, "the flood timed out")
	after := heapAlloc()
	t.Logf("heap: %d kB before the flood, %d kB after it", before>>10, after>>10)
	require.Less(t, int64(after)-int64(before), int64(512<<10), "the flood's memory let go")
	runtime.KeepAlive(c)
}

// heapAlloc is the live heap after a collection.
func heapAlloc() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
