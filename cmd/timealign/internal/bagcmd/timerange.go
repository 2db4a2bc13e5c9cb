package bagcmd

import (
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/timealign/timealign/cmd/timealign/internal/cli"
	"github.com/timealign/timealign/pkg/bag"
	"github.com/timealign/timealign/pkg/stamp"
)

// timeBound is a --start or --end flag: an absolute time in integer
// nanoseconds since the epoch, or a duration after the bag's first message
// ("90s").
type timeBound struct {
	raw        string
	abs        stamp.Time    // when absolute
	rel        time.Duration // when relative
	isAbs, set bool
}

// minAbsoluteNs is the smallest integer taken as an absolute time: a
// smaller one is a duration missing its unit (1e15 ns is 11.6 days after
// the epoch).
const minAbsoluteNs = 1e15

func (b *timeBound) String() string { return b.raw }
func (b *timeBound) Get() any       { return b.raw }

// Kind names the value in the help.
func (b *timeBound) Kind() string { return "time" }

func (b *timeBound) Set(v string) error {
	v = strings.TrimSpace(v)
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		if n < minAbsoluteNs {
			return fmt.Errorf("%q is neither an absolute time in ns since the epoch nor a duration: give a unit for a time after the bag's start, e.g. %ss", v, v)
		}
		*b = timeBound{raw: v, abs: stamp.Time(n), isAbs: true, set: true}
		return nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return fmt.Errorf("%q is neither an absolute time in ns since the epoch nor a duration after the bag's start (examples: 1700000000000000000, 90s, 2m30s)", v)
	}
	if d < 0 {
		return fmt.Errorf("%q is before the bag's start: give a duration ≥ 0 after it", v)
	}
	*b = timeBound{raw: v, rel: d, set: true}
	return nil
}

// resolve returns the bound for a bag whose first message is logged at
// start.
func (b *timeBound) resolve(start stamp.Time) stamp.Time {
	if b.isAbs {
		return b.abs
	}
	return start.Add(b.rel)
}

// timeRange is the --start and --end of a command that reads bags.
type timeRange struct{ start, end timeBound }

const (
	startUsage = "read only messages logged at or after this: absolute ns since the epoch, or a duration after the bag's first message (90s)"
	endUsage   = "read only messages logged at or before this: absolute ns since the epoch, or a duration after the bag's first message (2m)"
)

// addFlags defines --start and --end on fs; what is added to their usage
// (bag fix: what OUT holds).
func (r *timeRange) addFlags(fs *flag.FlagSet, what string) {
	fs.Var(&r.start, "start", startUsage+what)
	fs.Var(&r.end, "end", endUsage+what)
}

// applyNoted applies the range to b and, unless progress is off, says on
// standard error which messages it keeps, then what ("; OUT holds only
// those").
func (r *timeRange) applyNoted(e *cli.Env, cmd string, b *bag.Bag, what string) error {
	if err := r.apply(b); err != nil {
		return err
	}
	if n := r.note(b); n != "" && !e.NoProgress {
		fmt.Fprintf(e.Stderr, "timealign %s: %s%s\n", cmd, n, what)
	}
	return nil
}

// apply sets the bag's From and To (a relative bound needs the bag's
// first log time, from its summary: no message is read).
func (r *timeRange) apply(b *bag.Bag) error {
	if !r.start.set && !r.end.set {
		return nil
	}
	var first stamp.Time
	if !(r.start.set && r.start.isAbs) || !(r.end.set && r.end.isAbs) {
		s, err := b.Summarize()
		if err != nil {
			return err
		}
		first = s.Start
	}
	if r.start.set {
		b.From = r.start.resolve(first)
	}
	if r.end.set {
		b.To = r.end.resolve(first)
	}
	if b.From != 0 && b.To != 0 && b.To < b.From {
		return cli.Usagef("--end (%s) is before --start (%s)", r.end.raw, r.start.raw)
	}
	if b.From == 0 && r.start.set {
		b.From = 1 // the epoch itself: a bound still
	}
	return nil
}

// note says which messages the range keeps ("" without one).
func (r *timeRange) note(b *bag.Bag) string {
	if !r.start.set && !r.end.set {
		return ""
	}
	from, to := "its start", "its end"
	if r.start.set {
		from = fmtLogTime(b.From)
	}
	if r.end.set {
		to = fmtLogTime(b.To)
	}
	return fmt.Sprintf("%s: only the messages logged from %s to %s (--start %s, --end %s)", b.Path, from, to, orDash(r.start.raw), orDash(r.end.raw))
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
