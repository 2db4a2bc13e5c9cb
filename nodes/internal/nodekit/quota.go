package nodekit

import (
	"fmt"
	"time"
)

// CPUQuota is a Transport that can tell what the CPU quota of the node's
// cgroup does to it (rosnode reads the cgroup's files: package cpuquota).
type CPUQuota interface {
	// CPUThrottled returns what the quota did to the node so far; ok is
	// false where the transport cannot tell (no cgroup CPU controller).
	CPUThrottled() (t Throttling, ok bool)
}

// Throttling is what a cgroup's CPU quota did to the node, in all.
type Throttling struct {
	// Periods is how many periods of the quota passed while the node had
	// work; Throttled in how many of them the quota held it back.
	Periods, Throttled int64
	// Time is how long it was held back, summed over the CPUs as the
	// kernel counts it.
	Time time.Duration
	// Cores is the quota, in cores (0: none set).
	Cores float64
}

// starvedShare is the share of a report's quota periods in which the quota
// must hold the node back for it to say it is starved.
const starvedShare = 0.1

// quotaState is what the runtime remembers of the CPU quota between reports.
type quotaState struct {
	known       bool
	first, last Throttling // at the first report, and at the last
}

// reportQuota adds the CPU quota of the node's cgroup and what it did to
// the node since it started to the diagnostic, where a quota is set or has
// held the node back; held back in more than a tenth of the quota's
// periods since the last report, the node is starved: logged once per
// report, and a WARN.
func (n *Node) reportQuota(d *Diagnostic) {
	q, ok := n.tr.(CPUQuota)
	if !ok {
		return
	}
	now, ok := q.CPUThrottled()
	if !ok {
		return
	}
	s := &n.quota
	if !s.known {
		*s = quotaState{known: true, first: now, last: now}
		return
	}
	periods, held := now.Periods-s.last.Periods, now.Throttled-s.last.Throttled
	s.last = now
	if now.Cores == 0 && now.Throttled == s.first.Throttled {
		return
	}
	if now.Cores > 0 {
		d.Add("cpu.quota_cores", fmt.Sprintf("%.3f", now.Cores))
	}
	d.Add("cpu.throttled_periods", now.Throttled-s.first.Throttled)
	d.Add("cpu.throttled_sec", fmt.Sprintf("%.3f", (now.Time-s.first.Time).Seconds()))
	if periods <= 0 || float64(held) <= starvedShare*float64(periods) {
		return
	}
	quota := "the CPU quota of its cgroup"
	if now.Cores > 0 {
		quota = fmt.Sprintf("the CPU quota of its cgroup (%.2f of a core)", now.Cores)
	}
	n.log(LogWarn, fmt.Sprintf("%s held the node back in %d of its last %d periods: it falls behind its inputs (what it cannot take is dropped, oldest first); raise the quota or lower the inputs' rates",
		quota, held, periods))
	d.Raise(Warn, fmt.Sprintf("starved: %s held the node back in %.0f%% of its periods", quota, 100*float64(held)/float64(periods)))
}
