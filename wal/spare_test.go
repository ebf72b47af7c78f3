package wal

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/corral-db/corral/internal/testutil"
	"github.com/corral-db/corral/vfs"
)

// zeroCheckFS wraps an FS and checks the invariant the spare exists for:
// every write of a non-zero byte (a header or a record) goes to a segment,
// at offsets that were already written with zeros and synced, so that the
// write changes no metadata. It also records renames.
type zeroCheckFS struct {
	vfs.FS
	mu      sync.Mutex
	files   map[string]*zeroState // by current path
	bad     []string
	renames []string
}

// zeroState is what zeroCheckFS knows of one file: [0, written) has been
// written with zeros (or over them), [0, synced) durably so.
type zeroState struct {
	name            string
	written, synced int64
}

func newZeroCheckFS(inner vfs.FS) *zeroCheckFS {
	return &zeroCheckFS{FS: inner, files: map[string]*zeroState{}}
}

func (c *zeroCheckFS) violations() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.bad)
}

func (c *zeroCheckFS) renamed() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.renames)
}

func (c *zeroCheckFS) OpenFile(name string, flag int, perm fs.FileMode) (vfs.File, error) {
	existed, err := vfs.Exists(c.FS, name)
	if err != nil {
		return nil, err
	}
	f, err := c.FS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.files[name]
	if st == nil || !existed || flag&os.O_TRUNC != 0 {
		// A file the checker did not see created counts as never zeroed.
		st = &zeroState{name: name}
		c.files[name] = st
	}
	return &zeroCheckFile{File: f, c: c, st: st}, nil
}

func (c *zeroCheckFS) Create(name string) (vfs.File, error) {
	return c.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
}

func (c *zeroCheckFS) Open(name string) (vfs.File, error) { return c.OpenFile(name, os.O_RDONLY, 0) }

func (c *zeroCheckFS) Rename(oldname, newname string) error {
	if err := c.FS.Rename(oldname, newname); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.renames = append(c.renames, filepath.Base(oldname)+"->"+filepath.Base(newname))
	if st := c.files[oldname]; st != nil {
		delete(c.files, oldname)
		st.name = newname
		c.files[newname] = st
	}
	return nil
}

func (c *zeroCheckFS) Remove(name string) error {
	if err := c.FS.Remove(name); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.files, name)
	return nil
}

type zeroCheckFile struct {
	vfs.File
	c  *zeroCheckFS
	st *zeroState
}

func (f *zeroCheckFile) WriteAt(p []byte, off int64) (int, error) {
	f.c.mu.Lock()
	end := off + int64(len(p))
	if slices.ContainsFunc(p, func(b byte) bool { return b != 0 }) {
		_, isSeg := parseSegmentName(filepath.Base(f.st.name))
		if !isSeg || end > f.st.synced {
			f.c.bad = append(f.c.bad, fmt.Sprintf("%s: data at [%d, %d), zeros synced up to %d",
				filepath.Base(f.st.name), off, end, f.st.synced))
		}
	} else if off <= f.st.written {
		f.st.written = max(f.st.written, end)
	}
	f.c.mu.Unlock()
	return f.File.WriteAt(p, off)
}

func (f *zeroCheckFile) Write(p []byte) (int, error) {
	f.c.mu.Lock()
	f.c.bad = append(f.c.bad, filepath.Base(f.st.name)+": sequential write") // the log writes at offsets
	f.c.mu.Unlock()
	return f.File.Write(p)
}

func (f *zeroCheckFile) Sync() error {
	err := f.File.Sync()
	if err == nil {
		f.c.mu.Lock()
		f.st.synced = f.st.written
		f.c.mu.Unlock()
	}
	return err
}

func (f *zeroCheckFile) Truncate(size int64) error {
	f.c.mu.Lock()
	f.st.written = min(f.st.written, size)
	f.st.synced = min(f.st.synced, size)
	f.c.mu.Unlock()
	return f.File.Truncate(size)
}

