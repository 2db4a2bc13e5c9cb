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
	"fmt"
	"os"
	"time"

	"github.com/timealign/timealign/nodes/internal/clocksync"
	"github.com/timealign/timealign/nodes/internal/rosnode"
	"github.com/timealign/timealign/nodes/internal/runtime"
	"github.com/timealign/timealign/pkg/params"
	"github.com/timealign/timealign/pkg/stamp"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "clock_sync:", err)
		os.Exit(1)
	}
}

func run() error {
	n, err := rosnode.New("clock_sync", os.Args[1:], rosnode.Options{InboxSize: 256})
	if err != nil {
		return err
	}
	p := clocksync.DefaultParams()
	b := params.NewBinder(n.Params, p.Validate)
	p.Bind(b)
	if err := b.Declare(); err != nil {
		return err
	}
	for _, is := range n.Params.Issues() {
		n.Warn(is)
	}
	core, err := clocksync.New(p.Config)
	if err != nil {
		return err
	}
	prev := core.Status()
	var buf []byte
	return n.RunRewrite(rosnode.Rewrite{
		MessageType: p.MessageType, In: p.In, Out: p.Out,
		Process: func(msg []byte, receive stamp.Time) (bool, error) {
			res, err := core.Process(msg, receive)
			return res == clocksync.Published, err
		},
		Health: func() runtime.Diagnostic {
			st := core.Status()
			buf = clocksync.AppendStatusMsg(buf, stamp.Time(time.Now().UnixNano()), st, p.Config.PLL.FIFOSize, n.Inbox.Dropped())
			n.PublishStatus("timealign/msg/ClockSyncStatus", buf)
			d := clocksync.Diagnose(n.Name.FQN(), st, prev)
			prev = st
			return d
		},
	})
}
