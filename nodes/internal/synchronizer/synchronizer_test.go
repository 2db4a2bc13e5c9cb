package synchronizer

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timealign/timealign/internal/testutil/cdrtest"
	"github.com/timealign/timealign/nodes/internal/nodekit"
	"github.com/timealign/timealign/nodes/internal/synchronizer/config"
	"github.com/timealign/timealign/pkg/stamp"
	tsync "github.com/timealign/timealign/pkg/sync"
)

func TestMatchesAndRepublishesUnchanged(t *testing.T) {
	cfg := config.DefaultConfig()
	var sets [][][]byte
	var matched [][]byte
	c, err := New(cfg, func(members [][]byte, set func() []byte) {
		m := set()
		cp := make([][]byte, len(members))
		for i, b := range members {
			cp[i] = append([]byte(nil), b...)
		}
		sets = append(sets, cp)
		matched = append(matched, append([]byte(nil), m...))
	})
	require.NoError(t, err)
	ms := stamp.Time(time.Millisecond)
	var sent [][]byte
	for k := stamp.Time(0); k < 20; k++ {
		a := cdrtest.Message(1_700_000_000*stamp.Time(time.Second)+k*100*ms, "cam", 20)
		b := cdrtest.Message(1_700_000_000*stamp.Time(time.Second)+k*100*ms+3*ms, "imu", 8)
		sent = append(sent, a, b)
		require.NoError(t, c.Add(0, a, k*100*ms))
		require.NoError(t, c.Add(1, b, k*100*ms))
	}
	require.Len(t, sets, 19)
	require.Equal(t, sent[0], sets[0][0], "members unchanged")
	require.Equal(t, sent[1], sets[0][1])
	// The MatchedSet: header stamp = newest member, sequence, 2 stamps, spread 3 ms.
	m := matched[1]
	le := binary.LittleEndian
	require.Equal(t, []byte{0, 1, 0, 0}, m[:4])
	hs, err := stamp.HeaderStamp(m)
	require.NoError(t, err)
	require.Equal(t, 1_700_000_000*stamp.Time(time.Second)+103*ms, hs)
	require.Equal(t, uint64(1), le.Uint64(m[20:]))
	require.Equal(t, uint32(2), le.Uint32(m[28:]))
	require.Equal(t, uint32(3_000_000), le.Uint32(m[len(m)-4:]), "spread nanosec")
	require.Len(t, m, 4+8+4+1+3+8+4+2*8+8)

	st := c.Status()
	require.Equal(t, uint64(19), st.Sync.Sets)
	require.Error(t, c.Add(0, []byte{1}, 0))
	require.Equal(t, uint64(1), c.Status().DroppedMalformed[0])
	require.Error(t, c.Add(5, sent[0], 0))
}

func TestDiagnoseSilentInput(t *testing.T) {
	cfg := config.DefaultConfig()
	c, err := New(cfg, func([][]byte, func() []byte) {})
	require.NoError(t, err)
	sec := stamp.Time(time.Second)
	for k := stamp.Time(0); k < 50; k++ {
		require.NoError(t, c.Add(0, cdrtest.Message(k*sec/10, "", 0), k*sec/10))
	}
	st := c.Status()
	d := Report{Now: 5 * sec, Status: st, Prev: Status{}, Runtime: nodekit.RuntimeStatus{Inputs: []string{"/camera", "/imu"}}}.Diagnose()
	require.Equal(t, nodekit.Warn, d.Level)
	require.Contains(t, d.Message, "input /imu is silent: it blocks every set")
	prev := st
	for k := stamp.Time(50); k < 100; k++ {
		require.NoError(t, c.Add(0, cdrtest.Message(k*sec/10, "", 0), k*sec/10))
	}
	d = Report{Now: 10 * sec, Status: c.Status(), Prev: prev, Runtime: nodekit.RuntimeStatus{Inputs: []string{"/camera", "/imu"}}}.Diagnose()
	require.Contains(t, d.Message, "input /camera: the policy drops more than max_drop_share of its messages", "queue overflow while /imu is silent")
	values := map[string]string{}
	for _, kv := range d.Values {
		values[kv.Key] = kv.Value
	}
	require.Equal(t, "50", values["/camera.dropped_since_last_report"])
	require.Equal(t, "50", values["/camera.received_since_last_report"])

	// max_drop_share 1 never warns, though a period's drops may exceed
	// what came in it (here 50 dropped of 40 received).
	never := c.Status()
	never.Config.MaxDropShare = 1
	prev.Sync.Received = append([]uint64(nil), prev.Sync.Received...)
	prev.Sync.Received[0] += 10
	d = Report{Now: 10 * sec, Status: never, Prev: prev, Runtime: nodekit.RuntimeStatus{Inputs: []string{"/camera", "/imu"}}}.Diagnose()
	require.NotContains(t, d.Message, "max_drop_share")
	require.Contains(t, d.Message, "input /imu is silent", "the rest of the diagnosis stands")
}

func TestValidate(t *testing.T) {
	cfg := config.DefaultConfig()
	cfg.Sync.Topics = 1
	_, err := New(cfg, nil)
	require.ErrorIs(t, err, tsync.ErrConfig)
	cfg = config.DefaultConfig()
	cfg.MaxDropShare = 2
	require.ErrorIs(t, cfg.Validate(), config.ErrConfig)
}

// BenchmarkAdd measures the data path without ROS: read the stamp,
// queue the message, match, and build the MatchedSet (target: under 2 µs).
func BenchmarkAdd(b *testing.B) {
	cfg := config.DefaultConfig()
	cfg.Sync.Topics = 3
	c, err := New(cfg, func([][]byte, func() []byte) {})
	require.NoError(b, err)
	msgs := [3][]byte{cdrtest.Message(0, "cam", 300), cdrtest.Message(0, "imu", 300), cdrtest.Message(0, "lidar", 300)}
	periods := [3]stamp.Time{10e6, 20e6, 50e6}
	next := [3]stamp.Time{}
	b.ReportAllocs()
	for b.Loop() {
		i := 0
		for j := 1; j < 3; j++ {
			if next[j] < next[i] {
				i = j
			}
		}
		_ = stamp.SetHeaderStamp(msgs[i], next[i]+1_700_000_000_000_000_000)
		_ = c.Add(i, msgs[i], next[i])
		next[i] += periods[i]
	}
}

func TestMessageTypes(t *testing.T) {
	for _, tc := range []struct {
		name  string
		types []string
		want  []string // per input of 3; nil: rejected
	}{
		{"none: all discovered", nil, []string{"", "", ""}},
		{"one for all", []string{"sensor_msgs/msg/Imu"}, []string{"sensor_msgs/msg/Imu", "sensor_msgs/msg/Imu", "sensor_msgs/msg/Imu"}},
		{"one per input, one discovered", []string{"a/msg/A", "", "c/msg/C"}, []string{"a/msg/A", "", "c/msg/C"}},
		{"two for three", []string{"a/msg/A", "b/msg/B"}, nil},
		{"four for three", []string{"a/msg/A", "b/msg/B", "c/msg/C", "d/msg/D"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := config.DefaultParams()
			p.Config.Sync.Topics = 3
			p.MessageTypes = tc.types
			err := p.CheckTypes()
			if tc.want == nil {
				require.ErrorIs(t, err, config.ErrConfig)
				return
			}
			require.NoError(t, err)
			for i, w := range tc.want {
				require.Equal(t, w, nodekit.InputType(p.MessageTypes, i), "input %d", i)
			}
		})
	}
}
