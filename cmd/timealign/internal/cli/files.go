package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
)

// A command's files. The input is read from its file or standard input;
// every output file is written to a temporary file beside it and renamed
// over it only when the command succeeds, so a failed or interrupted run
// never leaves a partial output, and an output can never destroy the input
// or another output (they are compared as files, not as strings).

// Temps is the set of temporary output files of the process, which the
// signal handler removes before exiting (see main).
type Temps struct {
	mu     sync.Mutex
	paths  map[string]bool // temporary files, and directories (true) removed whole
	closed bool            // interrupted: no more renames
}

func NewTemps() *Temps { return &Temps{paths: map[string]bool{}} }

// CreateDir makes a temporary directory (os.MkdirTemp) and records it; it
// is removed with everything in it on a signal.
func (t *Temps) CreateDir(dir, pattern string) (string, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return "", context.Canceled
	}
	d, err := os.MkdirTemp(dir, pattern)
	if err != nil {
		return "", err
	}
	t.paths[d] = true
	return d, nil
}

// Create makes a temporary file (os.CreateTemp) and records it, under the
// lock, so that none is created after removeAll.
func (t *Temps) Create(dir, pattern string) (*os.File, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return nil, context.Canceled
	}
	f, err := os.CreateTemp(dir, pattern)
	if err != nil {
		return nil, err
	}
	t.paths[f.Name()] = false
	return f, nil
}

// Commit renames tmp to final unless the process was interrupted.
func (t *Temps) Commit(tmp, final string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return context.Canceled
	}
	delete(t.paths, tmp)
	return os.Rename(tmp, final)
}

// CommitDir renames the temporary directory tmp to final, unless the
// process was interrupted. An existing final (a bag the user asked to
// overwrite) is first moved aside, then removed once tmp is in place, so
// that no interruption leaves neither.
func (t *Temps) CommitDir(tmp, final string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return context.Canceled
	}
	old := ""
	if _, err := os.Lstat(final); err == nil {
		old = filepath.Join(filepath.Dir(final), "."+filepath.Base(final)+".old-"+filepath.Base(tmp))
		if err := os.Rename(final, old); err != nil {
			return err
		}
	}
	if err := os.Rename(tmp, final); err != nil {
		if old != "" {
			if rerr := os.Rename(old, final); rerr != nil {
				err = errors.Join(err, fmt.Errorf("putting %s back: %w (it is %s)", final, rerr, old))
			}
		}
		return err
	}
	delete(t.paths, tmp)
	if old != "" {
		if err := os.RemoveAll(old); err != nil {
			return fmt.Errorf("%s is in place, but the bag it replaced is left as %s: %w", final, old, err)
		}
	}
	return nil
}

// Remove removes a temporary file or directory now.
func (t *Temps) Remove(p string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.paths[p] {
		os.RemoveAll(p)
	} else {
		os.Remove(p)
	}
	delete(t.paths, p)
}

// removeAll removes every temporary file and directory and refuses later
// commits.
func (t *Temps) removeAll() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.closed = true
	for p, dir := range t.paths {
		if dir {
			os.RemoveAll(p)
		} else {
			os.Remove(p)
		}
	}
	t.paths = map[string]bool{}
}

// OutSpec names an output: its flag ("--out") and the path the user gave
// ("" or "-" for standard output).
type OutSpec struct {
	flag, path string
}

// Out names an output: its flag and the path the user gave.
func Out(flag, path string) OutSpec { return OutSpec{flag, path} }

// outFile is an open output.
type outFile struct {
	spec  OutSpec
	w     io.Writer
	f     *os.File // nil for standard output
	tmp   string   // temporary file renamed to final on commit ("" when written in place)
	final string
	mode  fs.FileMode
}

// Files are a command's input and outputs.
type Files struct {
	// In is the input (OpenFiles), Name its name for messages ("stdin"
	// for standard input).
	In      io.Reader
	Name    string
	e       *Env
	closeIn func()
	outs    []*outFile
	ins     []*InFile // OpenInputs
}

// FileID is what makes two paths the same file.
type FileID struct {
	info fs.FileInfo // of an existing file
	abs  string      // the cleaned absolute path, symlinks resolved where they exist
}

