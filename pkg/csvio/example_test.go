package csvio_test

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/timealign/timealign/pkg/csvio"
)

func Example() {
	in := "topic,stamp_ns\n0,100\n1,abc\n"
	r, err := csvio.NewReader(strings.NewReader(in), "sets.csv", csvio.Columns{Required: []string{"topic", "stamp_ns"}})
	if err != nil {
		panic(err)
	}
	w := csvio.NewWriter(os.Stdout, "stamp_ns")
	var bad error
	for bad == nil {
		row, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		t, err := row.Stamp(1)
		if err != nil {
			bad = err
			break
		}
		w.Stamp(t).EndRow()
	}
	_ = w.Flush()
	fmt.Println(bad)
	// Output:
	// stamp_ns
	// 100
	// sets.csv:3:2 (column "stamp_ns"): bad value: "abc" is not a stamp in integer nanoseconds
}
