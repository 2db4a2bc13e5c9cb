package nodekit

import "github.com/timealign/timealign/pkg/stamp"

// RosoutSeverity is l as rcl_interfaces/msg/Log's level (DEBUG 10, INFO
// 20, WARN 30, ERROR 40: the severities of rcutils).
func (l LogLevel) RosoutSeverity() uint8 {
	switch l {
	case LogDebug:
		return 10
	case LogInfo:
		return 20
	case LogWarn:
		return 30
	}
	return 40
}

// AppendLogMsg serializes one log line as rcl_interfaces/msg/Log, the
// message of /rosout: stamp t, level, the logger's name (the node's:
// "namespace.name" without the leading slash, as rcl names it) and msg;
// file, function and line are left empty (a Go node has no C location to
// give).
func AppendLogMsg(b []byte, t stamp.Time, l LogLevel, name, msg string) []byte {
	c := NewCDR(b)
	c.Time(t)
	c.Uint8(l.RosoutSeverity())
	c.String(name)
	c.String(msg)
	c.String("") // file
	c.String("") // function
	c.Uint32(0)  // line
	return c.B
}