func (a FileID) Same(b FileID) bool {
	if a.info != nil && b.info != nil {
		return os.SameFile(a.info, b.info)
	}
	return a.abs != "" && a.abs == b.abs
}

// IDOf identifies path; a path that does not exist yet is identified by
// its resolved absolute name.
func IDOf(path string) FileID {
	var id FileID
	if fi, err := os.Stat(path); err == nil {
		id.info = fi
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return id
	}
	id.abs = Resolve(abs)
	return id
}

// resolve follows the symlinks of an absolute path, also a dangling last
// one (a link to an output not written yet), up to 40 links as the kernel.
func Resolve(abs string) string {
	for range 40 {
		if r, err := filepath.EvalSymlinks(abs); err == nil {
			return r
		}
		dir, base := filepath.Split(abs)
		if d, err := filepath.EvalSymlinks(dir); err == nil {
			dir = d
		}
		abs = filepath.Join(dir, base)
		target, err := os.Readlink(abs)
		if err != nil {
			return abs // a plain name that does not exist yet
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(dir, target)
		}
		abs = filepath.Clean(target)
	}
	return abs
}

func IsStdio(path string) bool { return path == "" || path == "-" }

// OpenFiles opens the command's input (its one positional argument, or
// standard input) and creates its outputs; outputs with an empty path that
// are not the first are skipped (an optional output not asked for). Call
// Commit on success; abort (deferred) removes what commit did not keep.
func OpenFiles(e *Env, fset *flag.FlagSet, outs ...OutSpec) (*Files, error) {
	f := &Files{e: e, closeIn: func() {}}
	var inID FileID
	haveIn := false
	switch fset.NArg() {
	case 0:
	case 1:
		if fset.Arg(0) != "-" {
			p := fset.Arg(0)
			if fi, err := os.Stat(p); err == nil && fi.IsDir() {
				return nil, fmt.Errorf("%s is a directory, not a CSV file", p)
			}
			file, err := os.Open(p)
			if err != nil {
				return nil, err
			}
			f.In, f.Name, f.closeIn = &ctxReader{ctx: e.Ctx, r: file}, p, sync.OnceFunc(func() { file.Close() })
			inID, haveIn = IDOf(p), true
		}
	default:
		return nil, Usagef("want at most one input file, got %d arguments: %s", fset.NArg(), Cut(fmt.Sprintf("%q", fset.Args())))
	}
	if f.In == nil {
		f.In, f.Name = &ctxReader{ctx: e.Ctx, r: e.Stdin}, "stdin"
		if e.StdinStat != nil {
			if fi := e.StdinStat(); fi != nil && fi.Mode().IsRegular() {
				inID, haveIn = FileID{info: fi}, true
			}
		}
		if e.StdinIsTerminal {
			fmt.Fprintf(e.Stderr, "timealign: reading CSV from the terminal (standard input); end it with Ctrl-D, or give an input file\n")
		}
	}
	var ins []namedID
	if haveIn {
		ins = append(ins, namedID{inID, f.Name})
	}
	if err := f.create(outs, ins); err != nil {
		f.closeIn()
		return nil, err
	}
	return f, nil
}

// InFile is one of several input files (OpenInputs).
type InFile struct {
	Name string
	Size int64
	f    *os.File
}

// namedID is an input file's identity and name, for messages.
type namedID struct {
	id   FileID
	Name string
}

