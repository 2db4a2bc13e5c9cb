package main

import (
	"bytes"
	"context"
	"flag"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/timealign/timealign/cmd/timealign/internal/cli"
)

// commandPaths lists every command and subcommand that has flags.
func commandPaths() [][]string {
	var paths [][]string
	for _, c := range commands() {
		if len(c.Sub) == 0 {
			paths = append(paths, []string{c.Name})
		}
		for _, s := range c.Sub {
			paths = append(paths, []string{c.Name, s.Name})
		}
	}
	return paths
}

// commandFlagSets runs every command's --help and returns the flag sets
// they made, by command.
func commandFlagSets(t *testing.T) map[string]*flag.FlagSet {
	t.Helper()
	sets := map[string]*flag.FlagSet{}
	for _, p := range commandPaths() {
		var got *flag.FlagSet
		var out, errb bytes.Buffer
		e := &cli.Env{Ctx: context.Background(), Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb,
			OnFlags: func(fs *flag.FlagSet) { got = fs }}
		code := cli.Run(e, commands(), append(append([]string{}, p...), "--help"))
		require.Equal(t, 0, code, "%v: %s", p, errb.String())
		require.NotNil(t, got, "%v made no flag set", p)
		sets[strings.Join(p, " ")] = got
	}
	return sets
}

// TestFlagGrammar: one name, one meaning. Every flag name used by more
// than one command is in the glossary, with the glossary's type; no name
// has two types anywhere.
func TestFlagGrammar(t *testing.T) {
	glossary := cli.FlagGlossary()
	type use struct{ cmd, kind, usage string }
	uses := map[string][]use{}
	for cmd, fs := range commandFlagSets(t) {
		fs.VisitAll(func(f *flag.Flag) {
			if cli.IsDeprecated(f) {
				return
			}
			uses[f.Name] = append(uses[f.Name], use{cmd, cli.FlagKind(f), f.Usage})
		})
	}
	names := make([]string, 0, len(uses))
	for n := range uses {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		us := uses[name]
		g, inGlossary := glossary[name]
		if len(us) > 1 {
			require.True(t, inGlossary, "--%s is used by %d commands (%v): give its one meaning in flagGlossary", name, len(us), us)
		}
		for _, u := range us {
			require.Equal(t, us[0].kind, u.kind, "--%s is a %s in %s and a %s in %s", name, us[0].kind, us[0].cmd, u.kind, u.cmd)
			if inGlossary {
				require.Equal(t, g.Kind, u.kind, "--%s in %s is a %s; the glossary says %s (%s)", name, u.cmd, u.kind, g.Kind, g.Meaning)
			}
		}
	}
	// The grammar's rules of names, over every flag.
	for _, name := range names {
		for _, u := range uses[name] {
			lower := strings.ToLower(u.usage)
			if strings.Contains(lower, "comma-separated topics") {
				require.True(t, name == "topics" || strings.HasSuffix(name, "-topics"),
					"--%s in %s takes topic names: call it --topics or --<what>-topics", name, u.cmd)
			}
			if name == "topics" || strings.HasSuffix(name, "-topics") && !strings.HasPrefix(name, "num-") {
				require.Equal(t, "string", u.kind, "--%s in %s is a list of topic names", name, u.cmd)
			}
			if strings.HasPrefix(name, "window") {
				want := map[string]string{"window": "duration", "window-samples": "int"}[name]
				require.NotEmpty(t, want, "--%s in %s: a time window is --window, a sample window --window-samples", name, u.cmd)
				require.Equal(t, want, u.kind, "--%s in %s", name, u.cmd)
			}
			if strings.HasPrefix(name, "num-") {
				require.Equal(t, "int", u.kind, "--%s in %s is a count", name, u.cmd)
			}
			if u.kind == "bool" {
				for _, other := range uses[name] {
					require.Equal(t, "bool", other.kind, "--%s is a boolean in %s and a %s in %s", name, u.cmd, other.kind, other.cmd)
				}
			}
		}
	}
	// The names the issue found with two meanings keep one.
	for _, name := range []string{"topics", "window", "reorder-window", "sync-topics", "quiet", "json"} {
		_, ok := glossary[name]
		require.True(t, ok, name)
	}
	require.Equal(t, "string", glossary["topics"].Kind, "--topics is a list of names")
	require.Equal(t, "duration", glossary["window"].Kind)
	require.Equal(t, "int", glossary["window-samples"].Kind)
}

