package wal

import (
	"bytes"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/corral-db/corral/vfs"
)

const testDir = "/wal"

func newMemFS(t *testing.T) *vfs.MemFS {
	t.Helper()
	m := vfs.NewMem()
	if err := m.MkdirAll(testDir, 0o755); err != nil {
		t.Fatal(err)
	}
	return m
}

// payload is the content of record z written in generation gen; different
// generations write different bytes under the same zxid, so a stale record
// that comes back is caught.
func payload(z int64, gen, size int) []byte {
	b := make([]byte, size)
	for i := range b {
		b[i] = byte(int(z)*31 + gen*7 + i)
	}
	return b
}

type rec struct {
	zxid int64
	data []byte
}

func (r rec) String() string { return fmt.Sprintf("%#x/%d", r.zxid, len(r.data)) }

func readAll(t *testing.T, l *Log, from int64) []rec {
	t.Helper()
	var out []rec
	err := l.ReadFrom(from, func(z int64, d []byte) error {
		out = append(out, rec{z, bytes.Clone(d)})
		return nil
	})
	if err != nil {
		t.Fatalf("ReadFrom(%#x): %v", from, err)
	}
	return out
}

func sameRecs(a, b []rec) bool {
	return slices.EqualFunc(a, b, func(x, y rec) bool { return x.zxid == y.zxid && bytes.Equal(x.data, y.data) })
}

func mustOpen(t *testing.T, fsys vfs.FS, opts Options) *Log {
	t.Helper()
	l, err := Open(fsys, testDir, opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return l
}

func mustAppend(t *testing.T, l *Log, recs ...rec) {
	t.Helper()
	for _, r := range recs {
		if err := l.Append(r.zxid, r.data); err != nil {
			t.Fatalf("Append(%#x): %v", r.zxid, err)
		}
	}
}

func mustSync(t *testing.T, l *Log) {
	t.Helper()
	if err := l.Sync(); err != nil {
		t.Fatalf("Sync: %v", err)
	}
}

func makeRecs(from, to int64, gen, size int) []rec {
	var out []rec
	for z := from; z <= to; z++ {
		out = append(out, rec{z, payload(z, gen, size)})
	}
	return out
}

func segmentFiles(t *testing.T, fsys vfs.FS) []string {
	t.Helper()
	names, err := fsys.List(testDir)
	if err != nil {
		t.Fatal(err)
	}
	var segs []string
	for _, n := range names {
		if _, ok := parseSegmentName(n); ok {
			segs = append(segs, n)
		}
	}
	return segs
}

// logBuffer captures slog output.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func (b *logBuffer) logger() *slog.Logger { return slog.New(slog.NewTextHandler(b, nil)) }

func (b *logBuffer) contains(s string) bool { return strings.Contains(b.String(), s) }

// flipByte inverts one byte of a file, durably.
func flipByte(t *testing.T, fsys vfs.FS, name string, off int64) {
	t.Helper()
	f, err := fsys.OpenFile(filepath.Join(testDir, name), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := make([]byte, 1)
	if _, err := f.ReadAt(b, off); err != nil {
		t.Fatal(err)
	}
	b[0] ^= 0xff
	if _, err := f.WriteAt(b, off); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
}

// recordOffset is where the i-th record (0-based) of a segment holding
// records of equal payload size starts.
func recordOffset(i, size int) int64 {
	return headerSize + int64(i)*int64(recordHeaderSize+size)
}

// crash simulates a power loss, and the death of the processes that had
// the logs open: see kill.
func crash(m *vfs.MemFS, logs ...*Log) {
	m.Crash()
	for _, l := range logs {
		kill(l)
	}
}

// kill stops l's spare preparer, and nothing else, as the death of its
// process would: a log abandoned after a simulated crash must not go on
// writing a spare into the file system the next Open sees. The spare it
// leaves is for that Open to deal with.
func kill(l *Log) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.prep != nil {
		l.prep.halt()
		l.prep = nil
	}
}

// awaitSpare waits until the preparation under way, if any, is done, so
// that the background goroutine is idle: tests that need the order of file
// operations to be fixed, and benchmarks, call it.
func awaitSpare(l *Log) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.spare != sparePending {
		return nil
	}
	if err := <-l.prep.res; err != nil {
		l.spare = spareNone
		return err
	}
	l.spare = spareReady
	return nil
}

// otherFiles lists the test directory without the spare, whose presence
// depends on how far the background preparation got.
func otherFiles(t *testing.T, fsys vfs.FS) []string {
	t.Helper()
	names, err := fsys.List(testDir)
	if err != nil {
		t.Fatal(err)
	}
	return slices.DeleteFunc(names, func(n string) bool { return n == spareName })
}
