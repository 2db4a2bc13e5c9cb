// Package bagcmd holds the bag command: info, report, fix and cat on
// rosbag2 bags (pkg/bag), each bag read in one pass.
package bagcmd

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	gosync "sync"

	"github.com/timealign/timealign/cmd/timealign/internal/cli"
	"github.com/timealign/timealign/pkg/bag"
)

const bagDoc = `
Recorded rosbag2 bags (MCAP and SQLite .db3; a bag directory with
metadata.yaml and its split files, or one storage file).

Subcommands:
  info    topics, types, counts, duration and rates, like 'ros2 bag info'
  report  timing analysis per topic and across topics (table, --html, --json-out)
  fix     rewrite header stamps with the nodes' algorithms and parameter YAML
  cat     the stamps of its messages as CSV (log, publish and header stamp)

Run 'timealign bag <subcommand> --help' for its flags and exit statuses.

Exit status: 0 success, 1 bad data or I/O failure (or a bag cut off where
messages were lost), 2 bad command line, 130 interrupted.`

// Command returns the bag command and its subcommands.
func Command() *cli.Command {
	f := &cli.Family{Name: "bag", Usage: "<info|report|fix|cat> [flags] BAG...", Doc: bagDoc, Commands: []*cli.Command{
		{Name: "info", Short: "topics, types, counts, duration, rates", Run: withTemp(runBagInfo)},
		{Name: "report", Short: "timing analysis: jitter, gaps, latency, clocks, sync", Run: withTemp(runBagReport)},
		{Name: "fix", Short: "rewrite header stamps (tsest, pll, offset) into a new bag", Run: withTemp(runBagFix)},
		{Name: "cat", Short: "the stamps of its messages as CSV: topic, log and publish time, header stamp", Run: withTemp(runBagCat)},
	}}
	return f.Command("rosbag2 bags: info, report (timing analysis), fix (rewrite stamps)")
}

// withTemp gives a subcommand a temporary directory of its own, where a
// SQLite file with a write-ahead log is read from a copy; a signal removes
// it too.
func withTemp(run func(e *cli.Env, temp string, args []string) error) func(*cli.Env, []string) error {
	return func(e *cli.Env, args []string) error {
		dir, err := e.Temps.CreateDir("", "timealign-bag-*")
		if err != nil {
			return err
		}
		defer e.Temps.Remove(dir)
		return run(e, dir, args)
	}
}

// definitions returns the type lookup: MCAP schemas, the installed .msg
// files of a sourced ROS 2 (AMENT_PREFIX_PATH), the built-in table.
func definitions() *bag.Definitions {
	d := &bag.Definitions{ReadFile: os.ReadFile}
	if p := os.Getenv("AMENT_PREFIX_PATH"); p != "" {
		d.AmentPrefixPath = strings.Split(p, string(os.PathListSeparator))
	}
	return d
}

// openBag opens a bag argument; a SQLite file with a write-ahead log is
// read from a copy in temp.
func openBag(temp, path string) (*bag.Bag, error) {
	b, err := bag.Open(path)
	var pe *os.PathError
	if errors.As(err, &pe) && errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%s: no such file or directory", path)
	}
	if err != nil {
		return nil, err
	}
	b.TempDir = temp
	return b, nil
}

// openBags opens every bag argument; the first that fails is the error.
func openBags(temp string, paths []string) ([]*bag.Bag, error) {
	var bags []*bag.Bag
	for _, p := range paths {
		b, err := openBag(temp, p)
		if err != nil {
			return nil, err
		}
		bags = append(bags, b)
	}
	return bags, nil
}

// forEachBag runs do on every bag, jobs at a time, and writes each bag's
// output to w in the order of the bags (a failed bag's error goes to
// stderr, its message naming the command cmd, and the others go on). It
// returns the first error, naming how many bags failed.
func forEachBag(e *cli.Env, cmd string, bags []*bag.Bag, jobs int, w io.Writer, do func(b *bag.Bag, out io.Writer) error) error {
	if jobs < 1 {
		jobs = 1
	}
	if len(bags) == 1 || jobs == 1 {
		var first error
		failed := 0
		for i, b := range bags {
			if i > 0 && len(bags) > 1 {
				fmt.Fprintln(w)
			}
			if err := do(b, w); err != nil {
				if errors.Is(err, e.Ctx.Err()) && e.Ctx.Err() != nil {
					return err
				}
				if len(bags) == 1 {
					return err
				}
				fmt.Fprintf(e.Stderr, "timealign %s: %s: %v\n", cmd, b.Path, err)
				failed++
				if first == nil {
					first = err
				}
			}
		}
		if failed > 0 {
			return fmt.Errorf("%d of %d bags failed; the first: %w", failed, len(bags), first)
		}
		return nil
	}
	outs := make([]bytes.Buffer, len(bags))
	errs := make([]error, len(bags))
	next := make(chan int)
	var wg gosync.WaitGroup
	for range min(jobs, len(bags)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				errs[i] = do(bags[i], &outs[i])
			}
		}()
	}
	for i := range bags {
		next <- i
	}
	close(next)
	wg.Wait()
	var first error
	failed := 0
	for i := range bags {
		if i > 0 {
			fmt.Fprintln(w)
		}
		if _, err := w.Write(outs[i].Bytes()); err != nil {
			return err
		}
		if errs[i] != nil {
			if e.Ctx.Err() != nil {
				return e.Ctx.Err()
			}
			fmt.Fprintf(e.Stderr, "timealign %s: %s: %v\n", cmd, bags[i].Path, errs[i])
			failed++
			if first == nil {
				first = errs[i]
			}
		}
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d bags failed; the first: %w", failed, len(bags), first)
	}
	return nil
}

// defaultJobs is --jobs's default: one bag at a time per core, at most 4.
func defaultJobs() int { return max(1, min(4, runtime.NumCPU())) }

// jobsFlag defines --jobs.
func jobsFlag(fs *flag.FlagSet, usage string) *int { return fs.Int("jobs", defaultJobs(), usage) }

// checkJobs refuses a --jobs out of 1..256.
func checkJobs(jobs int) error {
	if jobs < 1 || jobs > 256 {
		return cli.Usagef("--jobs is %d, want 1..256", jobs)
	}
	return nil
}

// lostFailure is what else exits 1 in the bag commands.
const lostFailure = ", or a bag cut off where messages were lost (everything readable is still processed)"

// cut shortens a user's value for a message.
func cut(s string) string { return cli.Cut(s) }
