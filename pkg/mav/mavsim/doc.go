// Package mavsim simulates ArduPilot's logs: it writes telemetry logs
// (.tlog) and dataflash logs (.BIN) of a simulated vehicle whose clocks
// pkg/sim drives, for the `timealign demo`, the tests and the benchmarks.
//
// A [Scenario] writes a whole flight: the tlog a logging computer records
// from the autopilot's telemetry (ATTITUDE at the scenario's period,
// SYSTEM_TIME and heartbeats every tenth sample, optional GPS_INPUT, a
// banner of STATUSTEXT and parameters per boot) and one BIN per boot of the
// autopilot (ATT per sample, lost telemetry included, optional IMU and GPS
// records), with the [Truth] of every sample: its boot, boot-clock reading,
// logging-computer time and UTC. The same Scenario (Seed included) writes
// the same bytes on every machine.
//
// [TlogWriter] and [BinWriter] write frame by frame and record by record,
// with damage on request ([RawFrame], [BinWriter.WriteRaw]) for the
// readers' tests. pkg/mav reads what they write.
//
// Writing costs O(samples) time; a Scenario holds the tlog's records in
// memory to sort them by receive time, O(samples).
package mavsim
