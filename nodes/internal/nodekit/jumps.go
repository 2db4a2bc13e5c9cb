package nodekit

import (
	"fmt"
	"time"

	"github.com/timealign/timealign/pkg/qos"
	"github.com/timealign/timealign/pkg/stamp"
)

// jumpWarnFor is how long /diagnostics stays WARN after a time jump.
const jumpWarnFor = 5 * time.Second

// jumps is what the runtime knows of the time jumps it detected.
type jumps struct {
	count     uint64        // jumps counted (time_jumps)
	clockSeen uint64        // the clock's /clock jumps handled
	last      TimeJump      // the last one
	lastReset string        // what the core reset for it
	at        time.Duration // Clock.Elapsed at the last one
}

// checkClock handles a jump of the node's clock before a message of
// epoch (the clock's jumps when it was received): /clock gone back
// (use_sim_time) once the first message received after it comes (those
// received before, stamped on the old timeline, are handled before the
// core is reset), or the host clock stepped.
func (n *Node) checkClock(epoch uint64) {
	if epoch > n.jumps.clockSeen {
		n.jumps.clockSeen = epoch
		_, back := n.Clock.Jumps()
		n.timeJumped(TimeJump{Input: -1, Back: back, What: "/clock"})
	}
	n.checkStep()
}

// checkClockIdle handles a jump of /clock at a tick or report when no
// message waits (the core must not wait for the next message to learn of
// it, but a message received before it must still come first), and a
// step of the host clock.
func (n *Node) checkClockIdle() {
	if k, _ := n.Clock.Jumps(); k > n.jumps.clockSeen {
		if msgs, _ := n.inbox.Len(); msgs == 0 {
			n.checkClock(k)
			return
		}
	}
	n.checkStep()
}

// checkStep handles a step of the host clock (system time).
func (n *Node) checkStep() {
	if step, ok := n.Clock.Stepped(); ok {
		n.timeJumped(TimeJump{Input: -1, Back: -step, What: "the host clock"})
	}
}

// checkStamps watches the header stamps of input i for a jump back (two
// messages in a row behind the stream's latest by more than the
// threshold); a message without a readable stamp is left to the core.
func (n *Node) checkStamps(i int, msg []byte) {
	in := &n.in[i]
	if in.DeviceStamps {
		return
	}
	st, err := stamp.HeaderStamp(msg)
	if err != nil {
		return
	}
	if j, ok := in.jump.Observe(st); ok {
		n.timeJumped(TimeJump{Input: i, Back: j.Back, What: "header stamps of " + in.name})
	}
}

// timeJumped resets the core for jump j, then counts and logs it. A jump
// seen again within a second by another witness (/clock and the stamps of
// a bag played again, each input's stamps) resets the core again, for what
// came between, but is counted and logged once.
func (n *Node) timeJumped(j TimeJump) {
	reset := "nothing to reset"
	if c, ok := n.core.(TimeJumper); ok && n.phase == running {
		reset = c.TimeJumped(j)
	}
	for i := range n.in { // every stream starts a new timeline
		if i != j.Input {
			n.in[i].jump.Reset()
		}
	}
	now := n.Clock.Elapsed()
	th := n.rt.TimeJumpThreshold
	if n.jumps.count > 0 && now-n.jumps.at < time.Second && j.Back > 0 && n.jumps.last.Back > 0 &&
		j.Back-n.jumps.last.Back < th && n.jumps.last.Back-j.Back < th {
		return // the same jump, seen again
	}
	n.jumps.count++
	n.jumps.last, n.jumps.lastReset, n.jumps.at = j, reset, now
	n.limited(LogWarn, "time jump", describeJump(j), ": ", reset)
}

// describeJump says what jumped and how far.
func describeJump(j TimeJump) string {
	switch {
	case j.What == "the host clock" && j.Back < 0:
		return fmt.Sprintf("the host clock stepped forward %.1f s", (-j.Back).Seconds())
	case j.What == "the host clock":
		return fmt.Sprintf("the host clock stepped back %.1f s", j.Back.Seconds())
	default:
		return fmt.Sprintf("time jumped back %.1f s (%s)", j.Back.Seconds(), j.What)
	}
}

// reportJumps adds the jump count to the diagnostic, WARN for a while
// after a jump.
func (n *Node) reportJumps(d *Diagnostic) {
	d.Add("time_jumps", n.jumps.count)
	if n.jumps.count > 0 && n.Clock.Elapsed()-n.jumps.at < jumpWarnFor {
		d.Raise(Warn, fmt.Sprintf("%s in the last %v (%s)", describeJump(n.jumps.last), jumpWarnFor, n.jumps.lastReset))
	}
}

