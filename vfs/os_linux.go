//go:build linux

package vfs

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

var errFallocateUnsupported = errors.New("vfs: fallocate unsupported")

// datasync is fdatasync: it flushes the data and the metadata needed to read
// it back (the size), not timestamps. With preallocated files the size does
// not change, so it writes only data blocks.
func datasync(f *osFile) error {
	for {
		err := unix.Fdatasync(int(f.fd))
		if err != unix.EINTR {
			return err
		}
	}
}

// fallocate allocates [0, size) and extends the file to size (mode 0), so
// later writes inside it do not change the file size.
func fallocate(f *osFile, size int64) error {
	for {
		err := unix.Fallocate(int(f.fd), 0, 0, size)
		switch err {
		case nil:
			return nil
		case unix.EINTR:
			continue
		case unix.EOPNOTSUPP, unix.ENOSYS:
			return errFallocateUnsupported
		default:
			return err
		}
	}
}

// createDirect opens name write-only with O_DIRECT; file systems without
// direct I/O (older tmpfs) refuse it with EINVAL.
func createDirect(name string) (*os.File, error) {
	return os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|unix.O_DIRECT, 0o644)
}

// startWriteback asks the kernel to begin writing [off, off+n) to disk
// without waiting for it (sync_file_range with SYNC_FILE_RANGE_WRITE).
func startWriteback(f *osFile, off, n int64) error {
	for {
		err := unix.SyncFileRange(int(f.fd), off, n, unix.SYNC_FILE_RANGE_WRITE)
		if err != unix.EINTR {
			return err
		}
	}
}

// Available is statfs's f_bavail × f_bsize for dir.
func (osFS) Available(dir string) (int64, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return 0, err
	}
	return int64(st.Bavail) * int64(st.Bsize), nil
}