func (f *zeroCheckFile) Preallocate(size int64) error {
	f.c.mu.Lock()
	f.c.bad = append(f.c.bad, filepath.Base(f.st.name)+": preallocate") // the log must not rely on it
	f.c.mu.Unlock()
	return f.File.Preallocate(size)
}

// TestZeroCheckFSCatches is the control for the checker: it flags a record
// written to a fresh file, to zeros not yet synced, and to a spare.
func TestZeroCheckFSCatches(t *testing.T) {
	m := newMemFS(t)
	c := newZeroCheckFS(m)
	f, _ := c.Create(filepath.Join(testDir, "log.1"))
	f.WriteAt([]byte("x"), 0) // never zeroed
	f.WriteAt(make([]byte, 100), 0)
	f.WriteAt([]byte("x"), 1) // zeroed, not synced
	f.Sync()
	f.WriteAt([]byte("x"), 2)   // fine
	f.WriteAt([]byte("x"), 100) // past the zeros
	f.Close()
	g, _ := c.Create(filepath.Join(testDir, spareName))
	g.WriteAt(make([]byte, 100), 0)
	g.Sync()
	g.WriteAt([]byte("x"), 3) // not a segment
	g.Close()
	if got := c.violations(); len(got) != 4 {
		t.Fatalf("violations %q, want 4", got)
	}
}

// TestRecordsLandOnlyInZeroFilledSyncedSegments runs appends, syncs, rolls,
// oversized records, truncation, purging, reopening and tail repair, and
// checks that no header or record byte is ever written where zeros were
// not already written and synced, nor into anything but a segment.
func TestRecordsLandOnlyInZeroFilledSyncedSegments(t *testing.T) {
	for _, inline := range []bool{true, false} {
		t.Run(fmt.Sprintf("inline=%v", inline), func(t *testing.T) {
			m := newMemFS(t)
			c := newZeroCheckFS(m)
			opts := Options{SegmentSize: 4096, BufferSize: 700, PrepareInline: inline}
			l := mustOpen(t, c, opts)
			var want []rec
			z := int64(0)
			add := func(n, size int) {
				for range n {
					z++
					r := rec{z, payload(z, 0, size)}
					mustAppend(t, l, r)
					want = append(want, r)
				}
			}
			add(50, 100) // several rolls
			mustSync(t, l)
			add(3, 10)
			if err := l.Roll(); err != nil {
				t.Fatal(err)
			}
			add(1, 9000) // larger than a segment: a grown spare
			add(20, 100)
			mustSync(t, l)
			if err := l.TruncateAfter(z - 5); err != nil {
				t.Fatal(err)
			}
			z -= 5
			want = want[:len(want)-5]
			add(10, 200)
			if err := l.PurgeBefore(20); err != nil {
				t.Fatal(err)
			}
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			// Stale bytes after the tail's last record: Open zeroes them.
			tail := segmentFiles(t, m)
			f, _ := m.OpenFile(filepath.Join(testDir, tail[len(tail)-1]), os.O_RDWR, 0)
			f.WriteAt([]byte("stale"), 4000)
			f.Sync()
			f.Close()
			l = mustOpen(t, c, opts)
			add(100, 100)
			mustSync(t, l)
			got := readAll(t, l, 0)
			if !sameRecs(got, want[len(want)-len(got):]) || got[len(got)-1].zxid != z {
				t.Fatalf("read back %v", got)
			}
			st := l.Stats()
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			if st.Segments < 3 {
				t.Fatalf("only %d segments created since the reopen", st.Segments)
			}
			if bad := c.violations(); len(bad) != 0 {
				t.Fatalf("records written where zeros were not durable:\n%q", bad)
			}
		})
	}
}

