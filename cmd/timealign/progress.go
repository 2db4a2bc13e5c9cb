package main

import (
	"io"
	gosync "sync"
	"time"

	"github.com/schollz/progressbar/v3"
)

// progress is a progress bar on standard error for work that takes more
// than a second: it appears only after the first second, and never when
// standard error is not a terminal (a log, a pipe, CI) or progress is off
// (--quiet), so that redirected output stays clean. Its methods may be
// called from several goroutines (the readers of a merge run in their own).
type progress struct {
	mu    gosync.Mutex // guards bar
	e     *env
	what  string
	total int64 // bytes; -1 when unknown
	start time.Time
	bar   *progressbar.ProgressBar
	off   bool
}

// newProgress starts measuring a task of total bytes (-1: unknown).
func newProgress(e *env, what string, total int64) *progress {
	p := &progress{e: e, what: what, total: total, start: time.Now(), off: !e.stderrIsTerminal || e.noProgress}
	if !p.off {
		// The bar measures from the start (its rate is right) but draws
		// nothing during the first second.
		p.bar = progressbar.NewOptions64(total,
			progressbar.OptionSetWriter(&gate{w: e.stderr, after: p.start.Add(time.Second)}),
			progressbar.OptionSetDescription(what),
			progressbar.OptionShowBytes(true),
			progressbar.OptionSetWidth(30),
			progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionClearOnFinish(),
			progressbar.OptionUseIECUnits(true),
		)
	}
	return p
}

// gate drops what is written before a time.
type gate struct {
	w     io.Writer
	after time.Time
}

func (g *gate) Write(b []byte) (int, error) {
	if time.Now().Before(g.after) {
		return len(b), nil
	}
	return g.w.Write(b)
}

// set reports n bytes done.
func (p *progress) set(n int64) {
	if p == nil || p.off {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bar != nil {
		p.bar.Set64(n)
	}
}

// add reports n more bytes done.
func (p *progress) add(n int) {
	if p == nil || p.off || n <= 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bar != nil {
		p.bar.Add64(int64(n))
	}
}

// reader counts what r reads as done.
func (p *progress) reader(r io.Reader) io.Reader {
	if p == nil || p.off {
		return r
	}
	return &countReader{r: r, p: p}
}

type countReader struct {
	r io.Reader
	p *progress
}

func (c *countReader) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	c.p.add(n)
	return n, err
}

// finish removes the bar.
func (p *progress) finish() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bar == nil {
		return
	}
	if time.Since(p.start) >= time.Second {
		p.bar.Finish()
		p.bar.Clear()
	}
	p.bar = nil
}
