package registry_test

import (
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/timealign/timealign/nodes/internal/registry"
)

const readmePath = "../../../README.md"

var (
	ticked      = regexp.MustCompile("`([^`]*)`")
	launchParam = regexp.MustCompile(`'([A-Za-z0-9_.]+)':`)
	launchRemap = regexp.MustCompile(`\('([A-Za-z0-9_~/]+)',`)
	nodeHeading = regexp.MustCompile("^#### `([a-z_]+)`$")
	// numbered is an input or output of a node with an inputs parameter:
	// in0 … in{N-1}, out0 … out{N-1}, which depend on inputs.
	numbered = regexp.MustCompile(`^(in|out)([0-9]+|\{N-1\})$`)
)

// readmeNode is what README.md's section of a node says: its table's
// rows and its launch snippet.
type readmeNode struct {
	rows   [][]string // the cells of each row after the header, trimmed
	launch string     // the python snippet
}

// readmeNodes returns README.md's "#### `<node>`" sections by node.
func readmeNodes(t *testing.T) map[string]readmeNode {
	data, err := os.ReadFile(readmePath)
	require.NoError(t, err)
	out := map[string]readmeNode{}
	var name string
	var cur readmeNode
	inLaunch := false
	flush := func() {
		if name != "" {
			out[name] = cur
		}
		name, cur = "", readmeNode{}
	}
	for _, line := range strings.Split(string(data), "\n") {
		switch {
		case strings.HasPrefix(line, "#"):
			flush()
			if m := nodeHeading.FindStringSubmatch(line); m != nil {
				name = m[1]
			}
		case name == "":
		case strings.HasPrefix(line, "```python"):
			inLaunch = true
		case strings.HasPrefix(line, "```"):
			inLaunch = false
		case inLaunch:
			cur.launch += line + "\n"
		case strings.HasPrefix(line, "| ") && !strings.HasPrefix(line, "| |") && !strings.HasPrefix(line, "|---"):
			var cells []string
			for _, c := range strings.Split(strings.Trim(line, "|"), "|") {
				cells = append(cells, strings.TrimSpace(c))
			}
			cur.rows = append(cur.rows, cells)
		}
	}
	flush()
	return out
}

// TestReadmeNodes: README.md's table of each node says what its
// declarations say. Every node of the registry has a section; each
// parameter a row names is declared, with the default the row shows;
// each topic a row names is a port of the node (or ~/status); the launch
// snippet sets declared parameters and remaps the node's topics.
func TestReadmeNodes(t *testing.T) {
	sections := readmeNodes(t)
	require.ElementsMatch(t, names(), slices.Collect(maps.Keys(sections)), "README.md has a \"#### `<node>`\" section for each node, and no other")
	for _, s := range registry.Nodes() {
		t.Run(s.Name, func(t *testing.T) {
			sec := sections[s.Name]
			srv := declared(t, s.Bind, s.Validate)
			ins, outs, err := s.Ports()
			require.NoError(t, err)
			topics := map[string]bool{"~/status": true}
			for _, p := range slices.Concat(ins, outs) {
				topics[p.Topic] = true
			}
			params := 0
			for _, row := range sec.rows {
				require.Len(t, row, 4, "README.md, %s: a row has four cells: %q", s.Name, row)
				names := ticked.FindAllStringSubmatch(row[1], -1)
				switch row[0] {
				case "parameter":
					values := ticked.FindAllStringSubmatch(row[2], -1)
					require.Len(t, values, len(names), "README.md, %s: a default for each parameter of %q", s.Name, row[1])
					for i, n := range names {
						v, ok := srv.Get(n[1])
						require.True(t, ok, "README.md, %s: %s is no parameter of the node", s.Name, n[1])
						require.Equal(t, v.String(), values[i][1], "README.md, %s: the default of %s", s.Name, n[1])
						params++
					}
				case "subscribes", "publishes":
					for _, n := range names {
						require.True(t, topics[n[1]] || numbered.MatchString(n[1]) && srv.Has("inputs"),
							"README.md, %s: %s is no topic of the node", s.Name, n[1])
					}
				default:
					t.Fatalf("README.md, %s: a row of %q, want parameter, subscribes or publishes", s.Name, row[0])
				}
			}
			require.NotZero(t, params, "README.md, %s: the table names parameters", s.Name)
			require.Contains(t, sec.launch, "executable='"+s.Name+"'", "README.md, %s: a launch snippet", s.Name)
			for _, m := range launchParam.FindAllStringSubmatch(sec.launch, -1) {
				_, ok := srv.Get(m[1])
				require.True(t, ok, "README.md, %s: the launch snippet sets %s, which the node does not declare", s.Name, m[1])
			}
			for _, m := range launchRemap.FindAllStringSubmatch(sec.launch, -1) {
				require.True(t, topics[m[1]] || numbered.MatchString(m[1]) && srv.Has("inputs"),
					"README.md, %s: the launch snippet remaps %s, which is no topic of the node", s.Name, m[1])
			}
		})
	}
}
