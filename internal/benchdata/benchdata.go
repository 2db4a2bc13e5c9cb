// Package benchdata locates the project's shared reference data
// (shared/bench: scenarios run through the original implementations) for
// differential tests.
package benchdata

import (
	"os"
	"path/filepath"
	"testing"
)

// Root returns the shared/bench directory, or "" if it cannot be found. It
// looks at $TIMEALIGN_SHARED/bench, then shared/bench beside the module's
// root (CI clones the repository with shared/ next to it), then
// /work/shared/bench.
func Root() string {
	var cands []string
	if s := os.Getenv("TIMEALIGN_SHARED"); s != "" {
		cands = append(cands, filepath.Join(s, "bench"))
	}
	if root := moduleRoot(); root != "" {
		cands = append(cands, filepath.Join(root, "..", "shared", "bench"), filepath.Join(root, "shared", "bench"))
	}
	cands = append(cands, "/work/shared/bench")
	for _, c := range cands {
		if fi, err := os.Stat(c); err == nil && fi.IsDir() {
			return c
		}
	}
	return ""
}

// Dir returns shared/bench/<sub>, skipping the test when the data is absent.
func Dir(t testing.TB, sub string) string {
	t.Helper()
	r := Root()
	if r == "" {
		t.Skip("shared/bench not found (set TIMEALIGN_SHARED to the shared/ directory)")
	}
	d := filepath.Join(r, sub)
	if _, err := os.Stat(d); err != nil {
		t.Skipf("%s not found", d)
	}
	return d
}

func moduleRoot() string {
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}
