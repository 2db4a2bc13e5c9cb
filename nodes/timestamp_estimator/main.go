//go:build ros2

// Command timestamp_estimator republishes a periodic topic of any message
// type whose first field is a std_msgs/Header with header.stamp replaced by
// pkg/tsest's estimate of the acquisition time (nodes/internal/tsestnode).
// Messages on the optional `reference` topic carry hardware reference
// stamps: sensor_msgs/msg/TimeReference (time_ref) by default, or the
// header.stamp of the Header-first type given as reference_type.
//
//	ros2 run timealign timestamp_estimator --ros-args -r in:=/imu/data_raw -r out:=/imu/data \
//	    -p message_type:=sensor_msgs/msg/Imu
package main

import (
	"errors"

	"github.com/timealign/timealign/nodes/internal/rosnode"
	"github.com/timealign/timealign/nodes/internal/runtime"
	"github.com/timealign/timealign/nodes/internal/tsestnode"
	"github.com/timealign/timealign/pkg/params"
	"github.com/timealign/timealign/pkg/stamp"
	"github.com/timealign/timealign/pkg/tsest"
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
		// A parameter changed (already validated): the estimator restarts
		// with it, the counters go on.
		if err := core.Reconfigure(p.Config); err != nil {
			n.Error("parameters: ", err)
		} else {
			n.Info("parameters changed: estimator restarted")
		}
	})
	// Hardware reference stamps, of their own type (input 1).
	refTS, err := rosnode.InputTypeSupport(p.ReferenceType)
	if err != nil {
		return n.Idle(tsestnode.What, err, "set reference_type to "+tsestnode.TimeReferenceType+" or a type whose first field is a std_msgs/Header")
	}
	ref, err := n.Resolve("reference")
	if err != nil {
		return err
	}
	if err := n.Subscribe(1, ref, refTS, p.In); err != nil {
		return err
	}
	prev := core.Status()
	var buf []byte
	return n.RunRewrite(rosnode.Rewrite{What: tsestnode.What,
		MessageType: p.MessageType, In: p.In, Out: p.Out,
		Process: func(msg []byte, r stamp.Time) (bool, error) { return core.Process(msg, r) },
		Other: func(m runtime.Msg) {
			// A rejected reference is counted and diagnosed; a malformed one is logged too.
			if err := core.Reference(m.Data); err != nil && !errors.Is(err, tsest.ErrReference) {
				n.WarnDropped(ref, err)
			}
		},
		Health: func() runtime.Diagnostic {
			st := core.Status()
			buf = tsestnode.AppendStatusMsg(buf, n.Clock.Now(), st, n.Inbox.Dropped())
			n.PublishStatus("timealign/msg/TimestampEstimatorStatus", buf)
			d := tsestnode.Diagnose(n.Name.FQN(), st, prev)
			prev = st
			return d
		},
	})
}
