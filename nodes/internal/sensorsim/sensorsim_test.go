package sensorsim

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timealign/timealign/nodes/internal/sensorsim/config"
	"github.com/timealign/timealign/pkg/sim"
	"github.com/timealign/timealign/pkg/stamp"
)

const t0 = stamp.Time(1_800_000_000 * time.Second)

// run ticks c every step from `from` for d and returns what it emitted.
func run(c *Core, from stamp.Time, d, step time.Duration) []Sample {
	var got []Sample
	c.emit = func(s Sample) { got = append(got, s) }
	for t := from; t <= from.Add(d); t = t.Add(step) {
		c.Tick(t)
	}
	return got
}

// TestCoreIsTheSimulator: what the Core publishes for each sensor is the
// pkg/sim stream of its configuration, started at the clock's first
// reading: the same samples (lost ones numbered, not sent), in arrival
// order, each when the clock reaches its arrival, stamped as the sensor
// stamps; reference pulses every Every IMU samples, late by at most their
// jitter; every sample with its fingerprint.
func TestCoreIsTheSimulator(t *testing.T) {
	cfg := config.DefaultConfig()
	cfg.Image = config.Image{Width: 32, Height: 24, Encoding: "mono8"}
	cfg.Camera.Loss = 0.2
	cfg.Lidar.DeviceOffset = 4294*time.Second + 500*time.Millisecond // the 32-bit µs counter wraps after 0.47 s
	c, err := New(cfg, nil)
	require.NoError(t, err)
	got := run(c, t0, 2*time.Second, time.Millisecond)

	var byOut [numOutputs][]Sample
	var last stamp.Time
	for _, s := range got {
		byOut[s.Output] = append(byOut[s.Output], s)
		require.GreaterOrEqual(t, s.At, last, "published in time order")
		last = s.At
		fp, err := stamp.Fingerprint(s.Msg)
		require.NoError(t, err)
		require.Equal(t, fp, s.Fingerprint)
	}
	for i, sensor := range cfg.Sensors() {
		want, err := sim.Generate(func() sim.Config {
			sc := sensor.SimConfig(config.SensorSeed(cfg.Seed, i), t0)
			sc.Duration = 2 * time.Second
			return sc
		}())
		require.NoError(t, err)
		var delivered []sim.Sample
		lost := 0
		for _, x := range want {
			if x.Lost {
				lost++
			} else if x.Arrival <= t0.Add(2*time.Second) {
				delivered = append(delivered, x)
			}
		}
		outs := byOut[i]
		require.Len(t, outs, len(delivered), config.SensorNames[i])
		for k, x := range delivered {
			s := outs[k]
			require.Equal(t, uint64(x.Seq), s.Number)
			require.Equal(t, x.True, s.True)
			require.Equal(t, sensor.HeaderStamp(x), s.Stamp)
			st, err := stamp.HeaderStamp(s.Msg)
			require.NoError(t, err)
			require.Equal(t, s.Stamp, st, "header.stamp")
			require.GreaterOrEqual(t, s.At, x.Arrival, "published once arrived")
			require.Less(t, s.At.Sub(x.Arrival), time.Millisecond, "within a tick")
		}
		if i == config.Camera {
			require.Positive(t, lost)
			require.EqualValues(t, c.Status().Sensors[i].Lost, outs[len(outs)-1].Number+1-uint64(len(outs)))
		}
	}
	// The lidar's stamps are its wrapped tick counter: they go back once.
	scans := byOut[OutScan]
	wraps := 0
	for k := 1; k < len(scans); k++ {
		if scans[k].Stamp < scans[k-1].Stamp {
			wraps++
			require.Less(t, scans[k].Stamp, stamp.Time(time.Second))
		}
	}
	require.Equal(t, 1, wraps)
	refs := byOut[OutReference]
	pulses := 0
	for _, s := range byOut[OutIMU] {
		if s.Number%uint64(cfg.Reference.Every) == 0 && s.True.Add(cfg.Reference.Latency) <= t0.Add(2*time.Second) {
			pulses++
		}
	}
	require.Len(t, refs, pulses)
	for k, r := range refs {
		imu := byOut[OutIMU][k*cfg.Reference.Every]
		require.Equal(t, imu.True, r.True)
		require.GreaterOrEqual(t, r.At, r.True.Add(cfg.Reference.Latency), "published Latency after the acquisition")
		require.Less(t, r.At, r.True.Add(cfg.Reference.Latency+time.Millisecond))
		require.Equal(t, uint64(k), r.Number)
		require.GreaterOrEqual(t, r.Stamp, r.True)
		require.Less(t, r.Stamp.Sub(r.True), cfg.Reference.Jitter)
		ref, err := stamp.TimeRef(r.Msg)
		require.NoError(t, err)
		require.Equal(t, r.Stamp, ref)
	}
	st := c.Status()
	require.True(t, st.Running)
	require.EqualValues(t, len(got), st.Truths)
	require.Zero(t, st.Restarts)
}

