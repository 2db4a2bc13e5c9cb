package rosname

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
	// --ros-args -r in:=/imu/data_raw -r est:out:=/imu/data -r other_node:not_mine:=/x
	// -r priv:=~/private -r rostopic://t:=/topic_only -r rosservice://s:=/srv_only
	// -r __ns:=/sensors -r other_node:__node:=zzz
	rules := []Remap{
		{Match: "in", Replacement: "/imu/data_raw"},
		{Node: "est", Match: "out", Replacement: "/imu/data"},
		{Node: "other_node", Match: "not_mine", Replacement: "/x"},
		{Match: "priv", Replacement: "~/private"},
		{Kind: RemapTopic, Match: "t", Replacement: "/topic_only"},
		{Kind: RemapService, Match: "s", Replacement: "/srv_only"},
		{Kind: RemapNamespace, Replacement: "/sensors"},
		{Node: "other_node", Kind: RemapNodeName, Replacement: "zzz"},
	}
	n, err := NewNodeName("est", "", rules)
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
