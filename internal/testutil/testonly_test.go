package testutil

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// testOnly are the import paths (and their subpackages) that only test
// files may import.
var testOnly = []string{
	"github.com/timealign/timealign/internal/testutil",
	"github.com/timealign/timealign/nodes/internal/nodetest",
}

// TestOnlyTestsImportHelpers: no non-test Go file of the module (build
// tags included: the imports are read, not compiled) imports a test
// helper, so production binaries never link one.
func TestOnlyTestsImportHelpers(t *testing.T) {
	root := moduleRoot(t)
	fset := token.NewFileSet()
	files := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		files++
		rel, _ := filepath.Rel(root, path)
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			for _, helper := range testOnly {
				if p == helper || strings.HasPrefix(p, helper+"/") {
					inHelper := strings.HasPrefix(filepath.ToSlash(rel), strings.TrimPrefix(helper, "github.com/timealign/timealign/")+"/")
					if !inHelper {
						t.Errorf("%s imports the test helper %s", rel, p)
					}
				}
			}
		}
		return nil
	})
	require.NoError(t, err)
	require.Greater(t, files, 100, "the walk found the module's files")
}

// moduleRoot returns the directory of the module's go.mod, above the
// working directory (the package's directory under go test), with
// symbolic links resolved (colcon's workspace links the package into
// src/: a walk does not descend a link).
func moduleRoot(t *testing.T) string {
	dir, err := os.Getwd()
	require.NoError(t, err)
	dir, err = filepath.EvalSymlinks(dir)
	require.NoError(t, err)
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		require.NotEqual(t, dir, parent, "no go.mod above the working directory")
		dir = parent
	}
}
