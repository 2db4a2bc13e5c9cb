package nodekit

import (
	"context"
	"time"

	"github.com/timealign/timealign/pkg/params"
	"github.com/timealign/timealign/pkg/qos"
	"github.com/timealign/timealign/pkg/stamp"
)

// Transport is the middleware under a [Node]: what the node asks of ROS 2.
// Package rosnode implements it on rclgo (build tag ros2); package memros
// implements it in memory, for tests that run without ROS.
//
// Threading: the Node calls Spin from a goroutine of its own and every
// other method from its owner goroutine, Close last, once Spin has
// returned. Callbacks (message deliveries, parameter requests) run on the
// goroutine that runs Spin. Subscribe may be called while Spin runs.
type Transport interface {
	// Subscribe subscribes to topic (a resolved name) with messages of
	// msgType ("pkg/msg/Type"), serialized: deliver gets each message's
	// bytes, which it then owns (the transport keeps no reference), and
	// its reception time (0 when the middleware gives none).
	Subscribe(topic, msgType string, q qos.Profile, deliver func(msg []byte, received stamp.Time)) (Subscription, error)
	// Publisher creates a publisher of serialized msgType messages on topic.
	// An unknown or uninstalled type is an error naming it.
	Publisher(topic, msgType string, q qos.Profile) (Publisher, error)
	// ServeParameters answers the six standard parameter services of the
	// node with h.
	ServeParameters(h ParameterHandler) error
	// PublishParameterEvent publishes e, stamped t, on /parameter_events.
	PublishParameterEvent(e params.EventMsg, t stamp.Time) error
	// PublisherTypes returns the message type of every publisher of topic
	// in the graph (several publishers may repeat a type).
	PublisherTypes(topic string) ([]string, error)
	// Log writes a line through ROS logging (console and /rosout).
	Log(l LogLevel, msg string)
	// Spin delivers messages and requests until ctx is done, or fails.
	Spin(ctx context.Context) error
	// Close destroys every entity and shuts the middleware's context down.
	Close() error
}

// Connect creates a Transport for a node named name (before remapping)
// from the process arguments (everything after the program name).
type Connect func(name string, argv []string) (Transport, error)

// Publisher publishes serialized messages.
// Subscription is a subscription a Transport made.
type Subscription interface {
	// Publishers returns how many publishers are matched to the
	// subscription now (the subscription's own side of the match), or -1
	// if the middleware cannot tell.
	Publishers() int
	// Lost returns how many messages its publishers sent that never
	// reached the subscription (gaps in each publisher's sequence numbers:
	// see [SeqGaps]), or -1 if the middleware does not number them.
	Lost() int64
	// Waited returns the longest a message waited in the middleware
	// before the node took it, since the last call (see [Waits]); ok is
	// false if the middleware does not say when messages were sent.
	Waited() (wait time.Duration, ok bool)
	// Takes returns how many of the transport's takes found the
	// middleware's queue at its limit (a keep-last queue's depth, or the
	// most one take handles) and how many there were, since the last
	// call; all is -1 if the transport cannot tell.
	Takes() (full, all int64)
}

// OwnedPublisher is a Publisher whose transport may reuse the bytes of a
// message once it is published (for its next taken message): the node
// publishes its cores' outputs, which belong to it after Publish, with
// PublishOwned, and its own status and diagnostics (buffers it reuses) with
// Publish.
type OwnedPublisher interface {
	Publisher
	PublishOwned(msg []byte) error
}

type Publisher interface {
	Publish(msg []byte) error
	// Subscribers returns how many subscriptions are matched to the
	// publisher now, or -1 if the middleware cannot tell.
	Subscribers() int
}

// LogLevel is the severity of a log line.
type LogLevel int

// The log levels.
const (
	LogDebug LogLevel = iota
	LogInfo
	LogWarn
	LogError
)

func (l LogLevel) String() string {
	switch l {
	case LogDebug:
		return "DEBUG"
	case LogInfo:
		return "INFO"
	case LogWarn:
		return "WARN"
	case LogError:
		return "ERROR"
	}
	return "LogLevel(?)"
}

// ParameterHandler answers the six parameter services (the requests and
// responses of package params mirror rcl_interfaces/srv). ok is false when
// the node is shutting down: the transport then sends no response.
type ParameterHandler interface {
	ListParameters(params.ListParametersRequest) (res params.ListParametersResponse, ok bool)
	GetParameters(params.GetParametersRequest) (res params.GetParametersResponse, ok bool)
	SetParameters(params.SetParametersRequest) (res params.SetParametersResponse, ok bool)
	SetParametersAtomically(params.SetParametersAtomicallyRequest) (res params.SetParametersAtomicallyResponse, ok bool)
	DescribeParameters(params.DescribeParametersRequest) (res params.DescribeParametersResponse, ok bool)
	GetParameterTypes(params.GetParameterTypesRequest) (res params.GetParameterTypesResponse, ok bool)
}
