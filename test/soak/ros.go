//go:build ros2 && timealign_interfaces

package main

import (
	"context"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tiiuae/rclgo/pkg/rclgo"
	"github.com/tiiuae/rclgo/pkg/rclgo/types"

	bimsg "github.com/timealign/timealign/msgs/builtin_interfaces/msg"
	diagmsg "github.com/timealign/timealign/msgs/diagnostic_msgs/msg"
	tamsg "github.com/timealign/timealign/msgs/timealign/msg"
	"github.com/timealign/timealign/pkg/cdr"
	"github.com/timealign/timealign/pkg/sim/payload"
	"github.com/timealign/timealign/pkg/stamp"
	"github.com/timealign/timealign/test/soak/internal/soak"
)

// counters reads a node's ~/status: messages in, out, and dropped for a
// reason a fault may cause (not by design: the synchronizer's unmatched
// messages, sensor_sim's simulated losses).
type counters func(b []byte) (in, out, dropped uint64, err error)

// statusOf decodes status messages of type T with f.
func statusOf[T types.Message](ts types.MessageTypeSupport, f func(T) (in, out, dropped uint64)) counters {
	return func(b []byte) (in, out, dropped uint64, err error) {
		m, err := rclgo.Deserialize(b, ts)
		if err != nil {
			return 0, 0, 0, err
		}
		v, ok := m.(T)
		if !ok {
			return 0, 0, 0, fmt.Errorf("a %T, want %T", m, v)
		}
		in, out, dropped = f(v)
		return in, out, dropped, nil
	}
}

func sum(v []uint64) (s uint64) {
	for _, x := range v {
		s += x
	}
	return s
}

// statusType is a node's ~/status: its type and how to read its counters.
type statusType struct {
	typ    string
	decode counters
}

// statusTypes are the ~/status of the demo's nodes.
var statusTypes = map[string]statusType{
	"sensor_sim": {"timealign/msg/SensorSimStatus", statusOf(tamsg.SensorSimStatusTypeSupport,
		func(s *tamsg.SensorSimStatus) (uint64, uint64, uint64) { return 0, sum(s.Published), s.DroppedQueue })},
	"imu_stamps": {"timealign/msg/TimestampEstimatorStatus", statusOf(tamsg.TimestampEstimatorStatusTypeSupport,
		func(s *tamsg.TimestampEstimatorStatus) (uint64, uint64, uint64) {
			return s.MessagesIn, s.MessagesOut, s.DroppedRejected + s.DroppedMalformed + s.DroppedQueue
		})},
	"scan_clock": {"timealign/msg/ClockSyncStatus", statusOf(tamsg.ClockSyncStatusTypeSupport,
		func(s *tamsg.ClockSyncStatus) (uint64, uint64, uint64) {
			return s.MessagesIn, s.MessagesOut, s.DroppedInvalid + s.DroppedMalformed + s.DroppedQueue
		})},
	"sync": {"timealign/msg/SyncStatus", statusOf(tamsg.SyncStatusTypeSupport,
		func(s *tamsg.SyncStatus) (uint64, uint64, uint64) {
			return sum(s.Received), s.Sets, s.DroppedQueue + sum(s.DroppedMalformed)
		})},
	"stamp_monitor": {"timealign/msg/StampMonitorStatus", statusOf(tamsg.StampMonitorStatusTypeSupport,
		func(s *tamsg.StampMonitorStatus) (uint64, uint64, uint64) {
			return s.Truths, 0, s.DroppedPending + s.DroppedMalformed + s.DroppedQueue
		})},
}

// ros is the soak's own ROS node: it publishes /clock and the floods and
// watches the demo (monitor).
type ros struct {
	ctx    *rclgo.Context
	node   *rclgo.Node
	cancel context.CancelFunc
	wg     sync.WaitGroup

	clock    *simClock
	imuFlood *flood
	imgFlood *flood
	mon      *monitor
}

