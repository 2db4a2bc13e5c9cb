package main

import (
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

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

// sensorQoS is the offered QoS profile rosbag2 records for a sensor-data
// publisher (best effort, volatile, keep last).
const sensorQoS = "- history: 1\n  depth: 5\n  reliability: 2\n  durability: 2\n  deadline:\n    sec: 9223372036\n    nsec: 854775807\n  lifespan:\n    sec: 9223372036\n    nsec: 854775807\n  liveliness: 1\n  liveliness_lease_duration:\n    sec: 9223372036\n    nsec: 854775807\n  avoid_ros_namespace_conventions: false"

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
		return 0, 0, usagef("--image-size is %q, want WIDTHxHEIGHT, e.g. 640x480 (1..16384)", cut(s))
	}
	return w, h, nil
}

// writeSimBag writes the simulated bag and its truth file.
func writeSimBag(e *env, o simBagOptions) error {
	merged, err := sim.NewMergedDelivery(o.cfgs...)
	if err != nil {
		return err
	}
	if err := checkBagOutput("--bag", o.dir, nil, o.overwrite); err != nil {
		return err
	}
	var defs bag.Definitions
	ob, err := createBag(e, "--bag", o.dir, o.storage, bag.WriterOptions{Compression: o.compression,
		Schema: func(typ string) *bag.Schema { return defs.LookupType(typ).Schema }})
	if err != nil {
		return err
	}
	defer ob.abort()
	var tw io.Writer = io.Discard
	var f *files
	if o.truth != "" {
		if f, err = openOutputs(e, outSpec{"--truth", o.truth}); err != nil {
			return err
		}
		defer f.abort()
		tw = f.out(0)
	}
	tr := csvio.NewWriter(tw, "topic", "seq", "true_ns", "header_ns", "log_ns")

	topics := make([]*bag.Topic, len(o.names))
	kinds := make([]simTopic, len(o.names))
	seen := map[string]int{}
	for i, name := range o.names {
		k := simTopics[name]
		if n := seen[k.topic]; n > 0 {
			k.topic = fmt.Sprintf("%s_%d", k.topic, n)
		}
		seen[simTopics[name].topic]++
		kinds[i] = k
		topics[i] = &bag.Topic{Name: k.topic, Type: k.typ, SerializationFormat: "cdr", OfferedQoSProfiles: sensorQoS,
			Schema: defs.LookupType(k.typ).Schema}
		if err := ob.w.AddTopic(topics[i]); err != nil {
			return err
		}
	}
	rng := rand.New(rand.NewPCG(o.seed, 0x6261670a))
	gen, err := payload.New(payload.Options{ImageWidth: o.imageW, ImageHeight: o.imageH})
	if err != nil {
		return err
	}
	var buf []byte
	var last stamp.Time
	var written int64
	prog := newProgress(e, "simulating", -1)
	defer prog.finish()
	for n := 0; ; n++ {
		m, ok := merged.Next()
		if !ok {
			break
		}
		if n%rowCheck == 0 {
			if err := e.ctx.Err(); err != nil {
				return err
			}
			prog.set(written)
		}
		k := kinds[m.Topic]
		hdr := m.Receive
		if k.device {
			hdr = stamp.Time(m.Device)
		}
		// The recorder gets the message a little after the driver: its
		// log time is the host clock then, in the order it received them
		// (a host clock step still shows).
		delay := o.recorderDelay + time.Duration(rng.ExpFloat64()*float64(o.recorderDelay)/2)
		logT := m.Receive.Add(delay)
		if logT < last && last.Sub(logT) < 10*time.Millisecond {
			logT = last
		}
		last = logT
		buf = gen.Message(buf, k.typ, hdr, k.frame, m.Seq)
		if o.maxBagSize > 0 && written > 0 && written+int64(len(buf)) > o.maxBagSize {
			ob.w.Split()
			written = 0
		}
		if err := ob.w.WriteMessage(&bag.Message{Topic: topics[m.Topic], LogTime: logT, PublishTime: logT, Data: buf}); err != nil {
			return err
		}
		written += int64(len(buf)) + 40
		tr.String(topics[m.Topic].Name).Int(int64(m.Seq)).Stamp(m.True).Stamp(hdr).Stamp(logT).EndRow()
	}
	if err := tr.Flush(); err != nil {
		return err
	}
	meta, err := ob.commit()
	if err != nil {
		return err
	}
	if f != nil {
		if err := f.commit(); err != nil {
			return err
		}
	}
	if !o.quiet {
		fmt.Fprintf(e.stderr, "timealign simulate: wrote %s: %d messages on %d topics, %d file(s), %s\n", o.dir, meta.MessageCount, len(topics), len(meta.Files), meta.Duration.Round(time.Millisecond))
	}
	return nil
}
