package benchdata

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestReferenceData: every kind is in the module, listed in the manifest,
// intact, and described by a README.
func TestReferenceData(t *testing.T) {
	root, err := Root()
	require.NoError(t, err)
	require.True(t, strings.HasSuffix(filepath.ToSlash(root), "/"+RelRoot), root)
	gomod, err := os.ReadFile(filepath.Join(root, "..", "..", "go.mod"))
	require.NoError(t, err)
	require.Equal(t, ModulePath, modulePath(gomod))
	for _, kind := range Kinds {
		t.Run(kind, func(t *testing.T) {
			dir := Dir(t, kind)
			require.Equal(t, filepath.Join(root, kind), dir)
			_, err := os.Stat(filepath.Join(dir, "README.md"))
			require.NoError(t, err, "each kind has a README")
		})
	}
}

// fakeData writes a data directory with one kind "k" of two files and
// returns its root.
func fakeData(t *testing.T) string {
	root := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(root, "k"), 0o755))
	var manifest strings.Builder
	for _, f := range []struct{ name, body string }{{"k/a.csv", "x\n1\n"}, {"k/b.csv", "y\n2\n"}} {
		require.NoError(t, os.WriteFile(filepath.Join(root, f.name), []byte(f.body), 0o644))
		s := sha256.Sum256([]byte(f.body))
		fmt.Fprintf(&manifest, "%s  %s\n", hex.EncodeToString(s[:]), f.name)
	}
	require.NoError(t, os.WriteFile(filepath.Join(root, Manifest), []byte(manifest.String()), 0o644))
	return root
}

func TestCheck(t *testing.T) {
	t.Run("intact", func(t *testing.T) {
		root := fakeData(t)
		require.NoError(t, Check(root, "k"))
		// Files the manifest does not list are allowed (more scenarios).
		require.NoError(t, os.WriteFile(filepath.Join(root, "k", "extra.csv"), []byte("z\n"), 0o644))
		require.NoError(t, Check(root, "k"))
	})
	t.Run("missing file", func(t *testing.T) {
		root := fakeData(t)
		require.NoError(t, os.Remove(filepath.Join(root, "k", "b.csv")))
		err := Check(root, "k")
		require.ErrorIs(t, err, fs.ErrNotExist)
		require.Contains(t, err.Error(), filepath.Join(root, "k", "b.csv"))
	})
	t.Run("changed byte", func(t *testing.T) {
		root := fakeData(t)
		require.NoError(t, os.WriteFile(filepath.Join(root, "k", "a.csv"), []byte("x\n2\n"), 0o644))
		err := Check(root, "k")
		require.ErrorIs(t, err, ErrCorrupt)
		require.Contains(t, err.Error(), filepath.Join(root, "k", "a.csv"))
	})
	t.Run("truncated", func(t *testing.T) {
		root := fakeData(t)
		require.NoError(t, os.WriteFile(filepath.Join(root, "k", "b.csv"), []byte("y\n"), 0o644))
		err := Check(root, "k")
		require.ErrorIs(t, err, ErrCorrupt)
		require.Contains(t, err.Error(), "b.csv")
	})
	t.Run("crlf", func(t *testing.T) {
		root := fakeData(t)
		require.NoError(t, os.WriteFile(filepath.Join(root, "k", "a.csv"), []byte("x\r\n1\r\n"), 0o644))
		require.ErrorIs(t, Check(root, "k"), ErrCorrupt)
	})
	t.Run("unknown kind", func(t *testing.T) {
		err := Check(fakeData(t), "tsets")
		require.ErrorContains(t, err, `no file of kind "tsets"`)
	})
	t.Run("no manifest", func(t *testing.T) {
		root := fakeData(t)
		require.NoError(t, os.Remove(filepath.Join(root, Manifest)))
		err := Check(root, "k")
		require.ErrorIs(t, err, fs.ErrNotExist)
		require.ErrorContains(t, err, Manifest)
	})
	for _, c := range []struct{ name, line, want string }{
		{"short sum", "abc  k/a.csv", ":2: not"},
		{"no path", strings.Repeat("0", 64), ":2: not"},
		{"not hex", strings.Repeat("g", 64) + "  k/a.csv", ":2: not"},
		{"escapes", strings.Repeat("0", 64) + "  ../k/a.csv", ":2: path"},
		{"absolute", strings.Repeat("0", 64) + "  /etc/passwd", ":2: path"},
		{"no kind", strings.Repeat("0", 64) + "  a.csv", ":2: path"},
		{"unclean", strings.Repeat("0", 64) + "  k/../../a.csv", ":2: path"},
	} {
		t.Run("manifest "+c.name, func(t *testing.T) {
			root := fakeData(t)
			m, err := os.ReadFile(filepath.Join(root, Manifest))
			require.NoError(t, err)
			lines := strings.SplitN(string(m), "\n", 2)
			bad := lines[0] + "\n" + c.line + "\n" + lines[1]
			require.NoError(t, os.WriteFile(filepath.Join(root, Manifest), []byte(bad), 0o644))
			err = Check(root, "k")
			require.ErrorContains(t, err, Manifest+c.want)
		})
	}
	t.Run("binary mode entry", func(t *testing.T) {
		root := fakeData(t)
		m, err := os.ReadFile(filepath.Join(root, Manifest))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(root, Manifest), []byte(strings.ReplaceAll(string(m), "  k/", " *k/")), 0o644))
		require.NoError(t, Check(root, "k"))
	})
}

