package nodekit

import (
	"bytes"
	"testing"

	"github.com/timealign/timealign/pkg/stamp"
)

func TestAppendLogMsg(t *testing.T) {
	got := AppendLogMsg([]byte("reused"), stamp.Time(3_000_000_007), LogWarn, "ns.node", "hi")
	want := []byte{
		0, 1, 0, 0, // CDR little endian
		3, 0, 0, 0, 7, 0, 0, 0, // stamp: 3 s 7 ns
		30,      // level WARN
		0, 0, 0, // align
		8, 0, 0, 0, 'n', 's', '.', 'n', 'o', 'd', 'e', 0, // name
		3, 0, 0, 0, 'h', 'i', 0, 0, // msg, aligned
		1, 0, 0, 0, 0, 0, 0, 0, // file ""
		1, 0, 0, 0, 0, 0, 0, 0, // function ""
		0, 0, 0, 0, // line
	}
	if !bytes.Equal(got, want) {
		t.Errorf("AppendLogMsg:\n got % x\nwant % x", got, want)
	}
	for l, sev := range map[LogLevel]uint8{LogDebug: 10, LogInfo: 20, LogWarn: 30, LogError: 40} {
		if got := l.RosoutSeverity(); got != sev {
			t.Errorf("%v.RosoutSeverity() = %d, want %d", l, got, sev)
		}
	}
}