// newROS starts the soak's node: /clock published at c.clockHz from now
// on, the flood publishers ready, the demo's topics watched.
func newROS(c config, nodes []string) (*ros, error) {
	rc, err := rclgo.NewContext(rclgo.ClockTypeROSTime, nil)
	if err != nil {
		return nil, err
	}
	r := &ros{ctx: rc, mon: newMonitor(nodes)}
	ok := false
	defer func() {
		if !ok {
			rc.Close()
		}
	}()
	if r.node, err = rc.NewNode(fmt.Sprintf("timealign_soak_%d", os.Getpid()), ""); err != nil {
		return nil, err
	}
	reliable := rclgo.NewDefaultQosProfile()
	clockPub, err := r.publisher("/clock", "rosgraph_msgs/msg/Clock", reliable)
	if err != nil {
		return nil, err
	}
	r.clock = &simClock{pub: clockPub}
	ns := "/" + c.namespace + "/"
	bestEffort := rclgo.NewDefaultQosProfile()
	bestEffort.Reliability = rclgo.ReliabilityBestEffort
	r.imuFlood = &flood{hz: c.imuHz, clock: r.clock,
		open: func() (*rclgo.Publisher, error) { return r.publisher(ns+"imu/data_raw", payload.ImuType, bestEffort) },
		msg:  payload.AppendImu(nil, 0, "soak_flood", &payload.Imu{Orientation: [4]float64{0, 0, 0, 1}})}
	img := &payload.Image{Width: uint32(c.imageW), Height: uint32(c.imageH), Encoding: "rgb8", Step: uint32(3 * c.imageW),
		Data: make([]byte, 3*c.imageW*c.imageH)}
	r.imgFlood = &flood{hz: c.imageHz, clock: r.clock,
		open: func() (*rclgo.Publisher, error) {
			return r.publisher(ns+"camera/image_raw", payload.ImageType, reliable)
		},
		msg: payload.AppendImage(nil, 0, "soak_flood", img)}
	if c.lastingFloodWriters {
		for _, f := range []*flood{r.imuFlood, r.imgFlood} {
			if f.pub, err = f.open(); err != nil {
				return nil, err
			}
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := r.watch(ctx, ns); err != nil {
		cancel()
		return nil, err
	}
	r.cancel = cancel
	r.wg.Add(1)
	go func() { defer r.wg.Done(); r.clock.run(ctx, c.clockHz) }()
	ok = true
	return r, nil
}

func (r *ros) publisher(topic, typ string, q rclgo.QosProfile) (*rclgo.Publisher, error) {
	ts, err := typeSupport(typ)
	if err != nil {
		return nil, err
	}
	return r.node.NewPublisher(topic, ts, &rclgo.PublisherOptions{Qos: q})
}

func typeSupport(typ string) (types.MessageTypeSupport, error) {
	pkg, name, _ := strings.Cut(strings.Replace(typ, "/msg/", "/", 1), "/")
	return rclgo.LoadDynamicMessageTypeSupport(pkg, name)
}

// watch subscribes, best effort with deep queues, to every node's
// ~/status, /diagnostics, the ground truth and the nodes' main outputs,
// and runs the wait set until ctx ends.
func (r *ros) watch(ctx context.Context, ns string) error {
	ws, err := r.ctx.NewWaitSet()
	if err != nil {
		return err
	}
	q := rclgo.NewDefaultQosProfile()
	q.Reliability = rclgo.ReliabilityBestEffort
	q.Depth = 1000
	sub := func(topic, typ string, f func(b []byte, at time.Time)) error {
		ts, err := typeSupport(typ)
		if err != nil {
			return err
		}
		s, err := r.node.NewSubscription(topic, ts, &rclgo.SubscriptionOptions{Qos: q}, func(s *rclgo.Subscription) {
			for range 256 {
				b, _, err := s.TakeSerializedMessage()
				if err != nil {
					return
				}
				f(b, time.Now())
			}
		})
		if err != nil {
			return fmt.Errorf("subscribe %s: %w", topic, err)
		}
		ws.AddSubscriptions(s)
		return nil
	}
	for _, n := range demoNodes {
		st, name := statusTypes[n.name], n.name
		if err := sub(ns+n.name+"/status", st.typ, func(b []byte, at time.Time) { r.mon.onStatus(name, st.decode, b, at) }); err != nil {
			return err
		}
		if n.output == "" || n.name == "sensor_sim" {
			continue
		}
		stream := n.name
		if err := sub(ns+n.output, n.outputType, func(b []byte, at time.Time) { r.mon.output(stream, b, at) }); err != nil {
			return err
		}
	}
	if err := sub(ns+"truth", "timealign/msg/GroundTruth", r.mon.truth); err != nil {
		return err
	}
	if err := sub("/diagnostics", "diagnostic_msgs/msg/DiagnosticArray", func(b []byte, at time.Time) { r.mon.diagnostics(ns, b) }); err != nil {
		return err
	}
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		if err := ws.Run(ctx); err != nil && ctx.Err() == nil {
			fmt.Fprintln(os.Stderr, "soak: wait set:", err)
		}
	}()
	return nil
}

// notUp names what the demo still lacks: a node's process, its status,
// the synchronizer's sets, matched IMU and scan stamps.
func (r *ros) notUp(procs map[string]soak.Proc) []string {
	return r.mon.notUp(procs)
}

func (r *ros) close() {
	if r.cancel != nil {
		r.cancel()
	}
	r.wg.Wait()
	r.ctx.Close()
}

// simClock is the time the soak publishes on /clock: the host's, minus
// the jumps back so far.
type simClock struct {
	pub *rclgo.Publisher
	mu  sync.Mutex
	lag time.Duration
}

func (c *simClock) now() stamp.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return stamp.Time(time.Now().UnixNano()).Add(-c.lag)
}

