// Package testutil holds no code: its subpackages are the helpers that
// only tests and benchmarks import, kept apart from production code (a
// test of this package checks that no non-test file imports them).
//
//   - benchdata finds and checks the reference data of the differential
//     tests (testdata/reference);
//   - cdrtest builds CDR messages with a leading std_msgs/Header, written
//     byte by byte apart from pkg/cdr so that each checks the other;
//   - cputime measures the CPU time a benchmark's process uses;
//   - fuzzcheck runs fuzz inputs under a watchdog and draws extreme values.
//
// nodes/internal/nodetest (the node cores' shared test harness) is a test
// helper too; it lives beside the cores it serves and is held to the same
// rule.
package testutil
