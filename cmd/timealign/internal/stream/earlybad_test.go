package stream

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestEarlyBadLineNoOutput: a stream command whose input fails on an early
// line writes nothing to standard output (not even the header), and exits 1.
func TestEarlyBadLineNoOutput(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		args     []string
	}{
		{"estimate", "event,stamp_ns,index\nsample,1000,\nsample,x,\n", []string{"estimate"}},
		{"estimate unknown event", "event,stamp_ns,index\nsample,1000,\nfrob,2000,\n", []string{"estimate"}},
		{"pll", "receive_ns,ticks\n1000000000,1\n1040000000,-5\n", []string{"pll"}},
		{"sync", "topic,stamp_ns\n0,5\n1,x\n", []string{"sync", "--num-topics", "2"}},
		{"align", "event,stream,stamp_ns\npush,0,5\ndrain,,\npush,7,5\n", []string{"align", "--periods", "1ms"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stdout, errOut, code := runCmd(t, tc.in, tc.args...)
			require.Equal(t, 1, code, errOut)
			require.Empty(t, stdout)
			require.Contains(t, errOut, "stdin:")
		})
	}
}
