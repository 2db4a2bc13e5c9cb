package rosargs

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/timealign/timealign/pkg/params"
	"github.com/timealign/timealign/pkg/rosname"
)

func boolp(b bool) *bool { return &b }

// argCases feed TestParseArgs, FuzzParseArgs' seeds and BenchmarkParseArgs.
var argCases = []struct {
	name string
	argv []string
	want *Args
	err  error
	msg  string
}{
	{name: "none", argv: nil, want: &Args{}},
	{name: "program args only", argv: []string{"-v", "x"}, want: &Args{Other: []string{"-v", "x"}}},
	{name: "everything", argv: []string{"a", "--ros-args",
		"-p", "rate:=50", "--param", "est:window_sec:=0.5",
		"--params-file", "f.yaml", "--params-file", "g.yaml",
		"-r", "in:=/imu/data_raw", "--remap", "est:out:=/imu/data",
		"-r", "__ns:=/sensors", "-r", "__node:=imu_est", "-r", "rostopic://a:=b", "-r", "rosservice://~/s:=/t",
		"--log-level", "debug", "--log-level", "rcl:=WARN", "--log-config-file", "log.cfg",
		"-e", "/enc", "--disable-rosout-logs", "--enable-stdout-logs", "--disable-external-lib-logs",
		"--", "b"},
		want: &Args{
			Params:     []params.Rule{{Name: "rate", Value: params.IntValue(50)}, {Node: "est", Name: "window_sec", Value: params.DoubleValue(0.5)}},
			ParamFiles: []string{"f.yaml", "g.yaml"},
			Remaps: []rosname.Remap{
				{Kind: rosname.RemapName, Match: "in", Replacement: "/imu/data_raw"},
				{Node: "est", Kind: rosname.RemapName, Match: "out", Replacement: "/imu/data"},
				{Kind: rosname.RemapNamespace, Replacement: "/sensors"},
				{Kind: rosname.RemapNodeName, Replacement: "imu_est"},
				{Kind: rosname.RemapTopic, Match: "a", Replacement: "b"},
				{Kind: rosname.RemapService, Match: "~/s", Replacement: "/t"},
			},
			LogLevel: "debug", LoggerLevels: []LoggerLevel{{"rcl", "warn"}}, LogConfigFile: "log.cfg",
			Enclave: "/enc", RosoutLogs: boolp(false), StdoutLogs: boolp(true), ExternalLibLogs: boolp(false),
			Other: []string{"a", "b"},
		}},
	{name: "two sections", argv: []string{"--ros-args", "-p", "a:=1", "--", "x", "--ros-args", "-p", "b:=[1, 2]"},
		want: &Args{Params: []params.Rule{{Name: "a", Value: params.IntValue(1)}, {Name: "b", Value: params.IntsValue([]int64{1, 2})}}, Other: []string{"x"}}},
	{name: "ros-args repeated", argv: []string{"--ros-args", "--ros-args", "-p", "a:=x"},
		want: &Args{Params: []params.Rule{{Name: "a", Value: params.StringValue("x")}}}},
	{name: "quoted string value", argv: []string{"--ros-args", "-p", "mode:='10'"},
		want: &Args{Params: []params.Rule{{Name: "mode", Value: params.StringValue("10")}}}},
	{name: "nested name", argv: []string{"--ros-args", "-p", "qos.in.depth:=3"},
		want: &Args{Params: []params.Rule{{Name: "qos.in.depth", Value: params.IntValue(3)}}}},
	{name: "__name", argv: []string{"--ros-args", "-r", "est:__name:=x"},
		want: &Args{Remaps: []rosname.Remap{{Node: "est", Kind: rosname.RemapNodeName, Replacement: "x"}}}},
	{name: "deprecated remap", argv: []string{"in:=out"},
		want: &Args{Remaps: []rosname.Remap{{Match: "in", Replacement: "out"}},
			Warnings: []string{"found remap rule 'in:=out'. This syntax is deprecated. Use '--ros-args --remap in:=out' instead."}}},
	{name: "unknown flags", argv: []string{"--ros-args", "--foo", "-p", "a:=1", "bar"}, err: ErrUnknownArg,
		msg: `argument 1 "--foo": found unknown ROS arguments: '--foo', 'bar'`},
	{name: "trailing -p", argv: []string{"--ros-args", "-p"}, err: ErrSyntax, msg: `argument 1 "-p": no parameter override rule after it`},
	{name: "no separator", argv: []string{"--ros-args", "-p", "a=1"}, err: ErrSyntax},
	{name: "empty value", argv: []string{"--ros-args", "-p", "a:="}, err: ErrSyntax},
	{name: "map value", argv: []string{"--ros-args", "-p", "a:={b: 1}"}, err: ErrSyntax},
	{name: "mixed array", argv: []string{"--ros-args", "-p", "a:=[1, x]"}, err: ErrSyntax},
	{name: "wildcard param", argv: []string{"--ros-args", "-p", "*:=1"}, err: ErrSyntax},
	{name: "bad param name", argv: []string{"--ros-args", "-p", "a-b:=1"}, err: ErrSyntax},
	{name: "digit param name", argv: []string{"--ros-args", "-p", "1a:=1"}, err: ErrSyntax},
	{name: "bad remap", argv: []string{"--ros-args", "-r", "in:=/a//b"}, err: ErrSyntax},
	{name: "remap wildcard", argv: []string{"--ros-args", "-r", "/**/in:=/a"}, err: ErrSyntax},
	{name: "remap backreference", argv: []string{"--ros-args", "-r", "in:=\\1"}, err: ErrSyntax},
	{name: "relative ns", argv: []string{"--ros-args", "-r", "__ns:=ns"}, err: ErrSyntax},
	{name: "bad node name", argv: []string{"--ros-args", "-r", "__node:=a-b"}, err: ErrSyntax},
	{name: "bad log level", argv: []string{"--ros-args", "--log-level", "loud"}, err: ErrSyntax},
	{name: "trailing params-file", argv: []string{"--ros-args", "--params-file"}, err: ErrSyntax},
}

