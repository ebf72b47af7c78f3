package vfs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"sync"
)

// Op names a kind of FS or File call, for fault injection.
type Op int

const (
	OpOpen        Op = iota + 1 // OpenFile, Create, Open
	OpRead                      // Read, ReadAt
	OpWrite                     // Write, WriteAt
	OpSync                      // File.Sync
	OpTruncate                  // File.Truncate
	OpPreallocate               // File.Preallocate
	OpClose                     // File.Close
	OpSize                      // File.Size
	OpRemove                    // FS.Remove
	OpRename                    // FS.Rename
	OpMkdirAll                  // FS.MkdirAll
	OpList                      // FS.List
	OpStat                      // FS.Stat
	OpSyncDir                   // FS.SyncDir
	numOps
)

var opNames = [numOps]string{
	OpOpen: "open", OpRead: "read", OpWrite: "write", OpSync: "sync",
	OpTruncate: "truncate", OpPreallocate: "preallocate", OpClose: "close",
	OpSize: "size", OpRemove: "remove", OpRename: "rename", OpMkdirAll: "mkdirall",
	OpList: "list", OpStat: "stat", OpSyncDir: "syncdir",
}

func (o Op) String() string {
	if o > 0 && o < numOps {
		return opNames[o]
	}
	return fmt.Sprintf("Op(%d)", int(o))
}

// ErrInjected is the error a Fault returns when it has no Err of its own.
var ErrInjected = errors.New("vfs: injected fault")

// Fault describes calls that fail.
type Fault struct {
	Op Op
	// Nth is which matching call fails, counting from when the fault is
	// injected: 1 (or 0) is the next one.
	Nth int
	// Sticky makes every matching call from the Nth on fail, as a disk that
	// has gone bad; otherwise only the Nth fails.
	Sticky bool
	// Path, if set, restricts the fault to calls whose path (a file's name,
	// or either name of a rename) contains it.
	Path string
	// Partial makes a failing write first write a prefix (half) of its
	// data, as a short write does.
	Partial bool
	// Err is returned by the failing call; nil means ErrInjected.
	Err error
}

type faultState struct {
	Fault
	seen  int
	fired bool
}

// FaultFS wraps an FS and makes the calls described by its faults fail.
// Calls that do not fail go to the wrapped FS unchanged. It is safe for
// concurrent use.
type FaultFS struct {
	inner  FS
	mu     sync.Mutex
	faults []*faultState
	calls  [numOps]int
}

// NewFaultFS wraps inner.
func NewFaultFS(inner FS) *FaultFS { return &FaultFS{inner: inner} }

// Inject adds a fault.
func (f *FaultFS) Inject(ft Fault) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if ft.Nth < 1 {
		ft.Nth = 1
	}
	if ft.Err == nil {
		ft.Err = ErrInjected
	}
	f.faults = append(f.faults, &faultState{Fault: ft})
}

// Reset removes every fault; call counts are kept.
func (f *FaultFS) Reset() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.faults = nil
}

// Calls returns how many calls of kind op were made (failed ones included).
func (f *FaultFS) Calls(op Op) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[op]
}

// check counts a call and returns the fault that makes it fail, if any.
func (f *FaultFS) check(op Op, paths ...string) *Fault {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls[op]++
	var hit *Fault
	for _, st := range f.faults {
		if st.Op != op || (st.fired && !st.Sticky) || !matchPath(st.Path, paths) {
			continue
		}
		st.seen++
		if st.seen >= st.Nth && hit == nil {
			st.fired = true
			hit = &st.Fault
		}
	}
	return hit
}

func matchPath(want string, paths []string) bool {
	if want == "" {
		return true
	}
	for _, p := range paths {
		if strings.Contains(p, want) {
			return true
		}
	}
	return false
}

func (f *FaultFS) fail(op Op, paths ...string) error {
	if ft := f.check(op, paths...); ft != nil {
		return pathErr(op.String(), paths[0], ft.Err)
	}
	return nil
}

