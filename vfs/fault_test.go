package vfs

import (
	"errors"
	"testing"
)

func TestFaultNthWrite(t *testing.T) {
	m := newTestMem(t)
	ff := NewFaultFS(m)
	ff.Inject(Fault{Op: OpWrite, Nth: 3})
	f, err := ff.Create("/d/f")
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 4; i++ {
		_, err := f.Write([]byte("x"))
		if (i == 3) != (err != nil) {
			t.Fatalf("write %d: err = %v", i, err)
		}
		if i == 3 && !errors.Is(err, ErrInjected) {
			t.Fatalf("write 3: %v, want ErrInjected", err)
		}
	}
	if got := ff.Calls(OpWrite); got != 4 {
		t.Fatalf("Calls(OpWrite) = %d, want 4", got)
	}
	if n, _ := f.Size(); n != 3 {
		t.Fatalf("size = %d, want 3 (the failed write wrote nothing)", n)
	}
}

func TestFaultStickyAndPath(t *testing.T) {
	m := newTestMem(t)
	ff := NewFaultFS(m)
	boom := errors.New("disk on fire")
	ff.Inject(Fault{Op: OpSync, Nth: 2, Sticky: true, Path: "log.", Err: boom})
	other, _ := ff.Create("/d/other")
	log, _ := ff.Create("/d/log.1")
	for i := 0; i < 3; i++ {
		if err := other.Sync(); err != nil {
			t.Fatalf("sync of a non-matching path failed: %v", err)
		}
	}
	if err := log.Sync(); err != nil {
		t.Fatalf("first matching sync failed: %v", err)
	}
	for i := 0; i < 3; i++ {
		if err := log.Sync(); !errors.Is(err, boom) {
			t.Fatalf("sticky sync %d: %v, want %v", i, err, boom)
		}
	}
	ff.Reset()
	if err := log.Sync(); err != nil {
		t.Fatalf("sync after Reset: %v", err)
	}
}

func TestFaultPartialWriteAndRename(t *testing.T) {
	m := newTestMem(t)
	ff := NewFaultFS(m)
	ff.Inject(Fault{Op: OpWrite, Partial: true})
	ff.Inject(Fault{Op: OpRename})
	f, _ := ff.Create("/d/f")
	n, err := f.WriteAt([]byte("abcdef"), 0)
	if n != 3 || !errors.Is(err, ErrInjected) {
		t.Fatalf("partial write = %d, %v; want 3, ErrInjected", n, err)
	}
	if b, _ := content(t, m, "/d/f"); string(b) != "abc" {
		t.Fatalf("content after partial write = %q", b)
	}
	if err := ff.Rename("/d/f", "/d/g"); !errors.Is(err, ErrInjected) {
		t.Fatalf("rename: %v, want ErrInjected", err)
	}
	if err := ff.Rename("/d/f", "/d/g"); err != nil {
		t.Fatalf("second rename: %v", err)
	}
}
