package nodekit

import (
	"sync/atomic"
	"time"
)

// StepWallClock makes the wall clock that system Clocks read run offset
// from the real one by what offset holds (the test changes it: a step),
// until the test ends.
func StepWallClock(cleanup func(func()), offset *atomic.Int64) {
	prev := wallOffset
	wallOffset = func() time.Duration { return time.Duration(offset.Load()) }
	cleanup(func() { wallOffset = prev })
}

// SeqGapsFollowed is how many publishers g follows.
func SeqGapsFollowed(g *SeqGaps) int { return len(g.last) }

// WaitsFollowed is how many publishers w follows.
func WaitsFollowed(w *Waits) int { return len(w.pubs) }
