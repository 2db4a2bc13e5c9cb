package nodekit_test

import (
	"strconv"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timealign/timealign/nodes/internal/nodekit"
	"github.com/timealign/timealign/nodes/internal/nodekit/memros"
	"github.com/timealign/timealign/pkg/stamp"
)

// jumper is an echo core that records the time jumps it is told of.
type jumper struct {
	echo
	jumps []nodekit.TimeJump
	after []int // messages handled before each jump
}

func (j *jumper) TimeJumped(tj nodekit.TimeJump) string {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.jumps = append(j.jumps, tj)
	j.after = append(j.after, len(j.handled))
	return "echo reset"
}

func (j *jumper) seen() []nodekit.TimeJump {
	j.mu.Lock()
	defer j.mu.Unlock()
	return append([]nodekit.TimeJump(nil), j.jumps...)
}

func clockMsg(t stamp.Time) []byte {
	c := nodekit.NewCDR(nil)
	c.Time(t)
	return c.B
}

const sec = stamp.Time(time.Second)

// TestTimeJumpOnClock: under use_sim_time, /clock going back by more than
// time_jump_threshold_sec (a bag played with --loop) resets the core once
// before the next message, is logged once, counted in /diagnostics and
// makes it WARN for a few seconds; going back by less is no jump.
func TestTimeJumpOnClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := memros.New()
		core := &jumper{}
		diagnostics := g.Record("/diagnostics")
		node := start(t, g, specOf(core, "x_msgs/msg/X"), "--ros-args", "-p", "use_sim_time:=true")
		synctest.Wait()
		clock := g.Advertise("/clock", "rosgraph_msgs/msg/Clock")
		in := g.Advertise("/in0", "x_msgs/msg/X")
		send := func(clk stamp.Time) {
			require.NoError(t, clock.Publish(clockMsg(clk)))
			require.NoError(t, in.Publish(msg(clk, 40)))
			time.Sleep(10 * time.Millisecond)
			synctest.Wait()
		}
		for k := range 100 {
			send(100*sec + stamp.Time(k)*sec/100)
		}
		send(100*sec + sec/2) // back by 0.49 s: jitter of a replay, not a jump
		require.Empty(t, core.seen())
		for k := range 100 {
			send(40*sec + stamp.Time(k)*sec/100) // the bag again: 61 s back
		}
		jumps := core.seen()
		require.Len(t, jumps, 1, "one jump, though the stamps jumped with /clock")
		require.Equal(t, -1, jumps[0].Input)
		require.Equal(t, "/clock", jumps[0].What)
		require.InDelta(t, 60.5, jumps[0].Back.Seconds(), 0.02)
		msgs := core.messages()
		require.Equal(t, 40*sec, msgs[101].Receive, "the first message after the jump came after the reset")
		tr := g.Node("/echo")
		require.Equal(t, 1, logged(tr, nodekit.LogWarn, "time jumped back 60.5 s (/clock): echo reset"))
		time.Sleep(time.Second)
		synctest.Wait()
		d := lastDiag(t, diagnostics)
		require.Equal(t, nodekit.Warn, d.level)
		require.Contains(t, d.message, "time jumped back 60.5 s (/clock) in the last 5s (echo reset)")
		require.Equal(t, "1", d.values["time_jumps"])
		time.Sleep(6 * time.Second)
		synctest.Wait()
		d = lastDiag(t, diagnostics)
		require.Equal(t, nodekit.OK, d.level, "WARN only for a while")
		require.Equal(t, "1", d.values["time_jumps"], "the count stays")
		require.Equal(t, 0, node.stop())
	})
}

// TestTimeJumpOrder: messages received before /clock jumped back, still
// waiting in the inbox when it did, reach the core before its reset; those
// received after it, after.
func TestTimeJumpOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := memros.New()
		core := &jumper{}
		core.gate = make(chan struct{})
		node := start(t, g, specOf(core, "x_msgs/msg/X"), "--ros-args", "-p", "use_sim_time:=true")
		synctest.Wait()
		clock := g.Advertise("/clock", "rosgraph_msgs/msg/Clock")
		in := g.Advertise("/in0", "x_msgs/msg/X")
		require.NoError(t, clock.Publish(clockMsg(100*sec)))
		synctest.Wait()
		for k := range 3 { // the core is held: these wait in the inbox
			require.NoError(t, in.Publish(msg(100*sec+stamp.Time(k), 40)))
		}
		synctest.Wait()
		require.NoError(t, clock.Publish(clockMsg(40*sec)))
		synctest.Wait()
		for k := range 2 {
			require.NoError(t, in.Publish(msg(40*sec+stamp.Time(k), 40)))
		}
		synctest.Wait()
		close(core.gate)
		time.Sleep(100 * time.Millisecond)
		synctest.Wait()
		require.Len(t, core.messages(), 5)
		core.mu.Lock()
		require.Equal(t, []int{3}, core.after, "the three received before the jump were handled before the reset")
		core.mu.Unlock()
		require.Equal(t, 0, node.stop())
	})
}

