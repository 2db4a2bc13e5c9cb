package sim

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Preset is a named, typical sensor timing used by the demo, the CLI's
// simulate command and the tests.
type Preset struct {
	Name    string
	Summary string
	Config  Config
}

// Presets returns the built-in sensor timings, in a fixed order.
func Presets() []Preset {
	imu := DefaultConfig()

	camera := DefaultConfig()
	camera.Period = 33_333_333 * time.Nanosecond
	camera.Latency = Latency{Base: 15 * time.Millisecond, Kind: Exponential, Scale: 3 * time.Millisecond}
	camera.Loss = Loss{Prob: 0.01}
	camera.Seed = 2

	lidar := DefaultConfig()
	lidar.Period = 100 * time.Millisecond
	lidar.Clock = Clock{Offset: 1234 * time.Second, SkewPPM: 20, TickPeriod: time.Microsecond, TickBits: 32}
	lidar.Latency = Latency{Base: time.Millisecond, Kind: Exponential, Scale: 500 * time.Microsecond}
	lidar.Seed = 3

	autopilot := DefaultConfig()
	autopilot.Period = 20 * time.Millisecond
	autopilot.Clock = Clock{Offset: 93 * time.Second, SkewPPM: -35, TickPeriod: time.Microsecond}
	autopilot.Latency = Latency{Base: 2 * time.Millisecond, Kind: Exponential, Scale: 3 * time.Millisecond,
		OutlierProb: 0.005, OutlierMax: 80 * time.Millisecond}
	autopilot.Loss = Loss{Prob: 0.002, BurstProb: 0.001, BurstLen: 10}
	autopilot.Seed = 4

	bursty := DefaultConfig()
	bursty.Period = 5 * time.Millisecond
	bursty.Latency = Latency{Base: 3 * time.Millisecond, Kind: Uniform, Scale: time.Millisecond}
	bursty.Batch = Batch{Prob: 0.05, Size: 4}
	bursty.Seed = 5

	return []Preset{
		{"imu", "100 Hz IMU stamped on arrival: 5 ms latency + uniform 0–2 ms jitter", imu},
		{"camera", "30 Hz camera: 15 ms latency + exponential 3 ms jitter, 1 % loss", camera},
		{"lidar", "10 Hz lidar with a 32-bit 1 µs tick clock, 20 ppm fast; 1 ms + exponential 0.5 ms", lidar},
		{"autopilot", "50 Hz autopilot boot clock (µs since boot), −35 ppm; exponential latency, outliers, bursts of loss", autopilot},
		{"bursty", "200 Hz driver that sometimes delivers 4 samples at once", bursty},
	}
}

// LookupPreset returns the preset named name.
func LookupPreset(name string) (Preset, error) {
	ps := Presets()
	i := slices.IndexFunc(ps, func(p Preset) bool { return p.Name == name })
	if i < 0 {
		names := make([]string, len(ps))
		for j, p := range ps {
			names[j] = p.Name
		}
		return Preset{}, fmt.Errorf("sim: unknown preset %q (want one of %s)", name, strings.Join(names, ", "))
	}
	return ps[i], nil
}