// reportPublishers adds each input's matched publishers (the node's own
// side of the match) to the diagnostic and logs when an input's last
// publisher goes away (it stopped or restarted) and when one comes back.
func (n *Node) reportPublishers(d *Diagnostic) {
	for i := range n.in {
		in := &n.in[i]
		if in.sub == nil {
			continue
		}
		n.reportLost(d, in)
		n.reportWaits(d, in)
		k := in.sub.Publishers()
		if k < 0 {
			continue
		}
		d.Add(in.name+".publishers", k)
		switch {
		case k == 0 && in.publishers > 0:
			n.log(LogWarn, in.name, ": no publisher any more (it stopped or is restarting): waiting for one")
		case k > 0 && in.publishers == 0 && in.hadPublisher:
			n.log(LogInfo, in.name, ": a publisher is back")
		}
		if k > 0 {
			in.hadPublisher = true
		}
		in.publishers = k
	}
}

// backlogWait is how long a message may wait in the middleware before the
// node takes it, beyond its publisher's least transit, before the node
// says it falls behind (see [Waits]): well above a reliable repair's
// round trip, well below a second of a stream the node cannot keep up
// with.
const backlogWait = 500 * time.Millisecond

// reportWaits adds how long in's messages waited in the middleware since
// the last report (where the middleware gives send times) to the
// diagnostic; past backlogWait the node falls behind where the inbox
// cannot see it (its CPU short, a flood it takes no faster than it
// handles): logged once per report, and a WARN naming the backlog.
func (n *Node) reportWaits(d *Diagnostic, in *input) {
	n.reportFullTakes(d, in)
	w, ok := in.sub.Waited()
	if !ok {
		return
	}
	d.Add(in.name+".middleware_wait_sec", fmt.Sprintf("%.3f", w.Seconds()))
	if w <= backlogWait {
		return
	}
	queue := "its reliable keep-all queue holds them back from the publisher"
	if in.QoS.History != qos.KeepAll {
		queue = fmt.Sprintf("what its keep-last queue (qos.in.depth %d) cannot hold is dropped there, unseen by the node", in.QoS.Depth)
	}
	n.log(LogWarn, fmt.Sprintf("%s: messages waited up to %.2f s in the middleware before the node took them: the node falls behind (short of CPU, or a flood); %s",
		in.name, w.Seconds(), queue))
	d.Raise(Warn, fmt.Sprintf("backlog: input %s: messages wait %.2f s in the middleware", in.name, w.Seconds()))
}

// reportFullTakes adds the takes of in that found the middleware's queue
// at its limit to the diagnostic; when most of a report's takes did (at
// least fullTakesWarn), the node is behind where its inbox cannot see it
// (it takes no faster than it handles) and a keep-last queue drops the
// oldest unseen: logged once per report, and a WARN naming the backlog.
func (n *Node) reportFullTakes(d *Diagnostic, in *input) {
	full, all := in.sub.Takes()
	if all < 0 {
		return
	}
	in.fullTakes += full
	d.Add(in.name+".middleware_queue_full", in.fullTakes)
	if full < fullTakesWarn || 2*full <= all {
		return
	}
	what := fmt.Sprintf("the keep-last queue there (qos.in.depth %d) drops the oldest, unseen by the node", in.QoS.Depth)
	if in.QoS.History == qos.KeepAll {
		what = "its keep-all queue makes a reliable publisher wait"
	}
	n.log(LogWarn, fmt.Sprintf("%s: %d of %d takes found the middleware's queue full: the node falls behind (short of CPU, or a flood); %s",
		in.name, full, all, what))
	d.Raise(Warn, fmt.Sprintf("backlog: input %s: the middleware's queue is full", in.name))
}

// fullTakesWarn is the least number of full takes in a report that can
// make it WARN.
const fullTakesWarn = 10

// reportLost adds the messages of in lost before the node (where the
// middleware numbers them) to the diagnostic and logs, once per report,
// those lost since the last one: a WARN.
func (n *Node) reportLost(d *Diagnostic, in *input) {
	k := in.sub.Lost()
	if k < 0 {
		return
	}
	d.Add(in.name+".lost_before_node", k)
	if k > in.lost {
		why := "the network or the publisher's own queue lost them"
		if in.QoS.History != qos.KeepAll {
			why = fmt.Sprintf("the node fell behind and the middleware's queue (keep-last, qos.in.depth %d) was overwritten, or %s", in.QoS.Depth, why)
		}
		n.log(LogWarn, fmt.Sprintf("%s: %d messages lost before the node (their publisher numbered them, they never came): %s",
			in.name, k-in.lost, why))
		d.Raise(Warn, fmt.Sprintf("input %s: messages lost before the node", in.name))
	}
	in.lost = k
}
