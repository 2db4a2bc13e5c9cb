package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// run runs args with cmds and returns the exit status and the outputs.
func run(cmds []*Command, args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = Run(&Env{Ctx: context.Background(), Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb}, cmds, args)
	return code, out.String(), errb.String()
}

// TestRunExitStatus: the exit status and the message of each kind of
// error a command returns, and the dispatcher's own cases.
func TestRunExitStatus(t *testing.T) {
	var ran []string
	cmd := func(name string, err error) *Command {
		return &Command{Name: name, Short: "does " + name, Run: func(e *Env, args []string) error {
			ran = append(ran, name+" "+strings.Join(args, " "))
			return err
		}}
	}
	cmds := []*Command{
		cmd("ok", nil), cmd("help-me", ErrHelp), cmd("bad", errors.New("bad data")),
		cmd("usage", Usagef("--x is %d", 3)), cmd("stop", fmt.Errorf("reading: %w", context.Canceled)),
		cmd("version", nil),
	}
	for _, c := range []struct {
		args   []string
		code   int
		stderr string
	}{
		{[]string{"ok", "a", "b"}, 0, ""},
		{[]string{"help-me"}, 0, ""},
		{[]string{"bad"}, 1, "timealign bad: bad data\n"},
		{[]string{"usage"}, 2, "timealign usage: --x is 3\nRun 'timealign usage --help' for usage.\n"},
		{[]string{"stop"}, 130, "timealign stop: interrupted; no output file written\n"},
		{[]string{"--version"}, 0, ""},
		{[]string{"frob"}, 2, "timealign: unknown command \"frob\"\n\ntimealign repairs"},
		{nil, 2, "Usage:\n  timealign <command>"},
	} {
		code, _, stderr := run(cmds, c.args...)
		require.Equal(t, c.code, code, "%v", c.args)
		if c.stderr == "" {
			require.Empty(t, stderr, "%v", c.args)
		} else {
			require.Contains(t, stderr, c.stderr, "%v", c.args)
		}
	}
	require.Equal(t, []string{"ok a b", "help-me ", "bad ", "usage ", "stop ", "version "}, ran)
	code, stdout, _ := run(cmds, "help")
	require.Equal(t, 0, code)
	require.Contains(t, stdout, "  usage     does usage\n", "help lists the commands")
	ran = nil
	run(cmds, "help", "ok")
	require.Equal(t, []string{"ok -help"}, ran, "help CMD is CMD -help")
	for _, args := range [][]string{{"help", "--help"}, {"--help", "help"}, {"-h", "-h"}} {
		code, stdout, _ = run(cmds, args...)
		require.Equal(t, 0, code, "%v", args)
		require.Contains(t, stdout, "  usage     does usage\n", "%v: the list of commands, not a recursion", args)
	}
}

// TestFamily: a family's usage, help, dispatch to its subcommands (whose
// errors name them), and unknown subcommands.
func TestFamily(t *testing.T) {
	sub := func(name string, err error) *Command {
		return &Command{Name: name, Run: func(*Env, []string) error { return err }}
	}
	f := &Family{Name: "bag", Usage: "<a|b> BAG", Doc: "\nBags.\n", Commands: []*Command{
		sub("a", nil), sub("b", Usagef("no BAG")), sub("c", errors.New("cut off")),
	}}
	require.Equal(t, "a, b or c", f.names())
	require.Equal(t, "a", (&Family{Commands: f.Commands[:1]}).names())
	require.Equal(t, "a or b", (&Family{Commands: f.Commands[:2]}).names())
	cmds := []*Command{f.Command("bags")}
	require.Len(t, cmds[0].Sub, 3)
	for _, c := range []struct {
		args           []string
		code           int
		stdout, stderr string
	}{
		{[]string{"bag"}, 2, "", "Usage: timealign bag <a|b> BAG\n\nBags.\ntimealign bag: a subcommand is needed: a, b or c\nRun 'timealign bag --help'"},
		{[]string{"bag", "help"}, 0, "Usage: timealign bag <a|b> BAG\n\nBags.\n", ""},
		{[]string{"bag", "a"}, 0, "", ""},
		{[]string{"bag", "b"}, 2, "", "timealign bag b: no BAG\nRun 'timealign bag b --help' for usage.\n"},
		{[]string{"bag", "c"}, 1, "", "timealign bag c: cut off\n"},
		{[]string{"bag", "d"}, 2, "", "timealign bag: unknown subcommand \"d\" (want a, b or c)\n"},
	} {
		code, stdout, stderr := run(cmds, c.args...)
		require.Equal(t, c.code, code, "%v", c.args)
		require.Equal(t, c.stdout, stdout, "%v", c.args)
		if c.stderr == "" {
			require.Empty(t, stderr, "%v", c.args)
		} else {
			require.Contains(t, stderr, c.stderr, "%v", c.args)
		}
	}
}

// TestTable: the first column is aligned left, the others right, under a
// rule as wide as each column.
func TestTable(t *testing.T) {
	tb := NewTable("sensor", "µs")
	tb.Row("imu", "12.5")
	tb.Row("camera", "3")
	var b strings.Builder
	tb.Write(&b)
	require.Equal(t, "  sensor    µs\n  ──────  ────\n  imu     12.5\n  camera     3\n", b.String())
}

// TestCutMessage: the long quoted values of a message are shortened, the
// rest of it kept.
func TestCutMessage(t *testing.T) {
	long := strings.Repeat("x", 5000)
	msg := fmt.Sprintf("invalid value %q for flag --out: too long", long)
	got := cutMessage(msg)
	require.Less(t, len(got), 400)
	require.True(t, strings.HasPrefix(got, `invalid value "xxx`), got)
	require.True(t, strings.HasSuffix(got, `" for flag --out: too long`), got)
	require.Equal(t, "short", cutMessage("short"))
}
