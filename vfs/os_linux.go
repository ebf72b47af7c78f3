//go:build linux

package vfs

import (
	"errors"

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
