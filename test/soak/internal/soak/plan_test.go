package soak

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func planConfig(seed uint64, d time.Duration) PlanConfig {
	c := DefaultPlanConfig()
	c.Seed, c.Duration = seed, d
	c.Nodes = []string{"imu_stamps", "scan_clock", "sync"}
	return c
}

// TestPlanTwoMinutes: the CI's soak gets one fault of each default kind,
// each in its slot with its recovery room, and the same seed gives the
// same schedule while another seed gives another.
func TestPlanTwoMinutes(t *testing.T) {
	c := planConfig(1, 2*time.Minute)
	faults, err := Plan(c)
	require.NoError(t, err)
	require.Len(t, faults, 5) // (120 − 20) / 20
	seen := map[Kind]int{}
	for i, f := range faults {
		seen[f.Kind]++
		slot := c.WarmUp + time.Duration(i)*c.Every
		require.GreaterOrEqual(t, f.At, slot, "%v", f)
		require.LessOrEqual(t, f.End()+c.Room, slot+c.Every+time.Millisecond, "%v: room to recover in its slot", f)
		require.Equal(t, f.At, f.At.Round(time.Millisecond))
		switch f.Kind {
		case TimeJump:
			require.True(t, f.Jump >= c.JumpMin && f.Jump <= c.JumpMax, "%v", f)
		case IMUFlood, ImageFlood:
			require.Equal(t, c.FloodFor, f.For)
		case NodeTerm:
			require.Contains(t, c.Nodes, f.Node)
		default:
			require.Zero(t, f.For)
		}
	}
	for _, k := range c.Kinds {
		require.Equal(t, 1, seen[k], "%v once", k)
	}
	again, err := Plan(c)
	require.NoError(t, err)
	require.Equal(t, faults, again, "reproducible")
	other, err := Plan(planConfig(2, 2*time.Minute))
	require.NoError(t, err)
	require.NotEqual(t, faults, other)
}

// TestPlanRounds: over an hour every kind comes in every round of
// len(Kinds) faults, every node in every round of SIGTERMs, clock steps
// take either sign, and the moments vary within the slots.
func TestPlanRounds(t *testing.T) {
	c := planConfig(7, time.Hour)
	c.Kinds = Kinds()
	faults, err := Plan(c)
	require.NoError(t, err)
	require.Len(t, faults, int((time.Hour-c.WarmUp)/c.Every))
	n := len(c.Kinds)
	var stopped []string
	for _, f := range faults {
		if f.Kind == NodeTerm {
			stopped = append(stopped, f.Node)
		}
	}
	require.GreaterOrEqual(t, len(stopped), 2*len(c.Nodes))
	for r := 0; r+len(c.Nodes) <= len(stopped); r += len(c.Nodes) {
		require.ElementsMatch(t, c.Nodes, stopped[r:r+len(c.Nodes)], "every node stopped once in each round")
	}
	signs := map[bool]bool{}
	offsets := map[time.Duration]bool{}
	for r := 0; r+n <= len(faults); r += n {
		kinds := map[Kind]bool{}
		for _, f := range faults[r : r+n] {
			kinds[f.Kind] = true
			if f.Kind == ClockStep {
				require.Equal(t, c.Step, max(f.Jump, -f.Jump))
				signs[f.Jump > 0] = true
			}
		}
		require.Len(t, kinds, n, "round at fault %d", r)
	}
	for i, f := range faults {
		offsets[f.At-c.WarmUp-time.Duration(i)*c.Every] = true
	}
	require.Len(t, signs, 2)
	require.Greater(t, len(offsets), len(faults)/2)
}

func TestPlanValidate(t *testing.T) {
	for name, change := range map[string]func(*PlanConfig){
		"no duration":        func(c *PlanConfig) { c.Duration = 0 },
		"negative warm-up":   func(c *PlanConfig) { c.WarmUp = -time.Second },
		"no slot":            func(c *PlanConfig) { c.Every = 0 },
		"room fills slot":    func(c *PlanConfig) { c.Room = c.Every - c.FloodFor },
		"no kinds":           func(c *PlanConfig) { c.Kinds = nil },
		"bad kind":           func(c *PlanConfig) { c.Kinds = []Kind{numKinds} },
		"jumps reversed":     func(c *PlanConfig) { c.JumpMin, c.JumpMax = 5*time.Second, time.Second },
		"no jump":            func(c *PlanConfig) { c.JumpMin = 0 },
		"no step":            func(c *PlanConfig) { c.Step = 0 },
		"term without nodes": func(c *PlanConfig) { c.Nodes = nil },
	} {
		c := planConfig(1, time.Minute)
		change(&c)
		_, err := Plan(c)
		require.Error(t, err, name)
	}
	// A soak shorter than warm-up and one slot has no fault, and that is fine.
	faults, err := Plan(planConfig(1, 30*time.Second))
	require.NoError(t, err)
	require.Empty(t, faults)
}

func TestParseKinds(t *testing.T) {
	ks, err := ParseKinds("imu_flood, time_jump")
	require.NoError(t, err)
	require.Equal(t, []Kind{IMUFlood, TimeJump}, ks)
	ks, err = ParseKinds("all")
	require.NoError(t, err)
	require.Equal(t, Kinds(), ks)
	_, err = ParseKinds("time_jump,bogus")
	require.ErrorContains(t, err, `"bogus"`)
	_, err = ParseKinds("node_term,node_term")
	require.ErrorContains(t, err, "twice")
	for _, k := range Kinds() {
		back, err := ParseKinds(k.String())
		require.NoError(t, err)
		require.Equal(t, []Kind{k}, back)
	}
	require.Equal(t, "Kind(9)", Kind(9).String())
}

func TestFaultString(t *testing.T) {
	require.Equal(t, "time_jump at 31.5s: /clock back 7.2s", Fault{Kind: TimeJump, At: 31500 * time.Millisecond, Jump: 7200 * time.Millisecond}.String())
	require.Equal(t, "clock_step at 1m0s: host clock -5s", Fault{Kind: ClockStep, At: time.Minute, Jump: -5 * time.Second}.String())
	require.Equal(t, "node_term at 40s: SIGTERM to sync", Fault{Kind: NodeTerm, At: 40 * time.Second, Node: "sync"}.String())
	require.Equal(t, "imu_flood at 50s for 3s", Fault{Kind: IMUFlood, At: 50 * time.Second, For: 3 * time.Second}.String())
}