// TestRollUsesSpare checks that every segment is the spare, renamed, and
// that with background preparation a roll that comes after the spare is
// ready does not wait for a zero-fill.
func TestRollUsesSpare(t *testing.T) {
	for _, inline := range []bool{true, false} {
		t.Run(fmt.Sprintf("inline=%v", inline), func(t *testing.T) {
			m := newMemFS(t)
			c := newZeroCheckFS(m)
			const size = zeroSyncEvery + 3*zeroWrite + 100 // two synced pieces, a short last write
			l := mustOpen(t, c, Options{SegmentSize: size, PrepareInline: inline})
			defer l.Close()
			var want []string
			for i := int64(0); i < 5; i++ {
				if err := awaitSpare(l); err != nil {
					t.Fatal(err)
				}
				if !inline {
					checkSpare(t, m, size)
				}
				base := 1 + 10*i
				mustAppend(t, l, makeRecs(base, base+9, 0, 1000)...)
				mustSync(t, l)
				if err := l.Roll(); err != nil {
					t.Fatal(err)
				}
				want = append(want, spareName+"->"+segmentName(base))
			}
			if got := c.renamed(); !slices.Equal(got, want) {
				t.Fatalf("renames %q, want %q", got, want)
			}
			st := l.Stats()
			wantMisses := int64(0)
			if inline {
				wantMisses = 5
			}
			if st.Segments != 5 || st.SpareMisses != wantMisses {
				t.Fatalf("stats %+v, want 5 segments and %d misses", st, wantMisses)
			}
			if got := readAll(t, l, 0); len(got) != 50 {
				t.Fatalf("%d records", len(got))
			}
			if bad := c.violations(); len(bad) != 0 {
				t.Fatalf("%q", bad)
			}
		})
	}
}

// checkSpare checks that the spare exists, durably, with size zero bytes.
func checkSpare(t *testing.T, m *vfs.MemFS, size int64) {
	t.Helper()
	f, err := m.Open(filepath.Join(testDir, spareName))
	if err != nil {
		t.Fatalf("no spare: %v", err)
	}
	defer f.Close()
	if n, _ := f.Size(); n != size {
		t.Fatalf("spare is %d bytes, want %d", n, size)
	}
	if end, err := vfs.DirtyEnd(f, 0, size); err != nil || end != 0 {
		t.Fatalf("spare not all zeros: %d, %v", end, err)
	}
}

// TestBackgroundFailureFallsBackInline: when the preparer fails, the roll
// prepares the spare itself, counts a miss, and later rolls use the
// background again.
func TestBackgroundFailureFallsBackInline(t *testing.T) {
	m := newMemFS(t)
	ff := vfs.NewFaultFS(m)
	ff.Inject(vfs.Fault{Op: vfs.OpWrite, Path: spareName}) // the preparer's first write
	var logs logBuffer
	l := mustOpen(t, ff, Options{SegmentSize: 4096, Logger: logs.logger()})
	defer l.Close()
	mustAppend(t, l, makeRecs(1, 5, 0, 100)...)
	mustSync(t, l)
	if st := l.Stats(); st.Segments != 1 || st.SpareMisses != 1 {
		t.Fatalf("stats %+v, want 1 segment, 1 miss", st)
	}
	if !logs.contains("preparing it inline") || !logs.contains(vfs.ErrInjected.Error()) {
		t.Fatalf("failure not logged:\n%s", logs.String())
	}
	if err := awaitSpare(l); err != nil { // asked for by the Sync; succeeds
		t.Fatal(err)
	}
	if err := l.Roll(); err != nil {
		t.Fatal(err)
	}
	mustAppend(t, l, makeRecs(6, 10, 0, 100)...)
	mustSync(t, l)
	if st := l.Stats(); st.Segments != 2 || st.SpareMisses != 1 {
		t.Fatalf("stats %+v, want 2 segments, still 1 miss", st)
	}
	if got := readAll(t, l, 0); !sameRecs(got, makeRecs(1, 10, 0, 100)) {
		t.Fatalf("got %v", got)
	}
}

// gateFS blocks the nth write to the spare (counting from 1, across
// preparations) until release is closed; hit is closed when it arrives.
type gateFS struct {
	vfs.FS
	n       int
	hit     chan struct{}
	release chan struct{}

	mu     sync.Mutex
	writes int
	// dead makes Remove fail: the process has crashed, and nothing it
	// does after that reaches the disk.
	dead bool
}

