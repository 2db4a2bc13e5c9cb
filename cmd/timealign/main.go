// Command timealign repairs sensor timestamps and matches streams in time,
// offline: on CSV streams of stamps and on simulated data. It runs the same
// algorithms as the timealign ROS 2 nodes.
//
// Usage:
//
//	timealign <command> [flags] [input.csv]
//
// Run "timealign help" for the list of commands and "timealign <command>
// -help" for one command's flags. Inputs default to standard input and
// outputs to standard output. Exit status: 0 on success, 1 for bad data or
// I/O failure, 2 for a usage error.
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"strings"
	gosync "sync"
	"syscall"

	"golang.org/x/term"

	"github.com/timealign/timealign/pkg/csvio"
)

// env is what a command may touch: its streams and arguments. Commands never
// use os.Stdin/os.Stdout directly, so tests run them in-process.
type env struct {
	ctx    context.Context
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	// temps holds the temporary output files, removed on a signal.
	temps *temps
	// stdinStat describes standard input when it is a file (nil if unknown),
	// so that an output naming the same file is refused.
	stdinStat func() fs.FileInfo
	// stdinIsTerminal: a command reading standard input says so.
	stdinIsTerminal bool
	// stderrIsTerminal: progress bars are drawn (after a second of work);
	// noProgress turns them off (--quiet).
	stderrIsTerminal, noProgress bool
	// stdoutWritten, when set, stops standard output and returns the rows
	// and bytes written to it.
	stdoutWritten func() (rows, n int64)
	// subcommand is the running subcommand ("bag fix"), "" if none.
	subcommand string
	// bagTemp is the temporary directory of a bag command (removed on a
	// signal), where SQLite files with a write-ahead log are copied.
	bagTemp string
	// onFlags, when set, is given every flag set a command makes (the
	// tests walk them).
	onFlags func(*flag.FlagSet)
}

// command is one subcommand.
type command struct {
	name    string
	summary string
	run     func(e *env, args []string) error
}

// commands lists the subcommands in the order "help" shows them.
func commands() []command {
	return []command{
		{"demo", "tour of the package on simulated sensors (no ROS 2 needed)", runDemo},
		{"estimate", "remove jitter from the stamps of a periodic stream (pkg/tsest)", runEstimate},
		{"pll", "map device clock ticks to host time (pkg/pll)", runPLL},
		{"sync", "match messages of N topics into sets (pkg/sync policies)", runSync},
		{"align", "replay N streams in time order, Rock StreamAligner (pkg/sync)", runAlign},
		{"simulate", "write simulated sensor streams with ground truth as CSV or a bag (pkg/sim)", runSimulate},
		{"bag", "rosbag2 bags: info, report (timing analysis), fix (rewrite stamps)", runBag},
		{"mav", "ArduPilot logs: align a tlog with dataflash BIN logs, merge them (pkg/mav)", runMav},
		{"version", "print the version", runVersion},
	}
}

// Exit statuses.
const (
	exitOK          = 0
	exitFailure     = 1 // bad data, I/O failure
	exitUsage       = 2 // bad command line
	exitInterrupted = 130
)

func main() {
	ctx, cancel := context.WithCancel(context.Background())
	stdout := &errWriter{w: os.Stdout}
	counted := &countWriter{w: stdout}
	e := &env{ctx: ctx, stdin: os.Stdin, stdout: &ctxWriter{ctx: ctx, w: counted}, stderr: os.Stderr, temps: newTemps(),
		stdoutWritten: counted.stop,
		stdinStat: func() fs.FileInfo {
			fi, err := os.Stdin.Stat()
			if err != nil {
				return nil
			}
			return fi
		},
		stdinIsTerminal:  term.IsTerminal(int(os.Stdin.Fd())),
		stderrIsTerminal: term.IsTerminal(int(os.Stderr.Fd())),
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	done := make(chan int, 1)
	go func() { done <- run(e, os.Args[1:]) }()
	select {
	case code := <-done:
		if code == exitOK && stdout.err != nil {
			fmt.Fprintf(os.Stderr, "timealign: writing standard output: %v\n", unwrapPath(stdout.err))
			code = exitFailure
		}
		os.Exit(code)
	case sig := <-sigs:
		// Stop at once, whatever the command is doing (it may be blocked
		// reading a terminal or a pipe): no temporary output survives, and
		// no output file is renamed into place after this.
		cancel()
		rows, n := counted.stop()
		e.temps.removeAll()
		fmt.Fprintf(os.Stderr, "timealign: interrupted (%v); %sno output file written\n", sig, stdoutSaid(rows, n))
		os.Exit(exitInterrupted)
	}
}

// countWriter counts the rows (newlines) and bytes written to standard
// output, until stop: an interrupted command says how much of its output
// went there, exactly.
type countWriter struct {
	mu      gosync.Mutex
	w       io.Writer
	rows, n int64
	stopped bool
}

func (c *countWriter) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped {
		return 0, context.Canceled
	}
	n, err := c.w.Write(p)
	c.n += int64(n)
	c.rows += int64(bytes.Count(p[:n], []byte{'\n'}))
	return n, err
}

