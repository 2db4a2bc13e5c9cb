package main

import (
	"time"

	"github.com/schollz/progressbar/v3"
)

// progress is a progress bar on standard error for work that takes more
// than a second: it appears only after the first second, and never when
// standard error is not a terminal (a log, a pipe, CI) or progress is off
// (--quiet), so that redirected output stays clean.
type progress struct {
	e     *env
	what  string
	total int64 // bytes; -1 when unknown
	start time.Time
	bar   *progressbar.ProgressBar
	off   bool
}

// newProgress starts measuring a task of total bytes (-1: unknown).
func newProgress(e *env, what string, total int64) *progress {
	return &progress{e: e, what: what, total: total, start: time.Now(), off: !e.stderrIsTerminal || e.noProgress}
}

// set reports n bytes done.
func (p *progress) set(n int64) {
	if p == nil || p.off {
		return
	}
	if p.bar == nil {
		if time.Since(p.start) < time.Second {
			return
		}
		p.bar = progressbar.NewOptions64(p.total,
			progressbar.OptionSetWriter(p.e.stderr),
			progressbar.OptionSetDescription(p.what),
			progressbar.OptionShowBytes(true),
			progressbar.OptionSetWidth(30),
			progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionShowElapsedTimeOnFinish(),
			progressbar.OptionClearOnFinish(),
			progressbar.OptionUseIECUnits(true),
		)
	}
	p.bar.Set64(n)
}

// finish removes the bar.
func (p *progress) finish() {
	if p == nil || p.bar == nil {
		return
	}
	p.bar.Finish()
	p.bar.Clear()
	p.bar = nil
}
