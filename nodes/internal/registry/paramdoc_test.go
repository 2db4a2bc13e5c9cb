package registry_test

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/timealign/timealign/nodes/internal/nodekit"
	"github.com/timealign/timealign/nodes/internal/registry"
	"github.com/timealign/timealign/nodes/internal/runtimeparams"
	"github.com/timealign/timealign/pkg/params"
	"github.com/timealign/timealign/pkg/qos"
)

var update = flag.Bool("update", false, "rewrite docs/parameters.md from the nodes' declarations")

const (
	docPath    = "../../../docs/parameters.md"
	regenerate = "go test ./nodes/internal/registry -run TestParametersDoc -update"
)

// TestParametersDoc: docs/parameters.md is what the nodes' declarations
// say: for every node of the registry its topics (the ports of its Spec,
// on the default parameters) and its parameters (name, type, default,
// range, read-only, description, as its Bind declares them), then the
// runtime's. It fails when the file differs; -update rewrites it.
func TestParametersDoc(t *testing.T) {
	got := parametersDoc(t)
	if *update {
		require.NoError(t, os.WriteFile(docPath, []byte(got), 0o644))
		return
	}
	want, err := os.ReadFile(docPath)
	require.NoError(t, err, "docs/parameters.md is generated: %s", regenerate)
	if got == string(want) {
		return
	}
	g, w := strings.Split(got, "\n"), strings.Split(string(want), "\n")
	i := 0
	for i < len(g) && i < len(w) && g[i] == w[i] {
		i++
	}
	line := func(l []string) string {
		if i < len(l) {
			return l[i]
		}
		return "(end of file)"
	}
	t.Fatalf("docs/parameters.md differs from the nodes' declarations from line %d:\n\tthe file:         %s\n\tthe declarations: %s\nregenerate it with\n\t%s",
		i+1, line(w), line(g), regenerate)
}

// parametersDoc writes docs/parameters.md.
func parametersDoc(t *testing.T) string {
	var b strings.Builder
	b.WriteString(`# Parameters and topics of the nodes

<!-- Generated from the nodes' declarations (nodes/internal/registry), do not edit:
     ` + regenerate + `
     CI fails when this file differs from what the declarations produce. -->

Each node's topics (names relative to the node, remapped with ` + "`-r`" + `) and
parameters, with their defaults. Set parameters in a parameter file
(` + "`config/<node>.yaml`" + `, ` + "`--params-file`" + `) or with ` + "`-p name:=value`" + `; the writable
ones also at run time (` + "`ros2 param set`" + `), read-only ones say why.

`)
	nodes := registry.Nodes()
	for i, s := range nodes {
		if i > 0 {
			b.WriteString(" · ")
		}
		fmt.Fprintf(&b, "[%s](#%s)", s.Name, s.Name)
	}
	b.WriteString(" · [every node](#every-node)\n")
	for _, s := range nodes {
		fmt.Fprintf(&b, "\n## %s\n\n", s.Name)
		fmt.Fprintf(&b, "`ros2 run timealign %s`: diagnostics named `<node>: %s`, status on `~/status`.\n", s.Name, s.What)
		ins, outs, err := s.Ports()
		require.NoError(t, err)
		// The runtime's own publishers (nodekit.Node): ~/status and /diagnostics.
		outs = append(outs, nodekit.Port{Topic: "~/status", Type: s.StatusType, QoS: qos.Default()},
			nodekit.Port{Topic: "/diagnostics", Type: "diagnostic_msgs/msg/DiagnosticArray", QoS: qos.Default()})
		if len(ins) > 0 {
			b.WriteString("\nSubscribed topics:\n\n")
			writePorts(&b, ins)
		}
		b.WriteString("\nPublished topics:\n\n")
		writePorts(&b, outs)
		b.WriteString("\nParameters")
		if declared(t, s.Bind, s.Validate).Has("inputs") {
			b.WriteString(" (the topics above are those of the default `inputs`)")
		}
		b.WriteString(", besides [every node's](#every-node):\n\n")
		writeParams(&b, declared(t, s.Bind, s.Validate))
	}
	b.WriteString("\n## Every node\n\nThe node runtime's parameters, which every node has. With `use_sim_time`, a node also subscribes `/clock` (`rosgraph_msgs/msg/Clock`).\n\n")
	rt := runtimeparams.DefaultParams()
	writeParams(&b, declared(t, rt.Bind, nil))
	return b.String()
}

// declared returns a server with the parameters bind declares, on their
// defaults.
func declared(t *testing.T, bind func(*params.Binder), validate func() error) *params.Server {
	srv := params.NewServer(params.Options{Node: "/doc"})
	b := params.NewBinder(srv, validate)
	bind(b)
	require.NoError(t, b.Declare())
	require.Empty(t, srv.Issues())
	return srv
}

func writePorts(b *strings.Builder, ports []nodekit.Port) {
	b.WriteString("| topic | type | QoS |\n| --- | --- | --- |\n")
	for _, p := range ports {
		var typ string
		switch {
		case p.Type != "" && p.TypeParam != "":
			typ = fmt.Sprintf("`%s` (`%s`)", p.Type, p.TypeParam)
		case p.Type != "":
			typ = "`" + p.Type + "`"
		case p.SameAs != "":
			typ = "the type of `" + p.SameAs + "`"
		case p.TypeParam != "":
			typ = "`" + p.TypeParam + "`, or the type of its first publisher"
		default:
			typ = "the type of its first publisher"
		}
		fmt.Fprintf(b, "| `%s` | %s | %s |\n", p.Topic, typ, p.QoS)
	}
}

func writeParams(b *strings.Builder, srv *params.Server) {
	b.WriteString("| parameter | type | default | range | read-only | description |\n| --- | --- | --- | --- | --- | --- |\n")
	for _, name := range srv.Names() {
		d, _ := srv.Describe(name)
		v, _ := srv.Get(name)
		var ranges []string
		if d.IntRange != nil {
			ranges = append(ranges, d.IntRange.String())
		}
		if d.FloatRange != nil {
			ranges = append(ranges, d.FloatRange.String())
		}
		if d.AdditionalConstraints != "" {
			ranges = append(ranges, d.AdditionalConstraints)
		}
		desc, ro := d.Description, ""
		if d.ReadOnly {
			ro = "yes"
			if before, why, ok := strings.Cut(desc, params.ReadOnlyReason); ok {
				desc, ro = before, "yes: "+why
			}
		}
		fmt.Fprintf(b, "| `%s` | %s | `%s` | %s | %s | %s |\n", name, d.Type, v, cell(strings.Join(ranges, "; ")), cell(ro), cell(desc))
	}
}

// cell escapes s for a table cell.
func cell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
