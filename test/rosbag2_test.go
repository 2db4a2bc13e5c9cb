//go:build ros2

package test

// rosbag2 against timealign's bags, both ways: `ros2 bag info` and
// `ros2 bag play` accept what `timealign simulate --bag` and `timealign bag
// fix` write (MCAP and SQLite), and what `ros2 bag record` records of that
// playback reads back in pkg/bag with the same messages, byte for byte.
// They need rosbag2 (`ros2 bag`, with the mcap and sqlite3 storage plugins)
// in the sourced environment and skip, saying so, where it is not: ROS 2
// Humble's ros-humble-rosbag2 and ros-humble-rosbag2-storage-mcap, or a
// source build of ros2/rosbag2's humble branch. They start ROS 2 processes
// with DDS kept on this machine (loopback, multicast off, a random domain)
// and import no rclgo:
//
//	go test -tags ros2 -run Rosbag2 -v ./test/

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timealign/timealign/pkg/bag"
)

// rosbagEnv is the environment of the ros2 processes: DDS on loopback only
// (loopback_test.go), a domain of this test's own.
func rosbagEnv(t *testing.T) []string {
	t.Helper()
	env, err := loopbackEnv(t.TempDir())
	require.NoError(t, err)
	return append(os.Environ(), env...)
}

// rosbagTools skips the test unless `ros2 bag` is installed, and returns
// the storage plugins it has.
func rosbagTools(t *testing.T, env []string) map[string]bool {
	t.Helper()
	if _, err := exec.LookPath("ros2"); err != nil {
		t.Skip("ros2 is not on PATH: source a ROS 2 Humble with rosbag2 to run the rosbag2 tests")
	}
	cmd := exec.Command("ros2", "bag", "list", "storage")
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Skipf("`ros2 bag` is not available (%v: %s): install rosbag2 (ros-humble-rosbag2, "+
			"ros-humble-rosbag2-storage-mcap) to run the rosbag2 tests", err, firstLine(out))
	}
	plugins := map[string]bool{}
	for _, f := range strings.Fields(string(out)) {
		plugins[f] = true
	}
	return plugins
}

func firstLine(b []byte) string {
	s, _, _ := strings.Cut(strings.TrimSpace(string(b)), "\n")
	return s
}

// timealignCLI builds the timealign command.
func timealignCLI(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "timealign")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/timealign/timealign/cmd/timealign").CombinedOutput()
	require.NoError(t, err, "%s", out)
	return bin
}

// run runs a command to its end and returns its combined output.
func runTool(t *testing.T, env []string, timeout time.Duration, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s %s:\n%s", name, strings.Join(args, " "), out)
	return string(out)
}

// topicCount is a topic as `ros2 bag info` lists it.
type topicCount struct {
	typ   string
	count uint64
}

var infoTopic = regexp.MustCompile(`Topic: (\S+) \| Type: (\S+) \| Count: (\d+)`)

// ros2BagInfo runs `ros2 bag info` and returns its topics, message count
// and duration line.
func ros2BagInfo(t *testing.T, env []string, args ...string) (map[string]topicCount, uint64, string) {
	t.Helper()
	out := runTool(t, env, time.Minute, "ros2", append([]string{"bag", "info"}, args...)...)
	topics := map[string]topicCount{}
	for _, m := range infoTopic.FindAllStringSubmatch(out, -1) {
		n, err := strconv.ParseUint(m[3], 10, 64)
		require.NoError(t, err)
		topics[m[1]] = topicCount{m[2], n}
	}
	var total uint64
	var dur string
	for _, line := range strings.Split(out, "\n") {
		k, v, ok := strings.Cut(line, ":")
		switch {
		case ok && k == "Messages":
			total, _ = strconv.ParseUint(strings.TrimSpace(v), 10, 64)
		case ok && k == "Duration":
			dur = strings.TrimSpace(v)
		}
	}
	require.NotEmpty(t, topics, "ros2 bag info %v:\n%s", args, out)
	return topics, total, dur
}

// metaTopics returns the topics of a bag's metadata.yaml.
func metaTopics(m *bag.Metadata) map[string]topicCount {
	r := map[string]topicCount{}
	for _, ti := range m.Topics {
		r[ti.Name] = topicCount{ti.Type, ti.MessageCount}
	}
	return r
}

// payloads returns each topic's messages (the serialized bytes), sorted.
func payloads(t *testing.T, path string) map[string][]string {
	t.Helper()
	b, err := bag.Open(path)
	require.NoError(t, err)
	r := b.Records()
	defer r.Close()
	out := map[string][]string{}
	var rec bag.Record
	for {
		err := r.Next(&rec)
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err, path)
		if rec.Kind == bag.KindMessage {
			out[rec.Message.Topic.Name] = append(out[rec.Message.Topic.Name], string(rec.Message.Data))
		}
	}
	require.False(t, r.Skipped().Any(), "%s: skipped %+v", path, r.Skipped())
	for _, v := range out {
		slices.Sort(v)
	}
	return out
}

// reliableQoS writes a QoS override file (reliable, keep all) for the
// topics: playback and recording lose nothing, whatever the load.
func reliableQoS(t *testing.T, topics []string) string {
	t.Helper()
	var b strings.Builder
	for _, tp := range topics {
		fmt.Fprintf(&b, "%s: {history: keep_all, reliability: reliable, durability: volatile}\n", tp)
	}
	p := filepath.Join(t.TempDir(), "qos.yaml")
	require.NoError(t, os.WriteFile(p, []byte(b.String()), 0o644))
	return p
}

