package badinput_test

import (
	"encoding/binary"
	"runtime"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timealign/timealign/internal/testutil/cdrtest"
	"github.com/timealign/timealign/nodes/internal/nodekit"
	"github.com/timealign/timealign/nodes/internal/nodekit/memros"
	"github.com/timealign/timealign/nodes/internal/registry"
	"github.com/timealign/timealign/pkg/stamp"
)

// subject is a node of the registry, with the arguments the tests start
// it with, the inputs they publish on (each of type typ) and the output of
// input 0.
type subject struct {
	name   string
	argv   []string
	inputs []string
	out0   string
}

const typ = "sensor_msgs/msg/Imu"

// subjects are the nodes that republish what they take: every node of the
// registry but those of skipped.
var subjects = []subject{
	{"timestamp_estimator", []string{"-p", "message_type:=" + typ}, []string{"/in"}, "/out"},
	{"clock_sync", []string{"-p", "message_type:=" + typ}, []string{"/in"}, "/out"},
	{"synchronizer", []string{"-p", "message_types:=[" + typ + "]"}, []string{"/in0", "/in1"}, "/out0"},
	{"stream_aligner", []string{"-p", "message_types:=[" + typ + "]", "-p", "periods_sec:=[0.1]"}, []string{"/in0", "/in1"}, "/out0"},
}

// skipped are the nodes of the registry the tests leave out, and why.
var skipped = map[string]string{
	"sensor_sim":    "no input",
	"stamp_monitor": "no output: it only measures (its inputs are checked by its own tests)",
}

// TestEveryNode: every node of the registry is a subject or skipped with
// a reason.
func TestEveryNode(t *testing.T) {
	var names []string
	for _, s := range subjects {
		names = append(names, s.name)
	}
	for name := range skipped {
		names = append(names, name)
	}
	var want []string
	for _, s := range registry.Nodes() {
		want = append(want, s.Name)
	}
	require.ElementsMatch(t, want, names)
}

// run starts s on g with its arguments and extra ones; the returned stop
// ends it as SIGTERM does and requires exit status 0.
func run(t *testing.T, g *memros.Graph, s subject, extra ...string) (stop func()) {
	spec, ok := registry.Node(s.name)
	require.True(t, ok, s.name)
	halt := g.Start(spec, append(append([]string{"--ros-args"}, s.argv...), extra...)...)
	return func() {
		t.Helper()
		code, stderr := halt()
		require.Zero(t, code, stderr)
	}
}

// big is a message of n bytes in all with a leading Header stamped st
// (frame_id "big"), without building it byte by byte.
func big(st stamp.Time, n int) []byte {
	head := cdrtest.Message(st, "big", 0)
	b := make([]byte, n)
	copy(b, head)
	for i := len(head); i < n; i += 4096 {
		b[i] = byte(i >> 12)
	}
	return b
}

// diagnostic is the level and message of a diagnostic_msgs/DiagnosticArray
// with one status, as nodekit encodes it.
func diagnostic(t *testing.T, b []byte) (nodekit.Level, string) {
	t.Helper()
	off := 4 + 8 // encapsulation, stamp
	str := func() string {
		for (off-4)%4 != 0 {
			off++
		}
		n := int(binary.LittleEndian.Uint32(b[off:]))
		s := string(b[off+4 : off+4+n-1])
		off += 4 + n
		return s
	}
	str() // frame_id
	for (off-4)%4 != 0 {
		off++
	}
	require.Equal(t, uint32(1), binary.LittleEndian.Uint32(b[off:]), "one status")
	off += 4
	level := nodekit.Level(b[off])
	off++
	str() // name
	return level, str()
}

func lastDiagnostic(t *testing.T, r *memros.Recorder) (nodekit.Level, string) {
	t.Helper()
	msgs := r.Messages()
	require.NotEmpty(t, msgs, "no diagnostics")
	return diagnostic(t, msgs[len(msgs)-1])
}

func logged(tr *memros.Transport, level nodekit.LogLevel, substr string) int {
	n := 0
	for _, l := range tr.Logs() {
		if l.Level == level && strings.Contains(l.Text, substr) {
			n++
		}
	}
	return n
}

