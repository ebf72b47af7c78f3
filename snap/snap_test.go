package snap

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/corral-db/corral/vfs"
)

const dir = "/snaps"

func newFS(t *testing.T) *vfs.MemFS {
	t.Helper()
	m := vfs.NewMem()
	if err := m.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return m
}

func body(zxid int64, size int) []byte {
	r := rand.New(rand.NewPCG(uint64(zxid), uint64(size)))
	b := make([]byte, size)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// write commits a snapshot of zxid whose body is body(zxid, size), written
// in uneven chunks.
func write(t *testing.T, fsys vfs.FS, zxid int64, size int) {
	t.Helper()
	w, err := Create(fsys, dir, zxid)
	if err != nil {
		t.Fatal(err)
	}
	b := body(zxid, size)
	for len(b) > 0 {
		n := min(len(b), 1+len(b)/3)
		if _, err := w.Write(b[:n]); err != nil {
			t.Fatal(err)
		}
		b = b[n:]
	}
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
}

// loaded is a fn for Load that records what it read.
type loaded struct {
	zxids []int64
	body  []byte
}

func (l *loaded) fn(zxid int64, r io.Reader) error {
	l.zxids = append(l.zxids, zxid)
	b, err := io.ReadAll(r)
	l.body = b
	return err
}

type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) logger() *slog.Logger { return slog.New(slog.NewTextHandler(b, nil)) }

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func list(t *testing.T, fsys vfs.FS) []string {
	t.Helper()
	names, err := fsys.List(dir)
	if err != nil {
		t.Fatal(err)
	}
	return names
}

func damage(t *testing.T, fsys vfs.FS, name string, fn func(f vfs.File, size int64)) {
	t.Helper()
	f, err := fsys.OpenFile(filepath.Join(dir, name), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	size, _ := f.Size()
	fn(f, size)
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	f.Close()
}

func flip(off int64) func(vfs.File, int64) {
	return func(f vfs.File, size int64) {
		if off < 0 {
			off += size
		}
		b := make([]byte, 1)
		f.ReadAt(b, off)
		b[0] ^= 0x01
		f.WriteAt(b, off)
	}
}

func TestRoundTrip(t *testing.T) {
	for _, size := range []int{0, 1, 1000, 1 << 20} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			m := newFS(t)
			write(t, m, 0x100000abc, size)
			infos, err := Newest(m, dir)
			if err != nil {
				t.Fatal(err)
			}
			want := Info{Name: "snapshot.100000abc", Zxid: 0x100000abc, Size: int64(size + headerSize + trailerSize)}
			if len(infos) != 1 || infos[0] != want {
				t.Fatalf("Newest = %+v, want [%+v]", infos, want)
			}
			var l loaded
			zxid, err := Load(m, dir, nil, l.fn)
			if err != nil || zxid != 0x100000abc {
				t.Fatalf("Load = %#x, %v", zxid, err)
			}
			if !bytes.Equal(l.body, body(0x100000abc, size)) {
				t.Fatal("body differs")
			}
		})
	}
}

// TestRoundTripOS writes snapshots through the operating system's file
// system, where Linux file systems with O_DIRECT take the direct path:
// sizes around the alignment and the chunk, so the padded final write and
// the truncate after it are exercised.
func TestRoundTripOS(t *testing.T) {
	for _, size := range []int{0, 1, 4096 - headerSize, 4096, directChunk - headerSize, directChunk, 3*directChunk + 17} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			d := t.TempDir()
			w, err := Create(vfs.OS(), d, 7)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("direct I/O: %v", w.direct)
			// Uneven writes, so chunks fill across Write calls.
			b := body(7, size)
			for off := 0; off < len(b); {
				n := min(len(b)-off, 1+off%70000)
				if _, err := w.Write(b[off : off+n]); err != nil {
					t.Fatal(err)
				}
				off += n
			}
			if err := w.Commit(); err != nil {
				t.Fatal(err)
			}
			var l loaded
			if zxid, err := Load(vfs.OS(), d, nil, l.fn); err != nil || zxid != 7 || !bytes.Equal(l.body, b) {
				t.Fatalf("Load = %d, %v (body %d bytes, want %d)", zxid, err, len(l.body), len(b))
			}
			if names, _ := vfs.OS().List(d); !slices.Equal(names, []string{"snapshot.7"}) {
				t.Fatalf("files %v", names)
			}
			st, err := os.Stat(filepath.Join(d, "snapshot.7"))
			if err != nil || st.Size() != int64(headerSize+size+trailerSize) {
				t.Fatalf("size %v, %v; want %d", st.Size(), err, headerSize+size+trailerSize)
			}
		})
	}
}

