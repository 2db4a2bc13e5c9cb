package demo

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/timealign/timealign/cmd/timealign/internal/cli"
	"github.com/timealign/timealign/pkg/mav"
	"github.com/timealign/timealign/pkg/mav/mavsim"
	"github.com/timealign/timealign/pkg/sim"
	"github.com/timealign/timealign/pkg/stamp"
)

// demoMav aligns simulated ArduPilot logs: the ways to map the boot clock
// to the tlog's clock, every source side by side, a BIN of another boot.
func demoMav(w io.Writer) error {
	fmt.Fprintln(w, "An autopilot stamps its telemetry with its boot clock (time_boot_ms); the tlog stamps")
	fmt.Fprintln(w, "each message when it arrives, on the logging computer's clock. A simulated dive:")
	fmt.Fprintln(w, "10 minutes of telemetry at 10 Hz, latency exponential of mean 20 ms, a boot clock")
	fmt.Fprintln(w, "40 ppm fast. Each method maps boot time to the tlog's clock; errors of every")
	fmt.Fprintln(w, "sample's mapped boot time against the truth, in µs:")
	fmt.Fprintln(w)
	l, err := demoMavMethods(w)
	if err != nil {
		return err
	}
	if err := demoMavSources(w); err != nil {
		return err
	}
	return demoMavForeign(w, l.tlog)
}

// demoMavMethods compares the mappings of the boot clock: the first
// message's offset, one global minimum, the windowed fit.
func demoMavMethods(w io.Writer) (demoLogSet, error) {
	l, res, err := demoAligned(mavsim.Scenario{Seed: 17, SkewPPM: 40, RTC: new(time.Duration), GPS: true})
	if err != nil {
		return l, err
	}
	if len(res.Boots) == 0 || res.Boots[0].WinnerEstimate() == nil {
		return l, fmt.Errorf("no alignment")
	}
	first, glob := firstAndMinimum(l.tlog)
	tb := cli.NewTable("method", "bias µs", "std µs", "spread µs")
	for _, m := range []struct {
		name string
		at   func(d time.Duration) stamp.Time
	}{
		{"first message: its receive − time_boot", func(d time.Duration) stamp.Time { return stamp.Time(d + first) }},
		{"one global minimum (ardusub_log_tools)", func(d time.Duration) stamp.Time { return stamp.Time(d + glob) }},
		{"windowed minimum with skew (pll offset)", res.Boots[0].WinnerEstimate().Unix},
	} {
		var errs []float64
		for i, d := range l.truth.Device {
			errs = append(errs, float64(m.at(d).Sub(l.truth.Logger[i])))
		}
		sc := sim.ScoreErrors(errs)
		tb.Row(m.name, sim.Micros(sc.Bias), sim.Micros(sc.Std), sim.Micros(sc.Spread))
	}
	tb.Write(w)
	fmt.Fprintln(w)
	fmt.Fprintln(w, "The first message is as late as the link was then; one global minimum holds the")
	fmt.Fprintln(w, "offset of one moment and misses the drift (24 ms over the dive). The windowed fit")
	fmt.Fprintln(w, "follows the drift; what is left is the floor of the latency.")
	fmt.Fprintln(w)
	return l, nil
}

// demoMavSources shows every source side by side, with the logging
// computer's clock 2 minutes slow.
func demoMavSources(w io.Writer) error {
	_, res, err := demoAligned(mavsim.Scenario{Seed: 18, SkewPPM: 40, LoggerOffset: -2 * time.Minute, RTC: new(time.Duration), GPS: true})
	if err != nil {
		return err
	}
	fmt.Fprintln(w, "Every source side by side (mav align), when the logging computer's clock is 2 minutes")
	fmt.Fprintln(w, "slow and the autopilot's own clock (SYSTEM_TIME) was set from GPS:")
	fmt.Fprintln(w)
	tb := cli.NewTable("source", "offset: Unix time at boot 0", "±", "status")
	for _, e := range res.Boots[0].Estimates {
		st := e.Status
		if st != "won" {
			st += " " + cli.ShortDuration(e.Delta)
		}
		tb.Row(e.Source.String(), cli.UTCMicros(stamp.Time(e.OffsetAt(0))), cli.Uncertainty(e.Uncertainty), st)
	}
	tb.Write(w)
	fmt.Fprintln(w)
	fmt.Fprintln(w, "The tlog's own clock wins: merged, the BIN lands on the tlog's time. The others are")
	fmt.Fprintln(w, "shown, not averaged in: on their clocks the tlog's messages would arrive before they")
	fmt.Fprintln(w, "were sent. (GPS fixes are logged ~60 ms after they are taken: GPS reads a bit early.)")
	fmt.Fprintln(w)
	return nil
}

