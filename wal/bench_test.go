package wal

import (
	"fmt"
	"testing"

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
// record; ns/op is the amortised cost of making a record durable.
func BenchmarkAppendSync(b *testing.B) {
	for _, batch := range []int{1, 16, 128} {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) {
			l, err := Open(vfs.OS(), b.TempDir(), Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer l.Close()
			data := make([]byte, 1024)
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			b.ResetTimer()
			syncs := 0
			for i := 0; i < b.N; i++ {
				if err := l.Append(int64(i+1), data); err != nil {
					b.Fatal(err)
				}
				if (i+1)%batch == 0 || i == b.N-1 {
					if err := l.Sync(); err != nil {
						b.Fatal(err)
					}
					syncs++
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(syncs), "ns/sync")
		})
	}
}
