// Package stream holds the commands that run one algorithm over a CSV
// stream of stamps, row by row in bounded memory: estimate (pkg/tsest),
// pll (pkg/pll), sync and align (pkg/sync).
package stream

import "github.com/timealign/timealign/cmd/timealign/internal/cli"

// Commands returns estimate, pll, sync and align, in the order help lists
// them.
func Commands() []*cli.Command {
	return []*cli.Command{
		{Name: "estimate", Short: "remove jitter from the stamps of a periodic stream (pkg/tsest)", Run: runEstimate},
		{Name: "pll", Short: "map device clock ticks to host time (pkg/pll)", Run: runPLL},
		{Name: "sync", Short: "match messages of N topics into sets (pkg/sync policies)", Run: runSync},
		{Name: "align", Short: "replay N streams in time order, Rock StreamAligner (pkg/sync)", Run: runAlign},
	}
}
