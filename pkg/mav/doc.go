// Package mav reads ArduPilot's logs and maps the autopilot's boot clock to
// Unix time.
//
// # Logs
//
// A telemetry log (.tlog, written by QGroundControl, BlueOS or MAVProxy)
// is a sequence of MAVLink frames, each preceded by the receiving
// computer's clock as 8 bytes of big-endian µs since the Unix epoch.
// [TlogReader] reads v1 and v2 frames (signed ones too) from an io.Reader,
// checks each frame's checksum with the CRC extra of the ardupilotmega
// dialect (github.com/bluenviron/gomavlib/v3) and decodes the message; a
// truncated frame, a bad checksum, an id outside the dialect (its checksum
// cannot be checked, so it is trusted only if a sound record follows it)
// and bytes of no frame are skipped and counted in [TlogStats]. After
// damage the reader searches for the next record: a magic byte 8 bytes on,
// a stamp within a day of the last good one, and a frame with a good
// checksum. TlogReader.IgnoreCRC keeps frames with a bad checksum when a
// sound record follows (some implementations compute checksums wrongly).
//
// A dataflash log (.BIN) is a sequence of records (0xA3 0x95, a type byte,
// a payload) whose layouts the log declares in FMT records; FMTU, UNIT and
// MULT records give the columns' units. [BinReader] decodes every type the
// log declares, skips and counts what it cannot (headers of undeclared
// types, garbage, a truncated last record, types whose FMT contradicts
// itself), and returns [ErrNoFormats] at the end of a stream that had
// records but no FMT. Records come from a 1 MiB read buffer without copies:
// 2.4 GB/s on the benchmark machine (BenchmarkBinRead).
//
// Both encode their messages as JSON objects ([TlogMessage.AppendJSON],
// [Record.AppendJSON]) with JSON schemas (MCAP's jsonschema encoding), for
// tools like Foxglove.
//
// # Clocks
//
// The autopilot stamps its messages with its boot clock (time_boot_ms,
// TimeUS); the tlog stamps them when they arrive. receive − boot is the
// offset between the two clocks plus the message's latency, so the offset
// lies under every sample. An [Aligner] takes every message and record and
// estimates, for each boot of the autopilot, the mapping from boot time to
// Unix time from every source the logs hold ([Source]): the tlog's stamps
// against time_boot_ms, SYSTEM_TIME's Unix time, GPS_INPUT's GPS time, and
// each BIN's GPS records. Each is fitted by pkg/pll's offset mode with skew
// tracking: the line under the samples of a sliding window of
// Config.Window samples (the lower convex hull), so drift between the
// clocks is followed and late samples cannot pull the line. Where the
// receiving clock steps, the PLL re-locks and a new piece of the mapping
// begins; a short piece whose line lies above a longer neighbour's is a
// burst of delay (a backlog flushed when a link comes up), not a clock,
// and is dropped. The fitted line is kept as knots (one every Window/8
// samples, evaluated in the middle of the window that fitted it), so the
// mapping of a whole log is a piecewise-linear curve in O(n/Window) memory,
// and any boot time, that of a BIN record too, maps through it.
//
// One global minimum of receive − boot, the usual practice, holds the
// offset of one moment: it is off by the drift over the log (20 ppm is 72
// ms an hour), a step of the receiving clock or a reboot. On ten minutes
// of telemetry at 10 Hz with exponential latency of mean 20 ms the fit is
// within 0.6 ms of the truth at every sample (TestOffsetAccuracy).
//
// A reboot (time_boot_ms going back while receive − boot jumps up by more
// than Config.MaxLatency, or boot time going back more than a second) starts
// a new boot; a single sample that looked like one and is contradicted by
// the next is a stray. The winner of a boot is the tlog's own clock where
// the tlog has it (the clock of a merged stream), else SYSTEM_TIME, GPS_INPUT
// or GPS, or Config.Prefer; every other estimate is compared with it over
// their common boot time and called agrees, disagrees or, above the tlog's
// floor, inconsistent (messages would arrive before they were sent): never
// averaged in. The uncertainty of an estimate is how far above the true
// floor its line typically lies: the third-lowest residual of each window.
//
// Each BIN is matched to a boot by what the logs say about themselves
// ([Identity], [Evidence]): firmware and board id from the banner
// (STATUSTEXT, MSG, AUTOPILOT_VERSION, VER), SYSID_THISMAV, STAT_BOOTCNT,
// whether the BIN runs past a reboot the tlog shows, and the attitude at
// equal boot times (ATTITUDE against ATT).
//
// # Cost
//
// Per tlog message: a frame check (X.25) and a reflective decode (a few
// hundred ns); per sample of an estimate, one PLL update (O(1) amortized)
// and a Status (O(FIFOSize)); per BIN record, O(1). Memory: the PLL windows
// (Window samples per estimate), the knots (O(n/Window) for n samples; at
// worst a piece per 7 samples, for input whose clock steps all the time),
// 4096 attitude samples per boot and per BIN, at most 64 components and
// 256 boots each, and counters.
//
// # Pipeline
//
// A [Pipeline] is what a merge of the logs on one clock takes in: each
// log's messages as JSON, stamped on that clock ([Result.TlogStamps],
// [Result.BinEstimate]), in batches, in order. BIN records are read in a
// goroutine per BIN and encoded by one goroutine per CPU; a batch is
// reused once its items are released, so memory is bounded by the
// batches in flight. Stop, or the end of its context, ends its
// goroutines.
//
// Everything else is pure: readers on the io.Reader given, no clock, no
// goroutine, no logging. One goroutine owns a reader or an Aligner; a
// [Format] never changes once a record of it was returned, so records may
// be encoded in other goroutines.
package mav
