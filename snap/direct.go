package snap

import (
	"fmt"
	"unsafe"

	"github.com/corral-db/corral/vfs"
)

// directChunk is how much a direct snapshot gathers per write. Each write
// holds the device for its length, and a log fdatasync that arrives
// meanwhile waits behind it (direct writes bypass the block layer's
// writeback throttling, which keeps buffered writeback out of a sync
// write's way): BenchmarkLogSyncBesideSnapshot (a 1.1 KiB
// append+fdatasync loop beside a 300 MB/s snapshot) gave the loop a p99
// of 200-240 us alone, 376-446 us beside buffered writes and 509-601 us
// beside 256 KiB direct ones. 1 MiB direct writes were worse: in the
// compare benchmark's sequential creates during a snapshot, p99 was
// 2.3-3.6 ms with 1 MiB and 0.8 ms with 256 KiB. So the direct path
// costs the log some tail latency while a snapshot runs; it is kept for
// the setData gain (doc.go).
const directChunk = 256 << 10

// sink is where a Writer's bytes go: a bufio.Writer over a page-cache
// file, or a directWriter. Flush is called once, at the end, except on a
// bufio.Writer (which Write flushes before starting writeback).
type sink interface {
	Write(p []byte) (int, error)
	Flush() error
}

// directWriter gathers a snapshot in an aligned buffer and writes it to a
// file opened with O_DIRECT in whole chunks. The kernel then moves the
// bytes to the device without copying them into the page cache and writing
// that back: a snapshot is written once and read only at a restart or to
// send a SNAP, so caching it spends CPU and memory on nothing. The price is
// that each write waits for the device; the tree is not locked meanwhile
// (the snapshot encodes with the lock released between chunks).
type directWriter struct {
	f   vfs.File
	buf []byte // DirectAlign-aligned, len directChunk
	n   int    // bytes gathered in buf
	off int64  // bytes written to f
}

func newDirectWriter(f vfs.File) *directWriter {
	return &directWriter{f: f, buf: alignedBuffer(directChunk)}
}

// alignedBuffer returns n bytes starting at a multiple of vfs.DirectAlign.
// Go's heap does not move objects, so the alignment holds for the slice's
// life.
func alignedBuffer(n int) []byte {
	b := make([]byte, n+vfs.DirectAlign)
	skip := 0
	if r := int(uintptr(unsafe.Pointer(&b[0])) % vfs.DirectAlign); r != 0 {
		skip = vfs.DirectAlign - r
	}
	return b[skip : skip+n : skip+n]
}

// probe writes one aligned block of zeros and cuts the file back to
// empty: some file systems accept O_DIRECT at open and refuse the writes
// (EINVAL), and a snapshot that failed on every write would leave the
// server without snapshots. The block costs one small write per snapshot.
func (d *directWriter) probe() error {
	blk := d.buf[:vfs.DirectAlign]
	clear(blk)
	if _, err := d.f.WriteAt(blk, 0); err != nil {
		return err
	}
	return d.f.Truncate(0)
}

func (d *directWriter) Write(p []byte) (int, error) {
	written := 0
	for len(p) > 0 {
		c := copy(d.buf[d.n:], p)
		d.n += c
		p = p[c:]
		written += c
		if d.n == len(d.buf) {
			if err := d.writeOut(len(d.buf)); err != nil {
				return written, err
			}
		}
	}
	return written, nil
}

// writeOut writes the first size bytes of buf (a multiple of DirectAlign)
// at off.
func (d *directWriter) writeOut(size int) error {
	if _, err := d.f.WriteAt(d.buf[:size], d.off); err != nil {
		return err
	}
	d.off += int64(size)
	d.n = 0
	return nil
}

// Flush writes what is gathered, zero-padded to the alignment, and cuts
// the file back to the bytes written. Nothing may be written after it.
func (d *directWriter) Flush() error {
	if d.n == 0 {
		return nil
	}
	size := d.n
	padded := (size + vfs.DirectAlign - 1) &^ (vfs.DirectAlign - 1)
	clear(d.buf[size:padded])
	if err := d.writeOut(padded); err != nil {
		return err
	}
	end := d.off - int64(padded) + int64(size)
	if err := d.f.Truncate(end); err != nil {
		return fmt.Errorf("truncating to %d: %w", end, err)
	}
	d.off = end
	return nil
}
