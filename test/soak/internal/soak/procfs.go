package soak

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ClockTicks is the unit of the CPU times of /proc/<pid>/stat (USER_HZ,
// sysconf(_SC_CLK_TCK)): 100 on every Linux architecture Go supports.
const ClockTicks = 100

// Proc is what /proc says of a process.
type Proc struct {
	PID, PPID int
	// State is the process state (R, S, D, Z, …).
	State byte
	// CPUTicks is its user and system time, in 1/ClockTicks s.
	CPUTicks uint64
	// StartTicks is when it started after boot, in 1/ClockTicks s: with
	// the PID, it names one process (PIDs are reused).
	StartTicks uint64
	// RSS and PeakRSS are its resident set now and at most (VmRSS,
	// VmHWM), in bytes; 0 for a zombie.
	RSS, PeakRSS int64
	// Cmdline is its command line.
	Cmdline []string
}

// ErrNoProcess: the process is gone.
var ErrNoProcess = errors.New("soak: no such process")

// ReadProc reads /proc/<pid>/{stat,status,cmdline}.
func ReadProc(pid int) (Proc, error) {
	dir := filepath.Join("/proc", strconv.Itoa(pid))
	stat, err := os.ReadFile(filepath.Join(dir, "stat"))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return Proc{}, fmt.Errorf("%w: %d", ErrNoProcess, pid)
		}
		return Proc{}, err
	}
	p, err := ParseStat(string(stat))
	if err != nil {
		return Proc{}, err
	}
	if status, err := os.ReadFile(filepath.Join(dir, "status")); err == nil {
		p.RSS, p.PeakRSS, _, err = ParseStatus(string(status))
		if err != nil {
			return Proc{}, err
		}
	}
	if cmd, err := os.ReadFile(filepath.Join(dir, "cmdline")); err == nil {
		p.Cmdline = strings.Split(strings.TrimSuffix(string(cmd), "\x00"), "\x00")
	}
	return p, nil
}

// Children returns the processes whose parent is ppid.
func Children(ppid int) ([]Proc, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	var kids []Proc
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue // gone meanwhile
		}
		if p, err := ParseStat(string(stat)); err == nil && p.PPID == ppid {
			if p, err := ReadProc(pid); err == nil {
				kids = append(kids, p)
			}
		}
	}
	return kids, nil
}

// ParseStat reads the fields of /proc/<pid>/stat that Proc holds: pid,
// state, ppid, utime + stime and starttime (proc(5)). The command name,
// in parentheses, may hold spaces and parentheses: the fields after it
// are counted from its last ')'.
func ParseStat(s string) (Proc, error) {
	open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 1 || end < open {
		return Proc{}, fmt.Errorf("soak: /proc stat %.40q: no (comm)", s)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(s[:open]))
	if err != nil {
		return Proc{}, fmt.Errorf("soak: /proc stat: pid: %w", err)
	}
	f := strings.Fields(s[end+1:]) // f[0] is field 3, state
	if len(f) < 20 || len(f[0]) != 1 {
		return Proc{}, fmt.Errorf("soak: /proc stat of %d: %d fields after comm, want ≥ 20", pid, len(f))
	}
	num := func(field int) uint64 { // proc(5)'s 1-based field number
		v, e := strconv.ParseUint(f[field-3], 10, 64)
		if e != nil && err == nil {
			err = fmt.Errorf("soak: /proc stat of %d: field %d: %w", pid, field, e)
		}
		return v
	}
	p := Proc{PID: pid, State: f[0][0], PPID: int(num(4)), CPUTicks: num(14) + num(15), StartTicks: num(22)}
	return p, err
}

// ParseStatus reads VmRSS, VmHWM (bytes; 0 when absent, as for a zombie)
// and CapEff (the effective capabilities) from /proc/<pid>/status.
func ParseStatus(s string) (rss, peak int64, capEff uint64, err error) {
	for line := range strings.Lines(s) {
		key, val, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		val = strings.TrimSpace(val)
		switch key {
		case "VmRSS", "VmHWM":
			n, e := strconv.ParseInt(strings.TrimSuffix(val, " kB"), 10, 64)
			if e != nil || !strings.HasSuffix(val, " kB") {
				return 0, 0, 0, fmt.Errorf("soak: /proc status %s: %q", key, val)
			}
			if key == "VmRSS" {
				rss = n << 10
			} else {
				peak = n << 10
			}
		case "CapEff":
			capEff, err = strconv.ParseUint(val, 16, 64)
			if err != nil {
				return 0, 0, 0, fmt.Errorf("soak: /proc status CapEff: %w", err)
			}
		}
	}
	return rss, peak, capEff, nil
}

// NodeName is the node name a ROS 2 command line gives (`-r
// __node:=NAME` or `--remap __node:=NAME`, as launch starts a node), or ""
// if none.
func NodeName(cmdline []string) string {
	for i, a := range cmdline {
		if (a == "-r" || a == "--remap") && i+1 < len(cmdline) {
			if name, ok := strings.CutPrefix(cmdline[i+1], "__node:="); ok {
				return name
			}
		}
	}
	return ""
}

// capSysTime is CAP_SYS_TIME's bit (linux/capability.h).
const capSysTime = 25

// HostClockSteps says whether the soak may step the host clock: only when
// asked to (the host clock is shared by everything on the machine: a
// soak steps it on a machine of its own, by request) and able to (the
// effective capabilities capEff hold CAP_SYS_TIME). Otherwise why says
// what stops it, starting "skipped: ".
func HostClockSteps(asked bool, capEff uint64) (ok bool, why string) {
	switch {
	case !asked:
		return false, "skipped: not safe (the host clock is shared with every process of the machine; " +
			"-host-clock-steps asks for steps on a machine of the soak's own)"
	case capEff&(1<<capSysTime) == 0:
		return false, "skipped: not permitted (no CAP_SYS_TIME)"
	}
	return true, ""
}

// Exited tells whether process pid has ended: it is gone, or a zombie
// its parent has not reaped yet.
func Exited(pid int) bool {
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return true
	}
	p, err := ParseStat(string(stat))
	return err == nil && (p.State == 'Z' || p.State == 'X')
}
