package nodekit

import (
	"fmt"
	"time"
)

// CPUQuota is a Transport that can tell what the CPU quota of the node's
// cgroup does to it (rosnode reads the cgroup's files: package cpuquota).
type CPUQuota interface {
	// CPUThrottled returns how long the quota held the node back in all,
	// and the quota in cores (0: none set); ok is false where the
	// transport cannot tell (no cgroup CPU controller).
	CPUThrottled() (throttled time.Duration, cores float64, ok bool)
}

// starvedShare is the share of a report's time the quota must hold the
// node back for it to say it is starved.
const starvedShare = 0.1

// quotaState is what the runtime remembers of the CPU quota between reports.
type quotaState struct {
	known     bool
	first     time.Duration // throttled at the first report
	throttled time.Duration // at the last report
	at        time.Duration // the node's elapsed time then
}

// reportQuota adds the CPU quota of the node's cgroup and how long it held
// the node back (since the node started) to the diagnostic, where a quota
// is set or has throttled it; held back for more than a tenth of the time
// since the last report, the node is starved: logged once per report, and
// a WARN.
func (n *Node) reportQuota(d *Diagnostic) {
	q, ok := n.tr.(CPUQuota)
	if !ok {
		return
	}
	throttled, cores, ok := q.CPUThrottled()
	if !ok {
		return
	}
	now := n.Clock.Elapsed()
	s := &n.quota
	if !s.known {
		*s = quotaState{known: true, first: throttled, throttled: throttled, at: now}
		return
	}
	held, span := throttled-s.throttled, now-s.at
	s.throttled, s.at = throttled, now
	if cores == 0 && throttled == s.first {
		return
	}
	if cores > 0 {
		d.Add("cpu.quota_cores", fmt.Sprintf("%.3f", cores))
	}
	d.Add("cpu.throttled_sec", fmt.Sprintf("%.3f", (throttled-s.first).Seconds()))
	if span <= 0 || held.Seconds() <= starvedShare*span.Seconds() {
		return
	}
	quota := "the CPU quota of its cgroup"
	if cores > 0 {
		quota = fmt.Sprintf("the CPU quota of its cgroup (%.2f of a core)", cores)
	}
	n.log(LogWarn, fmt.Sprintf("%s held the node back for %.2f s of the last %.2f s: it falls behind its inputs (what it cannot take is dropped, oldest first); raise the quota or lower the inputs' rates",
		quota, held.Seconds(), span.Seconds()))
	d.Raise(Warn, fmt.Sprintf("starved: %s held the node back %.0f%% of the time", quota, 100*held.Seconds()/span.Seconds()))
}
