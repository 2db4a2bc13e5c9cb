package nodekit

import (
	"sync"
	"time"
)

// BufPool keeps the buffers of big messages (at least MinBytes) for the
// next messages a transport takes: a 1080p frame in a fresh buffer costs
// its page faults and its zeroing, every frame. The buffers are those the
// transport's publishers were handed (a published message is copied by
// the middleware before Publish returns, and belongs to the transport per
// Publish's contract). The pool is bounded (at most MaxBytes kept, in at
// most MaxBuffers buffers) and released when unused: Trim, called now and
// then, drops what no Get asked for in the last Idle. Messages a node keeps
// or drops are not returned: the garbage collector takes them. Safe for
// any goroutine.
type BufPool struct {
	MinBytes   int
	MaxBytes   int
	MaxBuffers int
	Idle       time.Duration
	Now        func() time.Time // time.Now; tests set it

	mu      sync.Mutex
	free    [][]byte
	bytes   int
	lastGet time.Time
	reused  uint64
}

// NewBufPool returns a pool of buffers of at least 64 KiB, keeping at most
// 64 MB in 16 buffers, released after 10 s unused.
func NewBufPool() *BufPool {
	return &BufPool{MinBytes: 64 << 10, MaxBytes: 64 << 20, MaxBuffers: 16, Idle: 10 * time.Second, Now: time.Now}
}

// Get returns a slice of length n: a kept buffer whose capacity is at
// least n and at most twice n, or a new one (with room to the next 64 KiB)
// for n ≥ MinBytes; a plain new slice for smaller n. Its contents are not
// zeroed.
func (p *BufPool) Get(n int) []byte {
	if n < p.MinBytes {
		return make([]byte, n)
	}
	now := p.Now()
	p.mu.Lock()
	p.lastGet = now
	best := -1
	for i, b := range p.free {
		if c := cap(b); c >= n && c <= 2*n && (best < 0 || c < cap(p.free[best])) {
			best = i
		}
	}
	if best >= 0 {
		b := p.free[best]
		last := len(p.free) - 1
		p.free[best] = p.free[last]
		p.free[last] = nil
		p.free = p.free[:last]
		p.bytes -= cap(b)
		p.reused++
		p.mu.Unlock()
		return b[:n]
	}
	p.mu.Unlock()
	const grain = 64 << 10
	return make([]byte, n, (n+grain-1)/grain*grain)
}

// Put returns b (its owner no longer reads it) for a later Get, if it is
// big enough and the pool has room; else the garbage collector takes it.
func (p *BufPool) Put(b []byte) {
	c := cap(b)
	if c < p.MinBytes {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.free) >= p.MaxBuffers || p.bytes+c > p.MaxBytes {
		return
	}
	p.free = append(p.free, b[:0])
	p.bytes += c
}

// Trim drops every kept buffer if no Get asked for one in the last Idle.
func (p *BufPool) Trim() {
	now := p.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	if now.Sub(p.lastGet) < p.Idle {
		return
	}
	clear(p.free)
	p.free, p.bytes = p.free[:0], 0
}

// Kept returns the number and total capacity of the buffers kept, and how
// many Gets reused one.
func (p *BufPool) Kept() (buffers, bytes int, reused uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.free), p.bytes, p.reused
}
