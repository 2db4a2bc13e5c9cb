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
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// env is what a command may touch: its streams and arguments. Commands never
// use os.Stdin/os.Stdout directly, so tests run them in-process.
type env struct {
	ctx    context.Context
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
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
		{"simulate", "write simulated sensor streams with ground truth as CSV (pkg/sim)", runSimulate},
		{"version", "print the version", runVersion},
	}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(&env{ctx: ctx, stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr}, os.Args[1:])
	stop()
	os.Exit(code)
}

// run dispatches args to a command and returns the process exit status.
func run(e *env, args []string) int {
	if len(args) == 0 {
		printUsage(e.stderr)
		return 2
	}
	name := args[0]
	switch name {
	case "help", "-h", "-help", "--help":
		if len(args) > 1 {
			return run(e, []string{args[1], "-help"})
		}
		printUsage(e.stdout)
		return 0
	}
	for _, c := range commands() {
		if c.name == name {
			return exitCode(e, c.name, c.run(e, args[1:]))
		}
	}
	fmt.Fprintf(e.stderr, "timealign: unknown command %q\n\n", name)
	printUsage(e.stderr)
	return 2
}

func exitCode(e *env, name string, err error) int {
	if err == nil {
		return 0
	}
	if errors.Is(err, errHelp) {
		return 0
	}
	fmt.Fprintf(e.stderr, "timealign %s: %v\n", name, err)
	var ue *usageError
	if errors.As(err, &ue) {
		fmt.Fprintf(e.stderr, "Run 'timealign %s -help' for usage.\n", name)
		return 2
	}
	return 1
}

func printUsage(w io.Writer) {
	fmt.Fprintf(w, "timealign repairs sensor timestamps and matches streams in time.\n\n")
	fmt.Fprintf(w, "Usage:\n  timealign <command> [flags] [input.csv]\n\nCommands:\n")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-9s %s\n", c.name, c.summary)
	}
	fmt.Fprintf(w, "\nRun 'timealign <command> -help' for a command's flags and formats.\n")
}