// TestTimeJumpInStamps: on the system clock, an input whose header
// stamps go back by more than the threshold, confirmed by the next
// message, resets the core; a single wild stamp (0) does not; a device
// clock's input (DeviceStamps) is not watched.
func TestTimeJumpInStamps(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := memros.New()
		core := &jumper{}
		s := specOf(core, "x_msgs/msg/X", "x_msgs/msg/X")
		ports := s.Ports
		s.Ports = func() (ins, outs []nodekit.Port, err error) {
			ins, outs, err = ports()
			ins[1].DeviceStamps = true
			return ins, outs, err
		}
		node := start(t, g, s, "--ros-args", "-p", "time_jump_threshold_sec:=2.0")
		synctest.Wait()
		in0, in1 := g.Advertise("/in0", "x_msgs/msg/X"), g.Advertise("/in1", "x_msgs/msg/X")
		for _, st := range []stamp.Time{100 * sec, 101 * sec, 0, 102 * sec, 99 * sec, 103 * sec, 50 * sec, 50*sec + 1, 51 * sec} {
			require.NoError(t, in0.Publish(msg(st, 40)))
			require.NoError(t, in1.Publish(msg(1000*sec-st, 40)), "a device clock running backwards")
			time.Sleep(10 * time.Millisecond)
			synctest.Wait()
		}
		jumps := core.seen()
		require.Len(t, jumps, 1)
		require.Equal(t, nodekit.TimeJump{Input: 0, Back: 53 * time.Second, What: "header stamps of /in0"}, jumps[0])
		require.Equal(t, 1, logged(g.Node("/echo"), nodekit.LogWarn, "time jumped back 53.0 s (header stamps of /in0): echo reset"))
		require.Equal(t, 0, node.stop())
	})
}

// TestPublishersInDiagnostics: /diagnostics has each input's matched
// publishers (the node's side of the match); the node logs when the last
// one goes away (a driver that stopped or restarts) and when one is back.
func TestPublishersInDiagnostics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := memros.New()
		core := &jumper{}
		diagnostics := g.Record("/diagnostics")
		node := start(t, g, specOf(core, "x_msgs/msg/X"))
		synctest.Wait()
		time.Sleep(time.Second)
		synctest.Wait()
		require.Equal(t, "0", lastDiag(t, diagnostics).values["/in0.publishers"])
		pub := g.Advertise("/in0", "x_msgs/msg/X")
		time.Sleep(time.Second)
		synctest.Wait()
		require.Equal(t, "1", lastDiag(t, diagnostics).values["/in0.publishers"])
		pub.Close()
		time.Sleep(time.Second)
		synctest.Wait()
		require.Equal(t, "0", lastDiag(t, diagnostics).values["/in0.publishers"])
		tr := g.Node("/echo")
		require.Equal(t, 1, logged(tr, nodekit.LogWarn, "/in0: no publisher any more (it stopped or is restarting)"))
		g.Advertise("/in0", "x_msgs/msg/X")
		time.Sleep(time.Second)
		synctest.Wait()
		require.Equal(t, 1, logged(tr, nodekit.LogInfo, "/in0: a publisher is back"))
		require.Equal(t, 0, node.stop())
	})
}

// specOf is echoSpec with the jumper as its core.
func specOf(j *jumper, types ...string) nodekit.Spec {
	s := echoSpec(&j.echo, &echoParams{types: types})
	s.New = func(pub nodekit.Publish) (nodekit.Core, error) { j.publish = pub; return j, nil }
	return s
}

