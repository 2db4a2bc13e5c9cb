package soak

import (
	"regexp"
	"strconv"
)

// launchExit matches what ros2 launch logs when one of its processes
// ends:
//
//	[INFO] [sync-4]: process has finished cleanly [pid 4321]
//	[ERROR] [sync-4]: process has died [pid 4321, exit code -15, cmd '…'].
var launchExit = regexp.MustCompile(`\]: process has (finished cleanly|died) \[pid (\d+)(?:, exit code (-?\d+))?`)

// LaunchExit reads a line of ros2 launch's output: the PID of a process
// that ended and its exit code (0: finished cleanly; negative: killed by
// that signal), ok false if the line says nothing of the kind.
func LaunchExit(line string) (pid, code int, ok bool) {
	m := launchExit.FindStringSubmatch(line)
	if m == nil {
		return 0, 0, false
	}
	pid, _ = strconv.Atoi(m[2])
	if m[1] == "died" {
		if m[3] == "" {
			return 0, 0, false
		}
		code, _ = strconv.Atoi(m[3])
	}
	return pid, code, true
}
