package synchronizer

import (
	"encoding/binary"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timealign/timealign/internal/testutil/cdrtest"
	"github.com/timealign/timealign/nodes/internal/nodekit/memros"
	"github.com/timealign/timealign/nodes/internal/nodetest"
	"github.com/timealign/timealign/nodes/internal/synchronizer/config"
	"github.com/timealign/timealign/pkg/stamp"
)

// TestNode: the synchronizer's wiring without ROS: three inputs of two
// types (one given, two from the graph), members republished on out<i> as
// they came in (the same slices: no copy), ~/matched on the output after
// them, ~/status with the inbox drops.
func TestNode(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := memros.New()
		s := Spec()
		types := []string{"sensor_msgs/msg/Image", "sensor_msgs/msg/Imu", "sensor_msgs/msg/Imu"}
		var ins []*memros.Publisher
		var outs []*memros.Recorder
		for i, typ := range types {
			ins = append(ins, g.Advertise("/in"+string(rune('0'+i)), typ))
			outs = append(outs, g.Tap("/out"+string(rune('0'+i))))
		}
		matched, status := g.Record("/synchronizer/matched"), g.Record("/synchronizer/status")
		stop := g.Start(s, "--ros-args", "-p", "inputs:=3", "-p", "message_types:=['', sensor_msgs/msg/Imu, '']")
		time.Sleep(300 * time.Millisecond) // discovery
		var sent [3][][]byte
		for k := range 10 {
			st := stamp.Time(1_700_000_000*time.Second) + stamp.Time(k)*100_000_000
			for i, in := range ins {
				m := cdrtest.Message(st+stamp.Time(i)*1_000_000, "f", 40)
				sent[i] = append(sent[i], m)
				require.NoError(t, in.Publish(m))
			}
			time.Sleep(100 * time.Millisecond)
		}
		time.Sleep(time.Second)
		synctest.Wait()
		sets := matched.Messages()
		require.Len(t, sets, 9, "the last set waits for a later message")
		for i, out := range outs {
			got := out.Messages()
			require.Len(t, got, len(sets))
			for k, m := range got {
				require.Same(t, &sent[i][k][0], &m[0], "out%d member %d: the message as received", i, k)
			}
		}
		require.Equal(t, uint64(8), binary.LittleEndian.Uint64(sets[8][20:]), "sequence")
		st := status.Messages()
		require.NotEmpty(t, st)
		last := st[len(st)-1]
		require.Equal(t, uint64(0), binary.LittleEndian.Uint64(last[len(last)-8:]), "dropped_queue")
		code, stderr := stop()
		require.Zero(t, code, stderr)
	})
}

// TestPortsRefuseTypeCounts: message_types with a wrong number of entries
// is a start-up error naming it.
func TestPortsRefuseTypeCounts(t *testing.T) {
	p := config.DefaultParams()
	p.MessageTypes = []string{"a/msg/A", "b/msg/B", "c/msg/C"}
	_, _, err := ports(&p)
	require.ErrorContains(t, err, "message_types has 3 entries")
}

// BenchmarkNode: two Imu inputs through the node runtime on the in-memory
// transport, one matched set per op (out0, out1 and ~/matched): at once,
// and paced at 1 kHz (each set waking the node).
func BenchmarkNode(b *testing.B) {
	imu := cdrtest.Message(0, "imu", 304)
	for _, pace := range []time.Duration{0, time.Millisecond} {
		b.Run(fmt.Sprint("pace=", pace), func(b *testing.B) {
			nodetest.Throughput(b, Spec(), []string{"--ros-args", "-p", "inputs:=2", "-p", "queue_size:=200"},
				[]nodetest.Input{{Topic: "/in0", Type: "sensor_msgs/msg/Imu", Message: imu}, {Topic: "/in1", Type: "sensor_msgs/msg/Imu", Message: imu}}, "/out0", pace)
		})
	}
}
