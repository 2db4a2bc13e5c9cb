//go:build !unix

package fuzzcheck

import "time"

// processCPU falls back to the wall clock where getrusage is missing.
func processCPU() time.Duration { return wallClock() }
