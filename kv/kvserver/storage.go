package kvserver

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/corral-db/corral/vfs"
	"github.com/corral-db/corral/wal"
	"github.com/corral-db/corral/zab"
)

// walLog is the zab log (package wal) as the driver's LogStore. In async
// mode Sync only writes to the OS and a periodic fsync (Member.run) makes
// it durable.
type walLog struct {
	l     *wal.Log
	async bool
}

func (w walLog) Append(ents []zab.Entry) error {
	for _, e := range ents {
		if err := w.l.Append(int64(e.Zxid), e.Data); err != nil {
			return err
		}
	}
	return nil
}

func (w walLog) Sync() error {
	if w.async {
		return w.l.Flush()
	}
	return w.l.Sync()
}

func (w walLog) TruncateAfter(z zab.Zxid) error {
	if err := w.l.TruncateAfter(int64(z)); err != nil {
		return err
	}
	return w.l.Sync()
}

// readLog returns the log's entries after z.
func readLog(l *wal.Log, after zab.Zxid) ([]zab.Entry, error) {
	var ents []zab.Entry
	err := l.ReadFrom(int64(after)+1, func(z int64, data []byte) error {
		ents = append(ents, zab.Entry{Zxid: zab.Zxid(z), Data: append([]byte(nil), data...)})
		return nil
	})
	return ents, err
}

// epochFiles keeps zab's epochs as ZooKeeper does (acceptedEpoch,
// currentEpoch: a decimal number each), replaced atomically.
type epochFiles struct {
	fs  vfs.FS
	dir string

	mu   sync.Mutex
	prev zab.HardState // guarded by mu
}

const (
	acceptedEpochFile = "acceptedEpoch"
	currentEpochFile  = "currentEpoch"
)

func (h *epochFiles) load() (zab.HardState, error) {
	var hs zab.HardState
	for _, f := range []struct {
		name string
		v    *uint32
	}{{acceptedEpochFile, &hs.AcceptedEpoch}, {currentEpochFile, &hs.CurrentEpoch}} {
		file, err := h.fs.Open(filepath.Join(h.dir, f.name))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return hs, err
		}
		b, err := io.ReadAll(io.LimitReader(file, 64))
		file.Close()
		if err != nil {
			return hs, err
		}
		n, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 32)
		if err != nil {
			return hs, fmt.Errorf("%s: %w", f.name, err)
		}
		*f.v = uint32(n)
	}
	h.prev = hs
	return hs, nil
}

func (h *epochFiles) SaveHardState(hs zab.HardState) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, f := range []struct {
		name   string
		v, old uint32
	}{{acceptedEpochFile, hs.AcceptedEpoch, h.prev.AcceptedEpoch}, {currentEpochFile, hs.CurrentEpoch, h.prev.CurrentEpoch}} {
		if f.v == f.old {
			continue
		}
		path := filepath.Join(h.dir, f.name)
		file, err := h.fs.Create(path + ".tmp")
		if err != nil {
			return err
		}
		_, err = file.Write([]byte(strconv.FormatUint(uint64(f.v), 10) + "\n"))
		if err == nil {
			err = file.Sync()
		}
		if cerr := file.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = h.fs.Rename(path+".tmp", path)
		}
		if err != nil {
			return fmt.Errorf("writing %s: %w", f.name, err)
		}
	}
	if err := h.fs.SyncDir(h.dir); err != nil {
		return err
	}
	h.prev = hs
	return nil
}
