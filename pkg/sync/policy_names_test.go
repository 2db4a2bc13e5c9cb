package sync_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	tsync "github.com/timealign/timealign/pkg/sync"
)

func TestPolicyNames(t *testing.T) {
	names := tsync.PolicyNames()
	require.Equal(t, []string{"approximate", "exact", "epsilon", "latest"}, names)
	for i, n := range names {
		p, err := tsync.ParsePolicy(n)
		require.NoError(t, err)
		require.Equal(t, tsync.Policy(i), p)
		require.Equal(t, n, p.String())
	}
	names[0] = "changed"
	require.Equal(t, "approximate", tsync.PolicyNames()[0], "a copy")
	_, err := tsync.ParsePolicy("best")
	require.EqualError(t, err, `sync: invalid config: Policy "best" is unknown (want approximate, exact, epsilon or latest)`)
}
