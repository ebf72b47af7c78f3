package vfs

import (
	"bytes"
	"errors"
	"io/fs"
	"math/rand/v2"
	"slices"
	"testing"
)

func newTestMem(t *testing.T) *MemFS {
	t.Helper()
	m := NewMem()
	if err := m.MkdirAll("/d", 0o755); err != nil {
		t.Fatal(err)
	}
	return m
}

func mustWrite(t *testing.T, f File, b []byte) {
	t.Helper()
	if _, err := f.Write(b); err != nil {
		t.Fatal(err)
	}
}

func content(t *testing.T, m *MemFS, name string) ([]byte, bool) {
	t.Helper()
	f, err := m.Open(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n, _ := f.Size()
	b := make([]byte, n)
	if _, err := f.ReadAt(b, 0); err != nil && n > 0 {
		t.Fatal(err)
	}
	return b, true
}

func TestCrashForgetsUnsyncedWrites(t *testing.T) {
	m := newTestMem(t)
	f, err := m.Create("/d/f")
	if err != nil {
		t.Fatal(err)
	}
	mustWrite(t, f, []byte("durable"))
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := m.SyncDir("/d"); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, f, []byte(" volatile"))
	if err := f.Truncate(3); err != nil { // an unsynced truncate is forgotten too
		t.Fatal(err)
	}
	m.Crash()
	got, ok := content(t, m, "/d/f")
	if !ok || string(got) != "durable" {
		t.Fatalf("after crash: %q (exists %v), want %q", got, ok, "durable")
	}
}

func TestCrashForgetsUnsyncedDirectoryEntries(t *testing.T) {
	m := newTestMem(t)
	f, _ := m.Create("/d/new")
	mustWrite(t, f, []byte("data"))
	if err := f.Sync(); err != nil { // data synced, entry not
		t.Fatal(err)
	}
	m.Crash()
	if _, ok := content(t, m, "/d/new"); ok {
		t.Fatal("file whose directory was never synced survived the crash")
	}
}

func TestCrashRenameAndRemoveNeedSyncDir(t *testing.T) {
	m := newTestMem(t)
	f, _ := m.Create("/d/a")
	mustWrite(t, f, []byte("A"))
	f.Sync()
	f.Close()
	m.SyncDir("/d")

	if err := m.Rename("/d/a", "/d/b"); err != nil {
		t.Fatal(err)
	}
	m.Crash()
	if _, ok := content(t, m, "/d/a"); !ok {
		t.Fatal("unsynced rename: old name lost")
	}
	if _, ok := content(t, m, "/d/b"); ok {
		t.Fatal("unsynced rename: new name survived")
	}

	m.Rename("/d/a", "/d/b")
	m.SyncDir("/d")
	m.Crash()
	if got, ok := content(t, m, "/d/b"); !ok || string(got) != "A" {
		t.Fatalf("synced rename: /d/b = %q, %v", got, ok)
	}
	if _, ok := content(t, m, "/d/a"); ok {
		t.Fatal("synced rename: old name survived")
	}

	m.Remove("/d/b")
	m.Crash()
	if got, ok := content(t, m, "/d/b"); !ok || string(got) != "A" {
		t.Fatalf("unsynced remove: file did not come back: %q, %v", got, ok)
	}
	m.Remove("/d/b")
	m.SyncDir("/d")
	m.Crash()
	if _, ok := content(t, m, "/d/b"); ok {
		t.Fatal("synced remove: file came back")
	}
}

func TestCrashInvalidatesHandles(t *testing.T) {
	m := newTestMem(t)
	f, _ := m.Create("/d/f")
	m.Crash()
	if _, err := f.Write([]byte("x")); !errors.Is(err, ErrCrashed) {
		t.Fatalf("write after crash: %v, want ErrCrashed", err)
	}
	if err := f.Sync(); !errors.Is(err, ErrCrashed) {
		t.Fatalf("sync after crash: %v, want ErrCrashed", err)
	}
}

func TestCrashAfterTruncateAndRegrowReadsZeros(t *testing.T) {
	m := newTestMem(t)
	f, _ := m.Create("/d/f")
	m.SyncDir("/d")
	mustWrite(t, f, bytes.Repeat([]byte{7}, 64))
	f.Sync()
	f.Truncate(8)
	f.Preallocate(64)
	f.Sync()
	m.Crash()
	got, _ := content(t, m, "/d/f")
	want := append(bytes.Repeat([]byte{7}, 8), make([]byte, 56)...)
	if !bytes.Equal(got, want) {
		t.Fatalf("after truncate+regrow+sync+crash: %v", got)
	}
}

// TestCrashRandomKeepsPrefix checks the random crash's promise: the synced
// content survives, and what follows is a prefix of the unsynced writes in
// the order they were made, the last one possibly cut.
func TestCrashRandomKeepsPrefix(t *testing.T) {
	torn, kept, dropped := 0, 0, 0
	for seed := uint64(0); seed < 200; seed++ {
		r := rand.New(rand.NewPCG(seed, 1))
		m := newTestMem(t)
		f, _ := m.Create("/d/f")
		m.SyncDir("/d")
		var all []byte
		nsynced := 0
		for i := 0; i < 10; i++ {
			chunk := bytes.Repeat([]byte{byte('a' + i)}, 1+r.IntN(20))
			mustWrite(t, f, chunk)
			all = append(all, chunk...)
			if i == 4 {
				f.Sync()
				nsynced = len(all)
			}
		}
		m.CrashRandom(r)
		got, ok := content(t, m, "/d/f")
		if !ok {
			t.Fatalf("seed %d: file with synced entry lost", seed)
		}
		if len(got) < nsynced || !bytes.Equal(got, all[:len(got)]) {
			t.Fatalf("seed %d: content %q is not a prefix of %q at least %d long", seed, got, all, nsynced)
		}
		switch {
		case len(got) == nsynced:
			dropped++
		case len(got) == len(all):
			kept++
		default:
			torn++
		}
	}
	// The model must exercise every outcome; with 200 seeds each has
	// probability far above 1%.
	if torn == 0 || kept == 0 || dropped == 0 {
		t.Fatalf("outcomes torn=%d kept=%d dropped=%d; want all non-zero", torn, kept, dropped)
	}
}

func TestCrashRandomDirectoryPrefix(t *testing.T) {
	for seed := uint64(0); seed < 50; seed++ {
		r := rand.New(rand.NewPCG(seed, 2))
		m := newTestMem(t)
		names := []string{"/d/1", "/d/2", "/d/3", "/d/4"}
		for _, n := range names {
			f, _ := m.Create(n)
			f.Sync()
			f.Close()
		}
		m.CrashRandom(r)
		got, _ := m.List("/d")
		want := []string{"1", "2", "3", "4"}[:len(got)]
		if !slices.Equal(got, want) {
			t.Fatalf("seed %d: entries %v are not a prefix of the creations", seed, got)
		}
	}
}

func TestCrashRandomIsDeterministic(t *testing.T) {
	run := func() []byte {
		r := rand.New(rand.NewPCG(42, 42))
		m := newTestMem(t)
		f, _ := m.Create("/d/f")
		m.SyncDir("/d")
		for i := 0; i < 20; i++ {
			mustWrite(t, f, bytes.Repeat([]byte{byte(i)}, 10))
		}
		m.CrashRandom(r)
		b, _ := content(t, m, "/d/f")
		return b
	}
	if a, b := run(), run(); !bytes.Equal(a, b) {
		t.Fatal("same seed and history gave different crash outcomes")
	}
}