func (g *gateFS) Remove(name string) error {
	g.mu.Lock()
	dead := g.dead
	g.mu.Unlock()
	if dead {
		return errors.New("gateFS: the process is dead")
	}
	return g.FS.Remove(name)
}

func newGateFS(inner vfs.FS, n int) *gateFS {
	return &gateFS{FS: inner, n: n, hit: make(chan struct{}), release: make(chan struct{})}
}

func (g *gateFS) spareWrites() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.writes
}

func (g *gateFS) OpenFile(name string, flag int, perm fs.FileMode) (vfs.File, error) {
	f, err := g.FS.OpenFile(name, flag, perm)
	if err != nil || filepath.Base(name) != spareName {
		return f, err
	}
	return &gateFile{File: f, g: g}, nil
}

func (g *gateFS) Create(name string) (vfs.File, error) {
	return g.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
}

func (g *gateFS) Open(name string) (vfs.File, error) { return g.OpenFile(name, os.O_RDONLY, 0) }

type gateFile struct {
	vfs.File
	g *gateFS
}

func (f *gateFile) WriteAt(p []byte, off int64) (int, error) {
	f.g.mu.Lock()
	f.g.writes++
	k := f.g.writes
	f.g.mu.Unlock()
	if k == f.g.n {
		close(f.g.hit)
		<-f.g.release
	}
	return f.File.WriteAt(p, off)
}

// TestCloseStopsPreparer closes a Log while its preparer is in the middle
// of a zero-fill: Close interrupts it, waits for the goroutine to return,
// and removes the half-filled spare.
func TestCloseStopsPreparer(t *testing.T) {
	m := newMemFS(t)
	g := newGateFS(m, 2)
	l := mustOpen(t, g, Options{SegmentSize: 8 << 20})
	<-g.hit // the preparer is in its second write of many
	p := l.prep
	closed := make(chan error, 1)
	go func() { closed <- l.Close() }()
	<-p.stop // Close asked the preparer to stop, and waits for it
	close(g.release)
	if err := <-closed; err != nil {
		t.Fatalf("Close: %v", err)
	}
	select {
	case <-p.done:
	default:
		t.Fatal("the preparer goroutine outlived Close")
	}
	if n := g.spareWrites(); n != 2 {
		t.Fatalf("the preparer made %d writes; it was stopped in the second", n)
	}
	if ok, _ := vfs.Exists(m, filepath.Join(testDir, spareName)); ok {
		t.Fatal("Close left the half-filled spare")
	}
}

// TestCloseStopsIdlePreparer opens and closes many logs, each with a
// preparer that finished its work, and checks that no goroutine is left.
func TestCloseStopsIdlePreparer(t *testing.T) {
	m := newMemFS(t)
	before := runtime.NumGoroutine()
	for i := 0; i < 50; i++ {
		l := mustOpen(t, m, Options{SegmentSize: 4096})
		p := l.prep
		if i%2 == 0 {
			if err := awaitSpare(l); err != nil {
				t.Fatal(err)
			}
		}
		mustAppend(t, l, rec{int64(i + 1), []byte("x")})
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		select {
		case <-p.done:
		default:
			t.Fatal("the preparer goroutine outlived Close")
		}
		if ok, _ := vfs.Exists(m, filepath.Join(testDir, spareName)); ok {
			t.Fatal("Close left the spare")
		}
	}
	// A goroutine that has closed done is returning; give the scheduler a
	// moment to finish it (bounded) before counting.
	testutil.Within(time.Second, func() bool { return runtime.NumGoroutine() <= before })
	if n := runtime.NumGoroutine(); n > before {
		t.Fatalf("%d goroutines after 50 Open/Close, %d before", n, before)
	}
}

