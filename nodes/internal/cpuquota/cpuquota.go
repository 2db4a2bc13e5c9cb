// Package cpuquota tells how long the CPU quota of a process's cgroup held
// it back: a node starved by a container's or a systemd unit's CPU limit
// (cgroup v2's cpu.max, v1's cpu.cfs_quota_us) says so, instead of only
// falling behind.
//
// It reads /proc/self/cgroup and /proc/self/mountinfo to find the
// process's cgroup, then the cpu.stat of that cgroup and of each of its
// ancestors up to the mount's root (a quota set on a container's cgroup
// throttles the processes of every cgroup below it): the most any of them
// was throttled, and the least quota among them.
package cpuquota

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strconv"
	"strings"
	"time"
)

// Stat is what the cgroups of a process say of its CPU quota.
type Stat struct {
	// Periods and ThrottledPeriods are how many periods of the quota
	// have passed while the cgroup had work, and in how many of them the
	// quota held it back (nr_periods and nr_throttled), at the level
	// (the cgroup or an ancestor) held back most often.
	Periods, ThrottledPeriods int64
	// Throttled is how long the quota held that level back, summed over
	// the CPUs as the kernel counts it (it may exceed the time passed).
	Throttled time.Duration
	// Cores is the least quota among them, in cores (0.1: a tenth of one),
	// or 0 where none is set.
	Cores float64
}

// Read reads the Stat of the process whose /proc/<pid> is proc ("self"),
// in fsys (the file system from its root: os.DirFS("/")). A process
// without a cgroup CPU controller is an error.
func Read(fsys fs.FS, proc string) (Stat, error) {
	cg, err := fs.ReadFile(fsys, path.Join("proc", proc, "cgroup"))
	if err != nil {
		return Stat{}, err
	}
	mi, err := fs.ReadFile(fsys, path.Join("proc", proc, "mountinfo"))
	if err != nil {
		return Stat{}, err
	}
	dirs, v2, err := Dirs(cg, mi)
	if err != nil {
		return Stat{}, err
	}
	var st Stat
	read, seen := false, false
	for _, d := range dirs {
		b, err := fs.ReadFile(fsys, path.Join(d, "cpu.stat"))
		if err != nil {
			continue // a cgroup gone meanwhile, or a level without the controller
		}
		read = true
		if l := ParseCPUStat(b, v2); !seen || l.ThrottledPeriods > st.ThrottledPeriods {
			st.Periods, st.ThrottledPeriods, st.Throttled, seen = l.Periods, l.ThrottledPeriods, l.Throttled, true
		}
		if c := readCores(fsys, d, v2); c > 0 && (st.Cores == 0 || c < st.Cores) {
			st.Cores = c
		}
	}
	if !read {
		return Stat{}, fmt.Errorf("no cpu.stat in %s", strings.Join(dirs, ", "))
	}
	return st, nil
}