func TestNewestOrderAndFilter(t *testing.T) {
	m := newFS(t)
	for _, z := range []int64{5, 0x10, 3} {
		write(t, m, z, 10)
	}
	for _, junk := range []string{"snapshot.20.tmp", "snapshot.30.corrupt", "snapshot.0A", "log.40", "snapshot.x"} {
		f, _ := m.Create(filepath.Join(dir, junk))
		f.Close()
	}
	infos, err := Newest(m, dir)
	if err != nil {
		t.Fatal(err)
	}
	var zs []int64
	for _, i := range infos {
		zs = append(zs, i.Zxid)
	}
	if !slices.Equal(zs, []int64{0x10, 5, 3}) {
		t.Fatalf("Newest zxids %v", zs)
	}
	if infos, err := Newest(m, "/nope"); err != nil || len(infos) != 0 {
		t.Fatalf("missing dir: %v, %v", infos, err)
	}
}

func TestCorruptSnapshotFallsBackAndIsSetAside(t *testing.T) {
	cases := map[string]func(vfs.File, int64){
		"body byte":    flip(headerSize + 500),
		"header byte":  flip(20),
		"trailer crc":  flip(-7),
		"last body":    flip(-trailerSize - 1),
		"truncated":    func(f vfs.File, size int64) { f.Truncate(size - 100) },
		"tiny":         func(f vfs.File, size int64) { f.Truncate(10) },
		"extra bytes":  func(f vfs.File, size int64) { f.WriteAt([]byte("xx"), size) },
		"empty":        func(f vfs.File, size int64) { f.Truncate(0) },
		"trailer gone": func(f vfs.File, size int64) { f.Truncate(size - trailerSize) },
	}
	for name, dmg := range cases {
		t.Run(name, func(t *testing.T) {
			m := newFS(t)
			write(t, m, 10, 2000)
			write(t, m, 20, 2000)
			damage(t, m, Name(20), dmg)
			var logs logBuffer
			var l loaded
			zxid, err := Load(m, dir, logs.logger(), l.fn)
			if err != nil || zxid != 10 {
				t.Fatalf("Load = %d, %v; want 10", zxid, err)
			}
			if !bytes.Equal(l.body, body(10, 2000)) {
				t.Fatal("fallback body differs")
			}
			if got := list(t, m); !slices.Equal(got, []string{"snapshot.14.corrupt", "snapshot.a"}) {
				t.Fatalf("files %v", got)
			}
			if !strings.Contains(logs.String(), "setting aside corrupt snapshot") {
				t.Fatalf("no log line:\n%s", logs.String())
			}
			// The rename is durable.
			m.Crash()
			if got := list(t, m); !slices.Equal(got, []string{"snapshot.14.corrupt", "snapshot.a"}) {
				t.Fatalf("after crash: files %v", got)
			}
		})
	}
}

// A decoder that knows its own length and stops before the end must not
// make Load accept a damaged body: Load reads the rest and checks the CRC.
func TestPartialReaderStillVerified(t *testing.T) {
	m := newFS(t)
	write(t, m, 1, 1000)
	write(t, m, 2, 1000)
	damage(t, m, Name(2), flip(headerSize+900))
	var seen []int64
	zxid, err := Load(m, dir, nil, func(z int64, r io.Reader) error {
		seen = append(seen, z)
		_, err := io.ReadFull(r, make([]byte, 100))
		return err
	})
	if err != nil || zxid != 1 || !slices.Equal(seen, []int64{2, 1}) {
		t.Fatalf("Load = %d, %v, tried %v", zxid, err, seen)
	}
}

// The read that completes a damaged body must fail, so a decoder that reads
// exactly the body cannot finish on it.
func TestReaderWithholdsLastBytesOfDamagedBody(t *testing.T) {
	m := newFS(t)
	write(t, m, 1, 1000)
	damage(t, m, Name(1), flip(headerSize+10))
	infos, _ := Newest(m, dir)
	r, err := Open(m, dir, infos[0])
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := io.ReadFull(r, make([]byte, 1000)); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("ReadFull of the whole body: %v, want ErrCorrupt", err)
	}
	if r.Verified() {
		t.Fatal("Verified on a damaged body")
	}
	if _, err := r.Read(make([]byte, 1)); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("later Read: %v, want ErrCorrupt (sticky)", err)
	}
}

func TestEmptyBodyIsVerified(t *testing.T) {
	m := newFS(t)
	write(t, m, 1, 0)
	damage(t, m, Name(1), flip(-7)) // the trailer's CRC
	infos, _ := Newest(m, dir)
	r, err := Open(m, dir, infos[0])
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := io.ReadAll(r); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("ReadAll: %v, want ErrCorrupt", err)
	}
}