// TestRosbag2AcceptsOurBags: `ros2 bag info` reads the metadata.yaml and the
// storage files that timealign writes as they say, and `ros2 bag play` plays
// every message, as a `ros2 bag record` of the playback shows, which
// timealign reads back (a bag rosbag2 wrote) with the same bytes and with
// the counts its metadata.yaml gives.
func TestRosbag2AcceptsOurBags(t *testing.T) {
	env := rosbagEnv(t)
	plugins := rosbagTools(t, env)
	cli := timealignCLI(t)
	cmd := exec.Command("ros2", "interface", "show", "timealign/msg/MatchedSet")
	cmd.Env = env
	haveMatchedSet := cmd.Run() == nil

	for _, c := range []struct {
		name, storage string
		simArgs       []string
		fixArgs       []string
	}{
		{"mcap-zstd-keep-sync", "mcap", []string{"--compression", "zstd"},
			[]string{"--time-policy", "keep", "--sync-topics", "/imu/data_raw,/camera/image_raw"}},
		{"sqlite3-sensor-time-split", "sqlite3", []string{"--max-bag-size", "100000"},
			[]string{"--time-policy", "sensor-time"}},
		{"mcap-lz4-restamp", "mcap", []string{"--compression", "lz4"}, []string{"--time-policy", "restamp"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if !plugins[c.storage] {
				t.Skipf("rosbag2 has no %s storage plugin here", c.storage)
			}
			dir := t.TempDir()
			in, out := filepath.Join(dir, "in"), filepath.Join(dir, "out")
			runTool(t, env, time.Minute, cli, append([]string{"simulate", "--bag", in, "--streams", "imu,camera,lidar",
				"--duration", "3s", "--storage", c.storage}, c.simArgs...)...)
			runTool(t, env, time.Minute, cli, append([]string{"bag", "fix", in, out, "--quiet",
				"--apply", "/imu/data_raw=timestamp_estimator", "--apply", "/camera/image_raw=timestamp_estimator",
				"--apply", "/scan=clock_sync"}, c.fixArgs...)...)

			for _, p := range []string{in, out} {
				b, err := bag.Open(p)
				require.NoError(t, err)
				want := metaTopics(b.Metadata)
				// metadata.yaml, as ros2 bag info reads it.
				got, total, dur := ros2BagInfo(t, env, p)
				require.Equal(t, want, got, p)
				require.Equal(t, b.Metadata.MessageCount, total, p)
				d := b.Metadata.Duration
				require.Equal(t, fmt.Sprintf("%d.%09ds", d/time.Second, d%time.Second), dur, p)
				// Each storage file, as rosbag2's storage plugin reads it.
				var sum uint64
				perTopic := map[string]uint64{}
				for _, f := range b.Files {
					got, n, _ := ros2BagInfo(t, env, f, "-s", c.storage)
					for k, v := range got {
						require.Equal(t, want[k].typ, v.typ, "%s %s", f, k)
						perTopic[k] += v.count
					}
					sum += n
				}
				require.Equal(t, b.Metadata.MessageCount, sum, "the files' messages")
				for k, v := range want {
					require.Equal(t, v.count, perTopic[k], "%s: %s in the files", p, k)
				}
			}

			// Play OUT while rosbag2 records it.
			ob, err := bag.Open(out)
			require.NoError(t, err)
			var topics []string
			for _, ti := range ob.Metadata.Topics {
				if ti.Type != "timealign/msg/MatchedSet" || haveMatchedSet {
					topics = append(topics, ti.Name)
				}
			}
			qos := reliableQoS(t, topics)
			rec := filepath.Join(dir, "rec")
			var recOut bytes.Buffer
			recCmd := exec.Command("ros2", append([]string{"bag", "record", "-s", c.storage, "-o", rec,
				"--qos-profile-overrides-path", qos}, topics...)...)
			recCmd.Env, recCmd.Stdout, recCmd.Stderr = env, &recOut, &recOut
			recCmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			require.NoError(t, recCmd.Start())
			stopped := false
			defer func() {
				if !stopped {
					_ = syscall.Kill(-recCmd.Process.Pid, syscall.SIGKILL)
					_ = recCmd.Wait()
				}
			}()
			time.Sleep(2 * time.Second)
			// --delay: the recorder discovers the player's publishers
			// before the first message.
			playOut := runTool(t, env, 2*time.Minute, "ros2", "bag", "play", out, "--delay", "3",
				"--disable-keyboard-controls", "--qos-profile-overrides-path", qos)
			require.NotContains(t, playOut, "[ERROR]")
			time.Sleep(time.Second)
			require.NoError(t, recCmd.Process.Signal(syscall.SIGINT))
			done := make(chan error, 1)
			go func() { done <- recCmd.Wait() }()
			select {
			case <-done:
				stopped = true
			case <-time.After(30 * time.Second):
				t.Fatalf("ros2 bag record did not stop on SIGINT:\n%s", recOut.String())
			}

			// The recording, a bag rosbag2 wrote: timealign reads the
			// counts its metadata.yaml gives, and the messages played.
			rb, err := bag.Open(rec)
			require.NoError(t, err, "%s", recOut.String())
			s, err := rb.Summarize()
			require.NoError(t, err)
			sum := map[string]topicCount{}
			for _, ts := range s.Topics {
				sum[ts.Topic.Name] = topicCount{ts.Topic.Type, ts.Count}
			}
			require.Equal(t, metaTopics(rb.Metadata), sum)
			want := payloads(t, out)
			got := payloads(t, rec)
			for _, tp := range topics {
				require.Equal(t, len(want[tp]), len(got[tp]), "%s: messages played and recorded\n%s", tp, recOut.String())
				require.True(t, slices.Equal(want[tp], got[tp]), "%s: the bytes recorded are those played", tp)
			}
		})
	}
}