// TestEmptyAndTinyMessages: messages of 0 bytes, of 3 bytes and of a
// Header cut short, on the first input of every node: each is dropped and
// counted as malformed, logged (at most once a second, with how many were
// left out), reported as a WARN; a good message after them goes through.
func TestEmptyAndTinyMessages(t *testing.T) {
	for _, s := range subjects {
		t.Run(s.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				g := memros.New()
				diagnostics := g.Record("/diagnostics")
				out := g.Record(s.out0)
				var pubs []*memros.Publisher
				for _, in := range s.inputs {
					pubs = append(pubs, g.Advertise(in, typ))
				}
				stop := run(t, g, s)
				synctest.Wait()
				base := stamp.Time(1_700_000_000 * time.Second)
				good := cdrtest.Message(base, "imu", 40)
				for _, bad := range [][]byte{{}, {0, 1, 0}, good[:10]} {
					require.NoError(t, pubs[0].Publish(bad))
				}
				synctest.Wait()
				time.Sleep(1100 * time.Millisecond)
				synctest.Wait()
				tr := g.Node("/" + s.name)
				require.Equal(t, 1, logged(tr, nodekit.LogWarn, "dropped a malformed message on "+s.inputs[0]), "logged once: %v", tr.Logs())
				level, message := lastDiagnostic(t, diagnostics)
				require.Equal(t, nodekit.Warn, level)
				require.Contains(t, message, "malformed messages dropped")
				if s.name == "clock_sync" {
					require.Contains(t, message, "3 malformed messages dropped", "counted")
				}
				// Good messages still go through (clock_sync once it has
				// a fit, the policies once a later message comes).
				for k := range 20 {
					for _, p := range pubs {
						require.NoError(t, p.Publish(cdrtest.Message(base.Add(time.Duration(k)*100*time.Millisecond), "imu", 40)))
					}
					time.Sleep(100 * time.Millisecond)
				}
				synctest.Wait()
				require.NotEmpty(t, out.Messages(), "good messages after the bad ones")
				stop()
			})
		})
	}
}

// TestHundredMegabytes: a 100 MB message with a valid Header goes
// through every node with the default limits, handed on without a copy
// (the output gets the slice the input delivered).
func TestHundredMegabytes(t *testing.T) {
	for _, s := range subjects {
		t.Run(s.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				g := memros.New()
				tap := g.Tap(s.out0)
				var pubs []*memros.Publisher
				for _, in := range s.inputs {
					pubs = append(pubs, g.Advertise(in, typ))
				}
				stop := run(t, g, s)
				synctest.Wait()
				base := stamp.Time(1_700_000_000 * time.Second)
				const size = 100_000_000
				var huge []byte
				// Small messages at 10 Hz (clock_sync locks on them), the
				// huge one in the middle, more after it (the policies
				// hold a message until a later one comes).
				for k := range 30 {
					st := base.Add(time.Duration(k) * 100 * time.Millisecond)
					for i, p := range pubs {
						m := cdrtest.Message(st, "imu", 40)
						if k == 15 && i == 0 {
							huge = big(st, size)
							m = huge
						}
						require.NoError(t, p.Publish(m))
					}
					time.Sleep(100 * time.Millisecond)
				}
				time.Sleep(time.Second)
				synctest.Wait()
				var through bool
				for _, m := range tap.Messages() {
					if len(m) == size {
						require.Same(t, &huge[0], &m[0], "no copy")
						through = true
					}
				}
				require.True(t, through, "the 100 MB message went through")
				require.Zero(t, logged(g.Node("/"+s.name), nodekit.LogWarn, "dropped"))
				stop()
			})
		})
	}
}

