package wal

import (
	"fmt"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/corral-db/corral/vfs"
)

// TestAppendDoesNotAllocate checks the steady state of the hot path on the
// OS file system: encoding into the reused buffer, writing it out, and
// fdatasync allocate nothing.
func TestAppendDoesNotAllocate(t *testing.T) {
	l, err := Open(vfs.OS(), t.TempDir(), Options{SegmentSize: 16 << 20, BufferSize: 8 << 10})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	data := make([]byte, 1024)
	z := int64(0)
	appendBatch := func() {
		for i := 0; i < 16; i++ {
			z++
			if err := l.Append(z, data); err != nil {
				t.Fatal(err)
			}
		}
		if err := l.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	appendBatch() // create the segment and grow the buffer
	// Sync once, which asks for the next spare, and wait for it: the
	// preparer allocates, and AllocsPerRun counts every goroutine.
	if err := l.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := awaitSpare(l); err != nil {
		t.Fatal(err)
	}
	if avg := testing.AllocsPerRun(50, appendBatch); avg != 0 {
		t.Fatalf("Append+Flush allocates %.1f times per batch, want 0", avg)
	}
	if avg := testing.AllocsPerRun(5, func() {
		if err := l.Sync(); err != nil {
			t.Fatal(err)
		}
	}); avg != 0 {
		t.Fatalf("Sync allocates %.1f times, want 0", avg)
	}
}

// BenchmarkAppendSync appends 1 KiB records on the OS file system in a
// temporary directory, syncing after every batch records. One op is one
// record; ns/op is the amortised cost of making a record durable, ns/sync
// that of one commit (the batch's appends and its Sync), and p50-us,
// p90-us, p99-us and max-us the distribution of commit latencies. The
// first segment is created, and the spare prepared, before timing starts;
// with the default 64 MiB segments only batch=128 writes enough to roll.
func BenchmarkAppendSync(b *testing.B) {
	for _, batch := range []int{1, 16, 128} {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) {
			benchAppendSync(b, Options{}, batch, 1024)
		})
	}
}

// BenchmarkAppendSyncSize is BenchmarkAppendSync with one record per
// Sync, of other sizes: 128 bytes is about a ZooKeeper create, and with 4
// KiB records every Sync writes into a block no earlier Sync touched.
func BenchmarkAppendSyncSize(b *testing.B) {
	for _, size := range []int{128, 4096} {
		b.Run(fmt.Sprintf("size=%d", size), func(b *testing.B) {
			benchAppendSync(b, Options{}, 1, size)
		})
	}
}

// BenchmarkAppendSyncRoll is BenchmarkAppendSync with 4 MiB segments, so
// that runs cross many rolls (one per ~4000 records): max-us shows whether
// a roll stalls its commit; rolls and misses count the rolls during the
// timed part and those that had to wait for a zero-fill.
func BenchmarkAppendSyncRoll(b *testing.B) {
	for _, batch := range []int{1, 16, 128} {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) {
			benchAppendSync(b, Options{SegmentSize: 4 << 20}, batch, 1024)
		})
	}
}

func benchAppendSync(b *testing.B, opts Options, batch, size int) {
	data := make([]byte, size)
	l := openPrimed(b, opts, data)
	before := l.Stats()
	lat := make([]time.Duration, 0, b.N/batch+1)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		if err := l.Append(int64(i+2), data); err != nil {
			b.Fatal(err)
		}
		if (i+1)%batch == 0 || i == b.N-1 {
			if err := l.Sync(); err != nil {
				b.Fatal(err)
			}
			now := time.Now()
			lat = append(lat, now.Sub(start))
			start = now
		}
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(len(lat)), "ns/sync")
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-us")
	b.ReportMetric(float64(lat[len(lat)*9/10].Microseconds()), "p90-us")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-us")
	b.ReportMetric(float64(lat[len(lat)-1].Microseconds()), "max-us")
	st := l.Stats()
	b.ReportMetric(float64(st.Segments-before.Segments), "rolls")
	b.ReportMetric(float64(st.SpareMisses-before.SpareMisses), "misses")
}

// BenchmarkPrepareSpare zero-fills a 64 MiB spare on the OS file system,
// as the preparer does before each roll. One op is one spare; cpu-ms is
// the process's CPU time (user and system) per spare, which is what the
// fill takes from requests on a busy machine.
func BenchmarkPrepareSpare(b *testing.B) {
	dir := b.TempDir()
	var before syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &before)
	for b.Loop() {
		if err := prepareSpare(vfs.OS(), dir, 64<<20, nil); err != nil {
			b.Fatal(err)
		}
	}
	var after syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &after)
	cpu := time.Duration(after.Utime.Nano()+after.Stime.Nano()-before.Utime.Nano()-before.Stime.Nano()) * time.Nanosecond
	b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "cpu-ms/op")
}

// BenchmarkAppendSyncBeside is BenchmarkAppendSync (1 KiB records, one
// sync each) with logs=N logs in N directories of the same file system
// committing at the same time, as the three members of an ensemble on
// one machine do for each write: ns/op is per record of the measured log
// (the first); p50-us and p90-us are its commit latencies while the
// others sync beside it.
func BenchmarkAppendSyncBeside(b *testing.B) {
	for _, n := range []int{1, 2, 3} {
		b.Run(fmt.Sprintf("logs=%d", n), func(b *testing.B) {
			logs := make([]*Log, n)
			data := make([]byte, 1024)
			for i := range logs {
				logs[i] = openPrimed(b, Options{}, data)
			}
			stop := make(chan struct{})
			errs := make(chan error, n)
			for _, l := range logs[1:] {
				go func() {
					for z := int64(2); ; z++ {
						select {
						case <-stop:
							errs <- nil
							return
						default:
						}
						if err := l.Append(z, data); err != nil {
							errs <- err
							return
						}
						if err := l.Sync(); err != nil {
							errs <- err
							return
						}
					}
				}()
			}
			l := logs[0]
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				start := time.Now()
				if err := l.Append(int64(i+2), data); err != nil {
					b.Fatal(err)
				}
				if err := l.Sync(); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(start))
			}
			b.StopTimer()
			close(stop)
			for range logs[1:] {
				if err := <-errs; err != nil {
					b.Fatal(err)
				}
			}
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-us")
			b.ReportMetric(float64(lat[len(lat)*9/10].Microseconds()), "p90-us")
		})
	}
}

// openPrimed opens a log in a temporary directory, closed when b ends,
// with its first record (zxid 1, data) synced: the first segment exists
// before timing starts, and the spare its first Sync asked for is ready.
func openPrimed(b *testing.B, opts Options, data []byte) *Log {
	b.Helper()
	l, err := Open(vfs.OS(), b.TempDir(), opts)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { l.Close() })
	if err := l.Append(1, data); err != nil {
		b.Fatal(err)
	}
	if err := l.Sync(); err != nil {
		b.Fatal(err)
	}
	if err := awaitSpare(l); err != nil {
		b.Fatal(err)
	}
	return l
}
