package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"
)

// errHelp is returned when the user asked for -help: exit status 0.
var errHelp = errors.New("help requested")

// usageError marks errors in the command line: exit status 2.
type usageError struct{ err error }

func (u *usageError) Error() string { return u.err.Error() }
func (u *usageError) Unwrap() error { return u.err }

func usagef(format string, args ...any) error {
	return &usageError{err: fmt.Errorf(format, args...)}
}

// newFlags returns a FlagSet for a command whose help text shows synopsis
// and doc (the input and output formats) above the flags.
func newFlags(e *env, name, synopsis, doc string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprintf(w, "Usage: timealign %s %s\n\n%s\n", name, synopsis, strings.TrimSpace(doc))
		hasFlags := false
		fs.VisitAll(func(*flag.Flag) { hasFlags = true })
		if hasFlags {
			fmt.Fprintf(w, "\nFlags:\n")
			fs.PrintDefaults()
		}
	}
	return fs
}

// parseFlags parses args, mapping -help to errHelp (after printing usage to
// stdout) and other flag errors to usage errors.
func parseFlags(e *env, fs *flag.FlagSet, args []string) error {
	fs.SetOutput(io.Discard)
	err := fs.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		fs.SetOutput(e.stdout)
		fs.Usage()
		return errHelp
	}
	fs.SetOutput(e.stderr)
	if err != nil {
		return &usageError{err: err}
	}
	return nil
}

// input opens the command's input: the one positional argument, or standard
// input when there is none or it is "-". The returned name is used in errors.
func input(e *env, fs *flag.FlagSet) (r io.Reader, name string, closeFn func(), err error) {
	switch fs.NArg() {
	case 0:
		return e.stdin, "stdin", func() {}, nil
	case 1:
		if fs.Arg(0) == "-" {
			return e.stdin, "stdin", func() {}, nil
		}
		f, err := os.Open(fs.Arg(0))
		if err != nil {
			return nil, "", nil, err
		}
		return f, fs.Arg(0), func() { f.Close() }, nil
	default:
		return nil, "", nil, usagef("want at most one input file, got %d arguments: %q", fs.NArg(), fs.Args())
	}
}

// output opens path for writing, or standard output for "" or "-". The
// close function reports errors of the final write.
func output(e *env, path string) (io.Writer, func() error, error) {
	if path == "" || path == "-" {
		return e.stdout, func() error { return nil }, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, nil, err
	}
	return f, f.Close, nil
}

// durationList is a flag holding comma-separated Go durations ("10ms,20ms").
type durationList []time.Duration

func (d *durationList) String() string {
	s := make([]string, len(*d))
	for i, v := range *d {
		s[i] = v.String()
	}
	return strings.Join(s, ",")
}

func (d *durationList) Set(v string) error {
	*d = (*d)[:0]
	for _, f := range strings.Split(v, ",") {
		x, err := time.ParseDuration(strings.TrimSpace(f))
		if err != nil {
			return fmt.Errorf("%q is not a duration (examples: 10ms, 1.5s, 250us)", f)
		}
		*d = append(*d, x)
	}
	return nil
}

// intList is a flag holding comma-separated integers ("4,-1,0").
type intList []int

func (l *intList) String() string {
	s := make([]string, len(*l))
	for i, v := range *l {
		s[i] = strconv.Itoa(v)
	}
	return strings.Join(s, ",")
}

func (l *intList) Set(v string) error {
	*l = (*l)[:0]
	for _, f := range strings.Split(v, ",") {
		x, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return fmt.Errorf("%q is not an integer", f)
		}
		*l = append(*l, x)
	}
	return nil
}

// files are a stream command's input and outputs.
type files struct {
	in     io.Reader
	name   string    // the input's name, for errors
	out    io.Writer // the main output
	side   io.Writer // an optional second output (--drops); io.Discard when not asked for
	closes []func() error
}

// openFiles opens the command's input (its positional argument or stdin),
// its output (outPath, or stdout) and, if sidePath is not empty, a second
// output. close closes them all and reports write errors.
func openFiles(e *env, fs *flag.FlagSet, outPath, sidePath string) (*files, error) {
	in, name, closeIn, err := input(e, fs)
	if err != nil {
		return nil, err
	}
	f := &files{in: in, name: name, side: io.Discard, closes: []func() error{func() error { closeIn(); return nil }}}
	if f.out, err = f.open(e, outPath); err != nil {
		return nil, errors.Join(err, f.close())
	}
	if sidePath != "" {
		if f.side, err = f.open(e, sidePath); err != nil {
			return nil, errors.Join(err, f.close())
		}
	}
	return f, nil
}

func (f *files) open(e *env, path string) (io.Writer, error) {
	w, closeFn, err := output(e, path)
	if err != nil {
		return nil, err
	}
	f.closes = append(f.closes, closeFn)
	return w, nil
}

func (f *files) close() error {
	var err error
	for _, c := range f.closes {
		err = errors.Join(err, c())
	}
	return err
}
