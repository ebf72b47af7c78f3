package vfs

import (
	"errors"
	"io"
	"io/fs"
	"os"
)

// FS is the file-system surface used by wal and snap. Names are paths in
// the host's syntax (filepath.Join).
type FS interface {
	// OpenFile opens name with os.O_* flags: one of O_RDONLY, O_WRONLY,
	// O_RDWR, optionally with O_CREATE, O_EXCL, O_TRUNC. Other flags
	// (O_APPEND, O_SYNC) are not part of the interface.
	OpenFile(name string, flag int, perm fs.FileMode) (File, error)
	// Create is OpenFile(name, O_RDWR|O_CREATE|O_TRUNC, 0o644).
	Create(name string) (File, error)
	// Open is OpenFile(name, O_RDONLY, 0).
	Open(name string) (File, error)
	// Remove removes a file or an empty directory.
	Remove(name string) error
	// Rename atomically replaces newname with oldname.
	Rename(oldname, newname string) error
	MkdirAll(dir string, perm fs.FileMode) error
	// List returns the names of the entries of dir, sorted.
	List(dir string) ([]string, error)
	Stat(name string) (fs.FileInfo, error)
	// SyncDir makes the creations, renames and removals of entries in dir
	// durable.
	SyncDir(dir string) error
}

// File is an open file. Read and Write use the file's offset; ReadAt and
// WriteAt do not move it.
type File interface {
	io.Reader
	io.ReaderAt
	io.Writer
	io.WriterAt
	io.Closer
	// Name is the name the file was opened with.
	Name() string
	// Sync makes the file's written data (and its size) durable. It does
	// not make the file's directory entry durable: see FS.SyncDir.
	Sync() error
	Truncate(size int64) error
	Size() (int64, error)
	// Preallocate makes the file at least size bytes long; the new bytes
	// read as zeros. It never shrinks the file.
	Preallocate(size int64) error
}

// ErrCrashed is returned by every operation on a MemFS file handle that was
// open when the file system crashed.
var ErrCrashed = errors.New("vfs: file handle invalidated by a simulated crash")

// Exists reports whether name exists. An error other than "does not exist"
// is returned as is.
func Exists(fsys FS, name string) (bool, error) {
	_, err := fsys.Stat(name)
	if err == nil {
		return true, nil
	}
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return false, err
}

// accessFlags is the mask of the access-mode bits of an os.OpenFile flag.
const accessFlags = os.O_RDONLY | os.O_WRONLY | os.O_RDWR

// supportedFlags is every flag bit FS.OpenFile must understand.
const supportedFlags = accessFlags | os.O_CREATE | os.O_EXCL | os.O_TRUNC

// DirectAlign is the alignment a DirectCreator's files need: every write's
// buffer address, file offset and length are multiples of it. 4 KiB covers
// both 512-byte and 4 KiB logical block sizes.
const DirectAlign = 4096

// DirectCreator is implemented by file systems that can create a file
// whose writes bypass the page cache (O_DIRECT on Linux). A large file
// written once and read rarely (a snapshot) fills the page cache for
// nothing and is written back by the kernel on its own schedule; see
// snap/doc.go for what it changed here and what it did not.
type DirectCreator interface {
	// CreateDirect creates (or truncates) name for writing only. Every
	// Write must be DirectAlign-aligned in buffer address, length and file
	// position; Truncate then sets the exact size, and Sync makes data and
	// size durable. It returns an error when the file system refuses
	// direct I/O; the caller uses Create instead.
	CreateDirect(name string) (File, error)
}

// WritebackStarter is implemented by files that can start writing a range
// to disk without waiting for it (Linux sync_file_range; n == 0 means to
// the end of the file). A writer of a
// large file calls it every few MiB so that its final fsync does not push
// hundreds of MiB at once and stall every other fsync on the disk (the
// transaction log's, above all).
type WritebackStarter interface {
	StartWriteback(off, n int64) error
}

// SpaceReporter is implemented by file systems that can tell how many
// bytes an unprivileged writer may still allocate under dir (statfs's
// available blocks on Linux). A writer about to zero-fill a large file
// asks first: filling the disk's last free blocks with zeros it then
// cannot use leaves nothing for the small writes that could still succeed
// (a member's epoch files at its next start).
type SpaceReporter interface {
	Available(dir string) (int64, error)
}

// AvailableAtLeast reports whether fsys has at least n bytes available
// under dir; true where fsys cannot tell.
func AvailableAtLeast(fsys FS, dir string, n int64) (ok bool, avail int64) {
	sr, isSR := fsys.(SpaceReporter)
	if !isSR {
		return true, -1
	}
	avail, err := sr.Available(dir)
	if err != nil {
		return true, -1
	}
	return avail >= n, avail
}
