//go:build !linux

package vfs

import "errors"

var errFallocateUnsupported = errors.New("vfs: fallocate unsupported")

// datasync is fsync where fdatasync is not available.
func datasync(f *osFile) error { return f.File.Sync() }

func fallocate(*osFile, int64) error { return errFallocateUnsupported }

func startWriteback(f *osFile, off, n int64) error { return nil }