// OpenInputs opens several input files, all named on the command line
// (commands that read their inputs more than once, by seeking), and
// creates the outputs; an output that is any of the inputs is refused.
// Read input i with f.Input(i).
func OpenInputs(e *Env, paths []string, outs ...OutSpec) (*Files, error) {
	f := &Files{e: e, closeIn: func() {}}
	var ids []namedID
	for _, p := range paths {
		if IsStdio(p) {
			f.closeIn()
			return nil, Usagef("the logs must be files (they are read twice), not standard input")
		}
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			f.closeIn()
			return nil, fmt.Errorf("%s is a directory, not a log file", p)
		}
		file, err := os.Open(p)
		if err != nil {
			f.closeIn()
			return nil, err
		}
		fi, err := file.Stat()
		if err != nil || !fi.Mode().IsRegular() {
			file.Close()
			f.closeIn()
			return nil, fmt.Errorf("%s is not a regular file (the logs are read twice)", p)
		}
		f.ins = append(f.ins, &InFile{Name: p, f: file, Size: fi.Size()})
		ids = append(ids, namedID{IDOf(p), p})
		prev := f.closeIn
		f.closeIn = sync.OnceFunc(func() { prev(); file.Close() })
	}
	if err := f.create(outs, ids); err != nil {
		f.closeIn()
		return nil, err
	}
	return f, nil
}

// Inputs are the input files of OpenInputs.
func (f *Files) Inputs() []*InFile { return f.ins }

// Input returns input i read from its start, ending with the command's
// context.
func (f *Files) Input(i int) (io.Reader, error) {
	in := f.ins[i]
	if _, err := in.f.Seek(0, io.SeekStart); err != nil {
		return nil, fmt.Errorf("%s: %w", in.Name, err)
	}
	return &ctxReader{ctx: f.e.Ctx, r: in.f}, nil
}

// OpenOutputs creates the outputs of a command without input (simulate,
// demo).
func OpenOutputs(e *Env, outs ...OutSpec) (*Files, error) {
	f := &Files{e: e, closeIn: func() {}}
	if err := f.create(outs, nil); err != nil {
		return nil, err
	}
	return f, nil
}

func (f *Files) create(outs []OutSpec, ins []namedID) error {
	if err := checkOutputs(outs, ins); err != nil {
		return err
	}
	for i, o := range outs {
		if i > 0 && o.path == "" {
			f.outs = append(f.outs, nil)
			continue
		}
		of, err := createOutput(f.e, o)
		if err != nil {
			f.Abort()
			return err
		}
		f.outs = append(f.outs, of)
	}
	return nil
}

// checkOutputs refuses an output that is an input or another output.
func checkOutputs(outs []OutSpec, ins []namedID) error {
	ids := make([]FileID, len(outs))
	stdout := ""
	for i, o := range outs {
		if i > 0 && o.path == "" {
			continue
		}
		if IsStdio(o.path) {
			if stdout != "" {
				return Usagef("%s and %s both write to standard output; name a file for one of them", stdout, o.flag)
			}
			stdout = o.flag
			continue
		}
		ids[i] = IDOf(o.path)
		if fi, err := os.Stat(o.path); err == nil && fi.IsDir() {
			return Usagef("%s %s is a directory", o.flag, o.path)
		}
		for _, in := range ins {
			if in.id.Same(ids[i]) {
				return Usagef("%s %s is the input file %s: writing it would destroy the input; write to another file", o.flag, o.path, in.Name)
			}
		}
		for j := range i {
			if IsStdio(outs[j].path) || outs[j].path == "" {
				continue
			}
			if ids[j].Same(ids[i]) {
				return Usagef("%s and %s name the same file (%s); give each its own file", outs[j].flag, o.flag, o.path)
			}
		}
	}
	return nil
}

// createOutput opens an output: standard output, a device or pipe written
// in place (renaming over /dev/null would replace the device), or a
// temporary file beside the target (beside a symlink's target, so the link
// stays a link).
func createOutput(e *Env, o OutSpec) (*outFile, error) {
	if IsStdio(o.path) {
		return &outFile{spec: o, w: e.Stdout}, nil
	}
	target := o.path
	mode := fs.FileMode(0o644)
	if fi, err := os.Stat(o.path); err == nil {
		if !fi.Mode().IsRegular() {
			f, err := os.OpenFile(o.path, os.O_WRONLY, 0)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", o.flag, err)
			}
			return &outFile{spec: o, w: &ctxWriter{ctx: e.Ctx, w: f}, f: f}, nil
		}
		mode = fi.Mode().Perm()
	}
	if abs, err := filepath.Abs(o.path); err == nil {
		target = Resolve(abs)
	}
	dir, base := filepath.Split(target)
	if dir == "" {
		dir = "."
	}
	f, err := e.Temps.Create(dir, "."+base+".tmp-*")
	if err != nil {
		return nil, fmt.Errorf("%s: cannot write %s: %w", o.flag, o.path, UnwrapPath(err))
	}
	return &outFile{spec: o, w: &ctxWriter{ctx: e.Ctx, w: f}, f: f, tmp: f.Name(), final: target, mode: mode}, nil
}

