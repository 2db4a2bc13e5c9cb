//go:build ros2 && timealign_interfaces

package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/timealign/timealign/test/loopback"
	"github.com/timealign/timealign/test/soak/internal/soak"
)

// demoNode is a node of launch/demo.launch.py, as the soak sees it.
type demoNode struct {
	name, exe string
	// inputs are its input remappings (name → topic relative to the
	// demo's namespace), for a fresh copy of the node in another
	// namespace that listens to the demo (-terms).
	inputs [][2]string
	// output is its main output (relative to the demo's namespace) and
	// outputType its type; errors: the soak measures its stamps against
	// the ground truth.
	output, outputType string
	errors             bool
}

// demoNodes are the demo's nodes, with the remappings of
// launch/demo.launch.py.
var demoNodes = []demoNode{
	{name: "sensor_sim", exe: "sensor_sim", output: "truth", outputType: "timealign/msg/GroundTruth"},
	{name: "imu_stamps", exe: "timestamp_estimator",
		inputs: [][2]string{{"in", "imu/data_raw"}, {"reference", "imu/reference"}},
		output: "imu/data", outputType: "sensor_msgs/msg/Imu", errors: true},
	{name: "scan_clock", exe: "clock_sync", inputs: [][2]string{{"in", "scan_raw"}},
		output: "scan", outputType: "sensor_msgs/msg/LaserScan", errors: true},
	{name: "sync", exe: "synchronizer",
		inputs: [][2]string{{"in0", "imu/data"}, {"in1", "scan"}, {"in2", "camera/image_raw"}},
		output: "sync/matched", outputType: "timealign/msg/MatchedSet"},
	{name: "stamp_monitor", exe: "stamp_monitor",
		inputs: [][2]string{{"truth", "truth"}, {"in0", "imu/data"}, {"in1", "scan"}}},
}

func nodeNames() []string {
	names := make([]string, len(demoNodes))
	for i, n := range demoNodes {
		names[i] = n.name
	}
	return names
}

// setEnv keeps DDS on loopback (package loopback, its files in dir) and,
// given a colcon install, puts the package's prefix first, as the
// integration tests do.
func setEnv(dir, install string) error {
	env, err := loopback.Env(dir, os.Getenv("ROS_DISTRO"))
	if err != nil {
		return err
	}
	if install != "" {
		prefix := filepath.Join(install, "timealign")
		env = append(env, "AMENT_PREFIX_PATH="+prefix+":"+os.Getenv("AMENT_PREFIX_PATH"),
			"LD_LIBRARY_PATH="+filepath.Join(prefix, "lib")+":"+os.Getenv("LD_LIBRARY_PATH"))
	}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		if err := os.Setenv(k, v); err != nil {
			return err
		}
	}
	return nil
}

// packagePrefix is the first prefix of AMENT_PREFIX_PATH that holds the
// package's executables and demo configuration.
func packagePrefix() (string, error) {
	for _, p := range filepath.SplitList(os.Getenv("AMENT_PREFIX_PATH")) {
		if _, err := os.Stat(filepath.Join(p, "share", "timealign", "config", "demo.yaml")); err == nil {
			return p, nil
		}
	}
	return "", errors.New("the timealign package is not installed in AMENT_PREFIX_PATH: source its install or give -install")
}

// launch is the ros2 launch process of the demo, which the soak started.
type launch struct {
	cmd  *exec.Cmd
	done chan struct{} // closed when it has exited
	wg   sync.WaitGroup

	mu    sync.Mutex
	exits map[int]int // PID → exit code, as its log says
}

// startLaunch starts the demo with use_sim_time and respawn, its output
// in logPath. It runs in a process group of its own: a Ctrl-C reaches
// the soak alone, which stops the demo in order.
func startLaunch(namespace, logPath string) (*launch, error) {
	log, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	l := &launch{done: make(chan struct{}), exits: map[int]int{}}
	l.cmd = exec.Command("ros2", "launch", "timealign", "demo.launch.py",
		"namespace:="+namespace, "use_sim_time:=true", "respawn:=true")
	l.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	pr, pw := io.Pipe()
	l.cmd.Stdout, l.cmd.Stderr = pw, pw
	if err := l.cmd.Start(); err != nil {
		log.Close()
		return nil, fmt.Errorf("ros2 launch: %w", err)
	}
	l.wg.Add(2)
	go func() {
		defer l.wg.Done()
		_ = l.cmd.Wait()
		pw.Close()
		close(l.done)
	}()
	go func() { // the log, and the exits it reports
		defer l.wg.Done()
		defer log.Close()
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			fmt.Fprintln(log, sc.Text())
			if pid, code, ok := soak.LaunchExit(sc.Text()); ok {
				l.mu.Lock()
				l.exits[pid] = code
				l.mu.Unlock()
			}
		}
		_, _ = io.Copy(io.Discard, pr)
	}()
	return l, nil
}

// nodes returns the demo's node processes by node name.
func (l *launch) nodes() (map[string]soak.Proc, error) {
	kids, err := soak.Children(l.cmd.Process.Pid)
	if err != nil {
		return nil, err
	}
	m := map[string]soak.Proc{}
	for _, k := range kids {
		if name := soak.NodeName(k.Cmdline); name != "" && k.State != 'Z' {
			m[name] = k
		}
	}
	return m, nil
}

// exitCode waits up to d for the log to report how process pid ended.
func (l *launch) exitCode(pid int, d time.Duration) (code int, ok bool) {
	deadline := time.Now().Add(d)
	for {
		l.mu.Lock()
		code, ok = l.exits[pid]
		l.mu.Unlock()
		if ok || time.Now().After(deadline) {
			return code, ok
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// stop sends ros2 launch SIGINT (it stops every node) and waits 20 s;
// then SIGTERM and, 5 s later, SIGKILL to it and to the nodes it left.
func (l *launch) stop() error {
	defer l.wg.Wait()
	if l.exited() {
		return nil
	}
	nodes, _ := l.nodes()
	_ = l.cmd.Process.Signal(syscall.SIGINT)
	if l.waitExit(20 * time.Second) {
		return nil
	}
	_ = l.cmd.Process.Signal(syscall.SIGTERM)
	if !l.waitExit(5 * time.Second) {
		_ = l.cmd.Process.Kill()
	}
	for _, p := range nodes {
		if !soak.Exited(p.PID) {
			_ = syscall.Kill(p.PID, syscall.SIGKILL)
		}
	}
	<-l.done
	return errors.New("ros2 launch did not exit within 20 s of SIGINT: stopped it and its nodes")
}

func (l *launch) exited() bool {
	select {
	case <-l.done:
		return true
	default:
		return false
	}
}

func (l *launch) waitExit(d time.Duration) bool {
	select {
	case <-l.done:
		return true
	case <-time.After(d):
		return false
	}
}

// waitUp waits until every node of the demo runs and has published its
// status, the synchronizer its sets, and both corrected streams have been
// matched to their ground truth.
func waitUp(ctx context.Context, l *launch, r *ros, d time.Duration) error {
	deadline := time.Now().Add(d)
	for {
		nodes, err := l.nodes()
		if err != nil {
			return err
		}
		missing := r.notUp(nodes)
		if len(missing) == 0 {
			return nil
		}
		switch {
		case l.exited():
			return errors.New("ros2 launch exited (see launch.log)")
		case time.Now().After(deadline):
			return fmt.Errorf("the demo was not up within %v: %s (see launch.log)", d, strings.Join(missing, "; "))
		case !sleepUntil(ctx, time.Now().Add(200*time.Millisecond)):
			return ctx.Err()
		}
	}
}
