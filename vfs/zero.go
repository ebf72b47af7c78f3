package vfs

import (
	"bytes"
	"errors"
	"io"
)

// ZeroWrite is how many zero bytes one write of WriteZeros puts into a
// file. ext4 on recent kernels (6.18 here) caches a file in folios as
// large as the writes that filled it, and an append that dirties a few
// bytes of a 1 MiB folio makes the fdatasync that follows cost ~7 us more
// kernel time (measured, 128-byte append+fdatasync p50: 58 us into
// fallocated blocks, 73 us into blocks zeroed by 1 MiB writes). 64 KiB
// writes show no such cost: `go test -run '^$' -bench
// 'AppendSyncSize/size=128|AppendSync/batch=1$' -benchtime 5000x -count 2
// ./wal/`, alternating builds, commit p50 84-101 us after 64 KiB zero
// writes and 83-111 us after 4 KiB ones. They cost a third of the CPU
// (`go test -run '^$' -bench PrepareSpare -benchtime 10x ./wal/`: 28-29
// cpu-ms per 64 MiB spare against 83-84 with 4 KiB), and under a 70k
// creates/s load the 4 KiB fill was 14% of the server's CPU (pprof),
// competing with the requests on two cores.
const ZeroWrite = 64 << 10

// ErrStopped is returned by WriteZeros when its stop channel closed.
var ErrStopped = errors.New("vfs: zero fill stopped")

// WriteZeros writes zeros over [from, to) of f, ZeroWrite bytes at a time,
// so that the file's blocks are allocated and its page-cache pages exist
// before the bytes that matter are written over them (the log's spare
// segment, the diskless checkpoint's spare file). It returns ErrStopped
// once stop is closed; a nil stop never stops it.
func WriteZeros(f File, from, to int64, stop <-chan struct{}) error {
	var zeros [ZeroWrite]byte
	for off := from; off < to; {
		select {
		case <-stop:
			return ErrStopped
		default:
		}
		n := min(int64(len(zeros)), to-off)
		if _, err := f.WriteAt(zeros[:n], off); err != nil {
			return err
		}
		off += n
	}
	return nil
}

// DirtyEnd returns the offset just after the last non-zero byte of f in
// [from, to), or from if every byte there is zero. The logs call it on
// open to find stale bytes past their last record in a preallocated
// segment, so it reads the whole zero tail of a segment (64 MiB for the
// transaction log) on every start. It reads backwards, so that garbage
// near the end is found without reading the zeros before it, and compares
// each chunk with zeros by bytes.Equal (memequal, a few GB/s) rather than
// a byte loop: a byte loop cost about 16 s per start of a race-enabled
// server on a loaded two-core machine, long enough to expire the
// sessions the restart was meant to keep.
func DirtyEnd(f File, from, to int64) (int64, error) {
	if to <= from {
		return from, nil
	}
	buf := make([]byte, min(to-from, 1<<20))
	zeros := make([]byte, len(buf))
	for end := to; end > from; {
		n := min(int64(len(buf)), end-from)
		off := end - n
		if _, err := f.ReadAt(buf[:n], off); err != nil && err != io.EOF {
			return 0, err
		}
		if !bytes.Equal(buf[:n], zeros[:n]) {
			// Some byte here is not zero; find the last one.
			for i := n - 1; i >= 0; i-- {
				if buf[i] != 0 {
					return off + i + 1, nil
				}
			}
		}
		end = off
	}
	return from, nil
}