func TestFnCorruptErrorFallsBack(t *testing.T) {
	m := newFS(t)
	write(t, m, 1, 100)
	write(t, m, 2, 100)
	zxid, err := Load(m, dir, nil, func(z int64, r io.Reader) error {
		if z == 2 {
			return fmt.Errorf("decoding node: %w", ErrCorrupt)
		}
		return nil
	})
	if err != nil || zxid != 1 {
		t.Fatalf("Load = %d, %v", zxid, err)
	}
	if got := list(t, m); !slices.Equal(got, []string{"snapshot.1", "snapshot.2.corrupt"}) {
		t.Fatalf("files %v", got)
	}
}

// An error from fn on an intact snapshot that fn does not call corruption
// is returned, and the snapshot is kept: a bug or a cancelled load must
// not make snapshots disappear.
func TestFnOtherErrorOnIntactSnapshotIsReturned(t *testing.T) {
	m := newFS(t)
	write(t, m, 1, 100)
	write(t, m, 2, 100)
	boom := errors.New("out of patience")
	_, err := Load(m, dir, nil, func(int64, io.Reader) error { return boom })
	if !errors.Is(err, boom) {
		t.Fatalf("Load: %v, want %v", err, boom)
	}
	if got := list(t, m); !slices.Equal(got, []string{"snapshot.1", "snapshot.2"}) {
		t.Fatalf("files %v", got)
	}
}

func TestFnErrorOnDamagedSnapshotFallsBack(t *testing.T) {
	m := newFS(t)
	write(t, m, 1, 100)
	write(t, m, 2, 100)
	damage(t, m, Name(2), flip(headerSize+3))
	zxid, err := Load(m, dir, nil, func(z int64, r io.Reader) error {
		if z == 2 {
			return errors.New("decoder confused by garbage")
		}
		return nil
	})
	if err != nil || zxid != 1 {
		t.Fatalf("Load = %d, %v", zxid, err)
	}
}

func TestNoSnapshot(t *testing.T) {
	m := newFS(t)
	var l loaded
	if _, err := Load(m, dir, nil, l.fn); !errors.Is(err, ErrNoSnapshot) {
		t.Fatalf("empty dir: %v", err)
	}
	write(t, m, 1, 100)
	damage(t, m, Name(1), flip(headerSize))
	if _, err := Load(m, dir, nil, l.fn); !errors.Is(err, ErrNoSnapshot) {
		t.Fatalf("all corrupt: %v", err)
	}
	if got := list(t, m); !slices.Equal(got, []string{"snapshot.1.corrupt"}) {
		t.Fatalf("files %v", got)
	}
}

func TestForeignSnapshotIsSetAside(t *testing.T) {
	m := newFS(t)
	write(t, m, 1, 100)
	f, _ := m.Create(filepath.Join(dir, "snapshot.5"))
	f.Write([]byte("ZKSN\x00\x00\x00\x02 a ZooKeeper snapshot, not ours, long enough to pass the size check"))
	f.Close()
	var l loaded
	if zxid, err := Load(m, dir, nil, l.fn); err != nil || zxid != 1 {
		t.Fatalf("Load = %d, %v", zxid, err)
	}
}

func TestCrashDuringWriteIsIgnored(t *testing.T) {
	m := newFS(t)
	write(t, m, 1, 1000)
	w, err := Create(m, dir, 2)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(body(2, 600000)) // more than the write buffer: reaches the file
	m.Crash()
	var l loaded
	if zxid, err := Load(m, dir, nil, l.fn); err != nil || zxid != 1 {
		t.Fatalf("Load after crash mid-write = %d, %v", zxid, err)
	}

	// Same with the tmp file's entry made durable and part of its content.
	w, _ = Create(m, dir, 3)
	w.Write(body(3, 600000))
	m.SyncDir(dir)
	m.CrashRandom(rand.New(rand.NewPCG(1, 1)))
	if zxid, err := Load(m, dir, nil, l.fn); err != nil || zxid != 1 {
		t.Fatalf("Load after crash with tmp file = %d, %v", zxid, err)
	}
	if !slices.Contains(list(t, m), "snapshot.3.tmp") {
		t.Fatalf("test setup: tmp file expected, have %v", list(t, m))
	}
	if err := CleanTemp(m, dir); err != nil {
		t.Fatal(err)
	}
	if got := list(t, m); !slices.Equal(got, []string{"snapshot.1"}) {
		t.Fatalf("after CleanTemp: %v", got)
	}
}

