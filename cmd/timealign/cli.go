package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/timealign/timealign/pkg/cfgerr"
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
	err := parseInterspersed(fs, args)
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

// parseInterspersed parses flags before and after positional arguments
// ("pll in.csv --out x.csv" as "pll --out x.csv in.csv"); after "--"
// everything is positional. fs.Args() holds the positional arguments.
func parseInterspersed(fs *flag.FlagSet, args []string) error {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			break
		}
		if len(rest) < len(args) && args[len(args)-len(rest)-1] == "--" {
			pos = append(pos, rest...) // the flag package stopped at "--"
			break
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
	return fs.Parse(append([]string{"--"}, pos...))
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

// configError turns an algorithm's configuration error into a usage error
// that names the command's flags ("--fifo-size is 1, want 2..65536"), not
// Go fields. flags maps Go fields to flag names where the kebab-case of the
// field is not the flag; a field without a flag keeps its Go name.
func configError(fset *flag.FlagSet, err error, flags map[string]string) error {
	ce, ok := cfgerr.As(err)
	if !ok {
		return &usageError{err: err}
	}
	return &usageError{err: errors.New(ce.Say(func(field string) string {
		name, ok := flags[field]
		if !ok {
			name = kebab(field)
		}
		if fset.Lookup(name) == nil {
			return ""
		}
		return "--" + name
	}))}
}

// kebab turns a Go field name into a flag name: FIFOSize → fifo-size,
// MaxSkewPPM → max-skew-ppm.
func kebab(field string) string {
	var b strings.Builder
	rs := []rune(field)
	for i, r := range rs {
		upper := unicode.IsUpper(r)
		if upper && i > 0 && (!unicode.IsUpper(rs[i-1]) || i+1 < len(rs) && unicode.IsLower(rs[i+1])) {
			b.WriteByte('-')
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}

// setFlags returns the flags given on the command line.
func setFlags(fset *flag.FlagSet) map[string]bool {
	set := map[string]bool{}
	fset.Visit(func(f *flag.Flag) { set[f.Name] = true })
	return set
}

// unusedFlags refuses flags that the chosen mode or policy does not use:
// uses maps each mode-specific flag to the modes that use it.
func unusedFlags(fset *flag.FlagSet, what, mode string, uses map[string][]string) error {
	set := setFlags(fset)
	names := slices.Sorted(maps.Keys(set))
	for _, name := range names {
		modes, ok := uses[name]
		if !ok || slices.Contains(modes, mode) {
			continue
		}
		return usagef("--%s is not used by %s %s (it applies to %s %s)", name, what, mode, what, strings.Join(modes, ", "))
	}
	return nil
}

// writeStatusJSON writes v as indented JSON.
func writeStatusJSON(w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
