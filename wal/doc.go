// Package wal is corral's transaction log: opaque byte records keyed by a
// strictly increasing zxid, appended to preallocated segment files and made
// durable by an explicit Sync (group commit is the caller's: append many,
// Sync once).
//
// # Files
//
// A log is a directory of segments named log.<zxid>, the zxid of the
// segment's first record in lower-case hex without padding, as ZooKeeper
// names its logs (log.100000001). The format inside is corral's own.
//
// A segment starts with a 32-byte header (little-endian):
//
//	magic "corralwl" | version u32 (1) | flags u32 (0) | first zxid i64 |
//	CRC32C of the preceding 24 bytes u32 | reserved u32
//
// followed by records:
//
//	length u32 (of payload) | CRC32C u32 (Castagnoli, over zxid and payload) |
//	zxid i64 | payload
//
// A segment is preallocated (Options.SegmentSize, 64 MiB by default); the
// unused tail reads as zeros, and an all-zero record header ends the
// segment. A segment rolls when the next record would not fit, or on Roll.
// A record larger than a segment gets a segment of its own, sized to fit.
//
// # Preallocation
//
// Preallocating means writing zeros, not fallocate: fallocated blocks are
// "unwritten" extents, and the first fdatasync after writing into one must
// also journal its conversion to written, which on ext4 costs an fdatasync
// several times what a pure data write does. A segment's zeros are written
// and made durable before it becomes a segment, so the fdatasync of an
// append never updates metadata: not the size, not the extent map.
//
// Zero-filling 64 MiB takes 100-200 ms, so it is done ahead of time: the
// Log keeps a spare file, log.next.tmp (never a segment name), which a
// goroutine the Log owns fills with zeros 64 KiB per write (1 MiB writes
// leave large page-cache folios behind, which make the fdatasync of every
// later small append cost more; one page per write cost three times the
// CPU), fdatasyncs every MiB (so that appends'
// syncs do not queue behind a large flush), and makes durable with a
// SyncDir. A roll syncs and closes the full segment, renames the spare to
// the new segment's name and writes the header with the first records; the
// first Sync after it syncs the directory, which makes the name durable,
// and then asks the goroutine for the next spare. If the spare is not ready
// when a roll needs it, the Append waits for it (or, if the goroutine
// failed, zero-fills one itself) and Stats.SpareMisses counts it.
// Options.PrepareInline does every zero-fill that way, starting no
// goroutine. Close stops the goroutine and removes the spare; Open removes
// a spare left by a crash (half-filled, or holding records of a segment
// whose rename never became durable: nothing in it was acknowledged).
//
// The price is writing every segment twice, zeros then records: a log
// written near the disk's bandwidth (hundreds of MB/s) rolls every few
// hundred milliseconds, the zero-fill then competes with appends, and
// their tail latency rises.
//
// # Durability and repair
//
// Before a new segment is created the previous one is synced and closed, so
// only the last segment can ever hold unsynced bytes. Hence the rule:
//
//   - Only the tail can be torn. In the last segment, the first record that
//     is invalid (bad length, bad CRC, zxid not increasing) ends the log:
//     Open cuts the segment there, writing zeros over every non-zero byte
//     after the cut, and logs a warning. Bytes after an all-zero record
//     header that are not zero (pages that reached the disk out of order)
//     are zeroed the same way, so that records written later can never be
//     followed by stale ones that happen to validate.
//   - A last segment whose header is missing or torn (the crash came
//     between its creation and its first sync) and that holds no valid
//     record is removed; if it does hold records it is renamed aside to
//     log.<zxid>.corrupt rather than deleted.
//   - Any invalid byte in a segment other than the last (a bad header, a
//     bad record before the segment's zero end, zxids out of order, or an
//     empty segment) is corruption of synced data: Open fails with an error
//     wrapping ErrCorrupt and changes nothing.
//
// After Open returns, every record it reports is durable (Open syncs the
// tail segment and the directory), and no garbage follows the last one.
//
// # Reading
//
// ReadFrom reads the records in order from a zxid (recovery, tests).
// ReadAt reads one record at the position AppendPos returned for it
// (segment base, offset, length): the driver's in-memory log keeps that
// position instead of an entry once the entry is durable and applied, and
// a learner's DIFF reads the entry back. ReadAt has a file handle and a
// lock of its own, so it never waits for an append or a sync holding the
// Log's; a record it reads must have been written (Flush or Sync).
//
// # Errors
//
// An I/O error while writing, syncing, rolling or truncating leaves the
// files in an unknown state (after a failed fsync the kernel may have
// dropped the dirty pages), so it is sticky: every later call returns it.
// Close the Log and Open it again; Open repairs the tail.
package wal
