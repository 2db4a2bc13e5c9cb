package soak

import (
	"math"
	"strconv"
	"time"
)

// Sample is one node's figures of one second of the soak.
type Sample struct {
	// T is when it was taken, from the soak's start.
	T    time.Duration
	Node string
	// PID is the node's process (0: none running).
	PID int
	// RSS and PeakRSS are the process's resident set now and at most, in
	// bytes; CPU its share of one core since the previous sample, in %.
	RSS, PeakRSS int64
	CPU          float64
	// Status: In, Out and Dropped come from a ~/status of this process;
	// StatusAge is the time since the node's last ~/status (−1: none
	// yet).
	Status    bool
	StatusAge time.Duration
	// In and Out count the messages the node took and published; Dropped
	// those it dropped for a reason a fault may cause (a full inbox, a
	// bad message, an estimate it could not give): not the drops by
	// design (the synchronizer's unmatched messages).
	In, Out, Dropped uint64
	// Diag: InboxDropped is /diagnostics' inbox.dropped of this process.
	Diag         bool
	InboxDropped uint64
	// Rate is the rate of the node's main output as the soak received it,
	// per second; Error the 90th percentile of |stamp − true acquisition
	// time| over that output's messages of the last second, in µs. NaN
	// when not measured.
	Rate, Error float64
	// Faults names the faults under way.
	Faults string
}

// CSVHeader names the columns of Sample.Record.
var CSVHeader = []string{"time_s", "node", "pid", "rss_mb", "peak_rss_mb", "cpu_pct", "status_age_s",
	"msgs_in", "msgs_out", "dropped", "inbox_dropped", "out_per_s", "error_p90_us", "faults"}

// Record is the sample as a CSV record (CSVHeader); a figure not known is
// empty.
func (s Sample) Record() []string {
	mb := func(b int64) string { return strconv.FormatFloat(float64(b)/(1<<20), 'f', 2, 64) }
	f := func(v float64, prec int) string {
		if math.IsNaN(v) {
			return ""
		}
		return strconv.FormatFloat(v, 'f', prec, 64)
	}
	u := func(ok bool, v uint64) string {
		if !ok {
			return ""
		}
		return strconv.FormatUint(v, 10)
	}
	r := []string{f(s.T.Seconds(), 1), s.Node, "", "", "", "", "", u(s.Status, s.In), u(s.Status, s.Out),
		u(s.Status, s.Dropped), u(s.Diag, s.InboxDropped), f(s.Rate, 1), f(s.Error, 1), s.Faults}
	if s.PID != 0 {
		r[2], r[3], r[4], r[5] = strconv.Itoa(s.PID), mb(s.RSS), mb(s.PeakRSS), f(s.CPU, 1)
	}
	if s.StatusAge >= 0 {
		r[6] = f(s.StatusAge.Seconds(), 1)
	}
	return r
}
