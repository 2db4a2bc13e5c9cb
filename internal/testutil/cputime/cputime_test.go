package cputime

import (
	"testing"
	"time"
)

func TestProcessGrows(t *testing.T) {
	c0 := Process()
	if c0 == 0 {
		t.Skip("no CPU time on this system")
	}
	x := uint64(1)
	for deadline := c0 + 20*time.Millisecond; Process() < deadline; {
		for i := range 100000 {
			x = x*6364136223846793005 + uint64(i)
		}
	}
	if x == 0 || Process()-c0 < 20*time.Millisecond {
		t.Fatalf("CPU time did not grow: %v then %v", c0, Process())
	}
}
