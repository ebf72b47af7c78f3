// Package snap writes and reads snapshot files: an opaque body streamed by
// the caller, framed so that damage is detected and a damaged snapshot is
// set aside for an older one.
//
// # Files
//
// A snapshot is snapshot.<zxid>, the zxid in lower-case hex without padding
// as ZooKeeper names them: the last zxid applied when the snapshot started.
// Snapshots are fuzzy (the tree changes while it is written), so the caller
// replays the log from zxid+1. The format inside is corral's own:
//
//	header  (32 bytes): magic "corralsn" | version u32 (1) | flags u32 (0) |
//	                    zxid i64 | CRC32C of the preceding 24 bytes u32 | reserved u32
//	body    (any length): written by the caller
//	trailer (16 bytes): body length u64 | CRC32C (Castagnoli) of the body u32 |
//	                    magic "snpe"
//
// All integers are little-endian.
//
// # Atomic publication
//
// Create writes snapshot.<zxid>.tmp; Commit writes the trailer, fsyncs,
// renames it to snapshot.<zxid> and syncs the directory. A crash before the
// rename leaves only a .tmp file, which readers ignore (CleanTemp removes
// them at startup); after SyncDir the snapshot is durable.
//
// # Direct I/O
//
// Where the file system offers it (vfs.DirectCreator: O_DIRECT on Linux),
// the .tmp file is written around the page cache in 256 KiB aligned writes,
// the last one zero-padded and the file then truncated to its length. A
// snapshot is written once and read only at a restart or for a SNAP, so
// its copy in the page cache and that copy's writeback are work for
// nothing. With the compare benchmark's 1.2 GB tree being snapshotted,
// CPU per setData fell from 15 to 9.5 us and setData rose from 79-107k/s
// to 109-145k/s (alternating binaries; BENCHMARKS.md). Why is not
// understood: the Writer's own CPU is the same either way
// (BenchmarkSnapshotWriteCPU: 444-490 ms per GiB buffered, 405-494
// direct), so the gain is outside it (kernel writeback threads, page
// cache reclaim, or the snapshots' shorter run: 3-6 s instead of 9-10 s).
// Direct writes are not throttled for the log's sake as buffered writeback
// is, so they are kept small (directChunk says what that costs).
// Elsewhere the file goes through a buffer and the page cache, with early
// writeback every 8 MiB so the final fsync does not stall the log's.
//
// # Reading and fallback
//
// Because the CRC is a trailer, a Reader checks it when the body has been
// read to its end: the Read that would deliver the last bytes returns an
// error wrapping ErrCorrupt instead if the CRC or the length does not
// match, so a decoder never completes on a damaged body. Load tries the
// snapshots newest first; one that is damaged is renamed to
// <name>.corrupt (never deleted) with a log line, and the next older one is
// tried.
//
// # Retention
//
// Purge keeps the newest N snapshots (at least 3, like ZooKeeper's
// autopurge.snapRetainCount) and returns the zxid of the oldest kept one;
// log segments below it can then be purged.
package snap
