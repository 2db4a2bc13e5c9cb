package simulate

import (
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/timealign/timealign/cmd/timealign/internal/bagout"
	"github.com/timealign/timealign/cmd/timealign/internal/cli"
	"github.com/timealign/timealign/pkg/bag"
	"github.com/timealign/timealign/pkg/csvio"
	"github.com/timealign/timealign/pkg/sim"
	"github.com/timealign/timealign/pkg/sim/payload"
	"github.com/timealign/timealign/pkg/stamp"
)

// A simulated bag: each stream of --streams becomes a topic of a standard
// sensor type, its header.stamp what such a sensor's driver writes (the
// receive time for sensors stamped on arrival, the device clock for
// sensors with their own), and its log time when a recorder got it.

// simTopic says how a preset is recorded.
type simTopic struct {
	topic, typ, frame string
	// device: header.stamp is the device clock, not the receive time.
	device bool
}

var simTopics = map[string]simTopic{
	"imu":       {"/imu/data_raw", "sensor_msgs/msg/Imu", "imu_link", false},
	"camera":    {"/camera/image_raw", "sensor_msgs/msg/Image", "camera", false},
	"lidar":     {"/scan", "sensor_msgs/msg/LaserScan", "laser", true},
	"autopilot": {"/autopilot/imu", "sensor_msgs/msg/Imu", "base_link", true},
	"bursty":    {"/bursty/imu", "sensor_msgs/msg/Imu", "imu2_link", false},
}

// simBagOptions are the flags of simulate --bag.
type simBagOptions struct {
	dir, truth       string
	storage          bag.Storage
	compression      string
	maxBagSize       int64
	imageW, imageH   int
	recorderDelay    time.Duration
	seed             uint64
	names            []string
	cfgs             []sim.Config
	overwrite, quiet bool
}

// parseImageSize parses "WxH".
func parseImageSize(s string) (w, h int, err error) {
	a, b, ok := strings.Cut(strings.ToLower(s), "x")
	if ok {
		w, err = strconv.Atoi(a)
		if err == nil {
			h, err = strconv.Atoi(b)
		}
	}
	if !ok || err != nil || w < 1 || h < 1 || w > 16384 || h > 16384 {
		return 0, 0, cli.Usagef("--image-size is %q, want WIDTHxHEIGHT, e.g. 640x480 (1..16384)", cli.Cut(s))
	}
	return w, h, nil
}

// writeSimBag writes the simulated bag and its truth file.
func writeSimBag(e *cli.Env, o simBagOptions) error {
	merged, err := sim.NewMergedDelivery(o.cfgs...)
	if err != nil {
		return err
	}
	if err := bagout.Check("--bag", o.dir, nil, o.overwrite); err != nil {
		return err
	}
	var defs bag.Definitions
	ob, err := bagout.Create(e, "--bag", o.dir, o.storage, bag.WriterOptions{Compression: o.compression,
		Schema: func(typ string) *bag.Schema { return defs.LookupType(typ).Schema }})
	if err != nil {
		return err
	}
	defer ob.Abort()
	var tw io.Writer = io.Discard
	var f *cli.Files
	if o.truth != "" {
		if f, err = cli.OpenOutputs(e, cli.Out("--truth", o.truth)); err != nil {
			return err
		}
		defer f.Abort()
		tw = f.Out(0)
	}
	rec, err := newSimRecorder(ob.W, o, &defs)
	if err != nil {
		return err
	}
	if err := rec.record(e, merged, csvio.NewWriter(tw, "topic", "seq", "true_ns", "header_ns", "log_ns")); err != nil {
		return err
	}
	meta, err := ob.Commit()
	if err != nil {
		return err
	}
	if f != nil {
		if err := f.Commit(); err != nil {
			return err
		}
	}
	if !o.quiet {
		fmt.Fprintf(e.Stderr, "timealign simulate: wrote %s: %d messages on %d topics, %d file(s), %s\n", o.dir, meta.MessageCount, len(rec.topics), len(meta.Files), meta.Duration.Round(time.Millisecond))
	}
	return nil
}

