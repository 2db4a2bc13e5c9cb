package qos

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/timealign/timealign/pkg/params"
)

func TestProfiles(t *testing.T) {
	assert.NoError(t, SensorData().Validate())
	assert.NoError(t, Default().Validate())
	assert.Equal(t, "best_effort/volatile/keep_last(5)", SensorData().String())
	assert.Equal(t, "reliable/volatile/keep_last(10)", Default().String())
	assert.Equal(t, "reliable/transient_local/keep_all", Profile{Reliable, TransientLocal, KeepAll, 0}.String())
	assert.ErrorIs(t, Profile{History: KeepLast}.Validate(), params.ErrInvalidValue)
	assert.ErrorIs(t, Profile{Reliability: 7}.Validate(), params.ErrInvalidValue)
	assert.ErrorIs(t, Profile{Durability: 3}.Validate(), params.ErrInvalidValue)
	assert.ErrorIs(t, Profile{History: 3}.Validate(), params.ErrInvalidValue)
	assert.ErrorIs(t, Profile{History: KeepAll, Depth: -1}.Validate(), params.ErrInvalidValue)
	assert.NoError(t, Profile{History: KeepAll}.Validate())
	assert.Equal(t, "unknown(7)", Reliability(7).String())
}

// bind declares qos.in (starting from SensorData) with the overrides ov.
func bind(t *testing.T, ov map[string]params.Override) (*params.Server, *Profile, []string) {
	t.Helper()
	q := SensorData()
	s := params.NewServer(params.Options{Node: "/n", Overrides: ov})
	b := params.NewBinder(s, nil)
	Bind(b, "qos.in", &q)
	require.NoError(t, b.Declare())
	var issues []string
	for _, is := range s.Issues() {
		issues = append(issues, is.String())
	}
	return s, &q, issues
}

func TestBind(t *testing.T) {
	s, q, issues := bind(t, nil)
	assert.Equal(t, SensorData(), *q)
	assert.Equal(t, []string{"qos.in.depth", "qos.in.durability", "qos.in.history", "qos.in.reliability"}, s.Names())
	v, _ := s.Get("qos.in.reliability")
	assert.Equal(t, params.StringValue("best_effort"), v)
	d, _ := s.Describe("qos.in.history")
	assert.True(t, d.ReadOnly)
	assert.Equal(t, "one of: system_default, keep_last, keep_all", d.AdditionalConstraints)
	assert.Empty(t, issues)

	s, q, issues = bind(t, map[string]params.Override{
		"qos.in.depth":       {Value: params.IntValue(20), Source: "f:1"},
		"qos.in.history":     {Value: params.StringValue("keep_all"), Source: "f:2"},
		"qos.in.reliability": {Value: params.StringValue("fast"), Source: "f:3"},
		"qos.in.durability":  {Value: params.StringValue("transient_local"), Source: "f:4"},
	})
	assert.Equal(t, Profile{Reliability: BestEffort, Durability: TransientLocal, History: KeepAll, Depth: 20}, *q)
	assert.Equal(t, []string{
		`error: parameter "qos.in.reliability" (f:3): value fast rejected, keeping best_effort: invalid parameter value: parameter 'qos.in.reliability': "fast" is not one of system_default, reliable, best_effort`,
	}, issues)

	errs := s.Set(params.Parameter{Name: "qos.in.depth", Value: params.IntValue(3)})
	require.ErrorIs(t, errs[0], params.ErrReadOnly, "QoS is fixed at creation")
	assert.Equal(t, "parameter 'qos.in.depth' cannot be set because it is read-only (the subscriptions and publishers are created with it at start-up)",
		errs[0].Error(), "with the reason its description gives")
	assert.Equal(t, 20, q.Depth)

	_, q, issues = bind(t, map[string]params.Override{"qos.in.depth": {Value: params.IntValue(0), Source: "f:1"}})
	assert.Equal(t, 5, q.Depth, "depth 0 with keep_last is rejected")
	require.Len(t, issues, 1)
	assert.Contains(t, issues[0], "must be at least 1 with keep_last")
}
