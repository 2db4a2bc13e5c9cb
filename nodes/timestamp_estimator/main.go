//go:build ros2

// Command timestamp_estimator republishes a periodic topic of any message
// type whose first field is a std_msgs/Header with header.stamp replaced by
// pkg/tsest's estimate of the acquisition time (nodes/internal/tsestnode).
// Messages on the optional `reference` topic (same type) carry hardware
// reference stamps.
//
//	ros2 run timealign timestamp_estimator --ros-args -r in:=/imu/data_raw -r out:=/imu/data \
//	    -p message_type:=sensor_msgs/msg/Imu
package main

import (
	"github.com/timealign/timealign/nodes/internal/nodekit"
	"github.com/timealign/timealign/nodes/internal/rosnode"
	"github.com/timealign/timealign/nodes/internal/tsestnode"
	"github.com/timealign/timealign/pkg/params"
	"github.com/timealign/timealign/pkg/stamp"
)

func main() { rosnode.Main("timestamp_estimator", run) }

func run() error {
	p := tsestnode.DefaultParams()
	n, err := rosnode.Setup("timestamp_estimator", rosnode.Options{InboxSize: 256}, p.Validate, p.Bind)
	if err != nil {
		return err
	}
	core, err := tsestnode.New(p.Config)
	if err != nil {
		return err
	}
	n.Params.AddApplier(func([]params.Parameter) {
		// A parameter changed (already validated): restart the algorithm with it.
		if c, err := tsestnode.New(p.Config); err == nil {
			core = c
			n.Info("parameters changed: restarted")
		}
	})
	prev := core.Status()
	var buf []byte
	return n.RunRewrite(rosnode.Rewrite{What: tsestnode.What,
		MessageType: p.MessageType, In: p.In, Out: p.Out,
		Extra:   []string{"reference"},                                                        // hardware reference stamps, same type
		Process: func(msg []byte, r stamp.Time) (bool, error) { return core.Process(msg, r) }, // core may be replaced
		Other:   func(m nodekit.Msg) { _ = core.Reference(m.Data) },
		Health: func() nodekit.Diagnostic {
			st := core.Status()
			buf = tsestnode.AppendStatusMsg(buf, n.Clock.Now(), st, n.Inbox.Dropped())
			n.PublishStatus("timealign/msg/TimestampEstimatorStatus", buf)
			d := tsestnode.Diagnose(n.Name.FQN(), st, prev)
			prev = st
			return d
		},
	})
}
