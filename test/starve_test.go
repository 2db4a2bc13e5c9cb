//go:build ros2 && timealign_interfaces

package test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timealign/timealign/internal/testutil/cdrtest"
	diagmsg "github.com/timealign/timealign/msgs/diagnostic_msgs/msg"
	tamsg "github.com/timealign/timealign/msgs/timealign/msg"
	"github.com/timealign/timealign/pkg/stamp"
)

// cpuQuota is a cgroup that limits the CPU time of the processes in it.
type cpuQuota struct {
	dir   string // the cgroup's directory
	v2    bool
	procs string // the parent's cgroup.procs, where processes go back
}

// newCPUQuota creates a cgroup limited to share of one core (cgroup v2's
// cpu.max, or v1's cpu controller), or says why it cannot: not root, no
// cpu controller, a read-only /sys/fs/cgroup.
func newCPUQuota(t *testing.T, share float64) (*cpuQuota, error) {
	const period = 100_000 // µs
	quota := int(share * period)
	name := fmt.Sprintf("timealign_test_%d", os.Getpid())
	var q *cpuQuota
	if _, err := os.Stat("/sys/fs/cgroup/cgroup.controllers"); err == nil {
		ctl, err := os.ReadFile("/sys/fs/cgroup/cgroup.subtree_control")
		if err != nil || !strings.Contains(string(ctl), "cpu") {
			return nil, fmt.Errorf("cgroup v2 without the cpu controller for children (%q)", strings.TrimSpace(string(ctl)))
		}
		q = &cpuQuota{dir: filepath.Join("/sys/fs/cgroup", name), v2: true, procs: "/sys/fs/cgroup/cgroup.procs"}
	} else if _, err := os.Stat("/sys/fs/cgroup/cpu/cpu.cfs_quota_us"); err == nil {
		q = &cpuQuota{dir: filepath.Join("/sys/fs/cgroup/cpu", name), procs: "/sys/fs/cgroup/cpu/cgroup.procs"}
	} else {
		return nil, errors.New("no cgroup cpu controller under /sys/fs/cgroup")
	}
	if err := os.Mkdir(q.dir, 0o755); err != nil {
		return nil, err
	}
	t.Cleanup(func() { _ = os.Remove(q.dir) }) // once its processes are gone (cleanups run last first)
	var err error
	if q.v2 {
		err = os.WriteFile(filepath.Join(q.dir, "cpu.max"), fmt.Appendf(nil, "%d %d", quota, period), 0)
	} else {
		err = os.WriteFile(filepath.Join(q.dir, "cpu.cfs_period_us"), fmt.Append(nil, period), 0)
		if err == nil {
			err = os.WriteFile(filepath.Join(q.dir, "cpu.cfs_quota_us"), fmt.Append(nil, quota), 0)
		}
	}
	return q, err
}

// move puts process pid (all its threads) into the cgroup.
func (q *cpuQuota) move(pid int) error {
	return os.WriteFile(filepath.Join(q.dir, "cgroup.procs"), fmt.Append(nil, pid), 0)
}

// release puts process pid back where the test runs.
func (q *cpuQuota) release(pid int) error {
	return os.WriteFile(q.procs, fmt.Append(nil, pid), 0)
}

