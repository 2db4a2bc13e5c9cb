package soak

import (
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A stat line whose command name holds a space and a parenthesis.
const statLine = "4321 (sync (x) y) S 4000 4321 4000 0 -1 4194560 100 0 0 0 250 75 0 0 20 0 12 0 98765 1000000 2000 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n"

func TestParseStat(t *testing.T) {
	p, err := ParseStat(statLine)
	require.NoError(t, err)
	require.Equal(t, Proc{PID: 4321, PPID: 4000, State: 'S', CPUTicks: 325, StartTicks: 98765}, p)
	for _, bad := range []string{"", "4321 sync S 1", "x (a) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20", "1 (a) S 1 2"} {
		_, err := ParseStat(bad)
		require.Error(t, err, "%q", bad)
	}
}

func TestParseStatus(t *testing.T) {
	status := "Name:\tsync\nState:\tS (sleeping)\nVmHWM:\t   81234 kB\nVmRSS:\t   40960 kB\nCapEff:\t000001ffffffffff\n"
	rss, peak, capEff, err := ParseStatus(status)
	require.NoError(t, err)
	require.Equal(t, int64(40960<<10), rss)
	require.Equal(t, int64(81234<<10), peak)
	require.Equal(t, uint64(0x1ffffffffff), capEff)
	rss, peak, _, err = ParseStatus("Name:\tzombie\nState:\tZ (zombie)\n")
	require.NoError(t, err)
	require.Zero(t, rss+peak)
	_, _, _, err = ParseStatus("VmRSS:\t12 MB\n")
	require.Error(t, err)
}

// TestReadProc reads this test's own process and a child's.
func TestReadProc(t *testing.T) {
	p, err := ReadProc(os.Getpid())
	require.NoError(t, err)
	require.Equal(t, os.Getpid(), p.PID)
	require.Equal(t, os.Getppid(), p.PPID)
	require.Greater(t, p.RSS, int64(1<<20))
	require.GreaterOrEqual(t, p.PeakRSS, p.RSS)
	require.Equal(t, os.Args[0], p.Cmdline[0])

	// A shell that stays (it runs two commands) with a node's arguments
	// ($0 and on).
	cmd := exec.Command("sh", "-c", "sleep 30; :", "--ros-args", "-r", "__node:=sleeper")
	require.NoError(t, cmd.Start())
	defer func() { _ = cmd.Process.Kill() }()
	require.Eventually(t, func() bool { // the child has exec'd
		kids, err := Children(os.Getpid())
		require.NoError(t, err)
		for _, k := range kids {
			if k.PID == cmd.Process.Pid && NodeName(k.Cmdline) == "sleeper" {
				return true
			}
		}
		return false
	}, 5*time.Second, 5*time.Millisecond, "the child among the children, by its node name")
	require.False(t, Exited(cmd.Process.Pid))
	require.NoError(t, cmd.Process.Kill())
	require.Eventually(t, func() bool { return Exited(cmd.Process.Pid) }, 5*time.Second, 5*time.Millisecond, "a zombie counts as exited")
	_ = cmd.Wait()
	require.True(t, Exited(cmd.Process.Pid))
	_, err = ReadProc(cmd.Process.Pid)
	require.ErrorIs(t, err, ErrNoProcess)
}

func TestNodeName(t *testing.T) {
	require.Equal(t, "sync", NodeName([]string{"/x/synchronizer", "--ros-args", "-r", "__node:=sync", "-r", "__ns:=/demo"}))
	require.Equal(t, "imu_stamps", NodeName([]string{"e", "--ros-args", "--remap", "__node:=imu_stamps"}))
	require.Equal(t, "", NodeName([]string{"e", "--ros-args", "-r", "in:=imu", "-r"}))
}

func TestHostClockSteps(t *testing.T) {
	ok, why := HostClockSteps(false, 1<<25)
	require.False(t, ok)
	require.Contains(t, why, "skipped: not safe")
	ok, why = HostClockSteps(true, 0x1ffffffffff&^(1<<25))
	require.False(t, ok)
	require.Equal(t, "skipped: not permitted (no CAP_SYS_TIME)", why)
	ok, why = HostClockSteps(true, 1<<25)
	require.True(t, ok)
	require.Empty(t, why)
}

func TestLaunchExit(t *testing.T) {
	for line, want := range map[string][3]int{
		"[INFO] [sync-4]: process has finished cleanly [pid 4321]":                                         {4321, 0, 1},
		"[ERROR] [sensor_sim-1]: process has died [pid 77, exit code -9, cmd '/x/sensor_sim --ros-args'].": {77, -9, 1},
		"[ERROR] [sync-4]: process has died [pid 78, exit code 1, cmd 'x'].":                               {78, 1, 1},
		"[INFO] [sync-4]: process started with pid [4321]":                                                 {0, 0, 0},
		"[sync-4] [INFO] [1700000000.1] [demo.sync]: process has finished cleanly, they say":               {0, 0, 0},
	} {
		pid, code, ok := LaunchExit(line)
		require.Equal(t, want, [3]int{pid, code, map[bool]int{true: 1}[ok]}, line)
	}
}
