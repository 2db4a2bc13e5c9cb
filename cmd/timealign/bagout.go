package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/timealign/timealign/pkg/bag"
)

// outBag is a bag the command writes: a directory with metadata.yaml (or,
// when OUT ends in .mcap or .db3, one storage file). It is written into a
// temporary directory beside OUT and renamed to OUT only on success, so a
// failed or interrupted run leaves nothing (an OUT that existed keeps its
// content), and it never names an input.
type outBag struct {
	e       *env
	flag    string
	path    string // the final path, symlinks resolved
	given   string // as the user wrote it
	tmp     string // the temporary directory
	single  bool   // one storage file, not a directory
	storage bag.Storage
	w       *bag.Writer
}

// singleFile reports whether OUT names one storage file, and its format.
func singleFile(path string) (bag.Storage, bool) {
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

// checkBagOutput refuses an OUT that is an input, holds one, or lies
// inside one, and an existing OUT unless overwrite allows it (and then only
// a bag or a storage file: never an arbitrary directory).
func checkBagOutput(flagName, out string, inputs []*bag.Bag, overwrite bool) error {
	outAbs, err := filepath.Abs(out)
	if err != nil {
		return err
	}
	outAbs = resolve(outAbs)
	outID := idOf(out)
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
			abs = resolve(abs)
			if outID.same(idOf(p)) || within(abs, outAbs) || within(outAbs, abs) && isDir(abs) {
				return usagef("%s %s is, holds or lies inside the input bag %s: writing it would destroy the input; write to another place", flagName, out, in.Path)
			}
		}
	}
	fi, err := os.Lstat(out)
	if err != nil {
		return nil
	}
	if !overwrite {
		return usagef("%s %s exists; give another name, or --overwrite to replace it", flagName, out)
	}
	if fi.Mode().IsRegular() {
		if _, ok := singleFile(out); ok {
			return nil
		}
		return usagef("%s %s exists and is not a bag file (.mcap, .db3): not replaced", flagName, out)
	}
	if fi.IsDir() {
		if _, err := bag.Open(out); err != nil {
			return usagef("%s %s exists and is not a bag (%v): not replaced", flagName, out, err)
		}
		return nil
	}
	return usagef("%s %s exists and is neither a bag directory nor a bag file: not replaced", flagName, out)
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// createBag starts writing OUT in storage st with opts. Call commit on
// success; abort (deferred) removes the temporary directory.
func createBag(e *env, flagName, out string, st bag.Storage, opts bag.WriterOptions) (*outBag, error) {
	abs, err := filepath.Abs(out)
	if err != nil {
		return nil, err
	}
	final := resolve(abs)
	o := &outBag{e: e, flag: flagName, path: final, given: out, storage: st}
	if fst, ok := singleFile(out); ok {
		o.single, o.storage = true, fst
	}
	o.tmp, err = e.temps.createDir(filepath.Dir(final), "."+filepath.Base(final)+".tmp-*")
	if err != nil {
		return nil, fmt.Errorf("%s: cannot write %s: %w", flagName, out, unwrapPath(err))
	}
	if o.single {
		o.w, err = bag.NewFileWriter(filepath.Join(o.tmp, filepath.Base(final)), o.storage, opts)
	} else {
		if err = os.Chmod(o.tmp, 0o755); err == nil {
			o.w, err = bag.NewDirWriter(o.tmp, filepath.Base(final), o.storage, opts)
		}
	}
	if err != nil {
		o.abort()
		return nil, err
	}
	return o, nil
}

// commit finishes the bag and renames it to OUT.
func (o *outBag) commit() (*bag.Metadata, error) {
	m, err := o.w.Close()
	if err == nil {
		err = o.e.ctx.Err()
	}
	if err != nil {
		o.abort()
		return nil, err
	}
	if o.single {
		f := filepath.Join(o.tmp, filepath.Base(o.path))
		if err := o.e.temps.commit(f, o.path); err != nil {
			o.abort()
			return nil, fmt.Errorf("%s: %w", o.flag, err)
		}
		o.e.temps.remove(o.tmp)
		return m, nil
	}
	if err := o.e.temps.commitDir(o.tmp, o.path); err != nil {
		o.abort()
		return nil, fmt.Errorf("%s: %w", o.flag, err)
	}
	return m, nil
}

// abort removes everything written.
func (o *outBag) abort() {
	if o.w != nil {
		o.w.Abort()
	}
	if o.tmp != "" {
		o.e.temps.remove(o.tmp)
	}
}

func mkdirAll(d string) error {
	if err := os.MkdirAll(d, 0o755); err != nil {
		return fmt.Errorf("--out-dir: %w", err)
	}
	return nil
}
