package nodekit

import "sync"

// Group tracks goroutines so their owner can wait for all of them, the way
// every goroutine of a node is started. The zero value is ready to use.
type Group struct{ wg sync.WaitGroup }

// Go runs f in a new tracked goroutine.
func (g *Group) Go(f func()) {
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		f()
	}()
}

// Wait blocks until every goroutine started with Go has returned.
func (g *Group) Wait() { g.wg.Wait() }