// TestOpenAfterCrashDuringPreparation crashes while the preparer is half
// way through a spare whose name is durable (another SyncDir of the
// directory came in between, as a snapshot's might): Open removes it, and
// the log, and later rolls, are unaffected.
func TestOpenAfterCrashDuringPreparation(t *testing.T) {
	m := newMemFS(t)
	const size = 4 << 20
	// Block the second spare's first write after its first synced MiB.
	g := newGateFS(m, size/zeroWrite+zeroSyncEvery/zeroWrite+1)
	opts := Options{SegmentSize: size}
	l := mustOpen(t, g, opts)
	want := makeRecs(1, 20, 0, 100)
	mustAppend(t, l, want...) // the first spare becomes log.1
	mustSync(t, l)            // and the second is asked for
	<-g.hit
	if err := m.SyncDir(testDir); err != nil {
		t.Fatal(err)
	}
	m.Crash()
	g.mu.Lock()
	g.dead = true
	g.mu.Unlock()
	close(g.release) // the preparer's write fails: its handle is from before the crash
	kill(l)

	f, err := m.Open(filepath.Join(testDir, spareName))
	if err != nil {
		t.Fatalf("the crash did not leave a half-prepared spare: %v", err)
	}
	if n, _ := f.Size(); n != zeroSyncEvery {
		t.Fatalf("the crash left a %d-byte spare, want the %d bytes synced", n, zeroSyncEvery)
	}
	f.Close()

	opts.PrepareInline = true
	l = mustOpen(t, m, opts)
	if ok, _ := vfs.Exists(m, filepath.Join(testDir, spareName)); ok {
		t.Fatal("Open kept the stale spare")
	}
	if got := readAll(t, l, 0); !sameRecs(got, want) {
		t.Fatalf("got %v", got)
	}
	more := makeRecs(21, 30, 1, 100)
	if err := l.Roll(); err != nil {
		t.Fatal(err)
	}
	mustAppend(t, l, more...)
	mustSync(t, l)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	st, err := m.Stat(filepath.Join(testDir, segmentName(21)))
	if err != nil || st.Size() != size {
		t.Fatalf("new segment: %v, %v; want a full %d-byte one", st, err, size)
	}
	m.Crash()
	l = mustOpen(t, m, opts)
	defer l.Close()
	if got := readAll(t, l, 0); !sameRecs(got, append(slices.Clone(want), more...)) {
		t.Fatalf("after reopen: %v", got)
	}
}

// TestOpenIgnoresSpareHoldingRecords: a spare can hold a header and records
// when the crash came after they were written into it but before its
// rename to a segment name was durable. They were never acknowledged, and
// a spare is never read as a segment: Open removes it.
func TestOpenIgnoresSpareHoldingRecords(t *testing.T) {
	if _, ok := parseSegmentName(spareName); ok {
		t.Fatalf("%s parses as a segment name", spareName)
	}
	m := newMemFS(t)
	opts := Options{SegmentSize: 4096, PrepareInline: true}
	l := mustOpen(t, m, opts)
	want := makeRecs(1, 10, 0, 50)
	mustAppend(t, l, want...)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	h := encodeHeader(11)
	b := appendRecord(h[:], 11, payload(11, 0, 50))
	b = appendRecord(b, 12, payload(12, 0, 50))
	f, _ := m.Create(filepath.Join(testDir, spareName))
	f.WriteAt(make([]byte, 4096), 0)
	f.WriteAt(b, 0)
	f.Sync()
	f.Close()
	m.SyncDir(testDir)

	var logs logBuffer
	opts.Logger = logs.logger()
	l = mustOpen(t, m, opts)
	if l.LastZxid() != 10 {
		t.Fatalf("LastZxid %#x: the spare was read as a segment", l.LastZxid())
	}
	if ok, _ := vfs.Exists(m, filepath.Join(testDir, spareName)); ok {
		t.Fatal("Open kept the stale spare")
	}
	if !logs.contains("removed stale spare") {
		t.Fatalf("removal not logged:\n%s", logs.String())
	}
	more := makeRecs(11, 12, 1, 50) // same zxids, new content
	mustAppend(t, l, more...)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	m.Crash()
	l = mustOpen(t, m, opts)
	defer l.Close()
	if got := readAll(t, l, 0); !sameRecs(got, append(slices.Clone(want), more...)) {
		t.Fatalf("got %v", got)
	}
}

