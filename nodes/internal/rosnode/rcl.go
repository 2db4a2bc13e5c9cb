//go:build ros2

package rosnode

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/tiiuae/rclgo/pkg/rclgo"
	"github.com/tiiuae/rclgo/pkg/rclgo/types"

	"github.com/timealign/timealign/nodes/internal/cpuquota"
	"github.com/timealign/timealign/nodes/internal/ddsenv"
	"github.com/timealign/timealign/nodes/internal/nodekit"
	"github.com/timealign/timealign/pkg/qos"
	"github.com/timealign/timealign/pkg/rosargs"
	"github.com/timealign/timealign/pkg/stamp"
)

// Main runs the node of s on rclgo until SIGINT or SIGTERM and exits with
// nodekit.Main's status. Input types are checked against the .msg files
// of AMENT_PREFIX_PATH.
func Main(s nodekit.Spec) {
	if s.MsgPrefixes == nil {
		s.MsgPrefixes = filepath.SplitList(os.Getenv("AMENT_PREFIX_PATH"))
	}
	os.Exit(nodekit.Main(s, os.Args[1:], Connect, os.Stderr))
}

// transport is a nodekit.Transport on rclgo.
type transport struct {
	ctx   *rclgo.Context
	node  *rclgo.Node
	ws    *rclgo.WaitSet
	types map[string]types.MessageTypeSupport // owner goroutine
	logMu sync.Mutex                          // rcutils logging is not thread-safe

	mu          sync.Mutex // the wait set's additions, from the owner to the spinning goroutine
	pendingSvcs []*rclgo.Service
	wake        context.CancelFunc // stops the current WaitSet.Run, to add what is pending

	data *dataLoop        // the subscriptions' wait set (datapath.go)
	pool *nodekit.BufPool // big messages' buffers: taken into, given back once published

	events *eventPublisher
	rosout *rosout // nil with --disable-rosout-logs or once closed; under logMu
}

// Connect is a nodekit.Connect on rclgo: an rcl context and a node named
// name, both from the --ros-args of argv (remapping, parameters, log
// levels), and the node's /rosout publisher (rosout.go). The middleware's
// environment is checked first (package ddsenv): a variable that names
// something missing or that the distribution reads differently is an
// error naming it, before rcl starts.
func Connect(name string, argv []string) (nodekit.Transport, error) {
	if err := ddsenv.Check(ddsenv.Env{Getenv: os.Getenv, FS: os.DirFS("/"), DiscoveryRange: rclReadsDiscoveryRange}); err != nil {
		return nil, err
	}
	args, err := rosargs.ParseArgs(argv)
	if err != nil {
		return nil, err
	}
	// rcl's own /rosout output off, on every distribution: see rosout.go.
	rclArgs, _, err := rclgo.ParseArgs(append(argv[:len(argv):len(argv)], "--ros-args", "--disable-rosout-logs"))
	if err != nil {
		return nil, fmt.Errorf("rcl arguments: %w", cleanErr(err))
	}
	ctx, err := rclgo.NewContext(rclgo.ClockTypeROSTime, rclArgs)
	if err != nil {
		return nil, fmt.Errorf("rcl context: %w", cleanErr(err))
	}
	node, err := ctx.NewNode(name, "")
	if err != nil {
		ctx.Close()
		return nil, fmt.Errorf("rcl node: %w", cleanErr(err))
	}
	ws, err := ctx.NewWaitSet()
	if err != nil {
		ctx.Close()
		return nil, fmt.Errorf("rcl wait set: %w", cleanErr(err))
	}
	t := &transport{ctx: ctx, node: node, ws: ws, types: map[string]types.MessageTypeSupport{}}
	t.pool = nodekit.NewBufPool()
	if t.data, err = newDataLoop(ctx, t.pool); err != nil {
		ctx.Close()
		return nil, err
	}
	if args.RosoutLogs == nil || *args.RosoutLogs {
		if t.rosout, err = newRosout(t); err != nil {
			t.data.close()
			ctx.Close()
			return nil, err
		}
	}
	return t, nil
}

// cleanErr trims the NUL padding rcl leaves in its error strings.
func cleanErr(err error) error {
	if err == nil {
		return nil
	}
	s := strings.TrimRight(strings.ReplaceAll(err.Error(), "\x00", ""), " ")
	return errors.New(s)
}

