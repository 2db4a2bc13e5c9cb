package params

import (
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func readFixture(t testing.TB, name string) *File {
	t.Helper()
	path := filepath.Join("testdata", name)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	f, err := ParseFile(path, data)
	require.NoError(t, err)
	return f
}

// scalarCases is rcl's type inference for unquoted scalars; it feeds
// TestInferScalar, TestParseValue, FuzzParseValue's seeds and
// BenchmarkParseValue.
var scalarCases = []struct {
	in   string
	want Value
}{
	{"true", BoolValue(true)}, {"True", BoolValue(true)}, {"TRUE", BoolValue(true)},
	{"yes", BoolValue(true)}, {"Y", BoolValue(true)}, {"on", BoolValue(true)}, {"ON", BoolValue(true)},
	{"false", BoolValue(false)}, {"no", BoolValue(false)}, {"n", BoolValue(false)}, {"Off", BoolValue(false)},
	{"tRUE", StringValue("tRUE")}, // not one of rcl's spellings
	{"0", IntValue(0)}, {"42", IntValue(42)}, {"-7", IntValue(-7)}, {"+5", IntValue(5)},
	{"0x1F", IntValue(31)}, {"0X1f", IntValue(31)}, {"-0x10", IntValue(-16)},
	{"010", IntValue(8)},      // strtoll base 0: octal
	{"08", DoubleValue(8)},    // not octal, but strtod reads it
	{"0x", StringValue("0x")}, // neither reads it all
	{"0b101", StringValue("0b101")},
	{"9223372036854775807", IntValue(math.MaxInt64)},
	{"-9223372036854775808", IntValue(math.MinInt64)},
	{"9223372036854775808", DoubleValue(9223372036854775808)}, // ERANGE in strtoll
	{"1_000", StringValue("1_000")},
	{"3.25", DoubleValue(3.25)}, {"-0.5", DoubleValue(-0.5)}, {".5", DoubleValue(0.5)}, {"5.", DoubleValue(5)},
	{"1e3", DoubleValue(1000)}, {"1E-3", DoubleValue(0.001)}, {"1e", StringValue("1e")},
	{"0x1.8p1", DoubleValue(3)}, {"0x1.8", DoubleValue(1.5)},
	{"1e400", StringValue("1e400")},   // overflow: ERANGE
	{"1e-400", StringValue("1e-400")}, // underflow: ERANGE
	{"1e-310", StringValue("1e-310")}, // subnormal: ERANGE from glibc strtod too
	{".inf", DoubleValue(math.Inf(1))}, {"-.Inf", DoubleValue(math.Inf(-1))}, {"+.INF", DoubleValue(math.Inf(1))},
	{"inf", DoubleValue(math.Inf(1))}, {"-Infinity", DoubleValue(math.Inf(-1))},
	{".NaN", DoubleValue(math.NaN())}, {"nan", DoubleValue(math.NaN())},
	{".iNf", StringValue(".iNf")},
	{"null", StringValue("null")}, {"~", StringValue("~")},
	{"hello", StringValue("hello")}, {"/imu/data", StringValue("/imu/data")}, {"10ms", StringValue("10ms")},
}

func TestInferScalar(t *testing.T) {
	for _, c := range scalarCases {
		got := inferScalar(c.in)
		assert.Truef(t, c.want.Equal(got), "%q: got %s (%s), want %s (%s)", c.in, got, got.Type(), c.want, c.want.Type())
	}
}

func TestParseValue(t *testing.T) {
	for _, c := range scalarCases {
		got, err := ParseValue(c.in)
		require.NoError(t, err, c.in)
		assert.Truef(t, c.want.Equal(got), "%q: got %s (%s), want %s", c.in, got, got.Type(), c.want)
	}
	more := []struct {
		in   string
		want Value
		err  bool
	}{
		{in: "'42'", want: StringValue("42")},
		{in: `"true"`, want: StringValue("true")},
		{in: "''", want: StringValue("")},
		{in: "hello world", want: StringValue("hello world")},
		{in: "[1, 2, 3]", want: IntsValue([]int64{1, 2, 3})},
		{in: "[0.5, .inf]", want: DoublesValue([]float64{0.5, math.Inf(1)})},
		{in: "[true, no]", want: BoolsValue([]bool{true, false})},
		{in: "[a, 'b c', '1']", want: StringsValue([]string{"a", "b c", "1"})},
		{in: "[1, 2.0]", err: true}, // mixed
		{in: "[]", err: true},       // type unknown
		{in: "[[1]]", err: true},
		{in: "{a: 1}", err: true},
		{in: "a: 1", err: true},
		{in: "", err: true},
		{in: "[1, 2", err: true},
	}
	for _, c := range more {
		got, err := ParseValue(c.in)
		if c.err {
			require.Error(t, err, c.in)
			assert.ErrorIs(t, err, ErrSyntax, c.in)
			continue
		}
		require.NoError(t, err, c.in)
		assert.Truef(t, c.want.Equal(got), "%q: got %s, want %s", c.in, got, c.want)
	}
}

func TestParseFileBase(t *testing.T) {
	f := readFixture(t, "base.yaml")
	require.Len(t, f.Nodes, 3)
	assert.Equal(t, "/**", f.Nodes[0].Pattern)
	assert.Equal(t, "/**/estimator", f.Nodes[1].Pattern)
	assert.Equal(t, "/sensors/estimator", f.Nodes[2].Pattern, "nested node keys join with '/'")
	assert.Equal(t, []Entry{
		{"use_sim_time", BoolValue(false), 4},
		{"window_sec", DoubleValue(1), 5},
		{"qos.in.reliability", StringValue("best_effort"), 8},
		{"qos.in.depth", IntValue(5), 9},
	}, f.Nodes[0].Params)
	p := f.Nodes[2].Params
	assert.Equal(t, StringsValue([]string{"imu", "lidar"}), p[1].Value)
	assert.Equal(t, DoublesValue([]float64{0.5, 1.5}), p[2].Value)
	assert.Equal(t, BoolsValue([]bool{true, false, true}), p[3].Value)
	assert.Equal(t, IntsValue([]int64{1, 16, 8}), p[4].Value)
}

func TestParseFileTypes(t *testing.T) {
	f := readFixture(t, "types.yaml")
	require.Len(t, f.Nodes, 1)
	assert.Equal(t, "/estimator", f.Nodes[0].Pattern, "a bare node name gets a leading '/'")
	got := map[string]Value{}
	for _, e := range f.Nodes[0].Params {
		got[e.Name] = e.Value
	}
	want := map[string]Value{
		"int": IntValue(42), "neg": IntValue(-7), "hex": IntValue(31), "octal": IntValue(8),
		"not_octal": DoubleValue(8), "double": DoubleValue(3.25), "exp": DoubleValue(0.001),
		"inf": DoubleValue(math.Inf(1)), "ninf": DoubleValue(math.Inf(-1)),
		"yes_bool": BoolValue(true), "off_bool": BoolValue(false),
		"quoted_num": StringValue("42"), "single_quoted": StringValue("true"),
		"null_word": StringValue("null"), "tilde": StringValue("~"), "text": StringValue("hello world"),
		"big": DoubleValue(99999999999999999999),
	}
	require.Len(t, got, len(want))
	for k, v := range want {
		assert.Truef(t, v.Equal(got[k]), "%s: got %s (%s), want %s (%s)", k, got[k], got[k].Type(), v, v.Type())
	}
}

// fileErrorCases are malformed files: the error must name the file, the
// line and (where there is one) the parameter.
var fileErrorCases = []struct {
	file, want string
}{
	{"mixed_array.yaml", `testdata/mixed_array.yaml:4: parameter "bad": arrays must have elements of one type: double "2.5" among integers`},
	{"value_before_params.yaml", `testdata/value_before_params.yaml:2: cannot have a value before ros__parameters (under "/estimator/window_sec")`},
	{"empty_value.yaml", `testdata/empty_value.yaml:3: parameter "window_sec": no value`},
	{"bad_node_name.yaml", `testdata/bad_node_name.yaml:2: node name "/1estimator": invalid name: node name "1estimator": node name must not start with a number (at index 0)`},
	{"alias.yaml", `testdata/alias.yaml:4: parameter "b": aliases are not supported`},
	{"broken.yaml", `testdata/broken.yaml:2: did not find expected ',' or ']'`},
	{"no_node.yaml", `testdata/no_node.yaml:1: there are no node names before ros__parameters`},
	{"empty_array.yaml", `testdata/empty_array.yaml:3: parameter "a": empty array: its type cannot be inferred`},
}

func TestParseFileErrors(t *testing.T) {
	for _, c := range fileErrorCases {
		path := filepath.Join("testdata", c.file)
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		_, err = ParseFile(path, data)
		require.Error(t, err, c.file)
		assert.ErrorIs(t, err, ErrSyntax)
		var se *SyntaxError
		require.ErrorAs(t, err, &se)
		assert.Equal(t, c.want, err.Error(), c.file)
	}
}

func TestParseFileEdgeCases(t *testing.T) {
	cases := []struct {
		name, yaml string
		nodes      int
		err        bool
	}{
		{name: "empty file", yaml: "", nodes: 0},
		{name: "comment only", yaml: "# nothing\n", nodes: 0},
		{name: "two documents", yaml: "a:\n  ros__parameters: {x: 1}\n---\nb:\n  ros__parameters: {y: 2}\n", nodes: 2},
		{name: "duplicate key, later wins", yaml: "a:\n  ros__parameters:\n    x: 1\n    x: 2\n", nodes: 1},
		{name: "scalar top level", yaml: "5\n", err: true},
		{name: "sequence at node level", yaml: "a: [1]\n", err: true},
		{name: "params not a map", yaml: "a:\n  ros__parameters: 3\n", err: true},
		{name: "empty params", yaml: "a:\n  ros__parameters:\n", err: true},
		{name: "empty nested map", yaml: "a:\n  ros__parameters:\n    x: {}\n", err: true},
		{name: "map in array", yaml: "a:\n  ros__parameters:\n    x: [{b: 1}]\n", err: true},
		{name: "wildcard namespace", yaml: "/ns/*/node:\n  ros__parameters: {x: 1}\n", nodes: 1},
		{name: "bad wildcard", yaml: "/ns*/node:\n  ros__parameters: {x: 1}\n", err: true},
		{name: "repeated slash", yaml: "/ns//node:\n  ros__parameters: {x: 1}\n", err: true},
		{name: "non-scalar key", yaml: "? [a]\n: 1\n", err: true},
	}
	for _, c := range cases {
		f, err := ParseFile("x.yaml", []byte(c.yaml))
		if c.err {
			assert.ErrorIs(t, err, ErrSyntax, c.name)
			continue
		}
		require.NoError(t, err, c.name)
		assert.Len(t, f.Nodes, c.nodes, c.name)
	}
	f, err := ParseFile("x.yaml", []byte("a:\n  ros__parameters:\n    x: 1\n    x: 2\n"))
	require.NoError(t, err)
	o := ResolveOverrides("/a", []*File{f}, nil)
	assert.Equal(t, IntValue(2), o["x"].Value)
	assert.Equal(t, "x.yaml:4", o["x"].Source)
}

func FuzzParseFile(f *testing.F) {
	entries, err := os.ReadDir("testdata")
	require.NoError(f, err)
	for _, e := range entries {
		if !e.IsDir() {
			data, err := os.ReadFile(filepath.Join("testdata", e.Name()))
			require.NoError(f, err)
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := ParseFile("fuzz.yaml", data)
		if err != nil {
			require.ErrorIs(t, err, ErrSyntax)
			return
		}
		for _, np := range file.Nodes {
			require.True(t, np.Pattern != "" && np.Pattern[0] == '/', np.Pattern)
			for _, e := range np.Params {
				require.NotEmpty(t, e.Name)
				require.True(t, e.Value.IsSet())
			}
		}
	})
}

func FuzzParseValue(f *testing.F) {
	for _, c := range scalarCases {
		f.Add(c.in)
	}
	f.Add("[1, 2]")
	f.Add("'x'")
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseValue(s)
		if err != nil {
			require.ErrorIs(t, err, ErrSyntax)
			return
		}
		require.True(t, v.IsSet())
		if v.Type() == ByteArray {
			return
		}
		// What String writes, ParseValue reads back.
		back, err := ParseValue(v.String())
		require.NoError(t, err, "%q -> %s", s, v)
		require.Truef(t, v.Equal(back), "%q -> %s -> %s", s, v, back)
	})
}

func BenchmarkParseValue(b *testing.B) {
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		c := scalarCases[i%len(scalarCases)]
		if _, err := ParseValue(c.in); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkInferScalar(b *testing.B) {
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		inferScalar(scalarCases[i%len(scalarCases)].in)
	}
}

func BenchmarkParseFile(b *testing.B) {
	data, err := os.ReadFile(filepath.Join("testdata", "base.yaml"))
	require.NoError(b, err)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := ParseFile("base.yaml", data); err != nil {
			b.Fatal(err)
		}
	}
}
