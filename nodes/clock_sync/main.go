//go:build ros2

// Command clock_sync republishes a topic whose header.stamp carries a
// device clock (ticks, time since boot, a device epoch) with the stamp
// mapped to host time by pkg/pll, from the DDS receive time of each message
// (nodes/internal/clocksync).
//
//	ros2 run timealign clock_sync --ros-args -r in:=/scan_raw -r out:=/scan \
//	    -p message_type:=sensor_msgs/msg/LaserScan -p mode:=envelope
package main

import (
	"github.com/timealign/timealign/nodes/internal/clocksync"
	"github.com/timealign/timealign/nodes/internal/rosnode"
	"github.com/timealign/timealign/nodes/internal/runtime"
	"github.com/timealign/timealign/pkg/params"
	"github.com/timealign/timealign/pkg/stamp"
)

func main() { rosnode.Main("clock_sync", run) }

func run() error {
	p := clocksync.DefaultParams()
	n, err := rosnode.Setup("clock_sync", rosnode.Options{InboxSize: 256}, p.Validate, p.Bind)
	if err != nil {
		return err
	}
	core, err := clocksync.New(p.Config)
	if err != nil {
		return err
	}
	n.Params.AddApplier(func([]params.Parameter) {
		// A parameter changed (already validated): a new fit configuration
		// restarts the fit; the counters go on.
		if err := core.Reconfigure(p.Config); err != nil {
			n.Error("parameters: ", err)
		} else {
			n.Info("parameters changed")
		}
	})
	prev := core.Status()
	var buf []byte
	return n.RunRewrite(rosnode.Rewrite{What: clocksync.What,
		MessageType: p.MessageType, In: p.In, Out: p.Out,
		Process: func(msg []byte, receive stamp.Time) (bool, error) {
			res, err := core.Process(msg, receive)
			return res == clocksync.Published, err
		},
		Health: func() runtime.Diagnostic {
			st := core.Status()
			buf = clocksync.AppendStatusMsg(buf, n.Clock.Now(), st, st.Config.PLL.FIFOSize, n.Inbox.Dropped())
			n.PublishStatus("timealign/msg/ClockSyncStatus", buf)
			d := clocksync.Diagnose(n.Name.FQN(), st, prev)
			prev = st
			return d
		},
	})
}
