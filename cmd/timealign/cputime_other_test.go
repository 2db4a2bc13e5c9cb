//go:build !unix

package main

import "time"

// cpuTime is unknown here: the benchmarks report no CPU time.
func cpuTime() time.Duration { return 0 }
