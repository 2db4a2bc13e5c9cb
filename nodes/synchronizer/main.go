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

	"github.com/tiiuae/rclgo/pkg/rclgo"

	"github.com/timealign/timealign/nodes/internal/rosnode"
	"github.com/timealign/timealign/nodes/internal/runtime"
	"github.com/timealign/timealign/nodes/internal/syncnode"
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
	k := p.Config.Sync.Topics
	inputs := make([]string, k)
	types := make([]string, k)
	outs := make([]*rclgo.Publisher, k)
	for i := range k {
		if inputs[i], err = n.Resolve(fmt.Sprint("in", i)); err != nil {
			return err
		}
		if types[i] = p.MessageType(i); types[i] == "" {
			var ok bool
			if types[i], ok = n.DiscoverType(inputs[i]); !ok {
				return nil // stopped while waiting
			}
		}
		if _, err := rosnode.InputTypeSupport(types[i]); err != nil {
			return n.Idle(syncnode.What, fmt.Errorf("%s: %w", inputs[i], err),
				"set message_types to message types whose first field is a std_msgs/Header")
		}
		outName, err := n.Resolve(fmt.Sprint("out", i))
		if err != nil {
			return err
		}
		if outs[i], err = n.Publisher(outName, types[i], p.Out); err != nil {
			return err
		}
	}
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
	for i := range k {
		if err := n.Subscribe(i, inputs[i], types[i], p.In); err != nil {
			return err
		}
	}
	n.Info(fmt.Sprintf("matching %v with policy %s", inputs, p.Policy))
	prev := core.Status()
	var rates syncnode.Rates
	var buf []byte
	started := time.Now()
	return n.Run(func(m runtime.Msg) {
		if err := core.Add(m.Input, m.Data, m.Receive); err != nil {
			n.Warn("dropped a malformed message on ", inputs[m.Input], ": ", err)
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