// Dirs returns the directories (relative to the file system's root) of
// the cgroup that /proc/<pid>/cgroup (cg) names for the CPU controller and
// of its ancestors up to the mount that /proc/<pid>/mountinfo (mi) gives
// for it, the cgroup first; v2 tells the unified hierarchy (cgroup v2),
// preferred where both are mounted with the controller.
func Dirs(cg, mi []byte) (dirs []string, v2 bool, err error) {
	v1Path, v2Path, hasV1, hasV2 := "", "", false, false
	for _, l := range strings.Split(string(cg), "\n") {
		// hierarchy-ID:controller-list:cgroup-path
		f := strings.SplitN(l, ":", 3)
		if len(f) != 3 {
			continue
		}
		switch {
		case f[0] == "0" && f[1] == "":
			v2Path, hasV2 = f[2], true
		case hasController(f[1], "cpu"):
			v1Path, hasV1 = f[2], true
		}
	}
	var v1Mount, v1Root, v2Mount, v2Root string
	sc := bufio.NewScanner(bytes.NewReader(mi))
	for sc.Scan() {
		// id parent major:minor root mount-point options [optional...] - fstype source super-options
		l := sc.Text()
		i := strings.Index(l, " - ")
		if i < 0 {
			continue
		}
		pre, post := strings.Fields(l[:i]), strings.Fields(l[i+3:])
		if len(pre) < 5 || len(post) < 1 {
			continue
		}
		root, mount := unescape(pre[3]), unescape(pre[4])
		switch post[0] {
		case "cgroup2":
			v2Mount, v2Root = mount, root
		case "cgroup":
			if len(post) >= 3 && hasController(post[2], "cpu") {
				v1Mount, v1Root = mount, root
			}
		}
	}
	var p, mount, root string
	switch {
	case hasV1 && v1Mount != "":
		p, mount, root = v1Path, v1Mount, v1Root
	case hasV2 && v2Mount != "":
		p, mount, root, v2 = v2Path, v2Mount, v2Root, true
	default:
		return nil, false, errors.New("no cgroup CPU controller mounted")
	}
	// The mount shows the hierarchy from root (a container's namespace):
	// the process's path is below it.
	rel := strings.TrimPrefix(path.Clean("/"+p), path.Clean("/"+root))
	rel = path.Clean("/" + rel)
	for {
		dirs = append(dirs, strings.TrimPrefix(path.Join(mount, rel), "/"))
		if rel == "/" {
			return dirs, v2, nil
		}
		rel = path.Dir(rel)
	}
}

// hasController reports whether the comma-separated list names c
// ("cpu,cpuacct" names cpu; "cpuacct" and "cpuset" do not).
func hasController(list, c string) bool {
	for _, x := range strings.Split(list, ",") {
		if x == c {
			return true
		}
	}
	return false
}

// unescape undoes mountinfo's octal escapes (\040 for a space).
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// ParseCPUStat returns what a cpu.stat gives of the quota: nr_periods,
// nr_throttled and the throttled time (v2's throttled_usec, v1's
// throttled_time in ns); Cores is left 0. What is absent or malformed is 0.
func ParseCPUStat(b []byte, v2 bool) Stat {
	key, unit := "throttled_time", time.Nanosecond
	if v2 {
		key, unit = "throttled_usec", time.Microsecond
	}
	var st Stat
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		if len(f) != 2 {
			continue
		}
		n, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil || n < 0 {
			continue
		}
		switch f[0] {
		case "nr_periods":
			st.Periods = n
		case "nr_throttled":
			st.ThrottledPeriods = n
		case key:
			st.Throttled = time.Duration(n) * unit
		}
	}
	return st
}

// readCores returns the quota of the cgroup at dir in cores, 0 if none.
func readCores(fsys fs.FS, dir string, v2 bool) float64 {
	if v2 {
		b, err := fs.ReadFile(fsys, path.Join(dir, "cpu.max"))
		if err != nil {
			return 0
		}
		return ParseCPUMax(b)
	}
	q, err1 := fs.ReadFile(fsys, path.Join(dir, "cpu.cfs_quota_us"))
	p, err2 := fs.ReadFile(fsys, path.Join(dir, "cpu.cfs_period_us"))
	if err1 != nil || err2 != nil {
		return 0
	}
	return ParseCPUMax([]byte(strings.TrimSpace(string(q)) + " " + strings.TrimSpace(string(p))))
}

// ParseCPUMax returns the quota "QUOTA PERIOD" (cgroup v2's cpu.max, µs
// each; "max" or a negative quota: none) in cores, 0 if none.
func ParseCPUMax(b []byte) float64 {
	f := strings.Fields(string(b))
	if len(f) != 2 || f[0] == "max" {
		return 0
	}
	q, err1 := strconv.ParseInt(f[0], 10, 64)
	p, err2 := strconv.ParseInt(f[1], 10, 64)
	if err1 != nil || err2 != nil || q <= 0 || p <= 0 {
		return 0
	}
	return float64(q) / float64(p)
}
