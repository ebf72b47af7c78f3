package wal

import (
	"bytes"
	"errors"
	"testing"

	"github.com/corral-db/corral/vfs"
)

// TestReadAt: every record written reads back at the position AppendPos
// gave, in the current segment or a sealed one; a wrong zxid,
// a purged segment or a truncated record is ErrNoRecord; a flipped byte
// is ErrCorrupt.
func TestReadAt(t *testing.T) {
	m := newMemFS(t)
	l := mustOpen(t, m, Options{SegmentSize: 2048, BufferSize: 512})
	defer l.Close()
	all := makeRecs(1, 200, 0, 100)
	pos := make([]Pos, len(all))
	check := func(when string, from, to int) {
		t.Helper()
		for i := from; i < to; i++ {
			// With the length known, and without it (a wrong one reads
			// as the header says too).
			for _, p := range []Pos{pos[i], {Base: pos[i].Base, Off: pos[i].Off}, {Base: pos[i].Base, Off: pos[i].Off, Len: 3}} {
				got, err := l.ReadAt(p, all[i].zxid)
				if err != nil || !bytes.Equal(got, all[i].data) {
					t.Fatalf("%s: ReadAt(%v, %#x) = %d bytes, %v", when, p, all[i].zxid, len(got), err)
				}
			}
		}
	}
	for i, r := range all {
		p, err := l.AppendPos(r.zxid, r.data)
		if err != nil {
			t.Fatal(err)
		}
		pos[i] = p
		if i%7 == 0 {
			if err := l.Flush(); err != nil {
				t.Fatal(err)
			}
			check("flushed", 0, i+1)
		}
	}
	if n := len(segmentFiles(t, m)); n < 5 {
		t.Fatalf("only %d segments", n)
	}
	if err := l.Sync(); err != nil {
		t.Fatal(err)
	}
	check("synced", 0, len(all))
	if _, err := l.ReadAt(pos[10], all[11].zxid); !errors.Is(err, ErrNoRecord) {
		t.Fatalf("ReadAt with another record's zxid: %v", err)
	}
	if err := l.PurgeBefore(all[100].zxid); err != nil {
		t.Fatal(err)
	}
	if _, err := l.ReadAt(pos[0], all[0].zxid); !errors.Is(err, ErrNoRecord) {
		t.Fatalf("ReadAt in a purged segment: %v", err)
	}
	if err := l.TruncateAfter(all[150].zxid); err != nil {
		t.Fatal(err)
	}
	if _, err := l.ReadAt(pos[180], all[180].zxid); !errors.Is(err, ErrNoRecord) {
		t.Fatalf("ReadAt of a truncated record: %v", err)
	}
	check("after purge and truncation", 100, 151)

	// A flipped byte in a sealed segment's record.
	p := pos[120]
	f, err := m.OpenFile(l.path(p.Base), 2, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte{^all[120].data[5]}, p.Off+recordHeaderSize+5); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := l.closeReader(false); err != nil { // drop the cached handle's view
		t.Fatal(err)
	}
	if _, err := l.ReadAt(p, all[120].zxid); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("ReadAt of a damaged record: %v", err)
	}
}

// BenchmarkReadAt: reading back 150-byte records in order by position, as
// a learner's DIFF does (from the page cache; OS files).
func BenchmarkReadAt(b *testing.B) {
	l, err := Open(vfs.OS(), b.TempDir(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	const n = 10000
	pos := make([]Pos, n)
	data := make([]byte, 150)
	for i := range pos {
		if pos[i], err = l.AppendPos(int64(i+1), data); err != nil {
			b.Fatal(err)
		}
	}
	if err := l.Sync(); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	i := 0
	for b.Loop() {
		if _, err := l.ReadAt(pos[i%n], int64(i%n+1)); err != nil {
			b.Fatal(err)
		}
		i++
	}
}
