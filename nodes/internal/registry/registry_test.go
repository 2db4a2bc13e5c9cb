package registry_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/timealign/timealign/nodes/internal/nodekit"
	"github.com/timealign/timealign/nodes/internal/registry"
	"github.com/timealign/timealign/pkg/params"
)

const module = "github.com/timealign/timealign"

func names() []string {
	var out []string
	for _, s := range registry.Nodes() {
		out = append(out, s.Name)
	}
	return out
}

// TestExecutables: the executables are the registry's nodes. Every
// nodes/<exe>/main.go is a node of the registry, built for ROS 2 only, and
// its main is one call, rosnode.Main(<package>.Spec()), of the package
// named after it; CMakeLists.txt builds and installs these executables and
// no others.
func TestExecutables(t *testing.T) {
	mains, err := filepath.Glob("../../*/main.go")
	require.NoError(t, err)
	var exes []string
	for _, m := range mains {
		exes = append(exes, filepath.Base(filepath.Dir(m)))
	}
	require.ElementsMatch(t, names(), exes, "nodes/<exe>/main.go for each node, and no other")

	for _, exe := range exes {
		t.Run(exe, func(t *testing.T) {
			pkg := strings.ReplaceAll(exe, "_", "")
			path := filepath.Join("../..", exe, "main.go")
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ParseComments)
			require.NoError(t, err)
			require.Equal(t, "main", f.Name.Name)
			require.Equal(t, "//go:build ros2", f.Comments[0].List[0].Text, "%s is built with the ros2 tag only", path)
			var imports []string
			for _, im := range f.Imports {
				p, err := strconv.Unquote(im.Path.Value)
				require.NoError(t, err)
				imports = append(imports, p)
			}
			require.ElementsMatch(t, []string{module + "/nodes/internal/" + pkg, module + "/nodes/internal/rosnode"}, imports)
			var body []ast.Stmt
			for _, d := range f.Decls {
				if fn, ok := d.(*ast.FuncDecl); ok && fn.Name.Name == "main" {
					body = fn.Body.List
				}
			}
			require.Len(t, body, 1, "main is one call")
			call := body[0].(*ast.ExprStmt).X.(*ast.CallExpr)
			require.Equal(t, "rosnode.Main", exprString(call.Fun))
			require.Len(t, call.Args, 1)
			arg, ok := call.Args[0].(*ast.CallExpr)
			require.True(t, ok, "rosnode.Main(%s.Spec())", pkg)
			require.Equal(t, pkg+".Spec", exprString(arg.Fun))
			require.Empty(t, arg.Args)
		})
	}

	cmake, err := os.ReadFile("../../../CMakeLists.txt")
	require.NoError(t, err)
	m := regexp.MustCompile(`set\(TIMEALIGN_NODES ([^)]*)\)`).FindSubmatch(cmake)
	require.NotNil(t, m, "CMakeLists.txt sets TIMEALIGN_NODES")
	require.Equal(t, names(), strings.Fields(string(m[1])), "CMakeLists.txt's TIMEALIGN_NODES are the registry's nodes, in its order")
}

func exprString(e ast.Expr) string {
	if sel, ok := e.(*ast.SelectorExpr); ok {
		if id, ok := sel.X.(*ast.Ident); ok {
			return id.Name + "." + sel.Sel.Name
		}
	}
	return ""
}

// TestSpecs: every node's Spec is complete, its parameters declare
// cleanly on their defaults, its ports resolve, and its core reports a
// status message and a health before any message.
func TestSpecs(t *testing.T) {
	for _, s := range registry.Nodes() {
		t.Run(s.Name, func(t *testing.T) {
			require.NotEmpty(t, s.What)
			require.True(t, strings.HasPrefix(s.StatusType, "timealign/msg/"), s.StatusType)
			require.NotNil(t, s.Bind)
			require.NotNil(t, s.Validate)
			require.NotNil(t, s.Ports)
			require.NotNil(t, s.New)
			srv := params.NewServer(params.Options{Node: "/" + s.Name})
			b := params.NewBinder(srv, s.Validate)
			s.Bind(b)
			require.NoError(t, b.Declare())
			require.Empty(t, srv.Issues())
			ins, outs, err := s.Ports()
			require.NoError(t, err)
			require.NotEmpty(t, slices.Concat(ins, outs), "a node has topics")
			core, err := s.New(func(int, []byte) {})
			require.NoError(t, err)
			r := core.Report(1, nodekit.RuntimeStatus{Node: "/" + s.Name})
			require.NotEmpty(t, r.AppendStatusMsg(nil))
			require.NotEmpty(t, r.Diagnose().Message)
		})
	}
	_, ok := registry.Node("timestamp_estimator")
	require.True(t, ok)
	_, ok = registry.Node("no_such_node")
	require.False(t, ok)
}

// TestNodeLists: the lists of nodes outside Go that cannot read the
// registry are its nodes, in its order: the installed-node check of
// .ci/ros2 and the executables test/ros2_test.go builds (a package
// outside nodes/, which cannot import it).
func TestNodeLists(t *testing.T) {
	for _, c := range []struct{ file, re string }{
		{"../../../.ci/ros2", `(?m)^for node in ([a-z_ ]+); do$`},
		{"../../../test/ros2_test.go", `for _, node := range \[\]string\{([^}]*)\}`},
	} {
		data, err := os.ReadFile(c.file)
		require.NoError(t, err)
		m := regexp.MustCompile(c.re).FindSubmatch(data)
		require.NotNil(t, m, "%s lists the nodes (%s)", c.file, c.re)
		list := strings.Fields(strings.NewReplacer(",", " ", `"`, " ").Replace(string(m[1])))
		require.Equal(t, names(), list, "%s lists the registry's nodes, in its order", c.file)
	}
}
