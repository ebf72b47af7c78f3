package vfs

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// WriteZeros overwrites exactly [from, to) with zeros, in pieces, and a
// closed stop ends it before it writes.
func TestWriteZeros(t *testing.T) {
	m := NewMem()
	f, err := m.Create("/f")
	if err != nil {
		t.Fatal(err)
	}
	size := int64(2*ZeroWrite + 100)
	if _, err := f.Write(bytes.Repeat([]byte{7}, int(size))); err != nil {
		t.Fatal(err)
	}
	from, to := int64(10), size-10
	if err := WriteZeros(f, from, to, nil); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, size)
	if _, err := f.ReadAt(got, 0); err != nil {
		t.Fatal(err)
	}
	for i, b := range got {
		want := byte(7)
		if int64(i) >= from && int64(i) < to {
			want = 0
		}
		if b != want {
			t.Fatalf("byte %d is %d, want %d", i, b, want)
		}
	}

	stop := make(chan struct{})
	close(stop)
	if err := WriteZeros(f, 0, size, stop); !errors.Is(err, ErrStopped) {
		t.Fatalf("stopped fill returned %v, want ErrStopped", err)
	}
	if _, err := f.ReadAt(got[:1], 0); err != nil || got[0] != 7 {
		t.Fatalf("a stopped fill wrote: first byte %d (%v)", got[0], err)
	}
}

// DirtyEnd finds the last non-zero byte in the range wherever it is:
// none, at either edge, in the middle of a chunk, or outside the range.
func TestDirtyEnd(t *testing.T) {
	const size = 3<<20 + 17 // spans several 1 MiB chunks, not a multiple
	for _, tc := range []struct {
		name     string
		dirty    []int64 // offsets set to 1
		from, to int64
		want     int64
	}{
		{"all zero", nil, 0, size, 0},
		{"all zero from", nil, 100, size, 100},
		{"last byte", []int64{size - 1}, 0, size, size},
		{"first byte", []int64{0}, 0, size, 1},
		{"middle of chunk", []int64{1<<20 + 5}, 0, size, 1<<20 + 6},
		{"two, the later wins", []int64{10, 2<<20 + 3}, 0, size, 2<<20 + 4},
		{"before from ignored", []int64{99}, 100, size, 100},
		{"at to ignored", []int64{size - 1}, 0, size - 1, 0},
		{"empty range", []int64{5}, 10, 10, 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := NewMem()
			f, err := m.Create("/f")
			if err != nil {
				t.Fatal(err)
			}
			b := make([]byte, size)
			for _, o := range tc.dirty {
				b[o] = 1
			}
			if _, err := f.Write(b); err != nil {
				t.Fatal(err)
			}
			got, err := DirtyEnd(f, tc.from, tc.to)
			if err != nil || got != tc.want {
				t.Fatalf("DirtyEnd = %d, %v; want %d", got, err, tc.want)
			}
		})
	}
}

// BenchmarkDirtyEnd reads a 64 MiB all-zero file, the transaction log's
// segment size, as Open does for the tail of its last segment.
func BenchmarkDirtyEnd(b *testing.B) {
	const size = 64 << 20
	path := filepath.Join(b.TempDir(), "seg")
	if err := os.WriteFile(path, make([]byte, size), 0o644); err != nil {
		b.Fatal(err)
	}
	f, err := OS().Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	b.SetBytes(size)
	for b.Loop() {
		if end, err := DirtyEnd(f, 0, size); err != nil || end != 0 {
			b.Fatalf("DirtyEnd = %d, %v", end, err)
		}
	}
}
