// Package atomicfile replaces a file's content in one step, as ZooKeeper's
// AtomicFileOutputStream and AtomicFileWritingIdiom do: the new content is
// written under a temporary name beside the file, synced, and renamed over
// it, then the directory is synced. A crash leaves the old file or the
// new one, never part of one.
package atomicfile
