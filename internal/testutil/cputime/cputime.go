// Package cputime measures the CPU time a process uses, for benchmarks on
// a shared machine: other work inflates the wall clock far more than the
// CPU time of the code measured.
package cputime

import (
	"testing"
	"time"
)

// Process returns the CPU time (user + system) the process has used so
// far, or 0 where the system does not say.
func Process() time.Duration { return processCPU() }

// Meter reports a benchmark's CPU time per MB of input.
type Meter struct {
	b     *testing.B
	start time.Duration
	bytes int64
}

// Start begins measuring b, whose every op handles n bytes of input.
func Start(b *testing.B, n int64) *Meter {
	return &Meter{b: b, start: Process(), bytes: n}
}

// Stop reports the CPU time of the ops since Start in ms per MB of input
// (cpu-ms/MB): unreported where the system gives no CPU time.
func (m *Meter) Stop() {
	cpu := Process() - m.start
	if cpu <= 0 || m.bytes <= 0 || m.b.N == 0 {
		return
	}
	mb := float64(m.bytes) * float64(m.b.N) / 1e6
	m.b.ReportMetric(float64(cpu)/1e6/mb, "cpu-ms/MB")
}
