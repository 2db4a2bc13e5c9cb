//go:build ros2

package rosnode

import (
	"fmt"
	"time"

	"github.com/tiiuae/rclgo/pkg/rclgo"

	"github.com/timealign/timealign/nodes/internal/nodekit"
	"github.com/timealign/timealign/pkg/stamp"
)

// /rosout, the same way on every distribution.
//
// Humble's rcl_node_init creates a node's /rosout publisher itself, and
// rcl's logging output handler publishes every line of a node's logger on
// it. Jazzy's (rcl 9, ros2/rcl#1065) no longer does: the client library
// must call rcl_logging_rosout_init_publisher_for_node, which rclcpp and
// rclpy do and rclgo (written for Humble) does not, and rclgo keeps the
// rcl_node_t to itself. So the nodes publish their log lines on /rosout
// themselves, on both: Connect turns rcl's own rosout output off
// (--disable-rosout-logs, which on Humble also keeps rcl_node_init from
// creating its publisher, so no line is published twice) and rosout below
// publishes rcl_interfaces/msg/Log with the node's logger name and the
// line's level. rcl's console output stays as it was. A user's
// --disable-rosout-logs turns ours off too.

// rosoutQoS is rcl's rcl_qos_profile_rosout_default (the same on Humble
// and Jazzy): reliable, transient local, the last 1000 lines, each kept
// for 10 s for late joiners such as rqt_console.
func rosoutQoS() rclgo.QosProfile {
	p := rclgo.NewDefaultQosProfile()
	p.History = rclgo.HistoryKeepLast
	p.Depth = 1000
	p.Reliability = rclgo.ReliabilityReliable
	p.Durability = rclgo.DurabilityTransientLocal
	p.Lifespan = 10 * time.Second
	return p
}

// rosout publishes a node's log lines on /rosout.
type rosout struct {
	pub  *rclgo.Publisher
	name string // the node's logger name: "ns.name" without the leading slash
	buf  []byte // under transport.logMu
}

func newRosout(t *transport) (*rosout, error) {
	ts, err := t.typeSupport("rcl_interfaces/msg/Log")
	if err != nil {
		return nil, err
	}
	pub, err := t.node.NewPublisher("/rosout", ts, &rclgo.PublisherOptions{Qos: rosoutQoS()})
	if err != nil {
		return nil, fmt.Errorf("publisher /rosout: %w", cleanErr(err))
	}
	return &rosout{pub: pub, name: t.node.Logger().Name()}, nil
}

// publish sends one line stamped now (system time, as rcl's rosout
// handler does); the caller holds transport.logMu.
func (r *rosout) publish(l nodekit.LogLevel, msg string) {
	r.buf = nodekit.AppendLogMsg(r.buf, stamp.Time(time.Now().UnixNano()), l, r.name, msg)
	_ = r.pub.PublishSerialized(r.buf) // a log line that cannot be published has nowhere else to go
}

// severity is l as rcutils' severity.
func severity(l nodekit.LogLevel) rclgo.LogSeverity {
	return rclgo.LogSeverity(l.RosoutSeverity())
}
