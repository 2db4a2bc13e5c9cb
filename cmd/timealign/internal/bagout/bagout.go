// Package bagout writes the bags of timealign's commands safely: into a
// temporary directory beside OUT, renamed to OUT only on success, never
// over an input bag.
package bagout

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/timealign/timealign/cmd/timealign/internal/cli"
	"github.com/timealign/timealign/pkg/bag"
)

// Bag is a bag the command writes: a directory with metadata.yaml (or,
// when OUT ends in .mcap or .db3, one storage file). It is written into a
// temporary directory beside OUT and renamed to OUT only on success, so a
// failed or interrupted run leaves nothing (an OUT that existed keeps its
// content), and it never names an input.
type Bag struct {
	e       *cli.Env
	flag    string
	path    string // the final path, symlinks resolved
	given   string // as the user wrote it
	tmp     string // the temporary directory
	single  bool   // one storage file, not a directory
	storage bag.Storage
	// W writes the bag.
	W *bag.Writer
}

// SingleFile reports whether OUT names one storage file, and its format.
func SingleFile(path string) (bag.Storage, bool) {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".mcap":
		return bag.MCAP, true
	case ".db3":
		return bag.SQLite, true
	}
	return "", false
}

// within reports whether path is dir or inside it (both absolute, clean).
func within(path, dir string) bool {
	if path == dir {
		return true
	}
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// Check refuses an OUT that is an input, holds one, or lies
// inside one, and an existing OUT unless overwrite allows it (and then only
// a bag or a storage file: never an arbitrary directory).
func Check(flagName, out string, inputs []*bag.Bag, overwrite bool) error {
	outAbs, err := filepath.Abs(out)
	if err != nil {
		return err
	}
	outAbs = cli.Resolve(outAbs)
	outID := cli.IDOf(out)
	for _, in := range inputs {
		paths := append([]string{in.Path}, in.Files...)
		if in.Metadata != nil || len(in.Files) != 1 || filepath.Clean(in.Files[0]) != filepath.Clean(in.Path) {
			paths = append(paths, in.Dir)
		}
		for _, p := range paths {
			abs, err := filepath.Abs(p)
			if err != nil {
				continue
			}
			abs = cli.Resolve(abs)
			if outID.Same(cli.IDOf(p)) || within(abs, outAbs) || within(outAbs, abs) && isDir(abs) {
				return cli.Usagef("%s %s is, holds or lies inside the input bag %s: writing it would destroy the input; write to another place", flagName, out, in.Path)
			}
		}
	}
	fi, err := os.Lstat(out)
	if err != nil {
		return nil
	}
	if !overwrite {
		return cli.Usagef("%s %s exists; give another name, or --overwrite to replace it", flagName, out)
	}
	if fi.Mode().IsRegular() {
		if _, ok := SingleFile(out); ok {
			return nil
		}
		return cli.Usagef("%s %s exists and is not a bag file (.mcap, .db3): not replaced", flagName, out)
	}
	if fi.IsDir() {
		if _, err := bag.Open(out); err != nil {
			return cli.Usagef("%s %s exists and is not a bag (%v): not replaced", flagName, out, err)
		}
		return nil
	}
	return cli.Usagef("%s %s exists and is neither a bag directory nor a bag file: not replaced", flagName, out)
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// Create starts writing OUT in storage st with opts. Call commit on
// success; abort (deferred) removes the temporary directory.
func Create(e *cli.Env, flagName, out string, st bag.Storage, opts bag.WriterOptions) (*Bag, error) {
	abs, err := filepath.Abs(out)
	if err != nil {
		return nil, err
	}
	final := cli.Resolve(abs)
	o := &Bag{e: e, flag: flagName, path: final, given: out, storage: st}
	if fst, ok := SingleFile(out); ok {
		o.single, o.storage = true, fst
	}
	o.tmp, err = e.Temps.CreateDir(filepath.Dir(final), "."+filepath.Base(final)+".tmp-*")
	if err != nil {
		return nil, fmt.Errorf("%s: cannot write %s: %w", flagName, out, cli.UnwrapPath(err))
	}
	if o.single {
		o.W, err = bag.NewFileWriter(filepath.Join(o.tmp, filepath.Base(final)), o.storage, opts)
	} else {
		if err = os.Chmod(o.tmp, 0o755); err == nil {
			o.W, err = bag.NewDirWriter(o.tmp, filepath.Base(final), o.storage, opts)
		}
	}
	if err != nil {
		o.Abort()
		return nil, err
	}
	return o, nil
}

// Commit finishes the bag and renames it to OUT.
func (o *Bag) Commit() (*bag.Metadata, error) {
	m, err := o.W.Close()
	if err == nil {
		err = o.e.Ctx.Err()
	}
	if err != nil {
		o.Abort()
		return nil, err
	}
	if o.single {
		f := filepath.Join(o.tmp, filepath.Base(o.path))
		if err := o.e.Temps.Commit(f, o.path); err != nil {
			o.Abort()
			return nil, fmt.Errorf("%s: %w", o.flag, err)
		}
		o.e.Temps.Remove(o.tmp)
		return m, nil
	}
	if err := o.e.Temps.CommitDir(o.tmp, o.path); err != nil {
		o.Abort()
		return nil, fmt.Errorf("%s: %w", o.flag, err)
	}
	return m, nil
}

// Abort removes everything written.
func (o *Bag) Abort() {
	if o.W != nil {
		o.W.Abort()
	}
	if o.tmp != "" {
		o.e.Temps.Remove(o.tmp)
	}
}