// TestHelpFormat: every command's help spells flags --flag, lists its exit
// statuses, and shows no optional flag as required.
func TestHelpFormat(t *testing.T) {
	single := regexp.MustCompile(`(?m)^\s+-[a-z]`)
	for _, p := range commandPaths() {
		t.Run(strings.Join(p, " "), func(t *testing.T) {
			out, errOut, code := runCmd(t, "", append(append([]string{}, p...), "--help")...)
			require.Equal(t, 0, code, errOut)
			require.NotRegexp(t, single, out, "flags are listed as --flag")
			require.Contains(t, out, "Exit status:\n  0    success\n  1    ")
			require.Contains(t, out, "130  interrupted")
		})
	}
	out, _, _ := runCmd(t, "", "align", "--help")
	require.Contains(t, out, "Usage: timealign align --periods D,D,... [--timeout D]")
}

// TestFlagErrors: errors name the subcommand and point to its own help; a
// duration given without a unit asks for one; the flag package's -flag is
// spelled --flag.
func TestFlagErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"estimate", "--window", "2"}, []string{`timealign estimate: invalid value "2" for flag --window: "2" has no unit: give a unit, e.g. 2s`, "Run 'timealign estimate --help' for usage."}},
		{[]string{"align", "--periods", "10,20ms"}, []string{`"10" has no unit: give a unit, e.g. 10s`}},
		{[]string{"bag", "fix", "a", "b"}, []string{"timealign bag fix: ", "Run 'timealign bag fix --help' for usage."}},
		{[]string{"bag", "report", "--nope"}, []string{"timealign bag report: flag provided but not defined: --nope", "Run 'timealign bag report --help'"}},
		{[]string{"mav", "merge", "--reorder-window", "5"}, []string{"timealign mav merge: ", "give a unit, e.g. 5s", "Run 'timealign mav merge --help'"}},
		{[]string{"mav", "frob"}, []string{"timealign mav: unknown subcommand \"frob\"", "Run 'timealign mav --help'"}},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			_, errOut, code := runCmd(t, "", tc.args...)
			require.Equal(t, 2, code, errOut)
			for _, w := range tc.want {
				require.Contains(t, errOut, w)
			}
			require.NotContains(t, errOut, "timealign bag: ")
		})
	}
}

// TestDeprecatedFlags: an old spelling still works, as the new one, with a
// line on standard error.
func TestDeprecatedFlags(t *testing.T) {
	in := "topic,stamp_ns\n0,5\n1,5\n2,7\n"
	outNew, errNew, code := runCmd(t, in, "sync", "--num-topics", "3")
	require.Equal(t, 0, code, errNew)
	outOld, errOld, code := runCmd(t, in, "sync", "--topics", "3")
	require.Equal(t, 0, code, errOld)
	require.Equal(t, outNew, outOld)
	require.Contains(t, errOld, "timealign sync: --topics is deprecated and goes in the next release: use --num-topics\n")
	require.NotContains(t, errNew, "deprecated")
	help, _, _ := runCmd(t, "", "sync", "--help")
	require.Contains(t, help, "Deprecated spellings (they work until the next release):\n  --topics: use --num-topics\n")

	_, errOut, code := runCmd(t, "", "pll", "--window", "0")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "--window is deprecated")
	require.Contains(t, errOut, "--window-samples", "the error names the flag's new spelling")
}
