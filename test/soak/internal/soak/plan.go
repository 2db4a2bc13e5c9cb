package soak

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"
)

// Kind is a fault the soak injects.
type Kind int

const (
	// TimeJump: /clock, which the soak publishes (the nodes run with
	// use_sim_time), goes back by a few seconds, as it does at each loop
	// of `ros2 bag play --loop --clock`.
	TimeJump Kind = iota
	// PublisherKill: the publisher of every input (sensor_sim) is killed
	// with SIGKILL; launch starts it again (respawn).
	PublisherKill
	// NodeTerm: a node is sent SIGTERM, must exit with status 0 within a
	// second, and launch starts it again.
	NodeTerm
	// IMUFlood: a second publisher floods the estimator's input with Imu
	// messages, far beyond the node's input rate.
	IMUFlood
	// ImageFlood: a second publisher sends large images to the
	// synchronizer's camera input.
	ImageFlood
	// ClockStep: the host clock is stepped by a few seconds, either way:
	// only where the soak is allowed to and able to (never by default).
	ClockStep
	numKinds
)

var kindNames = [numKinds]string{"time_jump", "publisher_kill", "node_term", "imu_flood", "image_flood", "clock_step"}

func (k Kind) String() string {
	if k >= 0 && k < numKinds {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Kinds lists every kind of fault, in order.
func Kinds() []Kind {
	ks := make([]Kind, numKinds)
	for i := range ks {
		ks[i] = Kind(i)
	}
	return ks
}

// ParseKinds reads a comma-separated list of kind names ("all": every
// kind), without repeats.
func ParseKinds(s string) ([]Kind, error) {
	if strings.TrimSpace(s) == "all" {
		return Kinds(), nil
	}
	var ks []Kind
	for _, name := range strings.Split(s, ",") {
		name = strings.TrimSpace(name)
		i := slices.Index(kindNames[:], name)
		if i < 0 {
			return nil, fmt.Errorf("soak: unknown fault %q, want some of %s or all", name, strings.Join(kindNames[:], ","))
		}
		if slices.Contains(ks, Kind(i)) {
			return nil, fmt.Errorf("soak: fault %s named twice", name)
		}
		ks = append(ks, Kind(i))
	}
	return ks, nil
}

// Fault is one fault of a schedule.
type Fault struct {
	Kind Kind
	// At is when the fault starts, from the start of the soak.
	At time.Duration
	// For is how long the fault lasts (the floods); 0 for one that is an
	// instant (a signal, a jump).
	For time.Duration
	// Jump is how far /clock goes back (TimeJump, > 0) or how far the host
	// clock steps (ClockStep, either sign).
	Jump time.Duration
	// Node is the node a NodeTerm stops.
	Node string
}

// End is when the fault is over.
func (f Fault) End() time.Duration { return f.At + f.For }

func (f Fault) String() string {
	s := fmt.Sprintf("%s at %v", f.Kind, f.At)
	switch f.Kind {
	case TimeJump:
		s += fmt.Sprintf(": /clock back %v", f.Jump)
	case ClockStep:
		s += fmt.Sprintf(": host clock %+v", f.Jump)
	case NodeTerm:
		s += ": SIGTERM to " + f.Node
	case PublisherKill:
		s += ": SIGKILL to the publisher"
	case IMUFlood, ImageFlood:
		s += fmt.Sprintf(" for %v", f.For)
	}
	return s
}

// PlanConfig shapes a fault schedule.
type PlanConfig struct {
	// Seed makes the schedule: the same configuration and seed give the
	// same faults.
	Seed uint64
	// Duration is the soak's length.
	Duration time.Duration
	// WarmUp is the time before the first fault. It defaults to 20 s.
	WarmUp time.Duration
	// Every is the length of the slot each fault gets: one fault per slot
	// after the warm-up, at a random moment of it. It defaults to 20 s.
	Every time.Duration
	// Room is the quiet time each slot keeps after its fault ends, for
	// the pipeline to recover. It defaults to 14 s.
	Room time.Duration
	// Kinds are the faults to inject, taken in a random order that uses
	// each once before any repeats.
	Kinds []Kind
	// Nodes are the nodes a NodeTerm stops, in rounds like Kinds.
	Nodes []string
	// FloodFor is how long a flood lasts. It defaults to 3 s.
	FloodFor time.Duration
	// JumpMin and JumpMax bound how far /clock goes back (uniform). They
	// default to 3 s and 10 s.
	JumpMin, JumpMax time.Duration
	// Step is the size of a host clock step (either sign). It defaults to
	// 5 s.
	Step time.Duration
}

// DefaultPlanConfig returns the defaults, every kind of fault but
// ClockStep, and no node to SIGTERM (set Nodes).
func DefaultPlanConfig() PlanConfig {
	return PlanConfig{
		WarmUp: 20 * time.Second, Every: 20 * time.Second, Room: 14 * time.Second,
		Kinds:    []Kind{TimeJump, PublisherKill, NodeTerm, IMUFlood, ImageFlood},
		FloodFor: 3 * time.Second, JumpMin: 3 * time.Second, JumpMax: 10 * time.Second, Step: 5 * time.Second,
	}
}

// Validate names the first bad field.
func (c PlanConfig) Validate() error {
	switch {
	case c.Duration <= 0:
		return fmt.Errorf("soak: duration %v, want > 0", c.Duration)
	case c.WarmUp < 0:
		return fmt.Errorf("soak: warm-up %v, want ≥ 0", c.WarmUp)
	case c.Every <= 0 || c.Room < 0 || c.FloodFor < 0:
		return fmt.Errorf("soak: slot %v, room %v, flood %v: want a slot > 0 and the others ≥ 0", c.Every, c.Room, c.FloodFor)
	case c.Room+c.FloodFor >= c.Every:
		return fmt.Errorf("soak: a slot of %v holds no flood of %v and recovery room of %v", c.Every, c.FloodFor, c.Room)
	case len(c.Kinds) == 0:
		return errors.New("soak: no kind of fault")
	case c.JumpMin <= 0 || c.JumpMax < c.JumpMin:
		return fmt.Errorf("soak: jumps of %v..%v, want 0 < min ≤ max", c.JumpMin, c.JumpMax)
	case c.Step <= 0:
		return fmt.Errorf("soak: clock step %v, want > 0", c.Step)
	}
	for _, k := range c.Kinds {
		if k < 0 || k >= numKinds {
			return fmt.Errorf("soak: %v is no kind of fault", k)
		}
		if k == NodeTerm && len(c.Nodes) == 0 {
			return errors.New("soak: node_term with no node to stop")
		}
	}
	return nil
}

// Plan returns the fault schedule of c: after the warm-up, one fault per
// slot of c.Every (as many whole slots as the duration holds), starting
// at a uniformly random moment of the slot's first c.Every − c.Room −
// its own length, rounded to the millisecond. The kinds come in rounds,
// each a random order of c.Kinds, and so do the nodes NodeTerm stops.
func Plan(c PlanConfig) ([]Fault, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(c.Seed, 0x50a4))
	uniform := func(lo, hi time.Duration) time.Duration { // [lo, hi], ms
		return (lo + time.Duration(rng.Float64()*float64(hi-lo))).Round(time.Millisecond)
	}
	var faults []Fault
	kinds, nodes := deck[Kind]{all: c.Kinds, rng: rng}, deck[string]{all: c.Nodes, rng: rng}
	for slot := c.WarmUp; slot+c.Every <= c.Duration; slot += c.Every {
		f := Fault{Kind: kinds.next()}
		switch f.Kind {
		case IMUFlood, ImageFlood:
			f.For = c.FloodFor
		case TimeJump:
			f.Jump = uniform(c.JumpMin, c.JumpMax)
		case ClockStep:
			f.Jump = c.Step
			if rng.IntN(2) == 0 {
				f.Jump = -c.Step
			}
		case NodeTerm:
			f.Node = nodes.next()
		}
		f.At = slot + uniform(0, c.Every-c.Room-f.For)
		faults = append(faults, f)
	}
	return faults, nil
}

// deck deals its cards in rounds, each a random order of all of them.
type deck[T any] struct {
	all   []T
	rng   *rand.Rand
	round []T
}

func (d *deck[T]) next() T {
	if len(d.round) == 0 {
		d.round = slices.Clone(d.all)
		d.rng.Shuffle(len(d.round), func(i, j int) { d.round[i], d.round[j] = d.round[j], d.round[i] })
	}
	x := d.round[0]
	d.round = d.round[1:]
	return x
}
