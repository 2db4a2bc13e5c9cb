package stamp

import "time"

// JumpDetector watches a sequence of stamps (a /clock, one stream's
// header stamps) for time that goes back by more than Threshold: a bag
// played again with `ros2 bag play --loop`, a restarted simulator, a
// driver whose device clock restarted. Going back by less (jitter, a
// message out of order) is not a jump.
//
// With Confirm 1 the first stamp behind is the jump (a clock: trusted).
// With Confirm 2 a stamp behind is only a candidate, and the jump is
// confirmed by the next stamp if it is also behind and within Threshold of
// the candidate (a stream: one wild stamp, such as a 0 between good ones,
// is an outlier, not a new timeline). The zero value is not usable: set
// Threshold (> 0) and Confirm (1 or 2).
//
// JumpDetector is pure: no clock, no I/O, no allocation.
type JumpDetector struct {
	Threshold time.Duration
	Confirm   int

	latest    Time // the latest stamp of the current timeline
	candidate Time // a stamp behind, awaiting confirmation
	seen      bool
	pending   bool
	outliers  uint64
}

// Jump is a jump back that JumpDetector.Observe confirmed.
type Jump struct {
	// Back is how far time went back: the latest stamp before the jump
	// minus the first stamp after it (> Threshold).
	Back time.Duration
	// From is the latest stamp before the jump, To the first after it.
	From, To Time
}

// Observe takes the next stamp and reports a jump back that it confirms.
// After a jump the detector follows the new timeline.
func (d *JumpDetector) Observe(t Time) (Jump, bool) {
	if !d.seen {
		d.seen, d.latest = true, t
		return Jump{}, false
	}
	if t >= d.latest.Add(-d.Threshold) { // the same timeline
		if d.pending {
			d.pending = false
			d.outliers++
		}
		d.latest = max(d.latest, t)
		return Jump{}, false
	}
	if d.Confirm <= 1 {
		j := Jump{Back: d.latest.Sub(t), From: d.latest, To: t}
		d.latest = t
		return j, true
	}
	if d.pending && t >= d.candidate.Add(-d.Threshold) && t <= d.candidate.Add(d.Threshold) {
		j := Jump{Back: d.latest.Sub(d.candidate), From: d.latest, To: d.candidate}
		d.latest, d.pending = max(d.candidate, t), false
		return j, true
	}
	if d.pending {
		d.outliers++ // the previous candidate led nowhere
	}
	d.candidate, d.pending = t, true
	return Jump{}, false
}

// Outliers counts the stamps that were behind by more than Threshold but
// not confirmed as a jump (Confirm 2).
func (d *JumpDetector) Outliers() uint64 { return d.outliers }

// Reset forgets the timeline (not the outlier count): the next stamp
// starts a new one.
func (d *JumpDetector) Reset() { d.seen, d.pending = false, false }

// StepDetector watches a host's wall clock against its monotonic clock
// for steps (chrony or NTP setting the time, an operator's `date -s`):
// the offset between them changes by more than Threshold between two
// observations, either way. Slewing (a clock sped up or slowed by at most
// a few hundred ppm) changes the offset by far less between observations
// a second apart. The zero value needs Threshold set (> 0).
type StepDetector struct {
	Threshold time.Duration

	offset time.Duration
	seen   bool
}

// Observe takes a reading of both clocks, wall (a Time since the Unix
// epoch) and mono (a monotonic time since any fixed origin), and returns
// the step since the previous reading (positive: the wall clock jumped
// forward) if it is larger than Threshold.
func (s *StepDetector) Observe(wall Time, mono time.Duration) (time.Duration, bool) {
	off := wall.Sub(Time(mono))
	if !s.seen {
		s.seen, s.offset = true, off
		return 0, false
	}
	step := off - s.offset
	s.offset = off
	if step > s.Threshold || step < -s.Threshold {
		return step, true
	}
	return 0, false
}
