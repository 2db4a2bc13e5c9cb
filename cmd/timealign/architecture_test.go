package main

import (
	"go/build"
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

// TestCLILinksNoNodeRuntime: the CLI does not link the node runtime
// (nodekit, rosnode, the registry) nor rclgo, with or without the ros2
// tag: bag fix resolves the nodes' parameters through nodes/nodeparams,
// which reads the nodes' declarations alone. The walk follows the
// module's own packages (no other package imports them), as go list
// -deps ./cmd/timealign does, and names the chain to a package it finds.
func TestCLILinksNoNodeRuntime(t *testing.T) {
	const module = "github.com/timealign/timealign"
	forbidden := []string{module + "/nodes/internal/nodekit", module + "/nodes/internal/rosnode",
		module + "/nodes/internal/registry", "github.com/tiiuae/rclgo"}
	root, err := filepath.EvalSymlinks("../..")
	require.NoError(t, err)
	for _, tags := range [][]string{nil, {"ros2"}} {
		ctx := build.Default
		ctx.BuildTags = tags
		from := map[string]string{module + "/cmd/timealign": ""} // a package: the one that imports it
		queue := []string{module + "/cmd/timealign"}
		for len(queue) > 0 {
			path := queue[0]
			queue = queue[1:]
			for _, f := range forbidden {
				if path == f || strings.HasPrefix(path, f+"/") {
					chain := []string{path}
					for p := from[path]; p != ""; p = from[p] {
						chain = append([]string{p}, chain...)
					}
					t.Errorf("tags %v: the CLI links %s: %s", tags, f, strings.Join(chain, " -> "))
				}
			}
			rel, ok := strings.CutPrefix(path, module+"/")
			if !ok {
				continue
			}
			pkg, err := ctx.ImportDir(filepath.Join(root, filepath.FromSlash(rel)), 0)
			require.NoError(t, err, "tags %v: %s", tags, path)
			for _, im := range pkg.Imports {
				if _, seen := from[im]; !seen {
					from[im] = path
					queue = append(queue, im)
				}
			}
		}
		require.Contains(t, from, module+"/nodes/nodeparams", "tags %v: the walk reaches the CLI's packages", tags)
	}
}
