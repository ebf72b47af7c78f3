package snap

import (
	"bytes"
	"fmt"
	"syscall"
	"testing"
	"unsafe"

	"github.com/corral-db/corral/vfs"
)

// alignedFile is a vfs.File that refuses what O_DIRECT refuses: a write
// whose buffer address, offset or length is not DirectAlign-aligned.
type alignedFile struct {
	vfs.File
	writes int
}

func (f *alignedFile) WriteAt(p []byte, off int64) (int, error) {
	addr := uintptr(unsafe.Pointer(unsafe.SliceData(p)))
	if addr%vfs.DirectAlign != 0 || off%vfs.DirectAlign != 0 || len(p)%vfs.DirectAlign != 0 {
		return 0, fmt.Errorf("unaligned write: address %#x, offset %d, length %d", addr, off, len(p))
	}
	f.writes++
	return f.File.WriteAt(p, off)
}

func (f *alignedFile) Write(p []byte) (int, error) {
	return 0, fmt.Errorf("Write at the file position is not aligned-checked; use WriteAt")
}

func TestDirectWriterAlignsEveryWrite(t *testing.T) {
	for _, size := range []int{0, 1, vfs.DirectAlign - 1, vfs.DirectAlign, directChunk - 1, directChunk, directChunk + 1, 2*directChunk + 4097} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			m := newFS(t)
			mf, err := m.Create(dir + "/f")
			if err != nil {
				t.Fatal(err)
			}
			f := &alignedFile{File: mf}
			d := newDirectWriter(f)
			b := body(1, size)
			for off := 0; off < len(b); {
				n := min(len(b)-off, 1+off%300000)
				if w, err := d.Write(b[off : off+n]); err != nil || w != n {
					t.Fatalf("Write = %d, %v", w, err)
				}
				off += n
			}
			if err := d.Flush(); err != nil {
				t.Fatal(err)
			}
			if want := (size + vfs.DirectAlign - 1) / directChunk; f.writes < want {
				t.Fatalf("%d writes, want at least %d", f.writes, want)
			}
			if sz, err := mf.Size(); err != nil || sz != int64(size) {
				t.Fatalf("size %d, %v; want %d (padding cut off)", sz, err, size)
			}
			got := make([]byte, size)
			if _, err := mf.ReadAt(got, 0); size > 0 && err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, b) {
				t.Fatal("content differs")
			}
		})
	}
}

// refusingFS offers direct files whose writes all fail, as a file system
// that accepts O_DIRECT at open and refuses the I/O does.
type refusingFS struct{ *vfs.MemFS }

type refusingFile struct{ vfs.File }

func (refusingFile) WriteAt([]byte, int64) (int, error) { return 0, syscall.EINVAL }

func (r refusingFS) CreateDirect(name string) (vfs.File, error) {
	f, err := r.MemFS.Create(name)
	if err != nil {
		return nil, err
	}
	return refusingFile{f}, nil
}

func TestDirectRefusedAtWriteFallsBackToPageCache(t *testing.T) {
	fsys := refusingFS{newFS(t)}
	w, err := Create(fsys, dir, 9)
	if err != nil {
		t.Fatal(err)
	}
	if w.direct {
		t.Fatal("writer kept a direct file whose writes fail")
	}
	b := body(9, 3*directChunk+5)
	if _, err := w.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	var l loaded
	if zxid, err := Load(fsys, dir, nil, l.fn); err != nil || zxid != 9 || !bytes.Equal(l.body, b) {
		t.Fatalf("Load = %d, %v", zxid, err)
	}
}
