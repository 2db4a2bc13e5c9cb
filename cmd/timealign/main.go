// Command timealign repairs sensor timestamps and matches streams in time,
// offline: on CSV streams of stamps, on simulated data, on rosbag2 bags
// (bag) and on ArduPilot's logs (mav). It runs the same algorithms as the
// timealign ROS 2 nodes.
//
// Usage:
//
//	timealign <command> [flags] [input.csv]
//
// Run "timealign help" for the list of commands and "timealign <command>
// -help" for one command's flags. Inputs default to standard input and
// outputs to standard output. Exit status: 0 on success, 1 for bad data or
// I/O failure, 2 for a usage error, 130 when interrupted.
//
// Each command family is a package of internal/ (stream, simulate, demo,
// bagcmd, mavcmd), built on internal/cli.
package main

import (
	"slices"

	"github.com/timealign/timealign/cmd/timealign/internal/bagcmd"
	"github.com/timealign/timealign/cmd/timealign/internal/cli"
	"github.com/timealign/timealign/cmd/timealign/internal/demo"
	"github.com/timealign/timealign/cmd/timealign/internal/mavcmd"
	"github.com/timealign/timealign/cmd/timealign/internal/simulate"
	"github.com/timealign/timealign/cmd/timealign/internal/stream"
)

// commands lists the commands in the order "help" shows them.
func commands() []*cli.Command {
	return slices.Concat(
		[]*cli.Command{demo.Command()},
		stream.Commands(),
		[]*cli.Command{simulate.Command(), bagcmd.Command(), mavcmd.Command(), versionCommand()},
	)
}

func main() { cli.Main(version, commands()) }
