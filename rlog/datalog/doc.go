// Package datalog is the replicated logs' on-disk data log: the payload
// bytes of appends, written once, in segment files of their own beside the
// transaction log (wal/), which carries only each append's metadata.
//
// # Files
//
// A data log is a directory of segments named data.<seq>, seq a 16-digit
// lower-case hex number counting up from 1 (gaps appear when segments are
// dropped). A segment starts with a 32-byte header (little-endian):
//
//	magic "corraldl" | version u32 (1) | flags u32 (0) | seq u64 |
//	CRC32C of the preceding 24 bytes u32 | reserved u32
//
// followed by records:
//
//	length u32 (of payload, > 0) | CRC32C u32 (over the next 24 bytes and
//	the payload) | zxid i64 | log u64 | offset i64 | payload
//
// (zxid, log, offset) is the record's Meta: which append of which log the
// bytes are. A record is addressed by its Pos, (segment seq, file offset of
// its header): positions are a member's own, never replicated.
//
// An all-zero record header ends a segment. A record larger than a
// segment gets a segment of its own, sized to fit.
//
// # Preallocation
//
// A goroutine prepares a spare file, data.next.tmp, ahead of time, and a
// roll renames it to the next segment's name. The spare is allocated with
// fallocate (vfs.File.Preallocate), not written: on ext4 and XFS its
// blocks are unwritten extents, which read as zeros, and one fdatasync
// and a directory sync make the allocation, the size and the name
// durable. An append never changes a segment's size. It does write into
// unwritten extents, so the fdatasync after it also commits their
// conversion to written in the journal: one small journal commit per
// sync, whatever the group's size. The WAL (wal/doc.go) writes zeros
// instead, because its records are small and that commit is most of an
// fdatasync's cost there; here records are large (64 KiB appends), and
// zeros would write every byte to the disk twice, once as zeros and once
// as the record, on a disk the members of a group share.
// BenchmarkSparePrep compares the two. Where fallocate is not supported,
// Preallocate writes the zeros.
//
// Until an unwritten extent's conversion is committed it reads as zeros,
// so a crash leaves the tail of the last segment as zeros or as bytes
// that were written, never as stale blocks: the torn-tail rule below is
// unchanged.
//
// # Write and sync decoupled
//
// Append writes a record into the current segment at once (pwrite, no
// application buffer) and returns its position; it does not sync. A
// flusher goroutine syncs in groups: it takes the written end W, fdatasyncs
// the segment, then publishes W as the synced end (Synced, WaitSynced,
// Options.OnSync). It syncs when someone waits (WaitSynced, an Append short
// of room), once Options.SyncBytes are in flight, or Options.SyncDelay
// after a write nobody waits for; every byte written meanwhile, and while
// a sync runs, goes into the next group, so the group grows with the load
// (the thesis's FlushRP, §3, whose fixed count T is SyncBytes here, with
// the waiter as the adaptive end). Bytes written but not yet synced are "in flight";
// Append blocks while a record would take them above Options.MaxInflight,
// so memory (the page cache's dirty bytes) is bounded, never a queue.
//
// # Durability and repair
//
// Before a new segment receives records, the previous one is synced and
// its name made durable; only the last segment can hold unsynced bytes.
// Hence, at Open:
//
//   - In the last segment, the first invalid record (bad length, bad CRC)
//     is a torn tail: Open cuts it there (zeros over the rest), logs a
//     warning naming the file and offset, and syncs. A last segment with a
//     torn header and no record is removed.
//   - Any invalid byte in another segment is corruption of synced data:
//     Open fails with an error wrapping ErrCorrupt that names the file and
//     the offset, and changes nothing.
//
// After Open every recovered record is durable, and Synced reports the end
// of the last one. Read verifies the CRC of what it returns.
//
// # Space
//
// Each segment counts its live bytes: every record adds its size, and
// Release subtracts what the owner no longer needs (a trimmed or deleted
// log's records). A segment that is not the current one and has no live
// bytes is removed: space comes back in whole segments.
//
// # Errors
//
// A failed write, sync or roll leaves the files unknown (a failed fsync may
// drop dirty pages), so it is sticky: every later call returns it. Close
// and Open again; Open repairs the tail.
package datalog
