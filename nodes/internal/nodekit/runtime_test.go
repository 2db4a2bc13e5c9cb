package nodekit

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timealign/timealign/pkg/stamp"
)

func TestInbox(t *testing.T) {
	b := NewInbox(2, 8)
	require.True(t, b.Offer(0, []byte("abc"), 5))
	require.True(t, b.Offer(1, []byte("de"), 6))
	require.False(t, b.Offer(0, []byte("f"), 7), "full")
	require.False(t, b.Offer(0, []byte("123456789"), 8), "too big")
	require.Equal(t, uint64(1), b.Dropped())
	require.Equal(t, uint64(1), b.TooBig())
	require.Equal(t, 2, b.Len())
	m := <-b.C()
	require.Equal(t, Msg{Input: 0, Data: []byte("abc"), Receive: 5, buf: m.buf}, m)
	b.Release(m)
	m = <-b.C()
	require.Equal(t, "de", string(m.Data))
	b.Release(m)
	require.Equal(t, 0, b.Len())
}

func TestInboxCopies(t *testing.T) {
	b := NewInbox(1, 64)
	src := []byte("hello")
	b.Offer(0, src, 0)
	src[0] = 'j'
	m := <-b.C()
	require.Equal(t, "hello", string(m.Data), "the inbox owns a copy")
}

func TestInboxConcurrent(t *testing.T) {
	b := NewInbox(16, 64)
	var g Group
	const producers, each = 4, 1000
	for p := 0; p < producers; p++ {
		g.Go(func() {
			for i := 0; i < each; i++ {
				b.Offer(p, []byte{byte(p), byte(i)}, 0)
			}
		})
	}
	got := 0
	done := make(chan struct{})
	var mu sync.Mutex
	go func() {
		defer close(done)
		for m := range b.C() {
			require.Equal(t, byte(m.Input), m.Data[0])
			b.Release(m)
			mu.Lock()
			got++
			mu.Unlock()
		}
	}()
	g.Wait()
	close(b.ch)
	<-done
	require.Equal(t, uint64(producers*each), uint64(got)+b.Dropped(), "every message delivered or counted")
}

func TestInboxNoAllocs(t *testing.T) {
	b := NewInbox(4, 1024)
	data := make([]byte, 300)
	for i := 0; i < 10; i++ { // warm the pool
		b.Offer(0, data, 0)
		b.Release(<-b.C())
	}
	allocs := testing.AllocsPerRun(1000, func() {
		b.Offer(0, data, 0)
		b.Release(<-b.C())
	})
	require.LessOrEqual(t, allocs, 0.01)
}

func TestDiagnostic(t *testing.T) {
	var d Diagnostic
	d.Raise(OK, "ok")
	require.Equal(t, OK, d.Level)
	d.Raise(Warn, "input in1 silent for 2s")
	d.Raise(OK, "fine")
	require.Equal(t, "input in1 silent for 2s", d.Message)
	d.Raise(Warn, "dropping 30%")
	require.Equal(t, "input in1 silent for 2s; dropping 30%", d.Message)
	d.Raise(Error, "no estimate")
	require.Equal(t, Error, d.Level)
	require.Equal(t, "no estimate", d.Message)
	d.Add("period", 10*time.Millisecond)
	d.Add("share", 0.123456789)
	d.Add("n", uint64(3))
	d.Add("valid", true)
	require.Equal(t, []KeyValue{{"period", "10ms"}, {"share", "0.123457"}, {"n", "3"}, {"valid", "true"}}, d.Values)
	require.Equal(t, "WARN", Warn.String())
	require.Equal(t, "Level(9)", Level(9).String())
}

func TestRate(t *testing.T) {
	var r Rate
	require.Zero(t, r.Update(100, time.Second))
	require.InDelta(t, 50, r.Update(200, 3*time.Second), 1e-9)
	require.Zero(t, r.Update(100, 4*time.Second), "a counter reset gives 0, not a huge rate")
	require.Zero(t, r.Update(200, 4*time.Second), "no time passed")
	require.Equal(t, 0.25, Share(1, 4))
	require.Zero(t, Share(1, 0))
}

func BenchmarkInbox(b *testing.B) {
	in := NewInbox(64, 4096)
	data := make([]byte, 330) // a sensor_msgs/Imu
	b.ReportAllocs()
	for b.Loop() {
		in.Offer(0, data, 0)
		in.Release(<-in.C())
	}
}

func TestDiagnosticArrayCDR(t *testing.T) {
	d := Diagnostic{Level: Warn, Name: "n: x", Message: "m", HardwareID: "hw", Values: []KeyValue{{"k", "v"}}}
	b := AppendDiagnosticArray(nil, 1_500_000_000, d)
	want := []byte{0, 1, 0, 0, // encapsulation
		1, 0, 0, 0, 0x00, 0x65, 0xcd, 0x1d, // stamp 1.5 s
		1, 0, 0, 0, 0, // frame_id ""
		0, 0, 0, // pad
		1, 0, 0, 0, // 1 status
		1,                                          // level WARN
		0, 0, 0, 5, 0, 0, 0, 'n', ':', ' ', 'x', 0, // name
		0, 0, 0, 2, 0, 0, 0, 'm', 0, // message
		0, 0, 3, 0, 0, 0, 'h', 'w', 0, // hardware_id
		0, 1, 0, 0, 0, // pad, 1 value
		2, 0, 0, 0, 'k', 0, 0, 0, 2, 0, 0, 0, 'v', 0}
	require.Equal(t, want, b)
	ts, err := stamp.HeaderStamp(b)
	require.NoError(t, err)
	require.Equal(t, stamp.Time(1_500_000_000), ts)
}

func TestThrottle(t *testing.T) {
	th := Throttle{Every: time.Second}
	sec := stamp.Time(time.Second)
	ok, n := th.Allow("/a", 10*sec)
	require.True(t, ok)
	require.Zero(t, n)
	for i := 1; i <= 5; i++ {
		ok, _ = th.Allow("/a", 10*sec+stamp.Time(i)*sec/10)
		require.False(t, ok)
	}
	ok, _ = th.Allow("/b", 10*sec+sec/2)
	require.True(t, ok, "keys are independent")
	ok, n = th.Allow("/a", 11*sec)
	require.True(t, ok)
	require.Equal(t, 5, n, "the suppressed lines are counted")
	ok, n = th.Allow("/a", 12*sec+1)
	require.True(t, ok)
	require.Zero(t, n)
}