// typeSupport loads (once) the type support of "pkg/msg/Type".
func (t *transport) typeSupport(msgType string) (types.MessageTypeSupport, error) {
	if ts, ok := t.types[msgType]; ok {
		return ts, nil
	}
	pkg, name, ok := nodekit.SplitType(msgType)
	if !ok {
		return nil, fmt.Errorf("message type %q: want pkg/msg/Type", msgType)
	}
	ts, err := rclgo.LoadDynamicMessageTypeSupport(pkg, name)
	if err != nil {
		return nil, fmt.Errorf("message type %q: %w", msgType, cleanErr(err))
	}
	if ts == nil || ts.TypeSupport() == nil { // an unknown message name is not an error in rclgo
		return nil, fmt.Errorf("message type %q: no such message in package %s", msgType, pkg)
	}
	t.types[msgType] = ts
	return ts, nil
}

func qosProfile(q qos.Profile) rclgo.QosProfile {
	p := rclgo.NewDefaultQosProfile()
	p.Reliability = rclgo.ReliabilityPolicy(q.Reliability)
	p.Durability = rclgo.DurabilityPolicy(q.Durability)
	p.History = rclgo.HistoryPolicy(q.History)
	p.Depth = q.Depth
	return p
}

// Subscribe implements nodekit.Transport: rclgo creates the subscription,
// the data loop (datapath.go) takes its messages serialized, each into a
// slice of its own that deliver then owns, with the DDS reception time.
func (t *transport) Subscribe(topic, msgType string, q qos.Profile, deliver func([]byte, stamp.Time)) (nodekit.Subscription, error) {
	ts, err := t.typeSupport(msgType)
	if err != nil {
		return nil, err
	}
	sub, err := t.node.NewSubscription(topic, ts, &rclgo.SubscriptionOptions{Qos: qosProfile(q)}, func(*rclgo.Subscription) {})
	if err != nil {
		return nil, fmt.Errorf("subscribe %s: %w", topic, cleanErr(err))
	}
	gaps, waits := &nodekit.SeqGaps{}, &nodekit.Waits{}
	if err := t.data.add(sub, q, deliver, gaps, waits); err != nil {
		return nil, fmt.Errorf("subscribe %s: %w", topic, err)
	}
	return subscription{sub, gaps, waits}, nil
}

type subscription struct {
	s     *rclgo.Subscription
	gaps  *nodekit.SeqGaps
	waits *nodekit.Waits
}

// Waited implements nodekit.Subscription: how long the messages taken
// waited in the middleware, from their writers' source timestamps (Cyclone
// DDS and Fast DDS give them).
func (s subscription) Waited() (time.Duration, bool) { return s.waits.Worst() }

// Takes implements nodekit.Subscription: the data loop's takes of the
// subscription that found its queue at the limit.
func (s subscription) Takes() (full, all int64) { return s.waits.Takes() }

// Lost implements nodekit.Subscription: the gaps in the sequence numbers
// of the messages taken (Fast DDS numbers them; Cyclone DDS's RMW does
// not: -1; its message-lost event, DDS's SAMPLE_LOST, stayed at 0 while a
// starved node's keep-last queue lost 100 000 Imu, so it is not used).
func (s subscription) Lost() int64 { return s.gaps.Lost() }

// CPUThrottled implements nodekit.CPUQuota from the process's cgroup.
func (t *transport) CPUThrottled() (nodekit.Throttling, bool) {
	st, err := cpuquota.Read(os.DirFS("/"), "self")
	if err != nil {
		return nodekit.Throttling{}, false
	}
	return nodekit.Throttling{Periods: st.Periods, Throttled: st.ThrottledPeriods, Time: st.Throttled, Cores: st.Cores}, true
}

// Publishers implements nodekit.Subscription (rcl_subscription_get_publisher_count).
func (s subscription) Publishers() int {
	n, err := s.s.GetPublisherCount()
	if err != nil {
		return -1
	}
	return n
}

// add hands services to the services' goroutine: it stops the wait set's
// current run, adds them and runs it again.
func (t *transport) add(svcs []*rclgo.Service) {
	t.mu.Lock()
	t.pendingSvcs = append(t.pendingSvcs, svcs...)
	wake := t.wake
	t.mu.Unlock()
	if wake != nil {
		wake()
	}
}

