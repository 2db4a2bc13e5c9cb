package main

import (
	"io"
	gosync "sync"
	"time"

	"github.com/schollz/progressbar/v3"
)

// progress is a progress bar over the bytes a command reads, on standard
// error when it is a terminal, shown once a run has taken a second (short
// runs print nothing).
type progress struct {
	mu      gosync.Mutex // readers of a merge run in several goroutines
	e       *env
	desc    string
	total   int64
	done    int64
	start   time.Time
	bar     *progressbar.ProgressBar
	enabled bool
}

// newProgress counts passes over the inputs of f.
func newProgress(e *env, f *files, passes int, desc string) *progress {
	p := &progress{e: e, desc: desc, start: time.Now(), enabled: e.stderrIsTerminal}
	for _, in := range f.ins {
		p.total += in.size * int64(passes)
	}
	return p
}

func (p *progress) add(n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.enabled || n <= 0 {
		return
	}
	p.done += int64(n)
	if p.bar == nil {
		if time.Since(p.start) < time.Second {
			return
		}
		p.bar = progressbar.NewOptions64(p.total,
			progressbar.OptionSetWriter(p.e.stderr),
			progressbar.OptionSetDescription("timealign: "+p.desc),
			progressbar.OptionShowBytes(true),
			progressbar.OptionSetWidth(30),
			progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionClearOnFinish(),
			progressbar.OptionSetPredictTime(true),
		)
		_ = p.bar.Set64(p.done)
		return
	}
	_ = p.bar.Add64(int64(n))
}

// finish removes the bar.
func (p *progress) finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bar != nil {
		_ = p.bar.Finish()
		p.bar = nil
	}
	p.enabled = false
}

// reader counts what r reads.
func (p *progress) reader(r io.Reader) io.Reader {
	if !p.enabled {
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