// TestHostClockStep: a node on system time whose host clock is stepped
// by 5 s forward, then 5 s back (chrony, date -s), while messages come:
// each step resets the core once, is logged and counted in /diagnostics;
// the clock's slewing is not a step.
func TestHostClockStep(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var offset atomic.Int64
		nodekit.StepWallClock(t.Cleanup, &offset)
		g := memros.New()
		core := &jumper{}
		diagnostics := g.Record("/diagnostics")
		node := start(t, g, specOf(core, "x_msgs/msg/X"))
		synctest.Wait()
		in := g.Advertise("/in0", "x_msgs/msg/X")
		send := func(n int) {
			for range n {
				offset.Add(int64(20 * time.Microsecond)) // slewing, 2 ms/s
				require.NoError(t, in.Publish(msg(stamp.Time(time.Now().UnixNano()).Add(time.Duration(offset.Load())), 40)))
				time.Sleep(10 * time.Millisecond)
				synctest.Wait()
			}
		}
		send(200)
		require.Empty(t, core.seen(), "slewing is not a step")
		offset.Add(int64(5 * time.Second))
		send(200)
		offset.Add(-int64(5 * time.Second))
		send(200)
		jumps := core.seen()
		require.Len(t, jumps, 2, "a step forward and a step back, each once (the stamps, on the host clock, went back with the second)")
		for i, want := range []float64{-5, 5} {
			require.Equal(t, "the host clock", jumps[i].What)
			require.InDelta(t, want, jumps[i].Back.Seconds(), 0.05)
		}
		tr := g.Node("/echo")
		require.Equal(t, 1, logged(tr, nodekit.LogWarn, "the host clock stepped forward 5.0 s: echo reset"))
		require.Equal(t, 1, logged(tr, nodekit.LogWarn, "the host clock stepped back 5.0 s: echo reset"))
		require.Equal(t, "2", lastDiag(t, diagnostics).values["time_jumps"])
		require.Equal(t, 0, node.stop())
	})
}

// TestClockBadInput: the bad /clock, under use_sim_time: back by
// 1 ns (not a jump), back by an hour (one jump), oscillating between two
// times 60 s apart 100 times a second for 2 s (every swing back resets
// the core; the same swing within a second is counted and logged once),
// and a /clock
// of 0: never a crash or a hang, and the node goes on with the messages.
func TestClockBadInput(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := memros.New()
		core := &jumper{}
		diagnostics := g.Record("/diagnostics")
		node := start(t, g, specOf(core, "x_msgs/msg/X"), "--ros-args", "-p", "use_sim_time:=true")
		synctest.Wait()
		clock := g.Advertise("/clock", "rosgraph_msgs/msg/Clock")
		in := g.Advertise("/in0", "x_msgs/msg/X")
		sent := 0
		send := func(clk stamp.Time) {
			require.NoError(t, clock.Publish(clockMsg(clk)))
			require.NoError(t, in.Publish(msg(clk, 40)))
			sent++
			time.Sleep(10 * time.Millisecond)
			synctest.Wait()
		}
		base := 3600*sec + 100*sec
		for k := range 50 {
			send(base + stamp.Time(k)*sec/100)
		}
		send(base + 49*sec/100 - 1) // back by 1 ns
		require.Empty(t, core.seen(), "1 ns back is not a jump")
		send(base - 3600*sec) // back by an hour
		require.Len(t, core.seen(), 1)
		require.InDelta(t, 3600.49, core.seen()[0].Back.Seconds(), 0.01)
		for k := range 200 { // oscillating
			send(base + stamp.Time(k%2)*60*sec)
		}
		n := len(core.seen())
		require.GreaterOrEqual(t, n, 1+99, "every swing back resets the core")
		send(0) // a /clock of 0
		send(base)
		require.Equal(t, sent, len(core.messages()), "every message handled")
		time.Sleep(time.Second)
		synctest.Wait()
		d := lastDiag(t, diagnostics)
		jumps, err := strconv.Atoi(d.values["time_jumps"])
		require.NoError(t, err)
		// The same 60 s swing again within a second is the same jump:
		// counted once a second, the core reset at each.
		require.GreaterOrEqual(t, jumps, 2)
		require.LessOrEqual(t, jumps, 1+3)
		tr := g.Node("/echo")
		require.Less(t, logged(tr, nodekit.LogWarn, "time jumped back"), 20, "the log rate-limited")
		require.Equal(t, 0, node.stop())
	})
}
