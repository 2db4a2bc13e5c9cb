package cpuquota_test

import (
	"os"
	"testing"
	"testing/fstest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timealign/timealign/nodes/internal/cpuquota"
)

// The mountinfo lines of the hierarchies the cases use.
const (
	miV1 = "30 25 0:26 / /sys/fs/cgroup/cpu,cpuacct rw,nosuid - cgroup cgroup rw,cpu,cpuacct\n" +
		"31 25 0:27 / /sys/fs/cgroup/cpuset rw,nosuid - cgroup cgroup rw,cpuset\n"
	miV2        = "29 25 0:25 / /sys/fs/cgroup rw,nosuid shared:4 - cgroup2 cgroup2 rw,nsdelegate\n"
	miContainer = "29 25 0:25 /docker/abc /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw\n"
)

func file(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s)} }

// TestRead: the throttled time and quota of the process's cgroup and its
// ancestors, on cgroup v1 and v2, in a container's namespace; errors where
// there is no CPU controller.
func TestRead(t *testing.T) {
	for _, tc := range []struct {
		name string
		fs   fstest.MapFS
		want cpuquota.Stat
		err  string
	}{
		{"v1, the process's own quota", fstest.MapFS{
			"proc/self/cgroup":                                      file("4:cpuset:/\n3:cpu,cpuacct:/ta_test_1\n0::/\n"),
			"proc/self/mountinfo":                                   file(miV1),
			"sys/fs/cgroup/cpu,cpuacct/ta_test_1/cpu.stat":          file("nr_periods 80\nnr_throttled 72\nthrottled_time 7200000000\n"),
			"sys/fs/cgroup/cpu,cpuacct/ta_test_1/cpu.cfs_quota_us":  file("10000\n"),
			"sys/fs/cgroup/cpu,cpuacct/ta_test_1/cpu.cfs_period_us": file("100000\n"),
			"sys/fs/cgroup/cpu,cpuacct/cpu.stat":                    file("nr_periods 0\nnr_throttled 0\nthrottled_time 0\n"),
			"sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us":            file("-1\n"),
			"sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us":           file("100000\n"),
		}, cpuquota.Stat{Periods: 80, ThrottledPeriods: 72, Throttled: 7200 * time.Millisecond, Cores: 0.1}, ""},
		{"v1, no quota", fstest.MapFS{
			"proc/self/cgroup":                            file("3:cpu,cpuacct:/\n"),
			"proc/self/mountinfo":                         file(miV1),
			"sys/fs/cgroup/cpu,cpuacct/cpu.stat":          file("nr_throttled 0\nthrottled_time 0\n"),
			"sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us":  file("-1\n"),
			"sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us": file("100000\n"),
		}, cpuquota.Stat{}, ""},
		{"v2, a parent's quota holds the child back", fstest.MapFS{
			"proc/self/cgroup":    file("0::/robot.slice/node.service\n"),
			"proc/self/mountinfo": file(miV2),
			"sys/fs/cgroup/robot.slice/node.service/cpu.stat": file("usage_usec 100\nthrottled_usec 0\n"),
			"sys/fs/cgroup/robot.slice/node.service/cpu.max":  file("max 100000\n"),
			"sys/fs/cgroup/robot.slice/cpu.stat":              file("usage_usec 900\nnr_throttled 9\nthrottled_usec 1500000\n"),
			"sys/fs/cgroup/robot.slice/cpu.max":               file("50000 100000\n"),
			"sys/fs/cgroup/cpu.stat":                          file("usage_usec 5000\n"),
		}, cpuquota.Stat{ThrottledPeriods: 9, Throttled: 1500 * time.Millisecond, Cores: 0.5}, ""},
		{"v2 in a container: the path below the mount's root", fstest.MapFS{
			"proc/self/cgroup":            file("0::/docker/abc/node\n"),
			"proc/self/mountinfo":         file(miContainer),
			"sys/fs/cgroup/node/cpu.stat": file("nr_periods 5\nnr_throttled 2\nthrottled_usec 20\n"),
			"sys/fs/cgroup/node/cpu.max":  file("20000 100000\n"),
			"sys/fs/cgroup/cpu.stat":      file("throttled_usec 10\n"),
		}, cpuquota.Stat{Periods: 5, ThrottledPeriods: 2, Throttled: 20 * time.Microsecond, Cores: 0.2}, ""},
		{"no CPU controller", fstest.MapFS{
			"proc/self/cgroup":    file("4:cpuset:/\n"),
			"proc/self/mountinfo": file(miV1),
		}, cpuquota.Stat{}, "no cgroup CPU controller mounted"},
		{"no cpu.stat", fstest.MapFS{
			"proc/self/cgroup":    file("0::/a\n"),
			"proc/self/mountinfo": file(miV2),
		}, cpuquota.Stat{}, "no cpu.stat in sys/fs/cgroup/a, sys/fs/cgroup"},
		{"no /proc", fstest.MapFS{}, cpuquota.Stat{}, "open proc/self/cgroup: file does not exist"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := cpuquota.Read(tc.fs, "self")
			if tc.err != "" {
				require.EqualError(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

// TestParse: the files' formats, and what is not one.
func TestParse(t *testing.T) {
	require.Equal(t, cpuquota.Stat{Periods: 9, ThrottledPeriods: 3, Throttled: 3 * time.Second},
		cpuquota.ParseCPUStat([]byte("nr_periods 9\nnr_throttled 3\nthrottled_time 3000000000\nthrottled_usec 7\n"), false))
	require.Equal(t, cpuquota.Stat{Throttled: 3 * time.Second}, cpuquota.ParseCPUStat([]byte("throttled_usec 3000000\n"), true))
	require.Zero(t, cpuquota.ParseCPUStat([]byte("throttled_usec -5\nnr_periods x\nnr_throttled\n"), true))
	require.Zero(t, cpuquota.ParseCPUStat(nil, false))
	require.Equal(t, 1.5, cpuquota.ParseCPUMax([]byte("150000 100000\n")))
	for _, s := range []string{"max 100000", "-1 100000", "0 100000", "10", "a b", ""} {
		require.Zero(t, cpuquota.ParseCPUMax([]byte(s)), s)
	}
	dirs, v2, err := cpuquota.Dirs([]byte("1:cpu:/a\\040b\n"), []byte(`1 1 0:1 / /sys/fs/cg\040x rw - cgroup c rw,cpu`+"\n"))
	require.NoError(t, err)
	require.False(t, v2)
	require.Equal(t, []string{"sys/fs/cg x/a\\040b", "sys/fs/cg x"}, dirs, "mount points unescaped (the cgroup file is not escaped)")
}

// TestReadHere reads this machine's: it may have no CPU controller (then
// the error says so), never fails otherwise.
func TestReadHere(t *testing.T) {
	st, err := cpuquota.Read(os.DirFS("/"), "self")
	if err != nil {
		t.Logf("here: %v", err)
		return
	}
	require.GreaterOrEqual(t, st.Throttled, time.Duration(0))
	require.GreaterOrEqual(t, st.Cores, 0.0)
	t.Logf("here: %+v", st)
}
