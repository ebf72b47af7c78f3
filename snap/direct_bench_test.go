package snap

import (
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/corral-db/corral/vfs"
)

// bufferedOS is the OS file system without CreateDirect, so that Create
// takes the page-cache path.
type bufferedOS struct{ vfs.FS }

// benchModes are the two ways a snapshot reaches the disk.
var benchModes = []struct {
	name string
	fs   vfs.FS
}{{"buffered", bufferedOS{vfs.OS()}}, {"direct", vfs.OS()}}

// writeSnapshotFile writes a snapshot of size body bytes through fsys,
// at most mbps MB/s when mbps > 0, stopping early when stop is set.
func writeSnapshotFile(b *testing.B, fsys vfs.FS, dir string, size int, mbps float64, stop *atomic.Bool) {
	w, err := Create(fsys, dir, 1)
	if err != nil {
		b.Fatal(err)
	}
	chunk := make([]byte, 64<<10)
	for i := range chunk {
		chunk[i] = byte(i * 7)
	}
	start := time.Now()
	for n := 0; n < size && (stop == nil || !stop.Load()); n += len(chunk) {
		if mbps > 0 {
			if d := time.Duration(float64(n)/(mbps*1e6)*1e9) - time.Since(start); d > 0 {
				time.Sleep(d)
			}
		}
		if _, err := w.Write(chunk); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Commit(); err != nil {
		b.Fatal(err)
	}
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkSnapshotWriteCPU writes a 1 GiB snapshot body per op through
// the page cache and with O_DIRECT, and reports the process's CPU per
// GiB (user and system; writeback done by kernel threads is not in it).
//
//	go test -run '^$' -bench SnapshotWriteCPU -benchtime 3x ./snap/
func BenchmarkSnapshotWriteCPU(b *testing.B) {
	const size = 1 << 30
	for _, m := range benchModes {
		b.Run(m.name, func(b *testing.B) {
			dir := b.TempDir()
			var cpu time.Duration
			for b.Loop() {
				c0 := processCPU()
				writeSnapshotFile(b, m.fs, dir, size, 0, nil)
				cpu += processCPU() - c0
				_ = os.Remove(filepath.Join(dir, Name(1)))
			}
			b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "cpu-ms/GiB")
			b.SetBytes(size)
		})
	}
}

// BenchmarkLogSyncBesideSnapshot measures what a snapshot being written
// does to the transaction log's commits: a loop of 1.1 KiB writes, each
// followed by fdatasync, into a zero-filled 64 MiB file (as a log
// segment), while a snapshot is written at 300 MB/s through the page
// cache, with O_DIRECT, or not at all. One op is one commit; p50-us and
// p99-us are the commits' latency.
//
//	go test -run '^$' -bench LogSyncBesideSnapshot -benchtime 20000x ./snap/
func BenchmarkLogSyncBesideSnapshot(b *testing.B) {
	modes := append([]struct {
		name string
		fs   vfs.FS
	}{{"none", nil}}, benchModes...)
	for _, m := range modes {
		b.Run(m.name, func(b *testing.B) {
			dir := b.TempDir()
			log, err := vfs.OS().Create(filepath.Join(dir, "log"))
			if err != nil {
				b.Fatal(err)
			}
			defer log.Close()
			zeros := make([]byte, 1<<20)
			for i := 0; i < 64; i++ {
				if _, err := log.Write(zeros); err != nil {
					b.Fatal(err)
				}
			}
			if err := log.Sync(); err != nil {
				b.Fatal(err)
			}
			var stop atomic.Bool
			done := make(chan struct{})
			go func() {
				defer close(done)
				if m.fs != nil {
					writeSnapshotFile(b, m.fs, filepath.Join(dir, "snap"), 8<<30, 300, &stop)
				}
			}()
			rec := make([]byte, 1100)
			lat := make([]time.Duration, 0, b.N)
			off := int64(0)
			b.ResetTimer()
			for b.Loop() {
				t := time.Now()
				if _, err := log.WriteAt(rec, off%(60<<20)); err != nil {
					b.Fatal(err)
				}
				if err := log.Sync(); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(t))
				off += int64(len(rec))
			}
			b.StopTimer()
			stop.Store(true)
			<-done
			slices.Sort(lat)
			if len(lat) > 0 {
				b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-us")
				b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-us")
			}
		})
	}
}