// UnwrapPath drops the temporary file's name from an *fs.PathError.
func UnwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// Out returns the writer of output i (io.Discard for an output not asked for).
func (f *Files) Out(i int) io.Writer {
	if f.outs[i] == nil {
		return io.Discard
	}
	return f.outs[i].w
}

// Asked reports whether output i was asked for.
func (f *Files) Asked(i int) bool { return f.outs[i] != nil }

// Commit closes the input and every output, and renames each temporary file
// over its target. It is an error if the run was interrupted.
func (f *Files) Commit() error {
	f.closeIn()
	var err error
	for _, o := range f.outs {
		if o == nil || o.f == nil {
			continue
		}
		if o.tmp != "" {
			err = errors.Join(err, o.f.Chmod(o.mode))
		}
		if cerr := o.f.Close(); cerr != nil {
			err = errors.Join(err, fmt.Errorf("%s: writing %s: %w", o.spec.flag, o.spec.path, UnwrapPath(cerr)))
		}
	}
	if err == nil {
		err = f.e.Ctx.Err()
	}
	if err != nil {
		f.Abort()
		return err
	}
	for _, o := range f.outs {
		if o == nil || o.tmp == "" {
			continue
		}
		if rerr := f.e.Temps.Commit(o.tmp, o.final); rerr != nil {
			err = errors.Join(err, fmt.Errorf("%s: %w", o.spec.flag, rerr))
		}
		o.tmp = ""
	}
	return err
}

// Abort closes everything and removes every temporary file not committed.
func (f *Files) Abort() {
	f.closeIn()
	for _, o := range f.outs {
		if o == nil || o.f == nil {
			continue
		}
		o.f.Close()
		if o.tmp != "" {
			f.e.Temps.Remove(o.tmp)
			o.tmp = ""
		}
	}
}

// ContextReader returns r ending with ctx: every read checks it.
func ContextReader(ctx context.Context, r io.Reader) io.Reader { return &ctxReader{ctx: ctx, r: r} }

// ctxReader and ctxWriter end a command promptly once its context is done
// (SIGINT, SIGTERM): every read and write checks it, so no loop over rows
// needs to.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c *ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

type ctxWriter struct {
	ctx context.Context
	w   io.Writer
}

func (c *ctxWriter) Write(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.w.Write(p)
}

// TwoPass lets a command read its input twice (a first pass learns what
// the flags left open, say the number of topics): a file is reopened, and
// standard input is first copied to a temporary file, so memory stays
// bounded. pass runs once per pass with the input from its start.
func (f *Files) TwoPass(first, second func(in io.Reader) error) error {
	var src *os.File
	if cr, ok := f.In.(*ctxReader); ok {
		if file, ok := cr.r.(*os.File); ok && f.Name != "stdin" {
			if fi, err := file.Stat(); err == nil && fi.Mode().IsRegular() {
				src = file
			}
		}
	}
	if src == nil {
		tmp, err := f.e.Temps.Create("", "timealign-stdin-*.csv")
		if err != nil {
			return fmt.Errorf("cannot buffer standard input: %w", err)
		}
		defer f.e.Temps.Remove(tmp.Name())
		defer tmp.Close()
		if _, err := io.Copy(tmp, f.In); err != nil {
			return fmt.Errorf("reading %s: %w", f.Name, err)
		}
		src = tmp
	}
	for i, pass := range []func(io.Reader) error{first, second} {
		if _, err := src.Seek(0, io.SeekStart); err != nil {
			return fmt.Errorf("%s cannot be read twice (pass %d): %w", f.Name, i+1, err)
		}
		if err := pass(&ctxReader{ctx: f.e.Ctx, r: src}); err != nil {
			return err
		}
	}
	return nil
}
