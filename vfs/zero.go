package vfs

import "errors"

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
