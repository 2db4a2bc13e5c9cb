package nodekit

// BufPool recycles the message buffers a node's core keeps while it holds
// messages back (queued for a set, buffered for playback): Copy takes a
// buffer from the pool, Put returns one. It keeps at most Max buffers;
// beyond that, returned buffers are left to the garbage collector, so the
// pool never holds more than the core's own bound. One goroutine owns it.
type BufPool struct {
	Max  int // most buffers kept
	free [][]byte
}

// Copy returns a copy of data in a pooled buffer.
func (p *BufPool) Copy(data []byte) []byte {
	var b []byte
	if n := len(p.free); n > 0 {
		b, p.free = p.free[n-1][:0], p.free[:n-1]
	}
	return append(b, data...)
}

// Put returns b to the pool (b may be nil).
func (p *BufPool) Put(b []byte) {
	if b != nil && len(p.free) < p.Max {
		p.free = append(p.free, b)
	}
}

// Len returns the number of buffers in the pool.
func (p *BufPool) Len() int { return len(p.free) }