func TestCommittedSnapshotSurvivesCrash(t *testing.T) {
	for seed := uint64(0); seed < 20; seed++ {
		m := newFS(t)
		write(t, m, 9, 5000)
		m.CrashRandom(rand.New(rand.NewPCG(seed, 3)))
		var l loaded
		if zxid, err := Load(m, dir, nil, l.fn); err != nil || zxid != 9 || !bytes.Equal(l.body, body(9, 5000)) {
			t.Fatalf("seed %d: Load = %d, %v", seed, zxid, err)
		}
	}
}

func TestAbort(t *testing.T) {
	m := newFS(t)
	w, _ := Create(m, dir, 4)
	w.Write([]byte("partial"))
	w.Abort()
	if got := list(t, m); len(got) != 0 {
		t.Fatalf("files after Abort: %v", got)
	}
	if _, err := w.Write([]byte("x")); !errors.Is(err, ErrDone) {
		t.Fatalf("Write after Abort: %v", err)
	}
	if err := w.Commit(); !errors.Is(err, ErrDone) {
		t.Fatalf("Commit after Abort: %v", err)
	}
}

// Sync makes the file durable without publishing it: nothing is visible
// until Commit, which then only renames; a synced snapshot can still be
// aborted, and one committed after Sync survives a crash.
func TestSyncThenCommitOrAbort(t *testing.T) {
	m := newFS(t)
	w, _ := Create(m, dir, 5)
	w.Write(body(5, 3000))
	if err := w.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := w.Sync(); err != nil { // again: nothing to do
		t.Fatal(err)
	}
	if infos, _ := Newest(m, dir); len(infos) != 0 {
		t.Fatalf("published before Commit: %v", infos)
	}
	if _, err := w.Write([]byte("x")); err == nil {
		t.Fatal("Write after Sync accepted")
	}
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	m.CrashRandom(rand.New(rand.NewPCG(1, 2)))
	var l loaded
	if zxid, err := Load(m, dir, nil, l.fn); err != nil || zxid != 5 || !bytes.Equal(l.body, body(5, 3000)) {
		t.Fatalf("after crash: Load = %d, %v", zxid, err)
	}

	w, _ = Create(m, dir, 6)
	w.Write(body(6, 100))
	if err := w.Sync(); err != nil {
		t.Fatal(err)
	}
	w.Abort()
	if got := list(t, m); !slices.Equal(got, []string{"snapshot.5"}) {
		t.Fatalf("after a synced Abort: %v", got)
	}
}

func TestCommitFailureLeavesNothing(t *testing.T) {
	for _, op := range []vfs.Op{vfs.OpSync, vfs.OpRename, vfs.OpWrite} {
		t.Run(op.String(), func(t *testing.T) {
			m := newFS(t)
			ff := vfs.NewFaultFS(m)
			w, err := Create(ff, dir, 4)
			if err != nil {
				t.Fatal(err)
			}
			w.Write([]byte("body"))
			ff.Inject(vfs.Fault{Op: op})
			if err := w.Commit(); !errors.Is(err, vfs.ErrInjected) {
				t.Fatalf("Commit: %v", err)
			}
			if got := list(t, m); len(got) != 0 {
				t.Fatalf("files after failed Commit: %v", got)
			}
		})
	}
}

func TestPurge(t *testing.T) {
	m := newFS(t)
	for z := int64(1); z <= 6; z++ {
		write(t, m, z*16, 10)
	}
	f, _ := m.Create(filepath.Join(dir, "snapshot.1.corrupt"))
	f.Close()
	kept, err := Purge(m, dir, 1) // below the minimum: keeps 3
	if err != nil {
		t.Fatal(err)
	}
	if kept != 4*16 {
		t.Fatalf("kept oldest %#x, want %#x", kept, 4*16)
	}
	want := []string{"snapshot.1.corrupt", "snapshot.40", "snapshot.50", "snapshot.60"}
	if got := list(t, m); !slices.Equal(got, want) {
		t.Fatalf("files %v, want %v", got, want)
	}
	m.Crash()
	if got := list(t, m); !slices.Equal(got, want) {
		t.Fatalf("purge not durable: %v", got)
	}
	if kept, err := Purge(m, dir, 5); err != nil || kept != 4*16 {
		t.Fatalf("Purge with fewer than retain = %#x, %v", kept, err)
	}
	if kept, err := Purge(newFS(t), dir, 3); err != nil || kept != 0 {
		t.Fatalf("Purge of empty dir = %d, %v", kept, err)
	}
}
