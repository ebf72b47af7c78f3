//go:build !linux

package vfs

import (
	"errors"
	"os"
)

var errFallocateUnsupported = errors.New("vfs: fallocate unsupported")

// datasync is fsync where fdatasync is not available.
func datasync(f *osFile) error { return f.File.Sync() }

func fallocate(*osFile, int64) error { return errFallocateUnsupported }

func startWriteback(f *osFile, off, n int64) error { return nil }

// createDirect is refused where O_DIRECT is not wired up.
func createDirect(name string) (*os.File, error) {
	return nil, &os.PathError{Op: "open", Path: name, Err: errors.ErrUnsupported}
}

// Available is not wired up here: the caller goes ahead.
func (osFS) Available(string) (int64, error) { return 0, errors.ErrUnsupported }
