package vfs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// OS returns the FS backed by the operating system.
func OS() FS { return osFS{} }

type osFS struct{}

func (osFS) OpenFile(name string, flag int, perm fs.FileMode) (File, error) {
	if flag&^supportedFlags != 0 {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fmt.Errorf("vfs: unsupported open flags %#x", flag&^supportedFlags)}
	}
	f, err := os.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return newOSFile(f), nil
}

func (o osFS) Create(name string) (File, error) {
	return o.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
}

func (osFS) CreateDirect(name string) (File, error) {
	f, err := createDirect(name)
	if err != nil {
		return nil, err
	}
	return newOSFile(f), nil
}

func (o osFS) Open(name string) (File, error) { return o.OpenFile(name, os.O_RDONLY, 0) }

func (osFS) Remove(name string) error                    { return os.Remove(name) }
func (osFS) Rename(oldname, newname string) error        { return os.Rename(oldname, newname) }
func (osFS) MkdirAll(dir string, perm fs.FileMode) error { return os.MkdirAll(dir, perm) }
func (osFS) Stat(name string) (fs.FileInfo, error)       { return os.Stat(name) }

func (osFS) List(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir) // sorted by name
	if err != nil {
		return nil, err
	}
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = e.Name()
	}
	return names, nil
}

func (osFS) SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// osFile adds Sync-as-fdatasync and Preallocate to *os.File. The raw
// descriptor is taken once at open so that Sync allocates nothing; it is
// valid until Close, which the closed flag guards.
type osFile struct {
	*os.File
	fd     uintptr
	closed bool
}

func newOSFile(f *os.File) *osFile { return &osFile{File: f, fd: f.Fd()} }

func (f *osFile) Close() error {
	f.closed = true
	return f.File.Close()
}

func (f *osFile) Sync() error {
	if f.closed {
		return &fs.PathError{Op: "sync", Path: f.Name(), Err: fs.ErrClosed}
	}
	if err := datasync(f); err != nil {
		return &fs.PathError{Op: "sync", Path: f.Name(), Err: err}
	}
	return nil
}

func (f *osFile) Size() (int64, error) {
	st, err := f.File.Stat()
	if err != nil {
		return 0, err
	}
	return st.Size(), nil
}

func (f *osFile) Preallocate(size int64) error {
	if f.closed {
		return &fs.PathError{Op: "preallocate", Path: f.Name(), Err: fs.ErrClosed}
	}
	cur, err := f.Size()
	if err != nil || cur >= size {
		return err
	}
	if err := fallocate(f, size); err == nil {
		return nil
	} else if !errors.Is(err, errFallocateUnsupported) {
		return &fs.PathError{Op: "fallocate", Path: f.Name(), Err: err}
	}
	return writeZeros(f, cur, size)
}

// writeZeros extends f from off to size by writing zero blocks, the
// portable (and slower) way to preallocate.
func writeZeros(f *osFile, off, size int64) error {
	zeros := make([]byte, min(size-off, 1<<20))
	for off < size {
		n := min(int64(len(zeros)), size-off)
		if _, err := f.WriteAt(zeros[:n], off); err != nil {
			return err
		}
		off += n
	}
	return nil
}

// StartWriteback begins writing a range of f to disk without waiting.
func (f *osFile) StartWriteback(off, n int64) error {
	if f.closed {
		return &fs.PathError{Op: "writeback", Path: f.Name(), Err: fs.ErrClosed}
	}
	return startWriteback(f, off, n)
}
