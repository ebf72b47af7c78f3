package rlog

import (
	"bytes"
	"runtime"
	"testing"

	"github.com/corral-db/corral/internal/testutil"
	"github.com/corral-db/corral/vfs"
	"github.com/corral-db/corral/zab"
)

// TestMemoryPerAppend measures what a State keeps in memory per append:
// the live heap after N appends of 64 KiB applied in process (no Store:
// Apply writes each payload to the data log, which lives on disk), over
// N. The payloads are garbage once written; what stays is the log's
// sparse index. The bound is issue 24's target, 1 TiB of log per GiB of
// memory: at 64 KiB appends, 64 bytes per append. The driver's
// in-memory log (proposals until the cut) is not the State's and is not
// measured here.
func TestMemoryPerAppend(t *testing.T) {
	n := testutil.MemAppends()
	const size = 64 << 10
	opts := Options{FS: vfs.OS(), Dir: t.TempDir()}
	opts.DataLog.SegmentSize = 4 << 20 // short spare fills
	s, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	zxid := zab.Zxid(1 << 32)
	apply := func(req Mutation) {
		t.Helper()
		prop, dup, err := s.Prepare(req)
		if err != nil || dup != nil {
			t.Fatalf("prepare %v: %v %v", req.Op, err, dup)
		}
		zxid++
		if err := s.Apply([]zab.Entry{{Zxid: zxid, Data: Encode(nil, &prop)}}); err != nil {
			t.Fatal(err)
		}
	}
	apply(Mutation{Op: OpCreate, Name: "a"})
	p := bytes.Repeat([]byte{7}, size)
	const warm = 128
	// appendN applies k appends and lets the data log's flush and the
	// State's advance settle, so the heap is read between batches.
	appendN := func(k int) {
		t.Helper()
		for range k {
			apply(NewAppend("a", NoOffset, p))
		}
		if _, err := s.dl.Flush(); err != nil {
			t.Fatal(err)
		}
		s.mu.Lock()
		s.advanceLocked()
		s.mu.Unlock()
	}
	// Warm up: the first appends allocate what any log has (its index's
	// first slices, the data log's buffers).
	appendN(warm)
	before := testutil.LiveHeap()
	appendN(n)
	after := testutil.LiveHeap()
	per := float64(after-before) / float64(n)
	st, err := s.Stat("a")
	if err != nil || st.Committed != int64((n+warm)*size) {
		t.Fatalf("stat: %+v %v", st, err)
	}
	t.Logf("%d appends of %d bytes: %.2f heap bytes per append (index %d bytes), %.0f TiB of log per GiB",
		n, size, per, s.IndexBytes("a"), testutil.TiBPerGiB(per, size))
	if per > size/1024 {
		t.Errorf("%.1f heap bytes per %d-byte append: above 1 byte per KiB (1 TiB per GiB)", per, size)
	}
	runtime.KeepAlive(s)
	runtime.KeepAlive(p)
}
