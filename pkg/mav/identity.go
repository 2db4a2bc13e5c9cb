package mav

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
)

// What logs say about themselves. ArduPilot sends the same banner lines
// in STATUSTEXT (tlog) that it writes as MSG records (BIN) when logging
// starts: the firmware ("ArduSub V4.1.0 (89639005)"), the board's unique
// id (ChibiOS boards: "CubeOrange 003F0033 3030510B 38393337"; Linux
// boards: a 32-digit machine id), the frame. AUTOPILOT_VERSION carries
// the version, the git hash and the start of the Linux machine id; PARM
// records and PARAM_VALUE messages carry SYSID_THISMAV and STAT_BOOTCNT
// (incremented at every boot). Two logs of the same boot agree on all of
// them, and their attitude (ATT in degrees, ATTITUDE in radians) agrees
// at equal boot times.

// Identity is what a log says about the autopilot that wrote it; empty
// fields are unknown.
type Identity struct {
	// Vehicle is the firmware's name (ArduSub, ArduCopter, ...), Version
	// its version ("4.1.0", "4.1.1 BETA5"), GitHash its git hash.
	Vehicle string `json:"vehicle,omitempty"`
	Version string `json:"version,omitempty"`
	GitHash string `json:"git_hash,omitempty"`
	// Board is the board's unique id line.
	Board string `json:"board,omitempty"`
	// BoardPrefix is a known start of Board (AUTOPILOT_VERSION's uid2).
	BoardPrefix string `json:"board_prefix,omitempty"`
	// SysID is SYSID_THISMAV (0: unknown).
	SysID int `json:"sysid,omitempty"`
}

var (
	firmwareRE = regexp.MustCompile(`^([A-Za-z][A-Za-z0-9_:]*) V?(\d+\.\d+\.\d+[^(]*?)\s*\(([0-9a-fA-F]{6,40})\)`)
	boardRE    = regexp.MustCompile(`^(\S+ [0-9A-Fa-f]{8} [0-9A-Fa-f]{8} [0-9A-Fa-f]{8}|[0-9a-fA-F]{32})$`)
)

// noteText reads a banner line.
func (id *Identity) noteText(s string) {
	s = strings.TrimSpace(s)
	if m := firmwareRE.FindStringSubmatch(s); m != nil && id.Vehicle == "" {
		id.Vehicle, id.Version, id.GitHash = m[1], strings.TrimSpace(m[2]), strings.ToLower(m[3])
		return
	}
	if boardRE.MatchString(s) && id.Board == "" {
		id.Board = s
	}
}

// Firmware returns the firmware as its banner says it ("ArduSub V4.1.0
// (89639005)"), or "".
func (id Identity) Firmware() string {
	if id.Vehicle == "" && id.Version == "" {
		if id.GitHash != "" {
			return "git " + id.GitHash
		}
		return ""
	}
	s := strings.TrimSpace(id.Vehicle + " V" + id.Version)
	if id.GitHash != "" {
		s += " (" + id.GitHash + ")"
	}
	return s
}

// Evidence is one thing two logs say about whether they belong together.
type Evidence struct {
	// What is compared: firmware, board, sysid, boot_count, boot_time,
	// attitude.
	What string `json:"what"`
	// Verdict: +1 they agree, −1 they contradict, 0 it tells nothing.
	Verdict int `json:"verdict"`
	// Detail says it in words.
	Detail string `json:"detail"`
}

