package cli

import (
	"io"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
)

// Progress is a progress bar on standard error for work that takes more
// than a second: it appears only after the first second, and never when
// standard error is not a terminal (a log, a pipe, CI) or progress is off
// (--quiet), so that redirected output stays clean. Its methods may be
// called from several goroutines (the readers of a merge run in their own).
type Progress struct {
	mu    sync.Mutex // guards bar
	e     *Env
	what  string
	total int64 // bytes; -1 when unknown
	start time.Time
	bar   *progressbar.ProgressBar
	off   bool
}

// NewProgress starts measuring a task of total bytes (-1: unknown).
func NewProgress(e *Env, what string, total int64) *Progress {
	p := &Progress{e: e, what: what, total: total, start: time.Now(), off: !e.StderrIsTerminal || e.NoProgress}
	if !p.off {
		// The bar measures from the start (its rate is right) but draws
		// nothing during the first second.
		p.bar = progressbar.NewOptions64(total,
			progressbar.OptionSetWriter(&gate{w: e.Stderr, after: p.start.Add(time.Second)}),
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

// Set reports n bytes done.
func (p *Progress) Set(n int64) {
	if p == nil || p.off {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bar != nil {
		p.bar.Set64(n)
	}
}

// Add reports n more bytes done.
func (p *Progress) Add(n int) {
	if p == nil || p.off || n <= 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bar != nil {
		p.bar.Add64(int64(n))
	}
}

// Reader counts what r reads as done.
func (p *Progress) Reader(r io.Reader) io.Reader {
	if p == nil || p.off {
		return r
	}
	return &countReader{r: r, p: p}
}

type countReader struct {
	r io.Reader
	p *Progress
}

func (c *countReader) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	c.p.Add(n)
	return n, err
}

// Finish removes the bar.
func (p *Progress) Finish() {
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
