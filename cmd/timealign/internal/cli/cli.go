// Package cli is what every command of timealign is built on, as the Go
// toolchain's cmd/go/internal/base is for the go command: the [Env] a
// command may touch, the [Command] type and the dispatcher ([Run], [Main]),
// flags with timealign's conventions ([NewFlags], [ParseFlags]), safe
// outputs ([OpenFiles]: written under a temporary name, renamed on
// success, never over an input), progress bars and text tables.
//
// Exit statuses: 0 success, 1 bad data or an I/O failure, 2 a usage error
// ([UsageError]), 130 interrupted (the command's context ends on SIGINT
// and SIGTERM; every read and write of its files checks it).
package cli

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
	"sync"
	"syscall"

	"golang.org/x/term"

	"github.com/timealign/timealign/pkg/csvio"
)

// Env is what a command may touch: its streams and arguments. Commands
// never use os.Stdin/os.Stdout directly, so tests run them in-process.
type Env struct {
	Ctx    context.Context
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// Temps holds the temporary output files, removed on a signal (Run
	// makes it when nil).
	Temps *Temps
	// StdinStat describes standard input when it is a file (nil if
	// unknown), so that an output naming the same file is refused.
	StdinStat func() fs.FileInfo
	// StdinIsTerminal: a command reading standard input says so.
	StdinIsTerminal bool
	// StderrIsTerminal: progress bars are drawn (after a second of work);
	// NoProgress turns them off (--quiet).
	StderrIsTerminal, NoProgress bool
	// StdoutWritten, when set, stops standard output and returns the rows
	// and bytes written to it.
	StdoutWritten func() (rows, n int64)
	// OnFlags, when set, is given every flag set a command makes (the
	// tests walk them).
	OnFlags func(*flag.FlagSet)
	// Version is timealign's version, for the version command and the
	// files that name their writer.
	Version string
}

// Command is one command of timealign, or one subcommand of a family
// ("bag info").
type Command struct {
	Name string
	// Short is its line in the list of commands.
	Short string
	Run   func(e *Env, args []string) error
	// Sub are the subcommands of a family, which Run dispatches to
	// (Family.Command).
	Sub []*Command
}

// Exit statuses.
const (
	ExitOK          = 0
	ExitFailure     = 1 // bad data, I/O failure
	ExitUsage       = 2 // bad command line
	ExitInterrupted = 130
)