// jumpBack sets the clock back by d: its next tick says so.
func (c *simClock) jumpBack(d time.Duration) {
	c.mu.Lock()
	c.lag += d
	c.mu.Unlock()
}

// run publishes the time at hz until ctx ends.
func (c *simClock) run(ctx context.Context, hz float64) {
	t := time.NewTicker(time.Duration(float64(time.Second) / hz))
	defer t.Stop()
	var buf []byte
	for {
		e := cdr.NewEncoder(buf) // rosgraph_msgs/msg/Clock: a builtin_interfaces/Time
		e.Time(c.now())
		buf = e.B
		if err := c.pub.PublishSerialized(buf); err != nil && ctx.Err() == nil {
			fmt.Fprintln(os.Stderr, "soak: /clock:", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// flood publishes one message, stamped with the soak's clock, at a rate:
// from a publisher of its own for each flood (open, closed after it: a
// driver started with a wrong setting, then stopped), or from pub for the
// whole soak (-lasting-flood-writers).
type flood struct {
	pub   *rclgo.Publisher
	open  func() (*rclgo.Publisher, error)
	hz    float64
	clock *simClock
	msg   []byte
}

// run publishes for d (or until ctx ends), paced every millisecond, and
// returns how many messages it published.
func (f *flood) run(ctx context.Context, d time.Duration) (sent uint64, err error) {
	pub := f.pub
	if pub == nil {
		if pub, err = f.open(); err != nil {
			return 0, fmt.Errorf("flood publisher: %w", err)
		}
		defer func() {
			if cerr := pub.Close(); cerr != nil && err == nil {
				err = fmt.Errorf("flood publisher: %w", cerr)
			}
		}()
	}
	start := time.Now()
	for {
		el := time.Since(start)
		if el >= d || ctx.Err() != nil {
			return sent, nil
		}
		for due := uint64(el.Seconds() * f.hz); sent <= due && time.Since(start) < d; sent++ {
			if err := stamp.SetHeaderStamp(f.msg, f.clock.now()); err != nil {
				return sent, err
			}
			if err := pub.PublishSerialized(f.msg); err != nil {
				return sent, err
			}
		}
		time.Sleep(time.Millisecond)
	}
}

// monitor holds what the soak hears from the demo, for the sampler.
type monitor struct {
	mu      sync.Mutex
	start   time.Time
	nodes   []string
	status  map[string]nodeStatus
	inbox   map[string]uint64 // node → inbox.dropped
	outputs map[string]int    // node → messages of its main output since the last take
	match   *soak.Matcher
}

type nodeStatus struct {
	at               time.Time
	in, out, dropped uint64
}

func newMonitor(nodes []string) *monitor {
	return &monitor{start: time.Now(), nodes: nodes, status: map[string]nodeStatus{}, inbox: map[string]uint64{},
		outputs: map[string]int{}, match: soak.NewMatcher(3 * time.Second)}
}

func (m *monitor) onStatus(node string, decode counters, b []byte, at time.Time) {
	in, out, dropped, err := decode(b)
	if err != nil {
		fmt.Fprintf(os.Stderr, "soak: %s/status: %v\n", node, err)
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.status[node] = nodeStatus{at, in, out, dropped}
}

func (m *monitor) diagnostics(ns string, b []byte) {
	msg, err := rclgo.Deserialize(b, diagmsg.DiagnosticArrayTypeSupport)
	a, ok := msg.(*diagmsg.DiagnosticArray)
	if err != nil || !ok {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, s := range a.Status {
		node, ok := strings.CutPrefix(s.HardwareId, ns)
		if !ok {
			continue
		}
		for _, kv := range s.Values {
			if kv.Key == "inbox.dropped" {
				if v, err := strconv.ParseUint(kv.Value, 10, 64); err == nil {
					m.inbox[node] = v
				}
			}
		}
	}
}

func (m *monitor) truth(b []byte, at time.Time) {
	msg, err := rclgo.Deserialize(b, tamsg.GroundTruthTypeSupport)
	if err != nil {
		return
	}
	g, ok := msg.(*tamsg.GroundTruth)
	if !ok {
		return
	}
	tr, err := fromROS(g.TrueStamp)
	if err != nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.outputs["sensor_sim"]++
	m.match.Truth(g.Fingerprint, tr, at.Sub(m.start))
}

func (m *monitor) output(node string, b []byte, at time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.outputs[node]++
	if node == "sync" {
		return // MatchedSet: counted only
	}
	st, err1 := stamp.HeaderStamp(b)
	fp, err2 := stamp.Fingerprint(b)
	if err1 == nil && err2 == nil {
		m.match.Output(node, fp, st, at.Sub(m.start))
	}
}

func fromROS(t bimsg.Time) (stamp.Time, error) { return stamp.FromROS(t.Sec, t.Nanosec) }

// forget drops what the monitor holds of a node's previous process.
func (m *monitor) forget(node string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.status, node)
	delete(m.inbox, node)
}

// take fills a node's sample with what the monitor heard, and starts
// the next second of its output.
func (m *monitor) take(x *soak.Sample, now time.Time, elapsed time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	x.StatusAge, x.Rate, x.Error = -1, math.NaN(), math.NaN()
	if s, ok := m.status[x.Node]; ok {
		x.Status, x.In, x.Out, x.Dropped, x.StatusAge = true, s.in, s.out, s.dropped, now.Sub(s.at)
	}
	x.InboxDropped, x.Diag = m.inbox[x.Node]
	for _, n := range demoNodes {
		if n.name != x.Node || n.output == "" {
			continue
		}
		x.Rate = float64(m.outputs[x.Node]) / elapsed.Seconds()
		m.outputs[x.Node] = 0
		if n.errors {
			x.Error, _ = m.match.Take(x.Node)
		}
	}
}

// prune forgets unmatched messages and truths older than the matcher's
// keep time.
func (m *monitor) prune(now time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.match.Prune(now.Sub(m.start))
}

func (m *monitor) notUp(procs map[string]soak.Proc) []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var missing []string
	for _, n := range m.nodes {
		switch _, up := procs[n]; {
		case !up:
			missing = append(missing, n+": no process")
		case m.status[n].at.IsZero():
			missing = append(missing, n+": no status")
		}
	}
	for _, n := range demoNodes {
		if n.output != "" && m.outputs[n.name] == 0 {
			missing = append(missing, n.name+": nothing on "+n.output)
		}
	}
	return missing
}
