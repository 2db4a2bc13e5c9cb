package params

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// resolveCases: a node /sensors/est (created as "est" in "/sensors") with
// the rules below, and how its names resolve.
var resolveCases = []struct {
	in, want string
	service  bool
	err      bool
}{
	{in: "in", want: "/imu/data_raw"},          // remapped
	{in: "/sensors/in", want: "/imu/data_raw"}, // the same name, absolute
	{in: "out", want: "/imu/data"},             // node-specific rule for est
	{in: "other", want: "/sensors/other"},      // relative: in the namespace
	{in: "~/status", want: "/sensors/est/status"},
	{in: "~", want: "/sensors/est"},
	{in: "{node}/x", want: "/sensors/est/x"},
	{in: "/abs", want: "/abs"},
	{in: "priv", want: "/sensors/est/private"}, // replacement "~/private" expands for the node
	{in: "t", want: "/topic_only"},
	{in: "t", want: "/sensors/t", service: true},
	{in: "s", want: "/srv_only", service: true},
	{in: "s", want: "/sensors/s"},
	{in: "not_mine", want: "/sensors/not_mine"}, // rule for another node
	{in: "bad name", err: true},
	{in: "1x", err: true},
	{in: "a//b", err: true},
	{in: "x/", err: true},
	{in: "a~", err: true},
	{in: "{unknown}", err: true},
	{in: "{1}", err: true},
	{in: "", err: true},
}

func TestResolve(t *testing.T) {
	args, err := ParseArgs([]string{"--ros-args",
		"-r", "in:=/imu/data_raw", "-r", "est:out:=/imu/data", "-r", "other_node:not_mine:=/x",
		"-r", "priv:=~/private", "-r", "rostopic://t:=/topic_only", "-r", "rosservice://s:=/srv_only",
		"-r", "__ns:=/sensors", "-r", "other_node:__node:=zzz"})
	require.NoError(t, err)
	n, err := NewNodeName("est", "", args.Remaps)
	require.NoError(t, err)
	assert.Equal(t, "/sensors/est", n.FQN())
	for _, c := range resolveCases {
		resolve := n.Topic
		if c.service {
			resolve = n.Service
		}
		got, err := resolve(c.in)
		if c.err {
			assert.ErrorIs(t, err, ErrInvalidName, c.in)
			continue
		}
		require.NoError(t, err, c.in)
		assert.Equal(t, c.want, got, c.in)
	}
}

func TestNewNodeName(t *testing.T) {
	rules := []Remap{{Node: "a", Kind: RemapNodeName, Replacement: "b"}, {Kind: RemapNodeName, Replacement: "c"}, {Kind: RemapNamespace, Replacement: "/x/y"}}
	n, err := NewNodeName("a", "/ns", rules)
	require.NoError(t, err)
	assert.Equal(t, NodeName{Name: "b", Namespace: "/x/y", rules: rules}, n, "first matching rule wins")
	n, err = NewNodeName("z", "ns", rules[1:2])
	require.NoError(t, err)
	assert.Equal(t, "/ns/c", n.FQN())
	_, err = NewNodeName("1z", "/", nil)
	assert.ErrorIs(t, err, ErrInvalidName)
	_, err = NewNodeName("z", "/a/", nil)
	assert.ErrorIs(t, err, ErrInvalidName)
}

func TestValidateNames(t *testing.T) {
	assert.NoError(t, ValidateNodeName("imu_0"))
	assert.NoError(t, ValidateNamespace("/"))
	assert.NoError(t, ValidateNamespace("/a/b_1"))
	assert.NoError(t, ValidateFullTopicName("/a/b"))
	for _, bad := range []string{"", "a", "/a/", "/a//b", "/a/1b", "/a b", "/" + strings.Repeat("a", 300)} {
		assert.ErrorIs(t, ValidateFullTopicName(bad), ErrInvalidName, bad)
	}
	for _, bad := range []string{"", "a/b", "1a", "a-b", strings.Repeat("a", 256)} {
		assert.ErrorIs(t, ValidateNodeName(bad), ErrInvalidName, bad)
	}
	assert.Equal(t, `invalid name: topic name "/a//b": topic name must not contain repeated '/' (at index 3)`,
		ValidateFullTopicName("/a//b").Error())
}

func TestMatchNode(t *testing.T) {
	cases := []struct {
		pattern, fqn string
		want         bool
	}{
		{"/**", "/node", true}, {"/**", "/a/b/node", true},
		{"/*", "/node", true}, {"/*", "/a/node", false},
		{"/node", "/node", true}, {"/node", "/a/node", false}, {"node", "/node", true},
		{"/**/node", "/node", true}, {"/**/node", "/a/b/node", true}, {"/**/node", "/a/nodex", false},
		{"/a/*", "/a/node", true}, {"/a/*", "/a/b/node", false}, {"/a/**", "/a/b/node", true},
		{"/*/node", "/a/node", true}, {"/*/node", "/node", false},
		{"/a/**/c", "/a/c", true}, {"/a/**/c", "/a/b/b/c", true}, {"/a/**/c", "/b/c", false},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, MatchNode(c.pattern, c.fqn), "%s ~ %s", c.pattern, c.fqn)
	}
}

func TestResolveOverrides(t *testing.T) {
	base, over := readFixture(t, "base.yaml"), readFixture(t, "override.yaml")
	args, err := ParseArgs([]string{"--ros-args", "-p", "loss_threshold:=9", "-p", "other:x:=1", "-p", "estimator:y:=2"})
	require.NoError(t, err)

	o := ResolveOverrides("/sensors/estimator", []*File{base, over}, args.Params)
	assert.Equal(t, Override{DoubleValue(2), "testdata/override.yaml:3"}, o["window_sec"], "the later file wins")
	assert.Equal(t, Override{IntValue(9), "-p loss_threshold:=9"}, o["loss_threshold"], "-p wins over files")
	assert.Equal(t, DoubleValue(0.01), o["period_sec"].Value, "/sensors/estimator block")
	assert.Equal(t, StringValue("regression"), o["mode"].Value, "/**/estimator block")
	assert.Equal(t, IntValue(5), o["qos.in.depth"].Value, "/** block")
	assert.NotContains(t, o, "root_only", "/* is the root namespace only")
	assert.NotContains(t, o, "y", "node-prefixed -p matches /estimator only")
	assert.NotContains(t, o, "x")

	o = ResolveOverrides("/estimator", []*File{base, over}, args.Params)
	assert.Equal(t, IntValue(1), o["root_only"].Value)
	assert.Equal(t, IntValue(2), o["y"].Value)
	assert.NotContains(t, o, "period_sec")

	o = ResolveOverrides("/other/node", []*File{over, base}, nil)
	assert.Equal(t, Override{DoubleValue(1), "testdata/base.yaml:5"}, o["window_sec"], "order of files decides")
	assert.NotContains(t, o, "mode")
}

func TestLoadOverrides(t *testing.T) {
	args, err := ParseArgs([]string{"--ros-args", "--params-file", "testdata/base.yaml", "--params-file", "testdata/broken.yaml",
		"--params-file", "missing.yaml", "--params-file", "testdata/override.yaml"})
	require.NoError(t, err)
	read := func(p string) ([]byte, error) { return readTestFile(p) }
	o, err := LoadOverrides(args, "/estimator", read)
	require.Error(t, err)
	assert.ErrorIs(t, err, ErrSyntax)
	assert.Contains(t, err.Error(), "testdata/broken.yaml:2:")
	assert.Contains(t, err.Error(), "params file missing.yaml:")
	assert.Equal(t, DoubleValue(2), o["window_sec"].Value, "good files still apply")
}