// TestClock: nothing before the clock runs (use_sim_time before /clock);
// a clock that goes back or jumps ahead restarts the sensors, which number
// on and whose device clock goes on; no flood after a jump.
func TestClock(t *testing.T) {
	cfg := config.DefaultConfig()
	cfg.Image = config.Image{Width: 8, Height: 8, Encoding: "mono8"}
	c, err := New(cfg, nil)
	require.NoError(t, err)
	require.Empty(t, run(c, 0, 0, time.Millisecond))
	require.False(t, c.Status().Running)
	first := run(c, t0, time.Second, time.Millisecond)
	require.NotEmpty(t, first)
	lastOf := func(ss []Sample, out int) Sample {
		for k := len(ss) - 1; k >= 0; k-- {
			if ss[k].Output == out {
				return ss[k]
			}
		}
		t.Fatalf("no sample on output %d", out)
		return Sample{}
	}
	firstOf := func(ss []Sample, out int) Sample {
		for _, s := range ss {
			if s.Output == out {
				return s
			}
		}
		t.Fatalf("no sample on output %d", out)
		return Sample{}
	}
	for _, tc := range []struct {
		name string
		at   stamp.Time
	}{{"back", t0.Add(-time.Hour)}, {"ahead", t0.Add(time.Hour)}} {
		before := c.Status()
		prevIMU, prevScan := lastOf(first, OutIMU), lastOf(first, OutScan)
		next := run(c, tc.at, time.Second, time.Millisecond)
		require.Equal(t, before.Restarts+1, c.Status().Restarts, tc.name)
		require.Len(t, c.Notes(), 1, tc.name)
		imu, scan := firstOf(next, OutIMU), firstOf(next, OutScan)
		require.Greater(t, imu.Number, prevIMU.Number, "%s: numbers go on", tc.name)
		require.Less(t, len(next), len(first)+len(first)/5, "%s: no catching up with the jump", tc.name)
		// The device clock goes on with the host's time in between.
		gap := max(tc.at.Sub(prevScan.True), 0)                   // back: the device clock goes on from where it was
		wrap := float64(int64(1)<<32) * float64(time.Microsecond) // the counter's
		want := math.Mod(float64(prevScan.Stamp)+float64(gap)*(1+20e-6), wrap)
		require.InDelta(t, want, float64(scan.Stamp), float64(200*time.Millisecond), tc.name)
		first = next
	}
}

func TestReconfigure(t *testing.T) {
	cfg := config.DefaultConfig()
	cfg.Image = config.Image{Width: 8, Height: 8, Encoding: "mono8"}
	c, err := New(cfg, nil)
	require.NoError(t, err)
	run(c, t0, time.Second, time.Millisecond)
	imuBefore, scanBefore := c.Status().Sensors[config.IMU], c.Status().Sensors[config.Lidar]
	cfg.IMU.JitterScale = 5 * time.Millisecond
	cfg.Camera.Enabled = false
	require.NoError(t, c.Reconfigure(cfg))
	require.EqualValues(t, 1, c.Status().Restarts)
	lastIMU := c.last[config.IMU]
	got := run(c, t0.Add(time.Second+time.Millisecond), time.Second, time.Millisecond)
	firstIMU := true
	for _, s := range got {
		require.NotEqual(t, OutImage, s.Output, "the camera is off")
		if s.Output == OutIMU && firstIMU {
			// The IMU acquires on its own schedule: a new jitter does not
			// move its samples.
			require.Equal(t, lastIMU.True.Add(2500*time.Microsecond), s.True)
			require.Equal(t, imuBefore.Published+imuBefore.Lost, s.Number)
			firstIMU = false
		}
	}
	st := c.Status()
	require.InDelta(t, imuBefore.Published+400, st.Sensors[config.IMU].Published, 10)
	require.InDelta(t, scanBefore.Published+10, st.Sensors[config.Lidar].Published, 1, "the lidar goes on")
	bad := cfg
	bad.IMU.Loss = 1
	require.ErrorIs(t, c.Reconfigure(bad), config.ErrConfig)
	require.Equal(t, cfg, c.Status().Config, "a bad config changes nothing")
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		change func(*config.Config)
		want   string
	}{
		{func(c *config.Config) { c.IMU.Rate = -400 }, "imu.rate_hz is -400, want 0 < rate ≤ 100000"},
		{func(c *config.Config) { c.Lidar.Rate = 0 }, "lidar.rate_hz is 0, want 0 < rate"},
		{func(c *config.Config) { c.Camera.Loss = 1.5 }, "camera.loss is 1.5, want 0 ≤ loss < 1"},
		{func(c *config.Config) { c.IMU.Loss = 1 }, "imu.loss is 1, want 0 ≤ loss < 1"},
		{func(c *config.Config) { c.IMU.BurstProb = 0.1; c.IMU.BurstLen = 0 }, "imu.loss_burst_len is 0, want ≥ 1 (samples) when imu.loss_burst_prob is above 0"},
		{func(c *config.Config) { c.Camera.BatchProb = 0.1; c.Camera.BatchSize = 1 }, "camera.batch_size is 1, want ≥ 2 when camera.batch_prob is above 0"},
		{func(c *config.Config) { c.Lidar.TickPeriod = 0 }, "lidar.tick_period_sec is 0.0, want 0 < period ≤ 1.0"},
		{func(c *config.Config) { c.Lidar.Latency = -time.Millisecond }, "lidar.latency_sec is -0.001, want 0..60.0"},
		{func(c *config.Config) { c.Image.Width = 0 }, "camera.width is 0, want 1..16384 pixels"},
		{func(c *config.Config) { c.Reference.Every = -1 }, "reference.every is -1, want ≥ 0"},
	} {
		c := config.DefaultConfig()
		tc.change(&c)
		p := config.Params{Config: c}
		err := p.Validate()
		require.ErrorIs(t, err, config.ErrConfig, tc.want)
		require.Contains(t, err.Error(), tc.want)
	}
	require.NoError(t, config.DefaultConfig().Validate())
}
