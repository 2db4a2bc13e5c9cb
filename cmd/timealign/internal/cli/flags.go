package cli

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

// QuietUsage is what --quiet means in every command.
const QuietUsage = "nothing on standard error but warnings and errors: no progress bar, no summary"

// ErrHelp is returned when the user asked for -help: exit status 0.
var ErrHelp = errors.New("help requested")

// UsageError marks errors in the command line: exit status 2.
type UsageError struct{ Err error }

func (u *UsageError) Error() string { return u.Err.Error() }
func (u *UsageError) Unwrap() error { return u.Err }

// Usagef returns a UsageError with the message format gives.
func Usagef(format string, args ...any) error {
	return &UsageError{Err: fmt.Errorf(format, args...)}
}

// NewFlags returns a FlagSet for a command whose help text shows synopsis
// and doc (the input and output formats) above the flags, and the
// command's exit statuses below them.
func NewFlags(e *Env, name, synopsis, doc string) *flag.FlagSet {
	return NewFlagsExit(e, name, synopsis, doc, "")
}

// NewFlagsExit is NewFlags for a command that also exits 1 for what
// failure says, after "bad data or an I/O failure" (", or logs with no
// source of time").
func NewFlagsExit(e *Env, name, synopsis, doc, failure string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(e.Stderr)
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprintf(w, "Usage: timealign %s %s\n\n%s\n", name, synopsis, strings.TrimSpace(doc))
		printFlags(w, fs)
		fmt.Fprintf(w, "\nExit status:\n  0    success\n  1    bad data or an I/O failure%s\n  2    bad command line\n  130  interrupted (SIGINT, SIGTERM)\n", failure)
	}
	if e.OnFlags != nil {
		e.OnFlags(fs)
	}
	return fs
}

// Kinder is a flag.Value that names the kind of its value in the help
// ("--start time", "--periods D,D,...").
type Kinder interface{ Kind() string }

// printFlags lists the flags of fs as --name (the flag package's
// PrintDefaults writes -name), then the deprecated spellings.
func printFlags(w io.Writer, fs *flag.FlagSet) {
	var flags, old []*flag.Flag
	fs.VisitAll(func(f *flag.Flag) {
		if _, ok := f.Value.(*deprecatedValue); ok {
			old = append(old, f)
		} else {
			flags = append(flags, f)
		}
	})
	if len(flags) > 0 {
		fmt.Fprintf(w, "\nFlags:\n")
	}
	for _, f := range flags {
		kind, usage := flag.UnquoteUsage(f)
		if _, ok := flagValue(f).(time.Duration); ok {
			kind = "duration"
		}
		if k, ok := f.Value.(Kinder); ok {
			kind = k.Kind()
		}
		line := "  --" + f.Name
		if kind != "" {
			line += " " + kind
		}
		fmt.Fprintf(w, "%s\n        %s", line, strings.ReplaceAll(usage, "\n", "\n        "))
		switch f.DefValue {
		case "", "0", "false", "0s", "0.0", "[]":
		default:
			if !strings.Contains(usage, "(default") {
				if _, ok := flagValue(f).(string); ok {
					fmt.Fprintf(w, " (default %q)", f.DefValue)
				} else {
					fmt.Fprintf(w, " (default %s)", f.DefValue)
				}
			}
		}
		fmt.Fprintln(w)
	}
	if len(old) > 0 {
		fmt.Fprintf(w, "\nDeprecated spellings (they work until the next release):\n")
		for _, f := range old {
			fmt.Fprintf(w, "  --%s: use --%s\n", f.Name, f.Value.(*deprecatedValue).name)
		}
	}
}

// flagValue returns the value a flag holds (nil for a Value that is not a
// flag.Getter).
func flagValue(f *flag.Flag) any {
	if g, ok := f.Value.(flag.Getter); ok {
		return g.Get()
	}
	return nil
}

// deprecatedValue is an old spelling of a flag: setting it sets the flag
// that replaces it and says so on standard error.
type deprecatedValue struct {
	fs   *flag.FlagSet
	old  string
	name string // the flag that replaces it
	warn io.Writer
}

func (d *deprecatedValue) String() string {
	if d == nil || d.fs == nil {
		return ""
	}
	return d.fs.Lookup(d.name).Value.String()
}

func (d *deprecatedValue) Set(v string) error {
	fmt.Fprintf(d.warn, "timealign %s: --%s is deprecated and goes in the next release: use --%s\n", d.fs.Name(), d.old, d.name)
	return d.fs.Set(d.name, v)
}

