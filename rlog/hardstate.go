package rlog

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/corral-db/corral/vfs"
	"github.com/corral-db/corral/zab"
)

// FileHardState persists zab's epochs for a Member in one small file
// (accepted u32 | current u32 | CRC32C u32), replaced atomically.
type FileHardState struct {
	fs  vfs.FS
	dir string
	mu  sync.Mutex
}

const hardStateFile = "epochs"

// OpenHardState reads the epochs in dir (zero when there is no file).
func OpenHardState(fsys vfs.FS, dir string) (*FileHardState, zab.HardState, error) {
	h := &FileHardState{fs: fsys, dir: dir}
	var hs zab.HardState
	if err := fsys.MkdirAll(dir, 0o755); err != nil {
		return nil, hs, err
	}
	f, err := fsys.OpenFile(filepath.Join(dir, hardStateFile), os.O_RDONLY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return h, hs, nil
	}
	if err != nil {
		return nil, hs, err
	}
	defer f.Close()
	var b [12]byte
	if _, err := io.ReadFull(f, b[:]); err != nil || binary.LittleEndian.Uint32(b[8:]) != crc32.Checksum(b[:8], castagnoli) {
		return nil, hs, fmt.Errorf("rlog: %s is damaged", filepath.Join(dir, hardStateFile))
	}
	hs.AcceptedEpoch, hs.CurrentEpoch = binary.LittleEndian.Uint32(b[0:]), binary.LittleEndian.Uint32(b[4:])
	return h, hs, nil
}

// SaveHardState writes hs durably.
func (h *FileHardState) SaveHardState(hs zab.HardState) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	var b [12]byte
	binary.LittleEndian.PutUint32(b[0:], hs.AcceptedEpoch)
	binary.LittleEndian.PutUint32(b[4:], hs.CurrentEpoch)
	binary.LittleEndian.PutUint32(b[8:], crc32.Checksum(b[:8], castagnoli))
	tmp := filepath.Join(h.dir, hardStateFile+".tmp")
	f, err := h.fs.Create(tmp)
	if err != nil {
		return err
	}
	_, err = f.Write(b[:])
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = h.fs.Rename(tmp, filepath.Join(h.dir, hardStateFile))
	}
	if err == nil {
		err = h.fs.SyncDir(h.dir)
	}
	return err
}
