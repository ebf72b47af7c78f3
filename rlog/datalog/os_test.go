package datalog

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/corral-db/corral/vfs"
)

// TestOSSegmentsPreallocated runs the log on the real file system, where
// a spare is allocated with fallocate rather than written: every segment
// and the spare have their full size before a record is in them, the
// unwritten tail reads as zeros (so reopening finds the segment's end and
// no torn tail), and a torn tail written into that tail is cut.
func TestOSSegmentsPreallocated(t *testing.T) {
	fsys := vfs.OS()
	d := filepath.Join(t.TempDir(), "dl")
	const segSize = 256 << 10
	o := Options{SegmentSize: segSize}
	l, err := Open(fsys, d, o)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(3, 4))
	recs := appendN(t, l, r, 40, 20<<10) // about 400 KiB: two segments or more
	if _, err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	last := recs[len(recs)-1]
	if last.pos.Seg < 2 {
		t.Fatalf("the records fit in one segment (last at %v)", last.pos)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	names, err := fsys.List(d)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		if _, ok := parseSegmentName(name); !ok {
			continue
		}
		st, err := fsys.Stat(filepath.Join(d, name))
		if err != nil {
			t.Fatal(err)
		}
		if st.Size() != segSize {
			t.Errorf("%s is %d bytes, want the preallocated %d", name, st.Size(), segSize)
		}
	}

	l, err = Open(fsys, d, o)
	if err != nil {
		t.Fatal(err)
	}
	checkRecs(t, l, recs)
	if s := l.Synced(); s != last.end {
		t.Fatalf("synced %v after reopen, want the last record's end %v", s, last.end)
	}
	more := appendN(t, l, r, 5, 20<<10)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}

	// Garbage past the last record, in the allocated but never written
	// part of the last segment: a torn tail, cut at reopen.
	tail := more[len(more)-1]
	f, err := fsys.OpenFile(filepath.Join(d, segmentName(tail.end.Seg)), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte{1, 2, 3}, tail.end.Off+100); err != nil {
		t.Fatal(err)
	}
	f.Close()
	l, err = Open(fsys, d, o)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	checkRecs(t, l, append(recs, more...))
	if s := l.Synced(); s != tail.end {
		t.Fatalf("synced %v after the cut, want %v", s, tail.end)
	}
}