// TestStarvation: timestamp_estimator, pinned to a tenth of a core (a
// cgroup CPU quota) while it is offered 20 kHz of Imu (reliable, keeping
// all: several times what it can handle in that share), keeps serving
// `ros2 param` and publishing /diagnostics, which names the backlog (WARN);
// it drops the oldest waiting messages (counted in ~/status) rather than
// fall behind, so what it publishes stays recent; with the quota lifted,
// it handles every message again. It is skipped where the test cannot
// create a cgroup (not root, no cpu controller), and says so.
func TestStarvation(t *testing.T) {
	if _, err := exec.LookPath("ros2"); err != nil {
		t.Skip("ros2 CLI not on PATH")
	}
	quota, err := newCPUQuota(t, 0.1)
	if err != nil {
		t.Skipf("no CPU quota here: %v", err)
	}
	const name = "ta_starved"
	node := start(t, "timestamp_estimator", append([]string{"--ros-args", "-r", "__node:=" + name,
		"-r", "in:=/ta_test/starved_raw", "-r", "out:=/ta_test/starved", "-p", "message_type:=sensor_msgs/msg/Imu"}, keepAll...)...)
	p := newPeerQoS(t, "/ta_test/starved_raw", "/ta_test/starved", "sensor_msgs/msg/Imu", 10, true)
	status := newPeer(t, "/ta_test/unused_starved_status", "/"+name+"/status", "timealign/msg/TimestampEstimatorStatus")
	diag := newPeer(t, "/ta_test/unused_starved_diag", "/diagnostics", "diagnostic_msgs/msg/DiagnosticArray")
	waitDiscovered(t, p)
	pid := node.cmd.Process.Pid

	base := stamp.Time(time.Now().UnixNano())
	const period = 50 * time.Microsecond // 20 kHz
	sent, retries := 0, 0
	publish := func(n int, every time.Duration) {
		began := time.Now()
		for j := range n {
			if d := time.Until(began.Add(time.Duration(j) * every)); d > time.Millisecond {
				time.Sleep(d)
			}
			m := pad4(cdrtest.Message(base.Add(time.Duration(sent)*period), frame(sent), 307))
			for p.pub.PublishSerialized(m) != nil { // a reliable writer waiting for the node
				retries++
			}
			sent++
		}
	}
	publish(2000, 250*time.Microsecond) // warm: the estimator settles on the stream

	require.NoError(t, quota.move(pid))
	cpu0, starved, firstStarved := cpuTime(t, pid), time.Now(), sent
	diag.reset()
	type answer struct {
		took time.Duration
		out  string
		err  error
	}
	answers := make(chan answer, 1)
	go func() {
		time.Sleep(3 * time.Second) // into the backlog
		began := time.Now()
		out, err := ros2Param(t, "get", "/"+name, "inbox.max_messages")
		answers <- answer{time.Since(began), out, err}
	}()
	publish(160_000, period) // 8 s
	a := <-answers
	cpu := cpuTime(t, pid) - cpu0
	starvedFor := time.Since(starved)
	lastIn := sent - 1
	var lastOut int
	waitFor(t, 5*time.Second, "an output", func() bool { lastOut = lastFrame(p.received()); return lastOut >= 0 })
	st, ok := latest[*tamsg.TimestampEstimatorStatus](t, status, tamsg.TimestampEstimatorStatusTypeSupport)
	require.True(t, ok, "a ~/status while starved")
	reports, warns := 0, []string{}
	for _, b := range diag.received() {
		for _, s := range decode[*diagmsg.DiagnosticArray](t, b, diagmsg.DiagnosticArrayTypeSupport).Status {
			if s.HardwareId == "/"+name {
				reports++
				if s.Level == diagmsg.DiagnosticStatus_WARN && !slices.Contains(warns, s.Message) {
					warns = append(warns, s.Message)
				}
			}
		}
	}
	t.Logf("load: starved (quota 10%% of a core) for %v: CPU %v (%.0f%%), %d sent (%d publish retries), %d in, %d dropped by the inbox, "+
		"last out %d of %d; `ros2 param get` answered in %v; %d diagnostics, WARN: %q (load average %s)",
		starvedFor.Round(time.Millisecond), cpu, 100*cpu.Seconds()/starvedFor.Seconds(), sent, retries, st.MessagesIn, st.DroppedQueue,
		lastOut, lastIn, a.took.Round(time.Millisecond), reports, warns, loadAvg())
	require.LessOrEqual(t, cpu.Seconds(), 0.2*starvedFor.Seconds(), "the quota held the node to about a tenth of a core")
	require.NoError(t, a.err, a.out)
	require.Equal(t, "Integer value is: 1024", strings.TrimSpace(a.out))
	require.GreaterOrEqual(t, reports, int(starvedFor/time.Second)-3, "/diagnostics about once a second while starved")
	require.NotEmpty(t, warns, "a WARN while starved")
	require.True(t, strings.Contains(strings.Join(warns, "\n"), "backlog: ") || strings.Contains(strings.Join(warns, "\n"), "the inbox was full"),
		"the WARN names the backlog: %q", warns)
	require.Positive(t, st.DroppedQueue, "the node dropped what it could not handle")
	rate := float64(lastIn-firstStarved) / starvedFor.Seconds() // what the test could publish
	require.Greater(t, float64(lastOut), float64(lastIn)-rate, "the output within a second of the input: the oldest were dropped")

	require.NoError(t, quota.release(pid))
	waitFor(t, 20*time.Second, "the backlog handled", func() bool {
		st, ok := latest[*tamsg.TimestampEstimatorStatus](t, status, tamsg.TimestampEstimatorStatusTypeSupport)
		return ok && st.MessagesIn+st.DroppedQueue == uint64(sent) && int(st.MessagesOut) == len(p.received())
	})
	st, _ = latest[*tamsg.TimestampEstimatorStatus](t, status, tamsg.TimestampEstimatorStatusTypeSupport)
	dropped := st.DroppedQueue
	publish(2000, time.Millisecond)
	waitFor(t, 10*time.Second, "every message out again, none dropped", func() bool {
		st, ok := latest[*tamsg.TimestampEstimatorStatus](t, status, tamsg.TimestampEstimatorStatusTypeSupport)
		return ok && st.MessagesIn+st.DroppedQueue == uint64(sent) && int(st.MessagesOut) == len(p.received()) && lastFrame(p.received()) == sent-1
	})
	st, _ = latest[*tamsg.TimestampEstimatorStatus](t, status, tamsg.TimestampEstimatorStatusTypeSupport)
	require.Equal(t, dropped, st.DroppedQueue, "no drop once the quota is gone")
	diag.reset()
	waitFor(t, 5*time.Second, "/diagnostics OK again", func() bool {
		v, ok := diagValue(t, diag, "/"+name, "inbox.queued_messages")
		return ok && v == "0" && lastLevel(t, diag, "/"+name) == diagmsg.DiagnosticStatus_OK
	})
	node.stop(t)
}

// lastLevel is the level of the newest diagnostic of hardware id fqn
// (255 if none came).
func lastLevel(t *testing.T, diag *peer, fqn string) byte {
	got := diag.received()
	for i := len(got) - 1; i >= 0; i-- {
		for _, s := range decode[*diagmsg.DiagnosticArray](t, got[i], diagmsg.DiagnosticArrayTypeSupport).Status {
			if s.HardwareId == fqn {
				return s.Level
			}
		}
	}
	return 255
}