// TestPrepareInlineStartsNoGoroutine: with PrepareInline there is no
// preparer, and nothing is prepared before a roll needs it.
func TestPrepareInlineStartsNoGoroutine(t *testing.T) {
	m := newMemFS(t)
	l := mustOpen(t, m, Options{SegmentSize: 4096, PrepareInline: true})
	defer l.Close()
	if l.prep != nil {
		t.Fatal("a preparer was started")
	}
	if ok, _ := vfs.Exists(m, filepath.Join(testDir, spareName)); ok {
		t.Fatal("a spare was prepared before it was needed")
	}
	mustAppend(t, l, rec{1, []byte("x")})
	mustSync(t, l)
	if ok, _ := vfs.Exists(m, filepath.Join(testDir, spareName)); ok {
		t.Fatal("a spare was prepared ahead")
	}
	if st := l.Stats(); st.Segments != 1 || st.SpareMisses != 1 {
		t.Fatalf("stats %+v", st)
	}
}

// spaceFS reports avail bytes free (vfs.SpaceReporter).
type spaceFS struct {
	vfs.FS
	avail int64
}

func (s spaceFS) Available(string) (int64, error) { return s.avail, nil }

// TestSpareNeedsRoom: a disk reporting less room than a segment fails the
// preparation before anything is written, with ENOSPC, and takes away a
// spare an earlier run left; with room it succeeds.
func TestSpareNeedsRoom(t *testing.T) {
	m := newMemFS(t)
	ff := vfs.NewFaultFS(m)
	old := filepath.Join(testDir, spareName)
	f, err := m.Create(old)
	if err == nil {
		_, err = f.WriteAt(make([]byte, 1000), 0)
		f.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	err = prepareSpare(spaceFS{FS: ff, avail: 4095}, testDir, 4096, nil)
	if !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), "4095 bytes available") {
		t.Fatalf("prepareSpare with 4095 B free: %v, want ENOSPC naming the room", err)
	}
	if n := ff.Calls(vfs.OpWrite); n != 0 {
		t.Fatalf("%d writes with no room", n)
	}
	if ok, _ := vfs.Exists(m, old); ok {
		t.Fatal("the old spare is still there")
	}
	if err := prepareSpare(spaceFS{FS: ff, avail: 4096}, testDir, 4096, nil); err != nil {
		t.Fatal(err)
	}
	if fi, err := m.Stat(old); err != nil || fi.Size() != 4096 {
		t.Fatalf("spare %v %v, want 4096 B", fi, err)
	}
}

// TestFullDiskLeavesNoSpare: once the disk fills under a zero-fill (in
// the background and again inline), the append that needs a new segment
// fails with the disk's error
// and no half-filled spare is left holding the last free blocks.
func TestFullDiskLeavesNoSpare(t *testing.T) {
	m := newMemFS(t)
	ff := vfs.NewFaultFS(m)
	l := mustOpen(t, ff, Options{SegmentSize: 4096})
	defer l.Close()
	mustAppend(t, l, makeRecs(1, 5, 0, 100)...)
	mustSync(t, l)
	if err := awaitSpare(l); err != nil {
		t.Fatal(err)
	}
	// The next spare's zero-fill runs out of room halfway, and so does
	// every one after it.
	ff.Inject(vfs.Fault{Op: vfs.OpWrite, Path: spareName, Sticky: true, Partial: true, Err: syscall.ENOSPC})
	if err := l.Roll(); err != nil { // takes the ready spare; asks for the next
		t.Fatal(err)
	}
	mustAppend(t, l, makeRecs(6, 10, 0, 100)...)
	mustSync(t, l)
	if err := l.Roll(); err != nil {
		t.Fatal(err)
	}
	r := makeRecs(11, 11, 0, 100)[0]
	if err := l.Append(r.zxid, r.data); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("Append into a new segment on a full disk: %v, want ENOSPC", err)
	}
	if ok, _ := vfs.Exists(m, filepath.Join(testDir, spareName)); ok {
		t.Fatal("a half-filled spare is left on the full disk")
	}
}
