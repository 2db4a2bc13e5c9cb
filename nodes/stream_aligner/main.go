//go:build ros2

// Command stream_aligner republishes the messages of N inputs in0 …
// in{N-1}, each unchanged on out0 … out{N-1}, in the order of their header
// stamps across all inputs (nodes/internal/streamaligner: Rock's StreamAligner
// with a period per input as its lookahead and a timeout in stamps).
//
//	ros2 run timealign stream_aligner --ros-args -p inputs:=2 \
//	    -p "periods_sec:=[0.01, 0.1]" -r in0:=/imu/data -r in1:=/scan
package main

import (
	"github.com/timealign/timealign/nodes/internal/rosnode"
	"github.com/timealign/timealign/nodes/internal/streamaligner"
)

func main() { rosnode.Main(streamaligner.Spec()) }
