package wal

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// BenchmarkSyncMethod compares ways of making one 1100-byte record (a 1
// KiB create) durable in a zero-filled file on the OS file system, with
// plain system calls rather than the Log: write then fdatasync (what the
// Log does), one pwritev2 with RWF_DSYNC, and an O_DIRECT|O_DSYNC write of
// the 4 KiB-aligned blocks the record touches. p50-us and p90-us are
// per-record latencies. Why it is here: on a virtual disk without FUA
// (/sys/block/*/queue/fua = 0) the kernel turns each of them into a write
// plus a cache flush, and they cost the same; run it on a new machine
// before changing how the Log syncs.
func BenchmarkSyncMethod(b *testing.B) {
	const rec = 1100
	for _, m := range []struct {
		name  string
		flags int
		write func(fd int, p []byte, off int64) error
	}{
		{"pwrite+fdatasync", unix.O_RDWR, func(fd int, p []byte, off int64) error {
			if _, err := unix.Pwrite(fd, p[:rec], off); err != nil {
				return err
			}
			return unix.Fdatasync(fd)
		}},
		{"pwritev2-dsync", unix.O_RDWR, func(fd int, p []byte, off int64) error {
			_, err := unix.Pwritev2(fd, [][]byte{p[:rec]}, off, unix.RWF_DSYNC)
			return err
		}},
		{"odirect-dsync", unix.O_RDWR | unix.O_DIRECT | unix.O_DSYNC, func(fd int, p []byte, off int64) error {
			blk := off &^ 4095
			n := (off + rec - blk + 4095) &^ 4095
			_, err := unix.Pwrite(fd, p[:n], blk)
			return err
		}},
	} {
		b.Run(m.name, func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "f")
			size := int64(b.N+1)*rec + 8192
			// Zero-filled in zeroWrite pieces, as the Log's spare is
			// (spare.go: larger writes make later fdatasyncs dearer).
			f, err := os.Create(path)
			if err != nil {
				b.Fatal(err)
			}
			for off := int64(0); off < size; off += zeroWrite {
				if _, err := f.Write(make([]byte, zeroWrite)); err != nil {
					b.Fatal(err)
				}
			}
			if err := f.Close(); err != nil {
				b.Fatal(err)
			}
			fd, err := unix.Open(path, m.flags, 0)
			if err != nil {
				b.Skip("open:", err) // O_DIRECT is not supported everywhere (tmpfs)
			}
			defer unix.Close(fd)
			if err := unix.Fdatasync(fd); err != nil {
				b.Fatal(err)
			}
			raw := make([]byte, 3*4096)
			p := raw[(4096-int(uintptr(unsafe.Pointer(&raw[0]))&4095))&4095:][:2*4096]
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				t := time.Now()
				if err := m.write(fd, p, int64(i)*rec); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(t))
			}
			b.StopTimer()
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-us")
			b.ReportMetric(float64(lat[len(lat)*9/10].Microseconds()), "p90-us")
		})
	}
}
