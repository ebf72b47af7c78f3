package atomicfile

import (
	"io"
	"os"
	"path/filepath"
)

// TempSuffix is appended to the file's name for the temporary copy.
const TempSuffix = ".tmp"

// Write replaces path with what write writes. On any error the temporary
// file is removed and path is left as it was.
func Write(path string, perm os.FileMode, write func(io.Writer) error) error {
	tmp := path + TempSuffix
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, perm)
	if err != nil {
		return err
	}
	err = write(f)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	// The rename is durable once the directory is; a directory that
	// cannot be opened or synced (some file systems) does not undo it.
	if d, err := os.Open(filepath.Dir(path)); err == nil {
		_ = d.Sync()
		d.Close()
	}
	return nil
}

// WriteFile replaces path with data.
func WriteFile(path string, data []byte, perm os.FileMode) error {
	return Write(path, perm, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}
