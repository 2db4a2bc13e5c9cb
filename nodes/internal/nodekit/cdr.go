package nodekit

import (
	"github.com/timealign/timealign/pkg/cdr"
	"github.com/timealign/timealign/pkg/stamp"
)

// CDR appends the fields of a ROS 2 message in little-endian CDR (XCDR1),
// so a node publishes messages of fixed types (diagnostics, status) through
// serialized publishers without generated bindings: pkg/cdr's encoder,
// which the simulated sensors and bags use too.
type CDR = cdr.Encoder

// NewCDR starts a message in b (reused) with the encapsulation header.
func NewCDR(b []byte) CDR { return cdr.NewEncoder(b) }

// AppendDiagnosticArray serializes a diagnostic_msgs/DiagnosticArray of
// the given statuses, stamped t, into b (reused).
func AppendDiagnosticArray(b []byte, t stamp.Time, statuses ...Diagnostic) []byte {
	c := NewCDR(b)
	c.Header(t, "")
	c.Uint32(uint32(len(statuses)))
	for _, d := range statuses {
		c.Uint8(uint8(d.Level))
		c.String(d.Name)
		c.String(d.Message)
		c.String(d.HardwareID)
		c.Uint32(uint32(len(d.Values)))
		for _, kv := range d.Values {
			c.String(kv.Key)
			c.String(kv.Value)
		}
	}
	return c.B
}