// heap returns the bytes of live heap objects after a collection.
func heap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// TestInputSilentForAnHour: on a fake clock, the last input of every node
// stops for an hour while the others go on at 10 Hz with 1 kB messages
// (36 MB in the hour): the heap grows by less than 4 MB over the last 50
// minutes, a few lines are logged (not one a second), the diagnostics name
// what is wrong, and once the input sends again the node passes its
// messages on and reports OK.
func TestInputSilentForAnHour(t *testing.T) {
	for _, s := range subjects {
		t.Run(s.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				g := memros.New()
				var pubs []*memros.Publisher
				for _, in := range s.inputs {
					pubs = append(pubs, g.Advertise(in, typ))
				}
				stop := run(t, g, s)
				synctest.Wait()
				base := stamp.Time(time.Now().UnixNano())
				k := 0
				// send publishes for d at 10 Hz on every input but the last
				// one unless all.
				send := func(d time.Duration, all bool) {
					for end := k + int(d/(100*time.Millisecond)); k < end; k++ {
						st := base.Add(time.Duration(k) * 100 * time.Millisecond)
						for i, p := range pubs {
							if all || i < len(pubs)-1 {
								require.NoError(t, p.Publish(cdrtest.Message(st, "imu", 1000)))
							}
						}
						time.Sleep(100 * time.Millisecond)
					}
				}
				send(10*time.Second, true)
				send(10*time.Minute, false)
				synctest.Wait()
				before := heap()
				send(50*time.Minute, false)
				synctest.Wait()
				after := heap()
				grew := int64(after) - int64(before)
				t.Logf("heap over the last 50 minutes of silence: %+d bytes", grew)
				require.Less(t, grew, int64(4<<20), "memory bounded while an input is silent")

				diagnostics := g.Record("/diagnostics")
				time.Sleep(1100 * time.Millisecond)
				synctest.Wait()
				level, message := lastDiagnostic(t, diagnostics)
				if len(s.inputs) > 1 {
					require.Equal(t, nodekit.Warn, level)
					require.Contains(t, message, "input "+s.inputs[len(s.inputs)-1]+" is silent")
				}
				tr := g.Node("/" + s.name)
				warns := 0
				for _, l := range tr.Logs() {
					if l.Level >= nodekit.LogWarn {
						warns++
					}
				}
				require.Less(t, warns, 10, "a few lines in an hour, not one a second: %v", tr.Logs())

				// The input sends again.
				out := g.Record(s.out0)
				last := g.Record(strings.Replace(s.out0, "0", "1", 1))
				send(10*time.Second, true)
				time.Sleep(time.Second)
				synctest.Wait()
				require.NotEmpty(t, out.Messages(), "messages pass again")
				if len(s.inputs) > 1 {
					require.NotEmpty(t, last.Messages(), "the input that was silent passes again")
				}
				level, message = lastDiagnostic(t, diagnostics)
				require.Equal(t, nodekit.OK, level, message)
				stop()
			})
		})
	}
}

// TestFloodsDoNotAccumulate: floods on the first input of every node, each
// from a publisher of its own (a driver started with a wrong rate, then
// stopped), 30,000 Imu messages in 3 s beside 100 Hz inputs: what the
// node's heap holds after the tenth flood, once its backlog is gone, is
// what it held after the first (the soak's RSS at rest: nothing kept per
// flood or per publisher that came and went).
func TestFloodsDoNotAccumulate(t *testing.T) {
	for _, s := range subjects {
		t.Run(s.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				g := memros.New()
				var pubs []*memros.Publisher
				for _, in := range s.inputs {
					pubs = append(pubs, g.Advertise(in, typ))
				}
				stop := run(t, g, s)
				synctest.Wait()
				base := stamp.Time(time.Now().UnixNano())
				k := 0
				st := func() stamp.Time { return base.Add(time.Duration(k) * 10 * time.Millisecond) }
				steady := func(d time.Duration) {
					for end := k + int(d/(10*time.Millisecond)); k < end; k++ {
						for _, p := range pubs {
							require.NoError(t, p.Publish(cdrtest.Message(st(), "imu", 300)))
						}
						time.Sleep(10 * time.Millisecond)
					}
				}
				flood := func() {
					f := g.Advertise(s.inputs[0], typ)
					for range 300 { // 3 s of 10 ms
						for j := range 100 {
							require.NoError(t, f.Publish(cdrtest.Message(st().Add(time.Duration(j)*100*time.Microsecond), "imu", 300)))
						}
						for _, p := range pubs {
							require.NoError(t, p.Publish(cdrtest.Message(st(), "imu", 300)))
						}
						k++
						time.Sleep(10 * time.Millisecond)
					}
					f.Close()
				}
				steady(20 * time.Second)
				flood()
				steady(20 * time.Second)
				synctest.Wait()
				first := heap()
				for range 9 {
					flood()
					steady(20 * time.Second)
				}
				synctest.Wait()
				tenth := heap()
				grew := int64(tenth) - int64(first)
				t.Logf("heap at rest after the first flood %d kB, after the tenth %d kB (%+d bytes)", first>>10, tenth>>10, grew)
				require.Less(t, grew, int64(256<<10), "nothing kept per flood")
				stop()
			})
		})
	}
}
