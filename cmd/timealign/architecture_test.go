package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestArchitectureNamesEveryPackage: docs/architecture.md names every Go
// package of the repository (the generated bindings under msgs/ aside),
// by its path, or by its name in the row of its parent
// ("nodes/internal/..." then "nodekit"), so the map of the tree cannot
// fall behind it.
func TestArchitectureNamesEveryPackage(t *testing.T) {
	root, err := filepath.EvalSymlinks("../..") // colcon links the package into its src/
	require.NoError(t, err)
	data, err := os.ReadFile(filepath.Join(root, "docs", "architecture.md"))
	require.NoError(t, err)
	doc := string(data)
	lines := strings.Split(doc, "\n")
	named := func(dir string) bool {
		if strings.Contains(doc, dir) {
			return true
		}
		// by its name, on a line that names its parent (or grandparent)
		word := regexp.MustCompile(`\b` + regexp.QuoteMeta(filepath.Base(dir)) + `\b`)
		for _, parent := range []string{filepath.Dir(dir), filepath.Dir(filepath.Dir(dir))} {
			if parent == "." {
				continue
			}
			for _, l := range lines {
				if strings.Contains(l, parent+"/") && word.MatchString(l) {
					return true
				}
			}
		}
		return false
	}
	dirs := map[string]bool{}
	require.NoError(t, filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			switch {
			case rel != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "node_modules"),
				rel == "msgs" || strings.HasPrefix(rel, "msgs/"),   // generated (the msgs/ row)
				rel == "build" || rel == "install" || rel == "log": // colcon's
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(path, ".go") {
			dirs[filepath.Dir(rel)] = true
		}
		return nil
	}))
	require.Greater(t, len(dirs), 30)
	var missing []string
	for dir := range dirs {
		if dir != "." && !named(dir) {
			missing = append(missing, dir)
		}
	}
	require.Empty(t, missing, "packages docs/architecture.md does not name (add them to its \"Where things live\")")
}