// Main runs the command that os.Args names, with the process's streams,
// and exits. A signal (SIGINT, SIGTERM) stops it at once: its temporary
// outputs are removed and nothing is renamed into place after it.
func Main(version string, cmds []*Command) {
	ctx, cancel := context.WithCancel(context.Background())
	stdout := &errWriter{w: os.Stdout}
	counted := &countWriter{w: stdout}
	e := &Env{Ctx: ctx, Stdin: os.Stdin, Stdout: &ctxWriter{ctx: ctx, w: counted}, Stderr: os.Stderr, Temps: NewTemps(),
		StdoutWritten: counted.stop,
		StdinStat: func() fs.FileInfo {
			fi, err := os.Stdin.Stat()
			if err != nil {
				return nil
			}
			return fi
		},
		StdinIsTerminal:  term.IsTerminal(int(os.Stdin.Fd())),
		StderrIsTerminal: term.IsTerminal(int(os.Stderr.Fd())),
		Version:          version,
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	done := make(chan int, 1)
	go func() { done <- Run(e, cmds, os.Args[1:]) }()
	select {
	case code := <-done:
		if code == ExitOK && stdout.err != nil {
			fmt.Fprintf(os.Stderr, "timealign: writing standard output: %v\n", UnwrapPath(stdout.err))
			code = ExitFailure
		}
		os.Exit(code)
	case sig := <-sigs:
		// Stop at once, whatever the command is doing (it may be blocked
		// reading a terminal or a pipe): no temporary output survives, and
		// no output file is renamed into place after this.
		cancel()
		rows, n := counted.stop()
		e.Temps.removeAll()
		fmt.Fprintf(os.Stderr, "timealign: interrupted (%v); %sno output file written\n", sig, stdoutSaid(rows, n))
		os.Exit(ExitInterrupted)
	}
}

// countWriter counts the rows (newlines) and bytes written to standard
// output, until stop: an interrupted command says how much of its output
// went there, exactly.
type countWriter struct {
	mu      sync.Mutex
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
	return fmt.Sprintf("output to standard output stopped after %d rows (%s); ", rows, HumanSize(n))
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

// Run dispatches args to one of cmds and returns the process exit status.
// "help", "--help" and "--version" are understood; the command named
// "version" answers --version.
func Run(e *Env, cmds []*Command, args []string) int {
	if e.Temps == nil {
		e.Temps = NewTemps()
	}
	if len(args) == 0 {
		printUsage(e.Stderr, cmds)
		return ExitUsage
	}
	name := args[0]
	switch name {
	case "help", "-h", "-help", "--help":
		if len(args) > 1 && !isHelp(args[1]) {
			return Run(e, cmds, []string{args[1], "-help"})
		}
		printUsage(e.Stdout, cmds)
		return ExitOK
	case "--version", "-version":
		name = "version"
	}
	for _, c := range cmds {
		if c.Name == name {
			return exitCode(e, c.Name, c.Run(e, args[1:]))
		}
	}
	fmt.Fprintf(e.Stderr, "timealign: unknown command %q\n\n", Cut(name))
	printUsage(e.Stderr, cmds)
	return ExitUsage
}

// subcommandError is an error of a subcommand ("bag fix"), which names it.
type subcommandError struct {
	name string
	err  error
}

func (s *subcommandError) Error() string { return s.err.Error() }
func (s *subcommandError) Unwrap() error { return s.err }

// InSubcommand marks err as an error of the subcommand name: its message
// names it ("timealign bag fix: ...").
func InSubcommand(name string, err error) error {
	if err == nil {
		return nil
	}
	return &subcommandError{name: name, err: err}
}

func exitCode(e *Env, name string, err error) int {
	if err == nil || errors.Is(err, ErrHelp) {
		return ExitOK
	}
	var se *subcommandError
	if errors.As(err, &se) {
		name = se.name
	}
	if errors.Is(err, context.Canceled) {
		said := ""
		if e.StdoutWritten != nil {
			said = stdoutSaid(e.StdoutWritten())
		}
		fmt.Fprintf(e.Stderr, "timealign %s: interrupted; %sno output file written\n", name, said)
		return ExitInterrupted
	}
	fmt.Fprintf(e.Stderr, "timealign %s: %s\n", name, cutMessage(err.Error()))
	var ue *UsageError
	if errors.As(err, &ue) {
		fmt.Fprintf(e.Stderr, "Run 'timealign %s --help' for usage.\n", name)
		return ExitUsage
	}
	return ExitFailure
}

func printUsage(w io.Writer, cmds []*Command) {
	fmt.Fprintf(w, "timealign repairs sensor timestamps and matches streams in time.\n\n")
	fmt.Fprintf(w, "Usage:\n  timealign <command> [flags] [input.csv]\n\nCommands:\n")
	for _, c := range cmds {
		fmt.Fprintf(w, "  %-9s %s\n", c.Name, c.Short)
	}
	fmt.Fprintf(w, "\nRun 'timealign <command> --help' for a command's flags and formats.\n")
	fmt.Fprintf(w, "Exit status: 0 success, 1 bad data or I/O failure, 2 bad command line, 130 interrupted.\n")
}

// Family is a command with subcommands ("bag info", "mav merge").
type Family struct {
	Name string
	// Usage follows "Usage: timealign <Name> " in the help.
	Usage string
	// Doc is the family's help below the usage line.
	Doc      string
	Commands []*Command
}

// Command returns the family as a command: Run dispatches to its
// subcommands.
func (f *Family) Command(short string) *Command {
	return &Command{Name: f.Name, Short: short, Run: f.Run, Sub: f.Commands}
}

// Run dispatches args to a subcommand; its errors name it.
func (f *Family) Run(e *Env, args []string) error {
	if len(args) == 0 {
		fmt.Fprintf(e.Stderr, "Usage: timealign %s %s\n%s\n", f.Name, f.Usage, strings.TrimRight(f.Doc, "\n"))
		return Usagef("a subcommand is needed: %s", f.names())
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		fmt.Fprintf(e.Stdout, "Usage: timealign %s %s\n%s\n", f.Name, f.Usage, strings.TrimRight(f.Doc, "\n"))
		return ErrHelp
	}
	for _, c := range f.Commands {
		if c.Name == args[0] {
			return InSubcommand(f.Name+" "+c.Name, c.Run(e, args[1:]))
		}
	}
	return Usagef("unknown subcommand %q (want %s)", Cut(args[0]), f.names())
}

// names lists the subcommands: "info, report, fix or cat".
func (f *Family) names() string {
	var s []string
	for _, c := range f.Commands {
		s = append(s, c.Name)
	}
	if len(s) < 2 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " or " + s[len(s)-1]
}

// Cut shortens a user's value for a message: a 100 MB argument is not
// echoed in full.
func Cut(s string) string { return csvio.Cut(s) }

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
			b.WriteString(Cut(msg))
			break
		}
		b.WriteString(msg[:i+1])
		b.WriteString(Cut(msg[i+1 : j]))
		b.WriteByte('"')
		msg = msg[j+1:]
	}
	if b.Len() > 4*limit {
		return Cut(b.String())
	}
	return b.String()
}

// isHelp reports whether arg asks for help ("help --help" is help, not a
// command named --help).
func isHelp(arg string) bool {
	switch arg {
	case "help", "-h", "-help", "--help":
		return true
	}
	return false
}