func (d *deprecatedValue) IsBoolFlag() bool {
	b, ok := d.fs.Lookup(d.name).Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// IsDeprecated reports whether f is an old spelling of a flag (Deprecate).
func IsDeprecated(f *flag.Flag) bool {
	_, ok := f.Value.(*deprecatedValue)
	return ok
}

// Deprecate keeps old working as a spelling of the flag name for one
// release, with a deprecation line on standard error when it is used.
func Deprecate(e *Env, fs *flag.FlagSet, old, name string) {
	if fs.Lookup(name) == nil {
		panic("Deprecate: no flag " + name)
	}
	fs.Var(&deprecatedValue{fs: fs, old: old, name: name, warn: e.Stderr}, old, "deprecated: use --"+name)
}

// durationValue is a duration flag whose error for a plain number asks for
// a unit.
type durationValue struct{ flag.Value }

func (d durationValue) Set(v string) error {
	if err := d.Value.Set(v); err != nil {
		return durationError(v)
	}
	return nil
}

func (d durationValue) Get() any { return d.Value.(flag.Getter).Get() }

// durationError explains a value that is not a Go duration.
func durationError(v string) error {
	v = strings.TrimSpace(v)
	if _, err := strconv.ParseFloat(v, 64); err == nil {
		return fmt.Errorf("%q has no unit: give a unit, e.g. %ss or %sms", v, v, v)
	}
	return fmt.Errorf("%q is not a duration (examples: 10ms, 1.5s, 250us)", v)
}

// flagSyntax rewrites the flag package's messages to the --flag spelling
// the help and the documentation use.
var flagSyntax = strings.NewReplacer("for flag -", "for flag --", "for -", "for --",
	"not defined: -", "not defined: --", "needs an argument: -", "needs an argument: --")

// ParseFlags parses args, mapping -help to ErrHelp (after printing usage to
// stdout) and other flag errors to usage errors.
func ParseFlags(e *Env, fs *flag.FlagSet, args []string) error {
	fs.VisitAll(func(f *flag.Flag) {
		if _, ok := flagValue(f).(time.Duration); ok {
			if _, wrapped := f.Value.(durationValue); !wrapped {
				f.Value = durationValue{f.Value}
			}
		}
	})
	fs.SetOutput(io.Discard)
	err := parseInterspersed(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		fs.SetOutput(e.Stdout)
		fs.Usage()
		return ErrHelp
	}
	fs.SetOutput(e.Stderr)
	if err != nil {
		return &UsageError{Err: errors.New(flagSyntax.Replace(err.Error()))}
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

// DurationList is a flag holding comma-separated Go durations ("10ms,20ms").
type DurationList []time.Duration

// Kind names the value in the help.
func (d *DurationList) Kind() string { return "D,D,..." }

func (d *DurationList) String() string {
	s := make([]string, len(*d))
	for i, v := range *d {
		s[i] = v.String()
	}
	return strings.Join(s, ",")
}

func (d *DurationList) Set(v string) error {
	*d = (*d)[:0]
	for _, f := range strings.Split(v, ",") {
		x, err := time.ParseDuration(strings.TrimSpace(f))
		if err != nil {
			return durationError(f)
		}
		*d = append(*d, x)
	}
	return nil
}

// IntList is a flag holding comma-separated integers ("4,-1,0").
type IntList []int

// Kind names the value in the help.
func (l *IntList) Kind() string { return "N,N,..." }

func (l *IntList) String() string {
	s := make([]string, len(*l))
	for i, v := range *l {
		s[i] = strconv.Itoa(v)
	}
	return strings.Join(s, ",")
}

func (l *IntList) Set(v string) error {
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

// ConfigError turns an algorithm's configuration error into a usage error
// that names the command's flags ("--fifo-size is 1, want 2..65536"), not
// Go fields. flags maps Go fields to flag names where the kebab-case of the
// field is not the flag; a field without a flag keeps its Go name.
func ConfigError(fset *flag.FlagSet, err error, flags map[string]string) error {
	ce, ok := cfgerr.As(err)
	if !ok {
		return &UsageError{Err: err}
	}
	return &UsageError{Err: errors.New(ce.Say(func(field string) string {
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

// SplitList splits a comma-separated flag value, dropping empty items.
func SplitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// SetFlags returns the flags given on the command line.
func SetFlags(fset *flag.FlagSet) map[string]bool {
	set := map[string]bool{}
	fset.Visit(func(f *flag.Flag) { set[f.Name] = true })
	return set
}

// UnusedFlags refuses flags that the chosen mode or policy does not use:
// uses maps each mode-specific flag to the modes that use it.
func UnusedFlags(fset *flag.FlagSet, what, mode string, uses map[string][]string) error {
	set := SetFlags(fset)
	names := slices.Sorted(maps.Keys(set))
	for _, name := range names {
		modes, ok := uses[name]
		if !ok || slices.Contains(modes, mode) {
			continue
		}
		return Usagef("--%s is not used by %s %s (it applies to %s %s)", name, what, mode, what, strings.Join(modes, ", "))
	}
	return nil
}

// WriteJSON writes v as indented JSON.
func WriteJSON(w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// FlagMeaning is the one meaning of a flag name across the commands.
type FlagMeaning struct {
	Kind    string // what FlagKind gives for its value
	Meaning string
}

// FlagGlossary gives the one meaning of every flag name that more than one
// command uses: the same name means the same thing everywhere
// (TestFlagGrammar holds every command's flags to it). Lists of topic
// names are --topics, counts are named as counts (--num-topics), a time
// window is --window and a window of samples --window-samples, a boolean is
// never also a duration; --overwrite replaces an existing output,
// --allow-mismatch accepts logs that do not belong together.
func FlagGlossary() map[string]FlagMeaning {
	return map[string]FlagMeaning{
		"out":            {"string", "the output file (standard output when not given, where a command allows it)"},
		"status":         {"string", "write the final status as JSON to this file"},
		"drops":          {"string", "write every dropped message to this CSV file"},
		"quiet":          {"bool", QuietUsage},
		"json":           {"bool", "write JSON instead of text"},
		"overwrite":      {"bool", "replace an existing output bag (an output file is always replaced)"},
		"allow-mismatch": {"bool", "accept logs that do not belong together"},
		"compression":    {"string", "MCAP chunk compression: zstd, lz4 or none"},
		"storage":        {"string", "storage format of an output bag: mcap or sqlite3"},
		"format":         {"string", "the output's format (each command lists its formats)"},
		"jobs":           {"int", "inputs processed in parallel"},
		"period":         {"duration", "the stream's sampling period"},
		"tick-bits":      {"int", "width of a device's tick counter in bits"},
		"tick-period":    {"duration", "duration of one device clock tick"},
		"index-bits":     {"int", "width of the sensor's sample counter in bits"},
		"max-skew-ppm":   {"float64", "largest rate difference between two clocks, ppm"},
		"window":         {"duration", "a time window (the estimator's: receive time spanned by the fit)"},
		"window-samples": {"int", "a window counted in samples"},
		"reorder-window": {"duration", "how far back in time a record may come and still be put in order"},
		"topics":         {"string", "comma-separated topic names"},
		"num-topics":     {"int", "number of topics"},
		"sync-topics":    {"string", "comma-separated topic names to match with a synchronizer policy"},
		"queue-size":     {"int", "the synchronizer's queue size"},
		"age-penalty":    {"float64", "ApproximateTime's age penalty"},
		"max-interval":   {"duration", "ApproximateTime's max interval (0: none)"},
		"report":         {"string", "write an HTML timing report to this file"},
		"html":           {"string", "write an HTML report to this file"},
		"start":          {"string", "start of the time range read: absolute ns, or a duration after the start"},
		"end":            {"string", "end of the time range read: absolute ns, or a duration after the start"},
		"sysid":          {"int", "MAVLink system id of the autopilot"},
		"compid":         {"int", "MAVLink component id of the autopilot"},
		"source":         {"string", "the time source that wins"},
		"max-latency":    {"duration", "largest delay of a consistent message"},
		"tolerance":      {"duration", "added to the uncertainties before two sources disagree"},
		"ignore-crc":     {"bool", "decode frames with a wrong checksum when the next record is sound"},
	}
}

// FlagKind names the type of a flag's value: bool, int, string, duration,
// ..., or the Go type of a Value that is no flag.Getter.
func FlagKind(f *flag.Flag) string {
	switch v := flagValue(f).(type) {
	case nil:
		return fmt.Sprintf("%T", f.Value)
	case time.Duration:
		return "duration"
	default:
		return fmt.Sprintf("%T", v)
	}
}