// simRecorder writes simulated messages into a bag as a recorder gets
// them: each stream on its topic, with the payload of its sensor type.
type simRecorder struct {
	w       *bag.Writer
	o       simBagOptions
	topics  []*bag.Topic
	kinds   []simTopic
	rng     *rand.Rand
	gen     *payload.Generator
	buf     []byte
	last    stamp.Time // the last log time
	written int64      // bytes in the current file
}

// newSimRecorder adds the topics of the streams to w: the second stream
// of a kind gets its topic with a suffix (/imu/data_raw_1).
func newSimRecorder(w *bag.Writer, o simBagOptions, defs *bag.Definitions) (*simRecorder, error) {
	gen, err := payload.New(payload.Options{ImageWidth: o.imageW, ImageHeight: o.imageH})
	if err != nil {
		return nil, err
	}
	r := &simRecorder{w: w, o: o, topics: make([]*bag.Topic, len(o.names)), kinds: make([]simTopic, len(o.names)),
		rng: rand.New(rand.NewPCG(o.seed, 0x6261670a)), gen: gen}
	seen := map[string]int{}
	for i, name := range o.names {
		k := simTopics[name]
		if n := seen[k.topic]; n > 0 {
			k.topic = fmt.Sprintf("%s_%d", k.topic, n)
		}
		seen[simTopics[name].topic]++
		r.kinds[i] = k
		r.topics[i] = &bag.Topic{Name: k.topic, Type: k.typ, SerializationFormat: "cdr", OfferedQoSProfiles: bag.SensorDataQoS,
			Schema: defs.LookupType(k.typ).Schema}
		if err := w.AddTopic(r.topics[i]); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// record writes every message of merged, and a truth row for each to tr.
func (r *simRecorder) record(e *cli.Env, merged *sim.MergedDelivery, tr *csvio.Writer) error {
	prog := cli.NewProgress(e, "simulating", -1)
	defer prog.Finish()
	for n := 0; ; n++ {
		m, ok := merged.Next()
		if !ok {
			break
		}
		if n%rowCheck == 0 {
			if err := e.Ctx.Err(); err != nil {
				return err
			}
			prog.Set(r.written)
		}
		hdr, logT, err := r.write(m)
		if err != nil {
			return err
		}
		tr.String(r.topics[m.Topic].Name).Int(int64(m.Seq)).Stamp(m.True).Stamp(hdr).Stamp(logT).EndRow()
	}
	return tr.Flush()
}

// write writes one message and returns its header stamp and log time.
func (r *simRecorder) write(m sim.Tagged) (hdr, logT stamp.Time, err error) {
	k := r.kinds[m.Topic]
	hdr = m.Receive
	if k.device {
		hdr = stamp.Time(m.Device)
	}
	// The recorder gets the message a little after the driver: its log
	// time is the host clock then, in the order it received them (a host
	// clock step still shows).
	delay := r.o.recorderDelay + time.Duration(r.rng.ExpFloat64()*float64(r.o.recorderDelay)/2)
	logT = m.Receive.Add(delay)
	if logT < r.last && r.last.Sub(logT) < 10*time.Millisecond {
		logT = r.last
	}
	r.last = logT
	r.buf = r.gen.Message(r.buf, k.typ, hdr, k.frame, m.Seq)
	if r.o.maxBagSize > 0 && r.written > 0 && r.written+int64(len(r.buf)) > r.o.maxBagSize {
		r.w.Split()
		r.written = 0
	}
	if err := r.w.WriteMessage(&bag.Message{Topic: r.topics[m.Topic], LogTime: logT, PublishTime: logT, Data: r.buf}); err != nil {
		return 0, 0, err
	}
	r.written += int64(len(r.buf)) + 40
	return hdr, logT, nil
}
