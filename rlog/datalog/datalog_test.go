package datalog

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/corral-db/corral/internal/testutil"
	"github.com/corral-db/corral/vfs"
)

const dir = "dl"

func payload(r *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.IntN(256))
	}
	return b
}

type rec struct {
	pos, end Pos
	meta     Meta
	data     []byte
}

func mustOpen(t *testing.T, fsys vfs.FS, o Options) *Log {
	t.Helper()
	l, err := Open(fsys, dir, o)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func appendN(t *testing.T, l *Log, r *rand.Rand, n, maxLen int) []rec {
	t.Helper()
	var out []rec
	for i := range n {
		m := Meta{Zxid: int64(i + 1), Log: uint64(i % 3), Offset: int64(i * 100)}
		d := payload(r, 1+r.IntN(maxLen))
		p, e, err := l.Append(context.Background(), m, d)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, rec{p, e, m, d})
	}
	return out
}

func checkRecs(t *testing.T, l *Log, recs []rec) {
	t.Helper()
	for _, r := range recs {
		m, d, err := l.Read(r.pos)
		if err != nil {
			t.Fatalf("read %v: %v", r.pos, err)
		}
		if m != r.meta || !bytes.Equal(d, r.data) {
			t.Fatalf("read %v: got %+v (%d bytes), want %+v (%d bytes)", r.pos, m, len(d), r.meta, len(r.data))
		}
	}
}

func TestAppendReadReopen(t *testing.T) {
	mem := vfs.NewMem()
	r := rand.New(rand.NewPCG(1, 2))
	l := mustOpen(t, mem, Options{SegmentSize: 4096})
	recs := appendN(t, l, r, 200, 500)
	if err := l.WaitSynced(context.Background(), recs[len(recs)-1].end); err != nil {
		t.Fatal(err)
	}
	checkRecs(t, l, recs)
	if n := len(l.Segments()); n < 10 {
		t.Fatalf("%d segments, want many with 4 KiB segments", n)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	mem.Crash()
	var got []Pos
	l = mustOpen(t, mem, Options{SegmentSize: 4096, OnRecover: func(p Pos, m Meta, n int) { got = append(got, p) }})
	defer l.Close()
	if len(got) != len(recs) {
		t.Fatalf("recovered %d records, want %d", len(got), len(recs))
	}
	for i := range got {
		if got[i] != recs[i].pos {
			t.Fatalf("record %d recovered at %v, written at %v", i, got[i], recs[i].pos)
		}
	}
	checkRecs(t, l, recs)
	if s := l.Synced(); s != recs[len(recs)-1].end {
		t.Fatalf("synced %v after reopen, want %v", s, recs[len(recs)-1].end)
	}
	// Appending after a reopen continues where the log ended.
	more := appendN(t, l, r, 5, 100)
	checkRecs(t, l, append(recs, more...))
}

func TestLargeRecordGetsOwnSegment(t *testing.T) {
	mem := vfs.NewMem()
	r := rand.New(rand.NewPCG(3, 4))
	l := mustOpen(t, mem, Options{SegmentSize: 4096, PrepareInline: true})
	defer l.Close()
	small := appendN(t, l, r, 3, 100)
	big := payload(r, 10000)
	p, _, err := l.Append(context.Background(), Meta{Zxid: 9}, big)
	if err != nil {
		t.Fatal(err)
	}
	checkRecs(t, l, append(small, rec{pos: p, meta: Meta{Zxid: 9}, data: big}))
	if p.Seg == small[0].pos.Seg {
		t.Fatalf("10000-byte record in the 4096-byte segment %d", p.Seg)
	}
}

func TestBadInput(t *testing.T) {
	l := mustOpen(t, vfs.NewMem(), Options{SegmentSize: 1 << 16, MaxRecordSize: 100, PrepareInline: true})
	defer l.Close()
	if _, _, err := l.Append(context.Background(), Meta{}, nil); !errors.Is(err, ErrEmpty) {
		t.Fatalf("empty append: %v", err)
	}
	if _, _, err := l.Append(context.Background(), Meta{}, make([]byte, 101)); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("large append: %v", err)
	}
	for _, p := range []Pos{{}, {Seg: 1, Off: 0}, {Seg: 1, Off: 1 << 40}, {Seg: 7, Off: 32}} {
		if _, _, err := l.Read(p); !errors.Is(err, ErrNotFound) {
			t.Fatalf("read %v of an empty log: %v", p, err)
		}
	}
	p, _, err := l.Append(context.Background(), Meta{Zxid: 1}, []byte("hello"))
	if err != nil {
		t.Fatal(err)
	}
	// A position inside a record is not a record.
	if _, _, err := l.Read(Pos{p.Seg, p.Off + 3}); err == nil {
		t.Fatal("read in the middle of a record succeeded")
	}
}