// stop refuses every later write and returns the rows and bytes written.
func (c *countWriter) stop() (rows, n int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stopped = true
	return c.rows, c.n
}

// stdoutSaid words what an interrupted command wrote to standard output
// ("" if nothing).
func stdoutSaid(rows, n int64) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("output to standard output stopped after %d rows (%s); ", rows, humanSize(n))
}

// errWriter remembers the first write error (a full disk, a closed pipe),
// so that a command that ignores it still exits 1.
type errWriter struct {
	w   io.Writer
	err error
}

func (w *errWriter) Write(p []byte) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	n, err := w.w.Write(p)
	if err != nil {
		w.err = err
	}
	return n, err
}

// run dispatches args to a command and returns the process exit status.
func run(e *env, args []string) int {
	if e.temps == nil {
		e.temps = newTemps()
	}
	if len(args) == 0 {
		printUsage(e.stderr)
		return exitUsage
	}
	name := args[0]
	switch name {
	case "help", "-h", "-help", "--help":
		if len(args) > 1 {
			return run(e, []string{args[1], "-help"})
		}
		printUsage(e.stdout)
		return exitOK
	case "--version", "-version":
		return exitCode(e, "version", runVersion(e, args[1:]))
	}
	for _, c := range commands() {
		if c.name == name {
			return exitCode(e, c.name, c.run(e, args[1:]))
		}
	}
	fmt.Fprintf(e.stderr, "timealign: unknown command %q\n\n", cut(name))
	printUsage(e.stderr)
	return exitUsage
}

// cmdName returns the running subcommand's name, or name.
func (e *env) cmdName(name string) string {
	if e.subcommand != "" {
		return e.subcommand
	}
	return name
}

// subcommandError is an error of a subcommand ("bag fix"), which names it.
type subcommandError struct {
	name string
	err  error
}

func (s *subcommandError) Error() string { return s.err.Error() }
func (s *subcommandError) Unwrap() error { return s.err }

// inSubcommand marks err as an error of the subcommand name.
func inSubcommand(name string, err error) error {
	if err == nil {
		return nil
	}
	return &subcommandError{name: name, err: err}
}

func exitCode(e *env, name string, err error) int {
	if err == nil || errors.Is(err, errHelp) {
		return exitOK
	}
	var se *subcommandError
	if errors.As(err, &se) {
		name = se.name
	}
	if errors.Is(err, context.Canceled) {
		said := ""
		if e.stdoutWritten != nil {
			said = stdoutSaid(e.stdoutWritten())
		}
		fmt.Fprintf(e.stderr, "timealign %s: interrupted; %sno output file written\n", name, said)
		return exitInterrupted
	}
	fmt.Fprintf(e.stderr, "timealign %s: %s\n", name, cutMessage(err.Error()))
	var ue *usageError
	if errors.As(err, &ue) {
		fmt.Fprintf(e.stderr, "Run 'timealign %s --help' for usage.\n", name)
		return exitUsage
	}
	return exitFailure
}

func printUsage(w io.Writer) {
	fmt.Fprintf(w, "timealign repairs sensor timestamps and matches streams in time.\n\n")
	fmt.Fprintf(w, "Usage:\n  timealign <command> [flags] [input.csv]\n\nCommands:\n")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-9s %s\n", c.name, c.summary)
	}
	fmt.Fprintf(w, "\nRun 'timealign <command> --help' for a command's flags and formats.\n")
	fmt.Fprintf(w, "Exit status: 0 success, 1 bad data or I/O failure, 2 bad command line, 130 interrupted.\n")
}

// cut shortens a user's value for a message: a 100 MB argument is not
// echoed in full.
func cut(s string) string { return csvio.Cut(s) }

// cutMessage shortens the long quoted values inside a message (the flag
// package quotes the whole bad value).
func cutMessage(msg string) string {
	const limit = 256
	if len(msg) <= limit {
		return msg
	}
	var b strings.Builder
	for len(msg) > 0 {
		i := strings.IndexByte(msg, '"')
		if i < 0 {
			b.WriteString(msg)
			break
		}
		j := i + 1
		for j < len(msg) && msg[j] != '"' {
			if msg[j] == '\\' {
				j++
			}
			j++
		}
		if j >= len(msg) {
			b.WriteString(cut(msg))
			break
		}
		b.WriteString(msg[:i+1])
		b.WriteString(cut(msg[i+1 : j]))
		b.WriteByte('"')
		msg = msg[j+1:]
	}
	if b.Len() > 4*limit {
		return cut(b.String())
	}
	return b.String()
}