func TestParseArgs(t *testing.T) {
	for _, c := range argCases {
		t.Run(c.name, func(t *testing.T) {
			got, err := ParseArgs(c.argv)
			if c.err != nil {
				require.ErrorIs(t, err, c.err)
				var ae *ArgError
				require.ErrorAs(t, err, &ae)
				if c.msg != "" {
					assert.Equal(t, c.msg, err.Error())
				}
				return
			}
			require.NoError(t, err)
			assert.Equal(t, c.want, got)
		})
	}
}

func TestRuleStrings(t *testing.T) {
	for _, s := range []string{"in:=/imu/data", "est:out:=~/x", "__ns:=/a/b", "n:__node:=m", "rostopic://a:=b", "rosservice://a:=b"} {
		r, err := parseRemap(s)
		require.NoError(t, err, s)
		assert.Equal(t, s, r.String())
	}
	for _, s := range []string{"a:=1", "n:a.b:=0.5", "a:=[x, z]"} {
		r, err := parseParamRule(s)
		require.NoError(t, err, s)
		assert.Equal(t, s, r.String())
	}
}

func TestLexToken(t *testing.T) {
	cases := map[string]int{"abc": 3, "a_b1": 4, "_a": 2, "a_": 2, "a__b": 2, "__ns": -1, "1a": -1, "": -1, "a-b": 1, "_": 1}
	for s, want := range cases {
		assert.Equal(t, want, lexToken(s, 0), s)
	}
}

func FuzzParseArgs(f *testing.F) {
	for _, c := range argCases {
		f.Add(joinArgs(c.argv))
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, err := ParseArgs(splitArgs(s))
		if err != nil {
			var ae *ArgError
			require.ErrorAs(t, err, &ae)
			return
		}
		for _, r := range a.Remaps {
			back, err := parseRemap(r.String())
			require.NoError(t, err, r.String())
			require.Equal(t, r, back)
		}
	})
}

// joinArgs and splitArgs turn an argument list into one fuzzable string.
func joinArgs(argv []string) string {
	s := ""
	for i, a := range argv {
		if i > 0 {
			s += "\x00"
		}
		s += a
	}
	return s
}

func splitArgs(s string) []string {
	if s == "" {
		return nil
	}
	var out []string
	start := 0
	for i := 0; i < len(s); i++ {
		if s[i] == 0 {
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}

func BenchmarkParseArgs(b *testing.B) {
	argv := argCases[2].argv
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := ParseArgs(argv); err != nil {
			b.Fatal(err)
		}
	}
}