func TestBackPressure(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	l := mustOpen(t, vfs.NewMem(), Options{SegmentSize: 1 << 16, MaxInflight: 1000, NoFlusher: true, PrepareInline: true})
	defer l.Close()
	appendN(t, l, r, 3, 200) // at most 3*(200+32) = 696 bytes
	for l.Inflight()+RecordSize(300) <= 1000 {
		appendN(t, l, r, 1, 1)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := l.Append(ctx, Meta{}, make([]byte, 300)); !errors.Is(err, context.Canceled) {
		t.Fatalf("append beyond the in-flight bound: %v, want it to wait (and see its context end)", err)
	}
	if l.Inflight() > 1000 {
		t.Fatalf("in flight %d above the bound", l.Inflight())
	}
	if _, err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	if l.Inflight() != 0 {
		t.Fatalf("in flight %d after a flush", l.Inflight())
	}
	if _, _, err := l.Append(ctx, Meta{}, make([]byte, 300)); err != nil {
		t.Fatalf("append after the flush: %v", err)
	}
	// A record above the bound goes alone.
	if _, err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := l.Append(ctx, Meta{}, make([]byte, 2000)); err != nil {
		t.Fatalf("oversized append with nothing in flight: %v", err)
	}
}

func TestTornTailCut(t *testing.T) {
	mem := vfs.NewMem()
	r := rand.New(rand.NewPCG(7, 8))
	l := mustOpen(t, mem, Options{SegmentSize: 1 << 16, PrepareInline: true})
	recs := appendN(t, l, r, 10, 300)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	// Damage the last record's payload.
	last := recs[len(recs)-1]
	f, err := mem.OpenFile(filepath.Join(dir, segmentName(last.pos.Seg)), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteAt([]byte{0xff}, last.pos.Off+recordHeaderSize+1)
	f.Sync()
	f.Close()
	var logBuf bytes.Buffer
	l = mustOpen(t, mem, Options{SegmentSize: 1 << 16, PrepareInline: true, Logger: slog.New(slog.NewTextHandler(&logBuf, nil))})
	defer l.Close()
	checkRecs(t, l, recs[:len(recs)-1])
	if _, _, err := l.Read(last.pos); err == nil {
		t.Fatal("the torn record still reads")
	}
	if s := l.Synced(); s != last.pos {
		t.Fatalf("synced %v, want the cut at %v", s, last.pos)
	}
	want := fmt.Sprintf("offset=%d", last.pos.Off)
	if !strings.Contains(logBuf.String(), "cut torn tail") || !strings.Contains(logBuf.String(), want) {
		t.Fatalf("log %q does not report the cut at %s", logBuf.String(), want)
	}
}

func TestCorruptionBeforeTailStops(t *testing.T) {
	mem := vfs.NewMem()
	r := rand.New(rand.NewPCG(9, 10))
	l := mustOpen(t, mem, Options{SegmentSize: 4096, PrepareInline: true})
	recs := appendN(t, l, r, 40, 300)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	victim := recs[2]
	if victim.pos.Seg == recs[len(recs)-1].pos.Seg {
		t.Fatal("test needs the victim outside the last segment")
	}
	name := filepath.Join(dir, segmentName(victim.pos.Seg))
	f, _ := mem.OpenFile(name, os.O_RDWR, 0)
	f.WriteAt([]byte{0xee}, victim.pos.Off+recordHeaderSize)
	f.Sync()
	f.Close()
	_, err := Open(mem, dir, Options{SegmentSize: 4096, PrepareInline: true})
	if !errors.Is(err, ErrCorrupt) {
		t.Fatalf("open over a corrupt middle segment: %v", err)
	}
	msg := err.Error()
	if !strings.Contains(msg, segmentName(victim.pos.Seg)) || !strings.Contains(msg, fmt.Sprintf("offset %d", victim.pos.Off)) {
		t.Fatalf("error %q does not name %s and offset %d", msg, segmentName(victim.pos.Seg), victim.pos.Off)
	}
}

func TestReleaseDropsSegments(t *testing.T) {
	mem := vfs.NewMem()
	r := rand.New(rand.NewPCG(11, 12))
	l := mustOpen(t, mem, Options{SegmentSize: 4096, PrepareInline: true})
	defer l.Close()
	recs := appendN(t, l, r, 50, 300)
	before := len(l.Segments())
	first := recs[0].pos.Seg
	for _, rc := range recs {
		if rc.pos.Seg == first {
			if err := l.Release(rc.pos.Seg, RecordSize(len(rc.data))); err != nil {
				t.Fatal(err)
			}
		}
	}
	if ok, _ := vfs.Exists(mem, filepath.Join(dir, segmentName(first))); ok {
		t.Fatalf("segment %d still exists after all its records were released", first)
	}
	if after := len(l.Segments()); after != before-1 {
		t.Fatalf("%d segments after the release, want %d", after, before-1)
	}
	if _, _, err := l.Read(recs[0].pos); !errors.Is(err, ErrNotFound) {
		t.Fatalf("read of a dropped segment: %v", err)
	}
	var rest []rec
	for _, rc := range recs {
		if rc.pos.Seg != first {
			rest = append(rest, rc)
		}
	}
	checkRecs(t, l, rest)
	l.Close()
	mem.Crash()
	l = mustOpen(t, mem, Options{SegmentSize: 4096, PrepareInline: true})
	checkRecs(t, l, rest)
}

func TestCut(t *testing.T) {
	mem := vfs.NewMem()
	r := rand.New(rand.NewPCG(13, 14))
	l := mustOpen(t, mem, Options{SegmentSize: 4096, PrepareInline: true})
	recs := appendN(t, l, r, 50, 300)
	k := 20
	if err := l.Cut(recs[k].pos); err != nil {
		t.Fatal(err)
	}
	checkRecs(t, l, recs[:k])
	for _, rc := range recs[k:] {
		if _, _, err := l.Read(rc.pos); err == nil {
			t.Fatalf("record %v readable after the cut", rc.pos)
		}
	}
	more := appendN(t, l, r, 10, 300)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	mem.Crash()
	n := 0
	l = mustOpen(t, mem, Options{SegmentSize: 4096, PrepareInline: true, OnRecover: func(Pos, Meta, int) { n++ }})
	defer l.Close()
	if n != k+len(more) {
		t.Fatalf("recovered %d records after the cut and 10 more, want %d", n, k+len(more))
	}
	checkRecs(t, l, append(recs[:k:k], more...))
}

// TestFlusherSyncsWhenDue: the flusher syncs for a waiter at once, by
// itself once SyncBytes are in flight, and after SyncDelay otherwise;
// every record it reports synced is one written before.
func TestFlusherSyncsWhenDue(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	ctx := context.Background()
	t.Run("waiter", func(t *testing.T) {
		l := mustOpen(t, vfs.NewMem(), Options{SyncBytes: 1 << 20, SyncDelay: time.Hour})
		defer l.Close()
		_, end, err := l.Append(ctx, Meta{Zxid: 1}, payload(r, 1000))
		if err != nil {
			t.Fatal(err)
		}
		if err := l.WaitSynced(ctx, end); err != nil {
			t.Fatal(err)
		}
		if l.Synced().Less(end) {
			t.Fatalf("WaitSynced returned with %v synced, want %v", l.Synced(), end)
		}
	})
	t.Run("bytes", func(t *testing.T) {
		l := mustOpen(t, vfs.NewMem(), Options{SyncBytes: 16 << 10, SyncDelay: time.Hour})
		defer l.Close()
		var end Pos
		for i := range 5 {
			var err error
			if _, end, err = l.Append(ctx, Meta{Zxid: int64(i + 1)}, payload(r, 4<<10)); err != nil {
				t.Fatal(err)
			}
		}
		testutil.Eventually(t, 10*time.Second, "the flusher syncs once SyncBytes are in flight", func() bool {
			return !l.Synced().Less(end) || l.Inflight() < 16<<10
		})
	})
	t.Run("delay", func(t *testing.T) {
		l := mustOpen(t, vfs.NewMem(), Options{SyncBytes: 1 << 20, SyncDelay: time.Millisecond})
		defer l.Close()
		_, end, err := l.Append(ctx, Meta{Zxid: 1}, payload(r, 1000))
		if err != nil {
			t.Fatal(err)
		}
		testutil.Eventually(t, 10*time.Second, "the flusher syncs after SyncDelay", func() bool {
			return !l.Synced().Less(end)
		})
	})
}

// TestFailedSpareRemoved: a spare whose allocation fails (the disk is
// full) is removed, so its partly allocated blocks do not hold the disk's
// last free space.
func TestFailedSpareRemoved(t *testing.T) {
	mem := vfs.NewMem()
	if err := mem.MkdirAll("/d", 0o755); err != nil {
		t.Fatal(err)
	}
	ff := vfs.NewFaultFS(mem)
	ff.Inject(vfs.Fault{Op: vfs.OpPreallocate, Path: spareName, Err: syscall.ENOSPC})
	if err := prepareSpare(ff, "/d", 4096, nil); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("prepareSpare on a full disk: %v, want ENOSPC", err)
	}
	if ok, err := vfs.Exists(mem, filepath.Join("/d", spareName)); ok || err != nil {
		t.Fatalf("spare left after a failed allocation (%v)", err)
	}
	if err := prepareSpare(ff, "/d", 4096, nil); err != nil {
		t.Fatal(err)
	}
}

// spaceFS reports avail bytes free (vfs.SpaceReporter).
type spaceFS struct {
	vfs.FS
	avail int64
}

func (s spaceFS) Available(string) (int64, error) { return s.avail, nil }

// TestSpareNeedsRoom: with less room than a segment the spare fails with
// ENOSPC before any allocation, and a spare left before is removed.
func TestSpareNeedsRoom(t *testing.T) {
	mem := vfs.NewMem()
	if err := mem.MkdirAll("/d", 0o755); err != nil {
		t.Fatal(err)
	}
	ff := vfs.NewFaultFS(mem)
	if err := prepareSpare(ff, "/d", 4096, nil); err != nil {
		t.Fatal(err)
	}
	err := prepareSpare(spaceFS{FS: ff, avail: 4095}, "/d", 4096, nil)
	if !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), "4095 bytes available") {
		t.Fatalf("prepareSpare with 4095 B free: %v, want ENOSPC naming the room", err)
	}
	if n := ff.Calls(vfs.OpPreallocate); n != 1 {
		t.Fatalf("%d allocations, want the first one only", n)
	}
	if ok, err := vfs.Exists(mem, filepath.Join("/d", spareName)); ok || err != nil {
		t.Fatalf("the earlier spare is still there (%v)", err)
	}
}
