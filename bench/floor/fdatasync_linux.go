package floor

import (
	"os"
	"syscall"
)

// fdatasync flushes f's data and the metadata needed to read it back (its
// size), as a write-ahead log does after each append.
func fdatasync(f *os.File) error { return syscall.Fdatasync(int(f.Fd())) }
