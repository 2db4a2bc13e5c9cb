//go:build ros2

// Command synchronizer matches messages of N inputs in0 … in{N-1} with a
// message_filters policy (nodes/internal/syncnode): each matched set is
// republished member by member, unchanged, on out0 … out{N-1}, and
// summarized on ~/matched (timealign/msg/MatchedSet).
//
//	ros2 run timealign synchronizer --ros-args -p inputs:=2 \
//	    -p "message_types:=[sensor_msgs/msg/Image, sensor_msgs/msg/Imu]" \
//	    -r in0:=/camera/image -r in1:=/imu/data
package main

import (
	"fmt"
	"time"

	"github.com/timealign/timealign/nodes/internal/rosnode"
	"github.com/timealign/timealign/nodes/internal/runtime"
	"github.com/timealign/timealign/nodes/internal/syncnode"
	"github.com/timealign/timealign/pkg/params"
)

func main() { rosnode.Main("synchronizer", run) }

func run() error {
	p := syncnode.DefaultParams()
	n, err := rosnode.Setup("synchronizer", rosnode.Options{InboxSize: 1024}, p.Validate, p.Bind)
	if err != nil {
		return err
	}
	if err := p.CheckTypes(); err != nil {
		return err
	}
	ports, ok, err := n.OpenPorts(p.Config.Sync.Topics, p.MessageType, p.Out, syncnode.What)
	if !ok {
		return err
	}
	inputs, outs := ports.Inputs, ports.Outs
	matchedName, err := n.Resolve("~/matched")
	if err != nil {
		return err
	}
	matched, err := n.Publisher(matchedName, "timealign/msg/MatchedSet", p.Out)
	if err != nil {
		return err
	}
	core, err := syncnode.New(p.Config, func(members [][]byte, m []byte) {
		for i, msg := range members {
			if err := outs[i].PublishSerialized(msg); err != nil {
				n.Error("publish: ", err)
			}
		}
		if err := matched.PublishSerialized(m); err != nil {
			n.Error("publish matched set: ", err)
		}
	})
	if err != nil {
		return err
	}
	if err := n.SubscribeInputs(ports, p.In); err != nil {
		return err
	}
	n.Params.AddApplier(func([]params.Parameter) {
		// silent_after_sec and max_drop_share change live (the others are read-only).
		if err := core.Reconfigure(p.Config); err != nil {
			n.Error("parameters: ", err)
		}
	})
	n.Info(fmt.Sprintf("matching %v with policy %v", inputs, p.Config.Sync.Policy))
	prev := core.Status()
	var rates syncnode.Rates
	var buf []byte
	started := time.Now()
	return n.Run(func(m runtime.Msg) {
		if err := core.Add(m.Input, m.Data, m.Receive); err != nil {
			n.WarnDropped(inputs[m.Input], err)
		}
	}, func() {
		st := core.Status()
		now := n.Clock.Now()
		r, setRate := rates.Update(st, time.Since(started))
		buf = core.AppendStatusMsg(buf, now, st, inputs, r, setRate, core.Blocking(inputs, st, now))
		n.PublishStatus("timealign/msg/SyncStatus", buf)
		n.Report(core.Diagnose(n.Name.FQN(), inputs, st, prev, now))
		prev = st
	})
}