// compareIdentity compares the tlog's and a BIN's identity.
func compareIdentity(t, b Identity) []Evidence {
	var ev []Evidence
	switch {
	case t.Vehicle == "" && t.GitHash == "" || b.Vehicle == "" && b.GitHash == "":
		ev = append(ev, Evidence{"firmware", 0, fmt.Sprintf("firmware unknown (tlog: %s; BIN: %s)", orUnknown(t.Firmware()), orUnknown(b.Firmware()))})
	case t.GitHash != "" && b.GitHash != "" && !strings.HasPrefix(b.GitHash, t.GitHash) && !strings.HasPrefix(t.GitHash, b.GitHash),
		t.Vehicle != "" && b.Vehicle != "" && t.Vehicle != b.Vehicle,
		t.Version != "" && b.Version != "" && t.Version != b.Version:
		ev = append(ev, Evidence{"firmware", -1, fmt.Sprintf("another firmware: tlog %s, BIN %s", t.Firmware(), b.Firmware())})
	default:
		ev = append(ev, Evidence{"firmware", 1, "same firmware " + b.Firmware()})
	}
	tb, bb := t.Board, b.Board
	switch {
	case tb != "" && bb != "":
		if strings.EqualFold(tb, bb) {
			ev = append(ev, Evidence{"board", 1, "same board id " + bb})
		} else {
			ev = append(ev, Evidence{"board", -1, fmt.Sprintf("another board: tlog %s, BIN %s", tb, bb)})
		}
	case tb == "" && t.BoardPrefix != "" && bb != "":
		if strings.HasPrefix(strings.ToLower(bb), strings.ToLower(t.BoardPrefix)) {
			ev = append(ev, Evidence{"board", 1, "same board id " + bb})
		} else {
			ev = append(ev, Evidence{"board", -1, fmt.Sprintf("another board: tlog %s…, BIN %s", t.BoardPrefix, bb)})
		}
	default:
		ev = append(ev, Evidence{"board", 0, "board id unknown"})
	}
	switch {
	case t.SysID == 0 || b.SysID == 0:
		ev = append(ev, Evidence{"sysid", 0, "SYSID_THISMAV unknown"})
	case t.SysID != b.SysID:
		ev = append(ev, Evidence{"sysid", -1, fmt.Sprintf("another vehicle: SYSID_THISMAV %d in the tlog, %d in the BIN", t.SysID, b.SysID)})
	default:
		ev = append(ev, Evidence{"sysid", 1, fmt.Sprintf("same SYSID_THISMAV %d", b.SysID)})
	}
	return ev
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// attitude is one attitude sample in degrees at a boot time in µs.
type attitude struct {
	boot             int64
	roll, pitch, yaw float32
}

// attSampler keeps at most attMax samples spread over the log: one per
// step of boot time, and when full, every other one (the step doubles).
type attSampler struct {
	s    []attitude
	step int64
}

const attMax = 4096

func (a *attSampler) add(x attitude) {
	if a.step == 0 {
		a.step = 100_000 // 100 ms
	}
	if n := len(a.s); n > 0 && x.boot < a.s[n-1].boot+a.step {
		return
	}
	if len(a.s) == attMax {
		k := 0
		for i := 0; i < len(a.s); i += 2 {
			a.s[k] = a.s[i]
			k++
		}
		a.s = a.s[:k]
		a.step *= 2
	}
	a.s = append(a.s, x)
}

// compareAttitude compares the attitude of two logs at equal boot times
// (the tlog's samples against the BIN's nearest within 60 ms).
func compareAttitude(tl, bin []attitude) Evidence {
	var dr, dp, dy []float64
	var motion [3]float64
	var mean [3]float64
	for _, t := range tl {
		i, _ := slices.BinarySearchFunc(bin, t.boot, func(a attitude, b int64) int {
			switch {
			case a.boot < b:
				return -1
			case a.boot > b:
				return 1
			}
			return 0
		})
		best := -1
		for _, j := range []int{i - 1, i} {
			if j >= 0 && j < len(bin) && abs64(bin[j].boot-t.boot) <= 60_000 && (best < 0 || abs64(bin[j].boot-t.boot) < abs64(bin[best].boot-t.boot)) {
				best = j
			}
		}
		if best < 0 {
			continue
		}
		b := bin[best]
		dr = append(dr, math.Abs(angleDiff(float64(t.roll), float64(b.roll))))
		dp = append(dp, math.Abs(angleDiff(float64(t.pitch), float64(b.pitch))))
		dy = append(dy, math.Abs(angleDiff(float64(t.yaw), float64(b.yaw))))
		for k, v := range []float32{t.roll, t.pitch, t.yaw} {
			mean[k] += float64(v)
		}
	}
	n := len(dr)
	if n < 10 {
		return Evidence{"attitude", 0, fmt.Sprintf("attitude not comparable: %d samples at common boot times", n)}
	}
	for k := range mean {
		mean[k] /= float64(n)
	}
	for _, t := range tl {
		for k, v := range []float32{t.roll, t.pitch, t.yaw} {
			motion[k] = math.Max(motion[k], math.Abs(angleDiff(float64(v), mean[k])))
		}
	}
	med := math.Max(median(dr), math.Max(median(dp), median(dy)))
	moved := math.Max(motion[0], math.Max(motion[1], motion[2]))
	switch {
	case med > 5:
		return Evidence{"attitude", -1, fmt.Sprintf("attitude disagrees at equal boot times: median difference %.1f° over %d samples", med, n)}
	case moved < 3:
		return Evidence{"attitude", 0, fmt.Sprintf("attitude agrees within %.1f° but the vehicle hardly moved (%.1f°): weak evidence", med, moved)}
	}
	return Evidence{"attitude", 1, fmt.Sprintf("attitude agrees at equal boot times: median difference %.2f° over %d samples", med, n)}
}

func angleDiff(a, b float64) float64 {
	d := math.Mod(a-b, 360)
	switch {
	case d > 180:
		d -= 360
	case d < -180:
		d += 360
	}
	return d
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

func abs64(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}