// Spin implements nodekit.Transport: the data loop takes the messages on
// this goroutine (datapath.go) while another runs rclgo's wait set of the
// parameter services, until ctx is done.
func (t *transport) Spin(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	services := make(chan error, 1)
	go func() { services <- t.spinServices(ctx) }()
	err := t.data.run(ctx)
	cancel()
	return errors.Join(err, <-services)
}

// spinServices runs the wait set of the services until ctx is done,
// restarting it whenever services were added (rclgo reads a wait set's
// entities only when Run starts).
func (t *transport) spinServices(ctx context.Context) error {
	for {
		t.mu.Lock()
		t.ws.AddServices(t.pendingSvcs...)
		t.pendingSvcs = nil
		run, stop := context.WithCancel(ctx)
		t.wake = stop
		t.mu.Unlock()
		err := t.ws.Run(run)
		stop()
		t.mu.Lock()
		t.wake = nil
		t.mu.Unlock()
		if ctx.Err() != nil {
			return nil
		}
		if err != nil && !errors.Is(err, context.Canceled) {
			return cleanErr(err)
		}
	}
}

type publisher struct {
	p    *rclgo.Publisher
	rcl  unsafe.Pointer // its rcl_publisher_t
	pool *nodekit.BufPool
}

// Publish implements nodekit.Publisher: rcl takes msg where it is (the
// middleware copies it before Publish returns).
func (p publisher) Publish(msg []byte) error { return publishSerialized(p.rcl, msg) }

// PublishOwned implements nodekit.OwnedPublisher: msg, copied by the
// middleware, then goes to the pool the data loop takes big messages into.
func (p publisher) PublishOwned(msg []byte) error {
	err := publishSerialized(p.rcl, msg)
	p.pool.Put(msg)
	return err
}

// Subscribers implements nodekit.Publisher.
func (p publisher) Subscribers() int {
	n, err := p.p.GetSubscriptionCount()
	if err != nil {
		return -1
	}
	return n
}

// Publisher implements nodekit.Transport.
func (t *transport) Publisher(topic, msgType string, q qos.Profile) (nodekit.Publisher, error) {
	ts, err := t.typeSupport(msgType)
	if err != nil {
		return nil, err
	}
	pub, err := t.node.NewPublisher(topic, ts, &rclgo.PublisherOptions{Qos: qosProfile(q)})
	if err != nil {
		return nil, fmt.Errorf("publisher %s: %w", topic, cleanErr(err))
	}
	h := handle(pub, "rcl_publisher_t")
	if h == nil {
		return nil, errors.New("rclgo: no rcl publisher handle (rclgo changed: see rosnode/datapath.go)")
	}
	return publisher{pub, h, t.pool}, nil
}

// PublisherTypes implements nodekit.Transport.
func (t *transport) PublisherTypes(topic string) ([]string, error) {
	infos, err := t.node.GetPublishersInfoByTopic(topic, true)
	if err != nil {
		return nil, cleanErr(err)
	}
	out := make([]string, len(infos))
	for i, in := range infos {
		out[i] = in.TopicType
	}
	return out, nil
}

// Log implements nodekit.Transport: the line goes to the console through
// rcl's logging (which applies --log-level) and, if the node's logger is
// enabled for its level, to /rosout.
func (t *transport) Log(l nodekit.LogLevel, msg string) {
	t.logMu.Lock()
	defer t.logMu.Unlock()
	lg := t.node.Logger()
	if !lg.IsEnabledFor(severity(l)) {
		return
	}
	switch l {
	case nodekit.LogDebug:
		_ = lg.Debug(msg)
	case nodekit.LogInfo:
		_ = lg.Info(msg)
	case nodekit.LogWarn:
		_ = lg.Warn(msg)
	default:
		_ = lg.Error(msg)
	}
	if t.rosout != nil {
		t.rosout.publish(l, msg)
	}
}

// Close implements nodekit.Transport: every entity is destroyed and rcl
// shut down.
func (t *transport) Close() error {
	t.logMu.Lock()
	t.rosout = nil
	t.logMu.Unlock()
	t.data.close() // before rcl shuts down
	return cleanErr(t.ctx.Close())
}