// demoMavForeign gives a BIN of another boot of the same vehicle with
// the tlog: the evidence that it does not belong.
func demoMavForeign(w io.Writer, tlog []byte) error {
	other, err := demoLogs(mavsim.Scenario{Seed: 19, BinBootCount: 6, BinAttitudePhase: 2})
	if err != nil {
		return err
	}
	res, err := demoMavAlign(mav.DefaultConfig(), tlog, other.bins[0])
	if err != nil {
		return err
	}
	fmt.Fprintln(w, "A BIN of another boot of the same vehicle, given with that tlog:")
	for _, ev := range res.Bins[0].Evidence {
		if ev.Verdict != 0 {
			fmt.Fprintf(w, "  %s %s\n", map[int]string{1: "+", -1: "✗"}[ev.Verdict], ev.Detail)
		}
	}
	fmt.Fprintf(w, "mav merge refuses it (belongs: %s) unless --allow-mismatch.\n", res.Bins[0].Belongs)
	return nil
}

// demoAligned writes a scenario's logs and aligns them.
func demoAligned(s mavsim.Scenario) (demoLogSet, *mav.Result, error) {
	l, err := demoLogs(s)
	if err != nil {
		return l, nil, err
	}
	res, err := demoMavAlign(mav.DefaultConfig(), l.tlog, l.bins...)
	return l, res, err
}

type demoLogSet struct {
	tlog  []byte
	bins  [][]byte
	truth mavsim.Truth
}

func demoLogs(s mavsim.Scenario) (demoLogSet, error) {
	var tl bytes.Buffer
	var bins []*bytes.Buffer
	tr, err := s.Write(&tl, func(boot int) io.Writer {
		for len(bins) <= boot {
			bins = append(bins, &bytes.Buffer{})
		}
		return bins[boot]
	})
	out := demoLogSet{tlog: tl.Bytes(), truth: tr}
	for _, b := range bins {
		out.bins = append(out.bins, b.Bytes())
	}
	return out, err
}

func demoMavAlign(cfg mav.Config, tlog []byte, bins ...[]byte) (*mav.Result, error) {
	a, err := mav.NewAligner(cfg)
	if err != nil {
		return nil, err
	}
	r := mav.NewTlogReader(bytes.NewReader(tlog))
	for {
		m, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		a.AddTlog(m)
	}
	for i, b := range bins {
		k := a.AddBinFile(fmt.Sprintf("%d.BIN", i+1))
		if err := a.ReadBin(k, mav.NewBinReader(bytes.NewReader(b))); !errors.Is(err, io.EOF) {
			return nil, err
		}
	}
	return a.Result(), nil
}

// firstAndMinimum returns receive − boot of the tlog's first message from
// the autopilot with time_boot_ms, and its minimum over the whole log.
func firstAndMinimum(tlog []byte) (first, minimum time.Duration) {
	r := mav.NewTlogReader(bytes.NewReader(tlog))
	minimum = time.Duration(math.MaxInt64)
	seen := false
	for {
		m, err := r.Next()
		if err != nil {
			return first, minimum
		}
		if b, ok := m.TimeBootMs(); ok && m.SysID == 1 && m.CompID == 1 {
			d := time.Duration(m.Receive) - time.Duration(b)*time.Millisecond
			if !seen {
				first, seen = d, true
			}
			minimum = min(minimum, d)
		}
	}
}
