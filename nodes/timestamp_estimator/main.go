//go:build ros2

// Command timestamp_estimator republishes a periodic topic of any message
// type whose first field is a std_msgs/Header with header.stamp replaced by
// pkg/tsest's estimate of the acquisition time (see nodes/internal/tsestnode).
//
//	ros2 run timealign timestamp_estimator --ros-args -r in:=/imu/data_raw -r out:=/imu/data \
//	    -p message_type:=sensor_msgs/msg/Imu
package main

import (
	"fmt"
	"os"

	"github.com/timealign/timealign/nodes/internal/rosnode"
	"github.com/timealign/timealign/nodes/internal/runtime"
	"github.com/timealign/timealign/nodes/internal/tsestnode"
	"github.com/timealign/timealign/pkg/params"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "timestamp_estimator:", err)
		os.Exit(1)
	}
}

func run() error {
	n, err := rosnode.New("timestamp_estimator", os.Args[1:], rosnode.Options{InboxSize: 256})
	if err != nil {
		return err
	}
	// Parameters -> Config -> Validate.
	p := tsestnode.DefaultParams()
	b := params.NewBinder(n.Params, p.Validate)
	p.Bind(b)
	if err := b.Declare(); err != nil {
		return err
	}
	for _, is := range n.Params.Issues() {
		n.Warn(is)
	}
	if p.MessageType == "" {
		return fmt.Errorf("parameter message_type is required (e.g. sensor_msgs/msg/Imu)")
	}
	core, err := tsestnode.New(p.Config)
	if err != nil {
		return err
	}
	n.Params.AddApplier(func([]params.Parameter) {
		if c, err := tsestnode.New(p.Config); err == nil {
			core = c
		}
	})
	// Topics.
	in, err := n.Resolve("in")
	if err != nil {
		return err
	}
	outName, err := n.Resolve("out")
	if err != nil {
		return err
	}
	out, err := n.Publisher(outName, p.MessageType, p.Out)
	if err != nil {
		return err
	}
	if err := n.Subscribe(0, in, p.MessageType, p.In); err != nil {
		return err
	}
	n.Info(fmt.Sprintf("estimating the stamps of %s (%s) onto %s", in, p.MessageType, outName))
	prev := core.Status()
	lastHealth := ""
	return n.Run(func(m runtime.Msg) {
		ok, err := core.Process(m.Data, m.Receive)
		if err != nil {
			n.Warn("dropped a malformed message: ", err)
			return
		}
		if ok {
			if err := out.PublishSerialized(m.Data); err != nil {
				n.Error("publish: ", err)
			}
		}
	}, func() {
		st := core.Status()
		d := tsestnode.Diagnose(n.Name.FQN(), st, prev)
		if h := d.Level.String() + ": " + d.Message; h != lastHealth { // log changes only
			if d.Level == runtime.OK {
				n.Info(d.Message)
			} else {
				n.Warn(d.Message)
			}
			lastHealth = h
		}
		prev = st
	})
}
