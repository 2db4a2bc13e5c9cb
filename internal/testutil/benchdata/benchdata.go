// Package benchdata locates the reference data of the differential tests:
// testdata/reference/<kind>/ of this module (kinds tsest, pll, sync, align),
// the scenarios run through the original implementations.
// testdata/reference/README.md describes them.
//
// The data is part of the module and found only inside it: from the
// working directory (go test runs a package's tests in the package's
// directory) up to the go.mod of this module. Nothing is looked for beside
// the module or in the environment. A test that asks for the data and cannot
// have it fails, naming what is missing or damaged; it never skips.
//
// testdata/reference/SHA256SUMS records the SHA-256 of every data file
// (the format of sha256sum). [Dir] checks a kind's listed files against it,
// so a truncated or edited file fails the test with the file's name. Files
// the manifest does not list (more scenarios of a kind) are not checked.
package benchdata

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
)

// ModulePath is the module whose go.mod marks the root holding the data.
const ModulePath = "github.com/timealign/timealign"

// RelRoot is the data's directory relative to the module root.
const RelRoot = "testdata/reference"

// Manifest is the checksum file in the data's directory.
const Manifest = "SHA256SUMS"

// Kinds are the kinds of reference data, one directory each.
var Kinds = []string{"tsest", "pll", "sync", "align"}

// Root returns the absolute path of testdata/reference in the module that
// contains the working directory.
func Root() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("benchdata: %w", err)
	}
	mod, err := moduleRoot(wd)
	if err != nil {
		return "", err
	}
	return filepath.Join(mod, filepath.FromSlash(RelRoot)), nil
}

// Dir returns the directory of one kind of reference data after checking
// it (see [Check]). Any problem fails the test with the file's name.
func Dir(t testing.TB, kind string) string {
	t.Helper()
	root, err := Root()
	if err != nil {
		t.Fatalf("reference data: %v", err)
		return ""
	}
	return dirIn(t, root, kind)
}

func dirIn(t testing.TB, root, kind string) string {
	t.Helper()
	if err := Check(root, kind); err != nil {
		t.Fatalf("reference data: %v", err)
		return ""
	}
	return filepath.Join(root, kind)
}

// ErrCorrupt is wrapped by the errors of [Check] for a file whose content
// is not the one the manifest records.
var ErrCorrupt = errors.New("content differs from the manifest")

// Check verifies the files the manifest under root lists for kind: each
// must exist and have its recorded SHA-256. The manifest must list at
// least one file of the kind. Errors name the file (a missing one wraps
// fs.ErrNotExist, a changed one ErrCorrupt) or the manifest's line.
func Check(root, kind string) error {
	entries, err := readManifest(filepath.Join(root, Manifest))
	if err != nil {
		return err
	}
	n := 0
	for _, e := range entries {
		if !strings.HasPrefix(e.name, kind+"/") {
			continue
		}
		n++
		file := filepath.Join(root, filepath.FromSlash(e.name))
		sum, err := fileSum(file)
		if err != nil {
			return fmt.Errorf("%w (a file %s lists)", err, Manifest)
		}
		if sum != e.sum {
			return fmt.Errorf("%s: SHA-256 is %s, %s records %s: %w", file, sum, Manifest, e.sum, ErrCorrupt)
		}
	}
	if n == 0 {
		return fmt.Errorf("%s lists no file of kind %q (kinds: %s)", filepath.Join(root, Manifest), kind, strings.Join(Kinds, ", "))
	}
	return nil
}

type entry struct{ sum, name string }

// readManifest reads lines "<64 hex digits>  <kind>/<file>" (sha256sum's
// format; a '*' instead of the second space marks binary mode).
func readManifest(file string) ([]entry, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, fmt.Errorf("benchdata: %w", err)
	}
	defer f.Close()
	var out []entry
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSuffix(sc.Text(), "\r")
		if text == "" {
			continue
		}
		sum, name, ok := strings.Cut(text, " ")
		name = strings.TrimPrefix(strings.TrimPrefix(name, " "), "*")
		if _, err := hex.DecodeString(sum); !ok || err != nil || len(sum) != 2*sha256.Size {
			return nil, fmt.Errorf("%s:%d: not \"<sha256 hex> <path>\": %q", file, line, text)
		}
		if name == "" || path.IsAbs(name) || path.Clean(name) != name || strings.HasPrefix(name, "../") || !strings.Contains(name, "/") {
			return nil, fmt.Errorf("%s:%d: path %q is not <kind>/<file> inside the data directory", file, line, name)
		}
		out = append(out, entry{strings.ToLower(sum), name})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return out, nil
}

func fileSum(file string) (string, error) {
	f, err := os.Open(file)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// moduleRoot walks up from dir to the nearest go.mod and requires it to be
// this module's: the data of another module is never used.
func moduleRoot(dir string) (string, error) {
	for d := dir; ; {
		b, err := os.ReadFile(filepath.Join(d, "go.mod"))
		if err == nil {
			if modulePath(b) != ModulePath {
				return "", fmt.Errorf("benchdata: the nearest go.mod above %s is %s's (in %s), not %s's: run the tests inside this module", dir, modulePath(b), d, ModulePath)
			}
			return d, nil
		}
		if !errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("benchdata: %w", err)
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", fmt.Errorf("benchdata: no go.mod above %s: run the tests inside the module %s", dir, ModulePath)
		}
		d = parent
	}
}

// modulePath returns the path of go.mod's module directive, or "".
func modulePath(gomod []byte) string {
	for _, l := range strings.Split(string(gomod), "\n") {
		f := strings.Fields(l)
		if len(f) >= 2 && f[0] == "module" {
			return strings.Trim(f[1], `"`)
		}
	}
	return ""
}

// RequireQuoted fails the test unless doc, a file named from the module's
// root ("docs/performance.md"), contains every figure of quoted: the figures
// the docs quote are the ones the test measures (format them as the doc
// writes them, e.g. "%.1f µs"). A change of the method that moves a figure
// fails here until the doc is updated.
func RequireQuoted(t testing.TB, doc string, quoted ...string) {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatalf("%s: %v", doc, err)
	}
	mod, err := moduleRoot(wd)
	if err != nil {
		t.Fatalf("%s: %v", doc, err)
	}
	b, err := os.ReadFile(filepath.Join(mod, filepath.FromSlash(doc)))
	if err != nil {
		t.Fatalf("%s: %v", doc, err)
	}
	// The docs wrap lines: compare with runs of white space as one space.
	text := strings.Join(strings.Fields(string(b)), " ")
	for _, q := range quoted {
		if !strings.Contains(text, q) {
			t.Errorf("%s does not quote the measured figure %q: update it (or the method)", doc, q)
		}
	}
}
