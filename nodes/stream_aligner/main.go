//go:build ros2

// Command stream_aligner republishes the messages of N inputs in0 …
// in{N-1}, each unchanged on out0 … out{N-1}, in the order of their header
// stamps across all inputs (nodes/internal/alignnode: Rock's StreamAligner
// with a period per input as its lookahead and a timeout in stamps).
//
//	ros2 run timealign stream_aligner --ros-args -p inputs:=2 \
//	    -p "periods_sec:=[0.01, 0.1]" -r in0:=/imu/data -r in1:=/scan
package main

import (
	"fmt"
	"time"

	"github.com/timealign/timealign/nodes/internal/alignnode"
	"github.com/timealign/timealign/nodes/internal/nodekit"
	"github.com/timealign/timealign/nodes/internal/rosnode"
	"github.com/timealign/timealign/pkg/params"
)

func main() { rosnode.Main("stream_aligner", run) }

func run() error {
	p := alignnode.DefaultParams()
	// Silent inputs are checked ten times a second; status and
	// diagnostics go out once a second.
	const tick, statusEvery = 100 * time.Millisecond, 10
	n, err := rosnode.Setup("stream_aligner", rosnode.Options{InboxSize: 1024, TickEvery: tick}, p.Validate, p.Bind)
	if err != nil {
		return err
	}
	ports, ok, err := n.OpenPorts(len(p.Config.Aligner.Streams), p.MessageType, p.Out, alignnode.What)
	if !ok {
		return err
	}
	core, err := alignnode.New(p.Config, func(i int, msg []byte) {
		if err := ports.Outs[i].PublishSerialized(msg); err != nil {
			n.Error("publish: ", err)
		}
	})
	if err != nil {
		return err
	}
	n.Params.AddApplier(func([]params.Parameter) {
		// timeout_sec and silent_after_sec change live (the others are read-only).
		if err := core.Reconfigure(p.Config); err != nil {
			n.Error("parameters: ", err)
		}
	})
	if err := n.SubscribeInputs(ports, p.In); err != nil {
		return err
	}
	n.Info(fmt.Sprintf("aligning %v (timeout %v)", ports.Inputs, p.Config.Aligner.Timeout))
	prev := core.Status()
	var buf []byte
	ticks := 0
	return n.Run(func(m nodekit.Msg) {
		if err := core.Add(m.Input, m.Data, m.Receive); err != nil {
			n.WarnDropped(ports.Inputs[m.Input], err)
		}
	}, func() {
		core.Tick(n.Clock.Now())
		if ticks++; ticks%statusEvery != 0 {
			return
		}
		st := core.Status()
		buf = alignnode.AppendStatusMsg(buf, n.Clock.Now(), st, ports.Inputs, n.Inbox.Dropped())
		n.PublishStatus("timealign/msg/AlignerStatus", buf)
		n.Report(alignnode.Diagnose(n.Name.FQN(), ports.Inputs, st, prev))
		prev = st
	})
}
