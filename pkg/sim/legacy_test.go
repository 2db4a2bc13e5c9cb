package sim

import (
	"math"
	"math/rand/v2"
	"time"

	"github.com/timealign/timealign/pkg/stamp"
)

// legacyGenerate is Generate as it was before the streaming generator
// (commit 9ce9e82), kept as the oracle of the equality tests: it builds
// the whole slice and applies batches afterwards, so it shares none of
// the streaming code's structure. The only edits are the names and its
// own validation (callers validate).
func legacyGenerate(cfg Config) []Sample {
	lat := legacyRNG(cfg.Seed, rngLatency)
	out := legacyRNG(cfg.Seed, rngOutlier)
	loss := legacyRNG(cfg.Seed, rngLoss)
	batch := legacyRNG(cfg.Seed, rngBatch)
	shape := cfg.Latency.Shape
	if shape == 0 {
		shape = 1.5
	}

	samples := make([]Sample, cfg.Count)
	var (
		elapsed  float64 // true ns since Start, of the current sample
		device   = float64(cfg.Clock.Offset)
		index    uint64
		boot     int
		inBurst  bool
		lastRecv = math.Inf(-1) // true ns since Start of the last delivery
	)
	period := float64(cfg.Period)
	for i := range samples {
		rate := 1 + (cfg.Clock.SkewPPM+cfg.Clock.DriftPPMPerHour*elapsed/float64(time.Hour))*1e-6
		if i > 0 {
			elapsed += period / rate
			device += period
			index++
		}
		for boot < len(cfg.Clock.Reboots) && elapsed >= float64(cfg.Clock.Reboots[boot]) {
			device = (elapsed - float64(cfg.Clock.Reboots[boot])) * rate
			index = 0
			boot++
		}
		s := &samples[i]
		s.Seq = i
		s.Boot = boot
		s.Index = wrap(index, cfg.IndexBits)
		s.Device = time.Duration(math.Round(device))
		s.Ticks = wrap(uint64(device/float64(cfg.Clock.TickPeriod)), cfg.Clock.TickBits)
		sendDev := device + float64(cfg.Clock.SendDelay)*rate
		s.SendTicks = wrap(uint64(sendDev/float64(cfg.Clock.TickPeriod)), cfg.Clock.TickBits)
		s.True = cfg.Start.Add(time.Duration(math.Round(elapsed)) + hostOffset(cfg.HostSteps, elapsed))

		d := float64(cfg.Latency.Base)
		u := lat.float()
		switch cfg.Latency.Kind {
		case Uniform:
			d += u * float64(cfg.Latency.Scale)
		case Exponential:
			d += -math.Log1p(-u) * float64(cfg.Latency.Scale)
		case Pareto:
			d += (math.Pow(1-u, -1/shape) - 1) * float64(cfg.Latency.Scale)
		}
		if o := out.float(); o < cfg.Latency.OutlierProb {
			d += (1 - out.float()) * float64(cfg.Latency.OutlierMax)
		} else {
			out.float()
		}
		if d < float64(cfg.Clock.SendDelay) {
			d = float64(cfg.Clock.SendDelay)
		}

		if inBurst {
			s.Lost = true
			if loss.float() < 1/cfg.Loss.BurstLen {
				inBurst = false
			}
		} else {
			s.Lost = loss.float() < cfg.Loss.Prob
			if cfg.Loss.BurstProb > 0 && loss.float() < cfg.Loss.BurstProb {
				inBurst = true
			}
		}
		if s.Lost {
			continue
		}
		recv := elapsed + d
		if !cfg.Latency.Reorder && recv < lastRecv {
			recv = lastRecv
		}
		lastRecv = max(lastRecv, recv)
		s.Arrival = cfg.Start.Add(time.Duration(math.Round(recv)))
		s.Receive = s.Arrival.Add(hostOffset(cfg.HostSteps, recv))
	}
	if cfg.Batch.Prob > 0 {
		legacyApplyBatches(samples, cfg.Batch, batch, cfg.Start, cfg.HostSteps)
	}
	return samples
}

type legacyRand struct{ r *rand.Rand }

func legacyRNG(seed uint64, concern uint64) legacyRand {
	return legacyRand{rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15*concern))}
}

func (g legacyRand) float() float64 { return float64(g.r.Uint64()>>11) * 0x1p-53 }

func legacyApplyBatches(samples []Sample, b Batch, g legacyRand, start stamp.Time, steps []Step) {
	delivered := make([]int, 0, len(samples))
	for i := range samples {
		if !samples[i].Lost {
			delivered = append(delivered, i)
		}
	}
	for k := 0; k < len(delivered); k++ {
		if g.float() >= b.Prob {
			continue
		}
		end := min(k+b.Size, len(delivered))
		latest := samples[delivered[k]].Arrival
		for _, j := range delivered[k:end] {
			latest = max(latest, samples[j].Arrival)
		}
		recv := latest.Add(hostOffset(steps, float64(latest.Sub(start))))
		for _, j := range delivered[k:end] {
			samples[j].Arrival = latest
			samples[j].Receive = recv
		}
		k = end - 1
	}
}
