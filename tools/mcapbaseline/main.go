// Command mcapbaseline reads every message of MCAP files with foxglove's
// own Go reader (github.com/foxglove/mcap/go/mcap), linearly over a 1 MiB
// buffered reader, as the throughput baselines of docs and README are
// measured (DESIGN: "Recorded data: baselines"). It prints the messages and
// bytes read. It is the yardstick of .ci/bagbench, not part of timealign.
//
// Usage: go run ./tools/mcapbaseline FILE.mcap ...
package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/foxglove/mcap/go/mcap"
)

func main() {
	var msgs, bytes int64
	for _, path := range os.Args[1:] {
		f, err := os.Open(path)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		r, err := mcap.NewReader(bufio.NewReaderSize(f, 1<<20))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		it, err := r.Messages(mcap.UsingIndex(false))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		var m mcap.Message
		for {
			_, _, msg, err := it.NextInto(&m)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
			msgs++
			bytes += int64(len(msg.Data))
		}
		f.Close()
	}
	fmt.Printf("%d messages, %d bytes of message data\n", msgs, bytes)
}
