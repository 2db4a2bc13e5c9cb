// Package bag reads and writes rosbag2 bags: a directory with a
// metadata.yaml and one or more storage files (split files, read in the
// order metadata.yaml lists them), in either of the storage formats ROS 2
// Humble records: MCAP (github.com/foxglove/mcap/go/mcap) and SQLite (.db3,
// through the pure-Go modernc.org/sqlite driver: no cgo). A single storage
// file, and a directory of storage files without metadata.yaml (a bag whose
// recorder died before writing it), open too.
//
// # Reading
//
// [Open] finds the storage files and the metadata; [Bag.Records] returns a
// [Reader] that streams every record of every file in order: topics as they
// appear (all of a SQLite file's first), messages, and MCAP attachments and
// metadata records, which a rewrite keeps. A message's Data is valid until
// the next call of Next, so reading allocates nothing per message; memory is
// bounded by the largest MCAP chunk (MaxChunkSize) and SQLite's page cache,
// whatever the bag's size.
//
// A recording cut off while it was written (its recorder killed, a crash,
// a power cut) is read to where each file ends, with no error: a [Cut] in
// [Reader.Skipped] (and [Summary]) says where the file ends, in which
// record, and whether that lost messages ([Cut.Lost]: the file ends inside
// a chunk or a message record; the complete messages at the start of a cut
// uncompressed chunk are read) or not (it ends in or after records that
// hold no message: indexes, the summary, the footer). An empty split file,
// a SQLite write-ahead log or rollback journal left behind, and a bag
// directory without metadata.yaml ([Bag.NoMetadata]) are read too.
//
// Reading never writes: a SQLite file in WAL mode is opened read-only and
// immutable (no lock, no -wal or -shm created beside it), one in rollback
// mode read-only; one with a write-ahead log that holds transactions is
// read from a copy of the file and its log in a temporary directory
// ([Bag.TempDir]), removed when the reader closes it.
//
// Other bad input is an error naming the file and the byte offset (MCAP)
// or the row (SQLite) where reading stopped; a chunk whose CRC does not
// match is skipped and counted ([Reader.Skipped]), and reading goes on
// after it. A caller that wants everything readable keeps the messages
// read before an error and moves to the next file ([Reader.SkipFile]).
//
// # Writing
//
// [NewMCAPWriter] and [NewSQLiteWriter] write one storage file; a
// [DirWriter] writes a bag directory: split files named <bag>_<i>.<ext> and
// a metadata.yaml that `ros2 bag info` and `ros2 bag play` accept
// (version 5, Humble's). MCAP files get the ros2 profile, schemas, channels
// with rosbag2's metadata (offered_qos_profiles), chunk compression (zstd,
// lz4 or none) and the summary section with chunk and message indexes and
// statistics, so readers can seek. [MCAPFile], under MCAPWriter, writes
// MCAP of any profile (channels numbered by the caller, JSON messages):
// the one implementation of chunks, their compression and indexes, with
// the chunks compressed in a goroutine of its own when asked
// (WriterOptions.Parallel).
//
// # Which messages carry a header stamp
//
// [Definitions] decides, per type, whether a message's first field is a
// std_msgs/Header (the only messages whose stamp timealign rewrites, through
// pkg/stamp): from the MCAP schema text (ros2msg or ros2idl) when the file
// has one; for SQLite bags, which store no definitions, from the installed
// .msg files under AMENT_PREFIX_PATH when ROS 2 is sourced, and otherwise
// from a built-in table of the standard message types. [Definition.Source]
// says which.
//
// The package reads no clock and does not log; zstd (de)compression runs
// with concurrency 1. It starts no goroutines but the one of a Parallel
// MCAP writer, which its Close or Abort ends.
package bag
