package vfs

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// eachFS runs a test against every implementation that must behave like a
// file system while nothing crashes.
func eachFS(t *testing.T, test func(t *testing.T, fsys FS, dir string)) {
	t.Run("os", func(t *testing.T) { test(t, OS(), t.TempDir()) })
	t.Run("mem", func(t *testing.T) {
		m := NewMem()
		if err := m.MkdirAll("/data", 0o755); err != nil {
			t.Fatal(err)
		}
		test(t, m, "/data")
	})
	t.Run("fault", func(t *testing.T) {
		m := NewMem()
		if err := m.MkdirAll("/data", 0o755); err != nil {
			t.Fatal(err)
		}
		test(t, NewFaultFS(m), "/data")
	})
}

func readAll(t *testing.T, fsys FS, name string) []byte {
	t.Helper()
	f, err := fsys.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestWriteReadRoundTrip(t *testing.T) {
	eachFS(t, func(t *testing.T, fsys FS, dir string) {
		name := filepath.Join(dir, "a")
		f, err := fsys.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		if f.Name() != name {
			t.Fatalf("Name() = %q, want %q", f.Name(), name)
		}
		if _, err := f.Write([]byte("hello ")); err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write([]byte("world")); err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteAt([]byte("W"), 6); err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteAt([]byte("!"), 13); err != nil { // leaves a hole at 11..12
			t.Fatal(err)
		}
		if err := f.Sync(); err != nil {
			t.Fatal(err)
		}
		if n, err := f.Size(); err != nil || n != 14 {
			t.Fatalf("Size() = %d, %v; want 14", n, err)
		}
		buf := make([]byte, 5)
		if n, err := f.ReadAt(buf, 6); err != nil || string(buf[:n]) != "World" {
			t.Fatalf("ReadAt = %q, %v", buf[:n], err)
		}
		if n, err := f.ReadAt(buf, 12); n != 2 || err != io.EOF {
			t.Fatalf("ReadAt past end = %d, %v; want 2, EOF", n, err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		want := []byte("hello World\x00\x00!")
		if got := readAll(t, fsys, name); !bytes.Equal(got, want) {
			t.Fatalf("content = %q, want %q", got, want)
		}
	})
}

func TestTruncateAndPreallocate(t *testing.T) {
	eachFS(t, func(t *testing.T, fsys FS, dir string) {
		name := filepath.Join(dir, "p")
		f, err := fsys.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.Write(bytes.Repeat([]byte{0xff}, 100)); err != nil {
			t.Fatal(err)
		}
		if err := f.Truncate(10); err != nil {
			t.Fatal(err)
		}
		if err := f.Preallocate(4096); err != nil {
			t.Fatal(err)
		}
		if n, _ := f.Size(); n != 4096 {
			t.Fatalf("size after Preallocate = %d, want 4096", n)
		}
		if err := f.Preallocate(100); err != nil { // never shrinks
			t.Fatal(err)
		}
		if n, _ := f.Size(); n != 4096 {
			t.Fatalf("size after smaller Preallocate = %d, want 4096", n)
		}
		got := make([]byte, 4096)
		if _, err := f.ReadAt(got, 0); err != nil {
			t.Fatal(err)
		}
		want := append(bytes.Repeat([]byte{0xff}, 10), make([]byte, 4086)...)
		if !bytes.Equal(got, want) {
			t.Fatal("bytes after truncate+preallocate are not the kept prefix followed by zeros")
		}
	})
}

func TestNamespace(t *testing.T) {
	eachFS(t, func(t *testing.T, fsys FS, dir string) {
		sub := filepath.Join(dir, "x", "y")
		if err := fsys.MkdirAll(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, n := range []string{"b", "a", "c"} {
			f, err := fsys.Create(filepath.Join(sub, n))
			if err != nil {
				t.Fatal(err)
			}
			f.Close()
		}
		if _, err := fsys.OpenFile(filepath.Join(sub, "a"), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644); !errors.Is(err, fs.ErrExist) {
			t.Fatalf("O_EXCL on existing file: %v, want ErrExist", err)
		}
		if err := fsys.Rename(filepath.Join(sub, "c"), filepath.Join(sub, "d")); err != nil {
			t.Fatal(err)
		}
		if err := fsys.Remove(filepath.Join(sub, "b")); err != nil {
			t.Fatal(err)
		}
		names, err := fsys.List(sub)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(names, []string{"a", "d"}) {
			t.Fatalf("List = %v, want [a d]", names)
		}
		if names, _ := fsys.List(filepath.Join(dir, "x")); !slices.Equal(names, []string{"y"}) {
			t.Fatalf("List(parent) = %v, want [y]", names)
		}
		if _, err := fsys.Stat(filepath.Join(sub, "b")); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("Stat removed file: %v, want ErrNotExist", err)
		}
		if ok, err := Exists(fsys, filepath.Join(sub, "d")); !ok || err != nil {
			t.Fatalf("Exists(d) = %v, %v", ok, err)
		}
		if st, err := fsys.Stat(sub); err != nil || !st.IsDir() {
			t.Fatalf("Stat(dir) = %v, %v", st, err)
		}
		if _, err := fsys.Open(filepath.Join(sub, "nope")); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("Open missing: %v, want ErrNotExist", err)
		}
		if err := fsys.SyncDir(sub); err != nil {
			t.Fatal(err)
		}
		if _, err := fsys.List(filepath.Join(dir, "missing")); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("List missing dir: %v, want ErrNotExist", err)
		}
	})
}

func TestReadOnlyHandleRejectsWrites(t *testing.T) {
	eachFS(t, func(t *testing.T, fsys FS, dir string) {
		name := filepath.Join(dir, "ro")
		f, err := fsys.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
		r, err := fsys.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		if _, err := r.Write([]byte("x")); err == nil {
			t.Fatal("write on a read-only handle succeeded")
		}
	})
}

func TestUseAfterClose(t *testing.T) {
	eachFS(t, func(t *testing.T, fsys FS, dir string) {
		f, err := fsys.Create(filepath.Join(dir, "c"))
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		if err := f.Sync(); err == nil {
			t.Fatal("Sync after Close succeeded")
		}
		if _, err := f.Write([]byte("x")); err == nil {
			t.Fatal("Write after Close succeeded")
		}
	})
}

// TestOSAvailable: the OS file system reports free space where it can,
// and AvailableAtLeast compares it; a file system that cannot tell says
// yes.
func TestOSAvailable(t *testing.T) {
	avail, err := OS().(SpaceReporter).Available(t.TempDir())
	if errors.Is(err, errors.ErrUnsupported) {
		t.Skip("no free-space report on this platform")
	}
	if err != nil || avail <= 0 {
		t.Fatalf("Available: %d, %v", avail, err)
	}
	if ok, got := AvailableAtLeast(OS(), t.TempDir(), 1); !ok || got <= 0 {
		t.Fatalf("AvailableAtLeast(1) = %v, %d", ok, got)
	}
	if ok, _ := AvailableAtLeast(OS(), t.TempDir(), 1<<62); ok {
		t.Fatal("AvailableAtLeast(4 EiB) = true")
	}
	if ok, got := AvailableAtLeast(NewMem(), "/", 1<<62); !ok || got != -1 {
		t.Fatalf("AvailableAtLeast on a MemFS = %v, %d; want true, -1", ok, got)
	}
}
