package nodekit

import (
	"time"

	"github.com/timealign/timealign/pkg/stamp"
)

// Throttle limits a repeated log line to one per Every for each key (an
// input, say): a publisher of the wrong type at 1 kHz must not write a
// thousand lines a second to the console and /rosout. The counters in the
// node's status and diagnostics still count every event. One goroutine
// owns it.
type Throttle struct {
	Every time.Duration
	keys  map[string]*throttled
}

type throttled struct {
	last       stamp.Time
	suppressed int
}

// Allow reports whether the line for key may be logged at now, and how
// many were suppressed since the last one logged.
func (t *Throttle) Allow(key string, now stamp.Time) (ok bool, suppressed int) {
	if t.keys == nil {
		t.keys = map[string]*throttled{}
	}
	k := t.keys[key]
	if k == nil {
		t.keys[key] = &throttled{last: now}
		return true, 0
	}
	if now.Sub(k.last) < t.Every {
		k.suppressed++
		return false, 0
	}
	n := k.suppressed
	k.last, k.suppressed = now, 0
	return true, n
}
