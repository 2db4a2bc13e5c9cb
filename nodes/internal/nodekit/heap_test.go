package nodekit_test

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/timealign/timealign/nodes/internal/nodekit"
)

const mib = 1 << 20

// heapStep is one Check: the goal and what the heap holds, and whether the
// memory is to be returned.
type heapStep struct {
	goal, held uint64
	want       bool
}

func TestHeapReturn(t *testing.T) {
	steady := func(n int) []heapStep {
		var s []heapStep
		for i := range n { // a heap between its live size and its goal
			s = append(s, heapStep{8 * mib, uint64(4+i%5) * mib, false})
		}
		return s
	}
	cases := []struct {
		name  string
		steps []heapStep // 10 s apart
	}{
		{"steady: never", steady(100)},
		{"goal and holdings at 2× the rest plus slack: not yet", append(steady(5), heapStep{20 * mib, 20 * mib, false})},
		{"after a flood: the leftovers returned once", append(append(steady(10),
			heapStep{30 * mib, 31 * mib, true}, // during it (its backlog is live: the collection keeps it)
			heapStep{30 * mib, 30 * mib, true}, // after it, not collected since: returned
			heapStep{8 * mib, 5 * mib, false}), // collected
			steady(20)...)},
		{"no reading (goal 0): never", []heapStep{{0, 0, false}, {0, 100 * mib, false}}},
	}
	// A lasting rise of the live heap: returned until the goal at rest
	// (the lowest of the last 5 minutes) has risen too.
	rise := steady(10)
	for i := range 40 {
		rise = append(rise, heapStep{40 * mib, 38 * mib, i < 30})
	}
	cases = append(cases, struct {
		name  string
		steps []heapStep
	}{"a lasting rise: quiet again after Span", rise})

	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := nodekit.DefaultHeapReturn()
			at := time.Unix(1000, 0)
			for i, s := range c.steps {
				assert.Equal(t, s.want, h.Check(at, s.goal, s.held), "step %d: goal %d MiB, held %d MiB", i, s.goal/mib, s.held/mib)
				at = at.Add(10 * time.Second)
			}
		})
	}
}

// TestHeapReading reads this process's heap: a burst's garbage shows in what
// the heap holds until it is returned.
func TestHeapReading(t *testing.T) {
	goal, held, samples := nodekit.HeapReading(nil)
	require.Positive(t, goal, "the heap's goal")
	require.Positive(t, held, "what the heap holds")
	burst := make([][]byte, 64)
	for i := range burst {
		burst[i] = make([]byte, 1<<20)
	}
	_, during, samples := nodekit.HeapReading(samples)
	assert.GreaterOrEqual(t, during, uint64(64<<20), "64 MiB allocated, held")
	runtime.KeepAlive(burst)
	burst = nil
	debug.FreeOSMemory()
	_, after, _ := nodekit.HeapReading(samples)
	assert.Less(t, after, during-32<<20, "returned after FreeOSMemory")
}