func (f *FaultFS) OpenFile(name string, flag int, perm fs.FileMode) (File, error) {
	if err := f.fail(OpOpen, name); err != nil {
		return nil, err
	}
	inner, err := f.inner.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return &faultFile{fs: f, inner: inner}, nil
}

func (f *FaultFS) Create(name string) (File, error) {
	return f.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
}

func (f *FaultFS) Open(name string) (File, error) { return f.OpenFile(name, os.O_RDONLY, 0) }

func (f *FaultFS) Remove(name string) error {
	if err := f.fail(OpRemove, name); err != nil {
		return err
	}
	return f.inner.Remove(name)
}

func (f *FaultFS) Rename(oldname, newname string) error {
	if err := f.fail(OpRename, oldname, newname); err != nil {
		return err
	}
	return f.inner.Rename(oldname, newname)
}

func (f *FaultFS) MkdirAll(dir string, perm fs.FileMode) error {
	if err := f.fail(OpMkdirAll, dir); err != nil {
		return err
	}
	return f.inner.MkdirAll(dir, perm)
}

func (f *FaultFS) List(dir string) ([]string, error) {
	if err := f.fail(OpList, dir); err != nil {
		return nil, err
	}
	return f.inner.List(dir)
}

func (f *FaultFS) Stat(name string) (fs.FileInfo, error) {
	if err := f.fail(OpStat, name); err != nil {
		return nil, err
	}
	return f.inner.Stat(name)
}

func (f *FaultFS) SyncDir(dir string) error {
	if err := f.fail(OpSyncDir, dir); err != nil {
		return err
	}
	return f.inner.SyncDir(dir)
}

// faultFile is a File of a FaultFS.
type faultFile struct {
	fs    *FaultFS
	inner File
}

func (f *faultFile) Name() string { return f.inner.Name() }

func (f *faultFile) Read(p []byte) (int, error) {
	if err := f.fs.fail(OpRead, f.Name()); err != nil {
		return 0, err
	}
	return f.inner.Read(p)
}

func (f *faultFile) ReadAt(p []byte, off int64) (int, error) {
	if err := f.fs.fail(OpRead, f.Name()); err != nil {
		return 0, err
	}
	return f.inner.ReadAt(p, off)
}

func (f *faultFile) Write(p []byte) (int, error) {
	if ft := f.fs.check(OpWrite, f.Name()); ft != nil {
		n := 0
		if ft.Partial {
			n, _ = f.inner.Write(p[:len(p)/2])
		}
		return n, pathErr("write", f.Name(), ft.Err)
	}
	return f.inner.Write(p)
}

func (f *faultFile) WriteAt(p []byte, off int64) (int, error) {
	if ft := f.fs.check(OpWrite, f.Name()); ft != nil {
		n := 0
		if ft.Partial {
			n, _ = f.inner.WriteAt(p[:len(p)/2], off)
		}
		return n, pathErr("write", f.Name(), ft.Err)
	}
	return f.inner.WriteAt(p, off)
}

func (f *faultFile) Sync() error {
	if err := f.fs.fail(OpSync, f.Name()); err != nil {
		return err
	}
	return f.inner.Sync()
}

func (f *faultFile) Truncate(size int64) error {
	if err := f.fs.fail(OpTruncate, f.Name()); err != nil {
		return err
	}
	return f.inner.Truncate(size)
}

func (f *faultFile) Preallocate(size int64) error {
	if err := f.fs.fail(OpPreallocate, f.Name()); err != nil {
		return err
	}
	return f.inner.Preallocate(size)
}

func (f *faultFile) Size() (int64, error) {
	if err := f.fs.fail(OpSize, f.Name()); err != nil {
		return 0, err
	}
	return f.inner.Size()
}

func (f *faultFile) Close() error {
	if err := f.fs.fail(OpClose, f.Name()); err != nil {
		_ = f.inner.Close() // the descriptor is released even when the close "fails"
		return err
	}
	return f.inner.Close()
}
