//go:build ros2 && timealign_interfaces

package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/timealign/timealign/test/soak/internal/soak"
)

// runTerms sends c.terms SIGTERMs, each to a fresh copy of a demo node
// (the nodes in turn, each round in a random order) c.termPhase × U(0,1)
// after its start: in namespace <namespace>_term, its inputs remapped to
// the running demo's topics, so that the signal finds it starting up,
// discovering, or at work. Each must exit with status 0 within
// c.bounds.Exit and log no error. terms.csv lists them.
func runTerms(ctx context.Context, c config, r *ros, prefix string) (bool, error) {
	f, err := os.Create(filepath.Join(c.out, "terms.csv"))
	if err != nil {
		return false, err
	}
	defer f.Close()
	w := csv.NewWriter(f)
	_ = w.Write([]string{"n", "node", "phase_s", "exited", "exit_after_ms", "exit_code", "errors"})
	rng := rand.New(rand.NewPCG(c.plan.Seed, 0x7e4))
	params := filepath.Join(prefix, "share", "timealign", "config", "demo.yaml")
	fmt.Printf("soak: %d SIGTERMs, each 0..%v after a fresh node's start (namespace /%s_term, listening to /%s)\n",
		c.terms, c.termPhase, c.namespace, c.namespace)
	var terms []soak.Term
	var round []demoNode
	for i := range c.terms {
		if ctx.Err() != nil {
			break
		}
		if len(round) == 0 {
			round = slices.Clone(demoNodes)
			rng.Shuffle(len(round), func(i, j int) { round[i], round[j] = round[j], round[i] })
		}
		n := round[0]
		round = round[1:]
		phase := time.Duration(rng.Float64() * float64(c.termPhase)).Round(time.Millisecond)
		args := []string{"--ros-args", "-r", "__node:=" + n.name, "-r", "__ns:=/" + c.namespace + "_term",
			"--params-file", params, "-p", "use_sim_time:=true"}
		for _, in := range n.inputs {
			args = append(args, "-r", in[0]+":=/"+c.namespace+"/"+in[1])
		}
		t, out, err := termOnce(ctx, filepath.Join(prefix, "lib", "timealign", n.exe), args, phase)
		if err != nil {
			return false, err
		}
		t.Node = n.name
		terms = append(terms, t)
		fmt.Printf("SIGTERM %3d/%d: %-13s %5dms after its start: %v\n", i+1, c.terms, n.name, phase.Milliseconds(), t.Exit)
		if !t.Exit.Clean(c.bounds.Exit) || t.Errors > 0 {
			fmt.Printf("    its output:\n%s\n", indent(out))
		}
		_ = w.Write([]string{strconv.Itoa(i + 1), n.name, fmt.Sprintf("%.3f", phase.Seconds()), strconv.FormatBool(t.Exit.Seen),
			strconv.FormatInt(t.Exit.After.Milliseconds(), 10), strconv.Itoa(t.Exit.Code), strconv.Itoa(t.Errors)})
		w.Flush()
	}
	s := soak.SummarizeTerms(terms, c.bounds.Exit)
	fmt.Printf("\nSIGTERM series: %d SIGTERMs at random phases (0..%v after the start): %d clean exits (status 0 within %v), slowest %v\n",
		s.N, c.termPhase, s.Clean, c.bounds.Exit, s.Slowest.Round(time.Millisecond))
	for _, v := range s.Violations {
		fmt.Println("  -", v)
	}
	if err := w.Error(); err != nil {
		return false, err
	}
	return len(s.Violations) == 0 && s.N == c.terms, f.Close()
}

// termOnce starts exe, sends it SIGTERM after phase and watches it end;
// a process still there after watchExit gets SIGKILL.
func termOnce(ctx context.Context, exe string, args []string, phase time.Duration) (soak.Term, string, error) {
	t := soak.Term{Phase: phase}
	var out lockedBuffer
	cmd := exec.Command(exe, args...)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return t, "", err
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	sleepUntil(ctx, time.Now().Add(phase))
	t0 := time.Now()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return t, "", err
	}
	select {
	case <-done:
		t.Exit = soak.Exit{Seen: true, After: time.Since(t0), CodeKnown: true, Code: exitCode(cmd.ProcessState)}
	case <-time.After(watchExit):
		_ = cmd.Process.Kill()
		<-done
	}
	t.Errors = strings.Count(out.String(), "[ERROR]")
	return t, out.String(), nil
}

// exitCode is the exit status, or minus the signal that ended the
// process.
func exitCode(ps *os.ProcessState) int {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return -int(ws.Signal())
	}
	return ps.ExitCode()
}

func indent(s string) string {
	return "      " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n      ")
}

// lockedBuffer is a process's output, written by exec's goroutine.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

var _ io.Writer = (*lockedBuffer)(nil)

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
