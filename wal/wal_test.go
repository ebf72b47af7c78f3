package wal

import (
	"errors"
	"os"
	"slices"
	"testing"

	"github.com/corral-db/corral/vfs"
)

func TestRoundTripOS(t *testing.T) {
	dir := t.TempDir()
	l, err := Open(vfs.OS(), dir, Options{SegmentSize: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	want := makeRecs(1, 300, 0, 700)
	for i, r := range want {
		mustAppend(t, l, r)
		if i%16 == 15 {
			mustSync(t, l)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l, err = Open(vfs.OS(), dir, Options{SegmentSize: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if got := readAll(t, l, 0); !sameRecs(got, want) {
		t.Fatalf("read back %d records, want %d equal ones", len(got), len(want))
	}
	if l.LastZxid() != 300 || l.FirstZxid() != 1 {
		t.Fatalf("LastZxid %d FirstZxid %d", l.LastZxid(), l.FirstZxid())
	}
	names, _ := vfs.OS().List(dir)
	names = slices.DeleteFunc(names, func(n string) bool { _, ok := parseSegmentName(n); return !ok })
	if len(names) < 3 {
		t.Fatalf("expected several segments with 64 KiB segments, got %v", names)
	}
	for _, n := range names {
		st, err := vfs.OS().Stat(dir + "/" + n)
		if err != nil {
			t.Fatal(err)
		}
		if st.Size() < 64<<10 {
			t.Fatalf("segment %s is %d bytes; want preallocated to 64 KiB", n, st.Size())
		}
	}
}

func TestSegmentNamesAreZooKeeperStyle(t *testing.T) {
	m := newMemFS(t)
	l := mustOpen(t, m, Options{SegmentSize: 4096})
	base := int64(0x100000001)
	mustAppend(t, l, makeRecs(base, base+2, 0, 10)...)
	if err := l.Roll(); err != nil {
		t.Fatal(err)
	}
	mustAppend(t, l, makeRecs(0x1000000ab, 0x1000000ab, 0, 10)...)
	mustSync(t, l)
	if got := segmentFiles(t, m); !slices.Equal(got, []string{"log.100000001", "log.1000000ab"}) {
		t.Fatalf("segments %v", got)
	}
	l.Close()
}

func TestAppendRejectsNonIncreasingZxid(t *testing.T) {
	l := mustOpen(t, newMemFS(t), Options{SegmentSize: 1 << 16})
	defer l.Close()
	for _, z := range []int64{0, -5} {
		if err := l.Append(z, nil); !errors.Is(err, ErrOutOfOrder) {
			t.Fatalf("Append(%d) on empty log: %v, want ErrOutOfOrder", z, err)
		}
	}
	mustAppend(t, l, rec{10, nil})
	for _, z := range []int64{10, 9} {
		if err := l.Append(z, nil); !errors.Is(err, ErrOutOfOrder) {
			t.Fatalf("Append(%d) after 10: %v, want ErrOutOfOrder", z, err)
		}
	}
	if err := l.Append(11, []byte("ok")); err != nil {
		t.Fatalf("a rejected append must not break the log: %v", err)
	}
}

func TestAppendTooLarge(t *testing.T) {
	l := mustOpen(t, newMemFS(t), Options{SegmentSize: 1 << 16, MaxRecordSize: 100})
	defer l.Close()
	if err := l.Append(1, make([]byte, 101)); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("Append: %v, want ErrTooLarge", err)
	}
}

func TestRecordLargerThanSegment(t *testing.T) {
	m := newMemFS(t)
	l := mustOpen(t, m, Options{SegmentSize: 1024})
	want := []rec{{1, payload(1, 0, 100)}, {2, payload(2, 0, 5000)}, {3, payload(3, 0, 100)}}
	mustAppend(t, l, want...)
	mustSync(t, l)
	l.Close()
	m.Crash()
	l = mustOpen(t, m, Options{SegmentSize: 1024})
	defer l.Close()
	if got := readAll(t, l, 0); !sameRecs(got, want) {
		t.Fatalf("got %v", got)
	}
}

func TestCrashKeepsSyncedLosesUnsynced(t *testing.T) {
	m := newMemFS(t)
	opts := Options{SegmentSize: 1 << 20} // one segment: a roll would sync
	l := mustOpen(t, m, opts)
	synced := makeRecs(1, 100, 0, 200)
	mustAppend(t, l, synced...)
	mustSync(t, l)
	mustAppend(t, l, makeRecs(101, 130, 0, 200)...)
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	m.Crash()
	if err := l.Append(131, nil); err == nil {
		if err := l.Sync(); err == nil {
			t.Fatal("the log kept working on handles a crash invalidated")
		}
	}
	kill(l)

	l = mustOpen(t, m, opts)
	if got := readAll(t, l, 0); !sameRecs(got, synced) {
		t.Fatalf("after crash: %d records, want the %d synced", len(got), len(synced))
	}
	if l.LastZxid() != 100 {
		t.Fatalf("LastZxid = %d, want 100", l.LastZxid())
	}
	// The log continues where the durable part ended.
	more := makeRecs(101, 150, 1, 200)
	mustAppend(t, l, more...)
	mustSync(t, l)
	crash(m, l)
	l = mustOpen(t, m, opts)
	defer l.Close()
	if got := readAll(t, l, 0); !sameRecs(got, append(synced, more...)) {
		t.Fatalf("after second crash: %d records", len(got))
	}
}

func TestCrashBeforeFirstSyncLeavesEmptyLog(t *testing.T) {
	m := newMemFS(t)
	l := mustOpen(t, m, Options{SegmentSize: 1 << 16})
	mustAppend(t, l, makeRecs(1, 10, 0, 50)...)
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	crash(m, l)
	l = mustOpen(t, m, Options{SegmentSize: 1 << 16})
	defer l.Close()
	if got := readAll(t, l, 0); len(got) != 0 || l.LastZxid() != 0 {
		t.Fatalf("got %v, LastZxid %d", got, l.LastZxid())
	}
	mustAppend(t, l, makeRecs(1, 3, 1, 50)...)
	mustSync(t, l)
}

func TestReadFromAcrossSegments(t *testing.T) {
	m := newMemFS(t)
	l := mustOpen(t, m, Options{SegmentSize: 2048})
	defer l.Close()
	all := makeRecs(1, 200, 0, 100)
	mustAppend(t, l, all...)
	// Unflushed records are visible to ReadFrom too.
	if got := readAll(t, l, 57); !sameRecs(got, all[56:]) {
		t.Fatalf("ReadFrom(57): %d records", len(got))
	}
	if got := readAll(t, l, 0); !sameRecs(got, all) {
		t.Fatalf("ReadFrom(0): %d records", len(got))
	}
	if got := readAll(t, l, 201); len(got) != 0 {
		t.Fatalf("ReadFrom(201): %v", got)
	}
	if n := len(segmentFiles(t, m)); n < 5 {
		t.Fatalf("only %d segments", n)
	}
	stop := errors.New("stop")
	var seen []int64
	err := l.ReadFrom(10, func(z int64, _ []byte) error {
		seen = append(seen, z)
		if z == 12 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || !slices.Equal(seen, []int64{10, 11, 12}) {
		t.Fatalf("early stop: %v, %v", err, seen)
	}
}

func TestReadFromSkipsZxidGaps(t *testing.T) {
	l := mustOpen(t, newMemFS(t), Options{SegmentSize: 1024})
	defer l.Close()
	want := []rec{{0x100000001, []byte("a")}, {0x100000002, []byte("b")}, {0x200000001, []byte("c")}}
	mustAppend(t, l, want...)
	if got := readAll(t, l, 0x100000003); !sameRecs(got, want[2:]) {
		t.Fatalf("got %v", got)
	}
}

func TestRoll(t *testing.T) {
	m := newMemFS(t)
	l := mustOpen(t, m, Options{SegmentSize: 1 << 16})
	defer l.Close()
	mustAppend(t, l, makeRecs(1, 5, 0, 10)...)
	if err := l.Roll(); err != nil {
		t.Fatal(err)
	}
	if err := l.Roll(); err != nil { // rolling with nothing new is a no-op
		t.Fatal(err)
	}
	mustAppend(t, l, makeRecs(6, 7, 0, 10)...)
	mustSync(t, l)
	if got := segmentFiles(t, m); !slices.Equal(got, []string{"log.1", "log.6"}) {
		t.Fatalf("segments %v", got)
	}
}

func TestPurgeBefore(t *testing.T) {
	m := newMemFS(t)
	opts := Options{SegmentSize: 1024}
	l := mustOpen(t, m, opts)
	all := makeRecs(1, 100, 0, 100)
	mustAppend(t, l, all...)
	mustSync(t, l)
	before := len(segmentFiles(t, m))

	if err := l.PurgeBefore(50); err != nil {
		t.Fatal(err)
	}
	after := len(segmentFiles(t, m))
	if after >= before {
		t.Fatalf("PurgeBefore removed nothing: %d -> %d segments", before, after)
	}
	if first := l.FirstZxid(); first > 50 {
		t.Fatalf("FirstZxid %d: the segment holding 50 was removed", first)
	}
	if got := readAll(t, l, 50); !sameRecs(got, all[49:]) {
		t.Fatalf("records >= 50 lost: %d left", len(got))
	}
	// Purging everything keeps the last segment.
	if err := l.PurgeBefore(1000); err != nil {
		t.Fatal(err)
	}
	if n := len(segmentFiles(t, m)); n != 1 {
		t.Fatalf("%d segments after purging everything, want 1", n)
	}
	if l.LastZxid() != 100 {
		t.Fatalf("LastZxid %d", l.LastZxid())
	}
	l.Close()
	// The purge is durable.
	m.Crash()
	if n := len(segmentFiles(t, m)); n != 1 {
		t.Fatalf("%d segments after crash, want 1", n)
	}
	l = mustOpen(t, m, opts)
	defer l.Close()
	if got := readAll(t, l, 0); len(got) == 0 || got[len(got)-1].zxid != 100 {
		t.Fatalf("after purge and reopen: %v", got)
	}
}

func TestTruncateAfter(t *testing.T) {
	for _, cut := range []int64{0, 1, 37, 99, 100, 150} {
		m := newMemFS(t)
		opts := Options{SegmentSize: 1024}
		l := mustOpen(t, m, opts)
		all := makeRecs(1, 100, 0, 100)
		mustAppend(t, l, all...)
		mustSync(t, l)
		mustAppend(t, l, makeRecs(101, 110, 0, 100)...) // buffered, not synced
		if err := l.TruncateAfter(cut); err != nil {
			t.Fatalf("TruncateAfter(%d): %v", cut, err)
		}
		keep := all[:min(cut, 110)]
		if cut > 100 {
			keep = makeRecs(1, min(cut, 110), 0, 100)
		}
		if got := readAll(t, l, 0); !sameRecs(got, keep) {
			t.Fatalf("cut %d: %d records left, want %d", cut, len(got), len(keep))
		}
		wantLast := min(cut, 110)
		if l.LastZxid() != wantLast {
			t.Fatalf("cut %d: LastZxid %d", cut, l.LastZxid())
		}
		// Append after the cut with new content, crash, reopen.
		more := makeRecs(wantLast+1, wantLast+20, 1, 100)
		mustAppend(t, l, more...)
		mustSync(t, l)
		crash(m, l)
		l = mustOpen(t, m, opts)
		if got := readAll(t, l, 0); !sameRecs(got, append(slices.Clone(keep), more...)) {
			t.Fatalf("cut %d: after append, crash, reopen: %v", cut, got)
		}
		l.Close()
	}
}

func TestTruncateAfterIsDurable(t *testing.T) {
	m := newMemFS(t)
	opts := Options{SegmentSize: 1024}
	l := mustOpen(t, m, opts)
	mustAppend(t, l, makeRecs(1, 100, 0, 100)...)
	mustSync(t, l)
	if err := l.TruncateAfter(42); err != nil {
		t.Fatal(err)
	}
	crash(m, l) // no Sync: TruncateAfter itself must be durable
	l = mustOpen(t, m, opts)
	defer l.Close()
	if l.LastZxid() != 42 {
		t.Fatalf("truncated records came back: LastZxid %d", l.LastZxid())
	}
}

func TestCloseTwice(t *testing.T) {
	l := mustOpen(t, newMemFS(t), Options{SegmentSize: 1 << 16})
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); !errors.Is(err, ErrClosed) {
		t.Fatalf("second Close: %v", err)
	}
	if err := l.Append(1, nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("Append after Close: %v", err)
	}
}

func TestOpenCreatesDirectory(t *testing.T) {
	dir := t.TempDir() + "/a/b"
	l, err := Open(vfs.OS(), dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	if _, err := os.Stat(dir); err != nil {
		t.Fatal(err)
	}
}

// TestConcurrentReadFrom reads while another goroutine appends and syncs;
// every read must see a prefix of the appended records.
func TestConcurrentReadFrom(t *testing.T) {
	l := mustOpen(t, newMemFS(t), Options{SegmentSize: 4096, BufferSize: 512})
	defer l.Close()
	all := makeRecs(1, 1000, 0, 40)
	done := make(chan error, 1)
	go func() {
		for i, r := range all {
			if err := l.Append(r.zxid, r.data); err != nil {
				done <- err
				return
			}
			if i%10 == 9 {
				if err := l.Sync(); err != nil {
					done <- err
					return
				}
			}
		}
		done <- nil
	}()
	for reads := 0; reads < 200; reads++ {
		got := readAll(t, l, 1)
		if !sameRecs(got, all[:len(got)]) {
			t.Fatalf("read %d: %d records, not a prefix of the appended ones", reads, len(got))
		}
		if len(got) == len(all) {
			break
		}
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, l, 1); !sameRecs(got, all) {
		t.Fatalf("final read: %d records", len(got))
	}
}