// recorder is a testing.TB that records Fatal and Skip instead of acting
// on them, and ends the goroutine as the real ones do.
type recorder struct {
	testing.TB
	fatal, skip string
	errors      []string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}
func (r *recorder) Fatalf(format string, args ...any) {
	r.fatal = fmt.Sprintf(format, args...)
	runtime.Goexit()
}
func (r *recorder) Skip(args ...any) { r.skip = fmt.Sprint(args...); runtime.Goexit() }
func (r *recorder) Skipf(format string, args ...any) {
	r.skip = fmt.Sprintf(format, args...)
	runtime.Goexit()
}
func (r *recorder) SkipNow() { r.skip = "SkipNow"; runtime.Goexit() }

// TestDirFailsNeverSkips: damaged data fails the asking test with the
// file's name.
func TestDirFailsNeverSkips(t *testing.T) {
	root := fakeData(t)
	require.NoError(t, os.Remove(filepath.Join(root, "k", "a.csv")))
	r := &recorder{TB: t}
	done := make(chan string)
	go func() {
		defer close(done)
		done <- dirIn(r, root, "k")
	}()
	got := <-done
	require.Empty(t, got)
	require.Empty(t, r.skip)
	require.Contains(t, r.fatal, filepath.Join(root, "k", "a.csv"))

	r = &recorder{TB: t}
	done = make(chan string)
	go func() {
		defer close(done)
		done <- dirIn(r, t.TempDir(), "k") // no data at all
	}()
	<-done
	require.Empty(t, r.skip)
	require.Contains(t, r.fatal, Manifest)
}

// TestRequireQuoted: a figure the doc quotes passes, also across a line
// break; one it does not fails naming the doc and the figure; a doc that
// is not there fails at once.
func TestRequireQuoted(t *testing.T) {
	quoted := func(doc string, q ...string) *recorder {
		r := &recorder{TB: t}
		done := make(chan struct{})
		go func() {
			defer close(done)
			RequireQuoted(r, doc, q...)
		}()
		<-done
		return r
	}
	r := quoted("go.mod", "module github.com/timealign/timealign", "timealign go 1.25")
	require.Empty(t, r.fatal)
	require.Empty(t, r.errors)

	r = quoted("go.mod", "go 1.25", "go 1.17")
	require.Empty(t, r.fatal)
	require.Len(t, r.errors, 1)
	require.Contains(t, r.errors[0], "go.mod")
	require.Contains(t, r.errors[0], `"go 1.17"`)

	r = quoted("docs/no-such-doc.md", "anything")
	require.Contains(t, r.fatal, "docs/no-such-doc.md")
}

// TestModuleRoot: the root is the nearest go.mod's directory, and only if
// that go.mod is this module's; nothing beside or above it is used.
func TestModuleRoot(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "a", "b")
	require.NoError(t, os.MkdirAll(sub, 0o755))
	_, err := moduleRoot(sub)
	if above := goModAbove(dir); above == "" {
		require.ErrorContains(t, err, "no go.mod above")
	} else {
		// This machine has a go.mod above the temporary directory (say
		// /tmp/go.mod): what it decides depends on that file, not on us.
		t.Logf("not checked: %s lies above the test's directory", above)
	}

	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/other\n\ngo 1.25\n"), 0o644))
	_, err = moduleRoot(sub)
	require.ErrorContains(t, err, "example.com/other")

	inner := filepath.Join(dir, "a")
	require.NoError(t, os.WriteFile(filepath.Join(inner, "go.mod"), []byte("// c\nmodule "+ModulePath+"\n"), 0o644))
	got, err := moduleRoot(sub)
	require.NoError(t, err)
	require.Equal(t, inner, got)

	wd, err := os.Getwd()
	require.NoError(t, err)
	root, err := moduleRoot(wd)
	require.NoError(t, err)
	require.Equal(t, filepath.Join(wd, "..", "..", ".."), root)
	require.True(t, errors.Is(Check(filepath.Join(root, "no-such-dir"), "tsest"), fs.ErrNotExist))
}

// goModAbove returns the first go.mod in dir's parents, or "".
func goModAbove(dir string) string {
	for d := filepath.Dir(dir); ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return filepath.Join(d, "go.mod")
		}
		if d == filepath.Dir(d) {
			return ""
		}
	}
}
