//go:build ros2

// Command relay is the baseline of the integration tests' rate
// measurements (test/load_test.go): a plain rclgo relay with the nodes'
// I/O and nothing else. Each input is taken serialized, at most 64
// messages per wake-up as the nodes take them (nodes/internal/rosnode),
// and published serialized on its output at once, from the wait set's
// goroutine: no inbox, no algorithm, no output queue. Every subscription
// and publisher is reliable and keeps all messages, as the rate tests
// configure the nodes.
//
//	relay TYPE IN OUT [IN OUT ...]
//
// It runs until SIGINT or SIGTERM.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/tiiuae/rclgo/pkg/rclgo"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "relay:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) < 3 || len(args)%2 != 1 {
		return fmt.Errorf("usage: relay TYPE IN OUT [IN OUT ...]")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rc, err := rclgo.NewContext(rclgo.ClockTypeROSTime, nil)
	if err != nil {
		return err
	}
	defer rc.Close()
	node, err := rc.NewNode(fmt.Sprintf("timealign_relay_%d", os.Getpid()), "")
	if err != nil {
		return err
	}
	pkg, name, _ := strings.Cut(strings.Replace(args[0], "/msg/", "/", 1), "/")
	ts, err := rclgo.LoadDynamicMessageTypeSupport(pkg, name)
	if err != nil {
		return err
	}
	q := rclgo.NewDefaultQosProfile()
	q.Reliability = rclgo.ReliabilityReliable
	q.History = rclgo.HistoryKeepAll
	ws, err := rc.NewWaitSet()
	if err != nil {
		return err
	}
	for i := 1; i < len(args); i += 2 {
		pub, err := node.NewPublisher(args[i+1], ts, &rclgo.PublisherOptions{Qos: q})
		if err != nil {
			return err
		}
		sub, err := node.NewSubscription(args[i], ts, &rclgo.SubscriptionOptions{Qos: q}, func(s *rclgo.Subscription) {
			for range 64 {
				b, _, err := s.TakeSerializedMessage()
				if err != nil {
					return
				}
				if err := pub.PublishSerialized(b); err != nil {
					fmt.Fprintln(os.Stderr, "relay: publish:", err)
				}
			}
		})
		if err != nil {
			return err
		}
		ws.AddSubscriptions(sub)
	}
	if err := ws.Run(ctx); err != nil && ctx.Err() == nil {
		return err
	}
	return nil
}
