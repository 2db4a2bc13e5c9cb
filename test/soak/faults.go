//go:build ros2 && timealign_interfaces

package main

import (
	"context"
	"fmt"
	"syscall"
	"time"

	"github.com/timealign/timealign/test/soak/internal/soak"
)

// injector injects the faults of the schedule.
type injector struct {
	c config
	l *launch
	r *ros
	s *sampler
	// stepped is how far the host clock has been stepped, undone at the
	// end.
	stepped time.Duration
}

// watchExit is how long the soak waits for a signalled node to end
// before it sends SIGKILL.
const watchExit = 5 * time.Second

// inject injects f now and returns it as injected.
func (in *injector) inject(ctx context.Context, f soak.Fault) soak.Injected {
	x := soak.Injected{Fault: f, Start: in.s.since()}
	in.s.begin(f.Kind.String())
	defer in.s.end(f.Kind.String())
	switch f.Kind {
	case soak.TimeJump:
		in.r.clock.jumpBack(f.Jump)
		x.Note = "the /clock the soak publishes jumped back, as at a loop of ros2 bag play --loop --clock"
	case soak.PublisherKill:
		x.Node = "sensor_sim"
		in.signal(&x, syscall.SIGKILL)
	case soak.NodeTerm:
		in.signal(&x, syscall.SIGTERM)
	case soak.IMUFlood, soak.ImageFlood:
		fl := in.r.imuFlood
		if f.Kind == soak.ImageFlood {
			fl = in.r.imgFlood
		}
		var err error
		if x.Sent, err = fl.run(ctx, f.For); err != nil {
			x.Note = "publishing stopped: " + err.Error()
		}
	case soak.ClockStep:
		if err := stepHostClock(f.Jump); err != nil {
			x.Skipped = "skipped: " + err.Error()
		} else {
			in.stepped += f.Jump
		}
	}
	x.End = x.Start + f.For
	if f.For > 0 {
		x.End = in.s.since()
	}
	return x
}

// signal sends sig to the process of node x.Node and watches it end: for
// SIGTERM, the exit status launch reports; a process still there after
// watchExit gets SIGKILL.
func (in *injector) signal(x *soak.Injected, sig syscall.Signal) {
	procs, err := in.l.nodes()
	p, ok := procs[x.Node]
	if err != nil || !ok {
		x.Skipped = fmt.Sprintf("skipped: %s is not running", x.Node)
		return
	}
	x.PID = p.PID
	t0 := time.Now()
	if err := syscall.Kill(p.PID, sig); err != nil {
		x.Skipped = fmt.Sprintf("skipped: %v", err)
		return
	}
	for !soak.Exited(p.PID) {
		if time.Since(t0) > watchExit {
			_ = syscall.Kill(p.PID, syscall.SIGKILL)
			x.Note = fmt.Sprintf("still running %v after %v: SIGKILL", watchExit, sig)
			return
		}
		time.Sleep(time.Millisecond)
	}
	x.Exit = soak.Exit{Seen: true, After: time.Since(t0)}
	x.Exit.Code, x.Exit.CodeKnown = in.l.exitCode(p.PID, 3*time.Second)
}

// undoSteps steps the host clock back by what the soak stepped it.
func (in *injector) undoSteps() {
	if in.stepped != 0 {
		if err := stepHostClock(-in.stepped); err == nil {
			in.stepped = 0
		}
	}
}

// stepHostClock steps the host clock by d (CAP_SYS_TIME; only with
// -host-clock-steps: runSoak leaves clock_step out of the schedule
// otherwise).
func stepHostClock(d time.Duration) error {
	tv := syscall.NsecToTimeval(time.Now().Add(d).UnixNano())
	return syscall.Settimeofday(&tv)
}
