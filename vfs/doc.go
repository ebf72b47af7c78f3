// Package vfs is the narrow file-system interface that wal and snap write
// through, so that the same code runs on the real disk and on models of a
// disk that crashes or fails.
//
// Three implementations:
//
//   - OS: the operating system's files. File.Sync is fdatasync on Linux;
//     File.Preallocate is fallocate(2), falling back to writing zeros.
//   - MemFS: an in-memory file system that models what survives a crash.
//     Every file keeps its durable content (as of its last Sync) and its
//     volatile content; every directory keeps its durable entries (as of its
//     last SyncDir) and its volatile ones. Crash forgets everything volatile;
//     CrashRandom keeps a random prefix of the unsynced changes, the last
//     write possibly torn at any byte.
//   - FaultFS: wraps another FS and makes chosen calls fail (the Nth write,
//     every sync from the 3rd on, a rename of a given path, ...).
//
// The durability contract the callers rely on is POSIX's: data written to
// a file is durable after File.Sync; the existence of a name (create,
// rename, remove) is durable after SyncDir on its directory.
package vfs
