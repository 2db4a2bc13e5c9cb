//go:build ros2 && timealign_interfaces

package main

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/timealign/timealign/test/soak/internal/soak"
)

// sampler takes one sample per node every second from its start, writes
// each to the CSV at once, and keeps them for the summary.
type sampler struct {
	l     *launch
	r     *ros
	csv   *csv.Writer
	start time.Time

	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex
	active  []string // faults under way
	samples []soak.Sample

	prev   map[string]soak.Proc // the sampler goroutine's
	prevAt time.Time
}

func startSampler(l *launch, r *ros, w io.Writer) (*sampler, error) {
	s := &sampler{l: l, r: r, csv: csv.NewWriter(w), start: time.Now(), prev: map[string]soak.Proc{}}
	if err := s.csv.Write(soak.CSVHeader); err != nil {
		return nil, err
	}
	s.prevAt = s.start
	s.prev, _ = l.nodes()
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for k := 1; sleepUntil(ctx, s.start.Add(time.Duration(k)*time.Second)); k++ {
			if err := s.tick(time.Now()); err != nil {
				fmt.Fprintln(os.Stderr, "soak: sampling:", err)
			}
		}
	}()
	return s, nil
}

// since is the time since the soak started.
func (s *sampler) since() time.Duration { return time.Since(s.start) }

// begin and end mark a fault under way, for the CSV.
func (s *sampler) begin(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.active = append(s.active, name)
}

func (s *sampler) end(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if i := slices.Index(s.active, name); i >= 0 {
		s.active = slices.Delete(s.active, i, i+1)
	}
}

func (s *sampler) tick(now time.Time) error {
	procs, err := s.l.nodes()
	if err != nil {
		return err
	}
	dt := now.Sub(s.prevAt)
	s.mu.Lock()
	faults := strings.Join(s.active, "+")
	s.mu.Unlock()
	var xs []soak.Sample
	for _, n := range demoNodes {
		x := soak.Sample{T: now.Sub(s.start), Node: n.name, Faults: faults}
		p, up := procs[n.name]
		prev, had := s.prev[n.name]
		if had && (!up || p.PID != prev.PID) {
			s.r.mon.forget(n.name) // what it heard came from the previous process
		}
		if up {
			x.PID, x.RSS, x.PeakRSS = p.PID, p.RSS, p.PeakRSS
			if had && prev.PID == p.PID && p.CPUTicks >= prev.CPUTicks {
				x.CPU = 100 * float64(p.CPUTicks-prev.CPUTicks) / soak.ClockTicks / dt.Seconds()
			}
		}
		s.r.mon.take(&x, now, dt)
		xs = append(xs, x)
		if err := s.csv.Write(x.Record()); err != nil {
			return err
		}
	}
	s.r.mon.prune(now)
	s.prev, s.prevAt = procs, now
	s.csv.Flush()
	s.mu.Lock()
	s.samples = append(s.samples, xs...)
	s.mu.Unlock()
	return s.csv.Error()
}

// stop ends the sampling and returns the samples.
func (s *sampler) stop() []soak.Sample {
	s.cancel()
	s.wg.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.samples
}
