package params

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

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
	// -p loss_threshold:=9 -p other:x:=1 -p estimator:y:=2
	rules := []Rule{{Name: "loss_threshold", Value: IntValue(9)}, {Node: "other", Name: "x", Value: IntValue(1)},
		{Node: "estimator", Name: "y", Value: IntValue(2)}}

	o := ResolveOverrides("/sensors/estimator", []*File{base, over}, rules)
	assert.Equal(t, Override{DoubleValue(2), "testdata/override.yaml:3"}, o["window_sec"], "the later file wins")
	assert.Equal(t, Override{IntValue(9), "-p loss_threshold:=9"}, o["loss_threshold"], "-p wins over files")
	assert.Equal(t, DoubleValue(0.01), o["period_sec"].Value, "/sensors/estimator block")
	assert.Equal(t, StringValue("regression"), o["mode"].Value, "/**/estimator block")
	assert.Equal(t, IntValue(5), o["qos.in.depth"].Value, "/** block")
	assert.NotContains(t, o, "root_only", "/* is the root namespace only")
	assert.NotContains(t, o, "y", "node-prefixed -p matches /estimator only")
	assert.NotContains(t, o, "x")

	o = ResolveOverrides("/estimator", []*File{base, over}, rules)
	assert.Equal(t, IntValue(1), o["root_only"].Value)
	assert.Equal(t, IntValue(2), o["y"].Value)
	assert.NotContains(t, o, "period_sec")

	o = ResolveOverrides("/other/node", []*File{over, base}, nil)
	assert.Equal(t, Override{DoubleValue(1), "testdata/base.yaml:5"}, o["window_sec"], "order of files decides")
	assert.NotContains(t, o, "mode")
}

func TestLoadOverrides(t *testing.T) {
	paths := []string{"testdata/base.yaml", "testdata/broken.yaml", "missing.yaml", "testdata/override.yaml"}
	read := func(p string) ([]byte, error) { return readTestFile(p) }
	o, err := LoadOverrides("/estimator", paths, nil, read)
	require.Error(t, err)
	assert.ErrorIs(t, err, ErrSyntax)
	assert.Contains(t, err.Error(), "testdata/broken.yaml:2:")
	assert.Contains(t, err.Error(), "params file missing.yaml:")
	assert.Equal(t, DoubleValue(2), o["window_sec"].Value, "good files still apply")
}

func TestRuleString(t *testing.T) {
	assert.Equal(t, "a:=1", Rule{Name: "a", Value: IntValue(1)}.String())
	assert.Equal(t, "n:a.b:=0.5", Rule{Node: "n", Name: "a.b", Value: DoubleValue(0.5)}.String())
	assert.Equal(t, "a:=[x, z]", Rule{Name: "a", Value: StringsValue([]string{"x", "z"})}.String())
}
