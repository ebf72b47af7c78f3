package snap

import (
	"bufio"
	"fmt"
	"hash/crc32"
	"path/filepath"

	"github.com/corral-db/corral/vfs"
)

const writeBufferSize = 256 << 10

// writebackEvery is how many bytes a snapshot writes between asking the
// kernel to start writing them out (see vfs.WritebackStarter).
const writebackEvery = 8 << 20

// Writer streams one snapshot to its temporary file. It is an io.Writer;
// nothing is visible to readers until Commit.
type Writer struct {
	fs         vfs.FS
	dir        string
	zxid       int64
	tmp, final string
	f          vfs.File
	bw         sink
	// direct: f was opened with O_DIRECT and bw is a directWriter, which
	// needs no early writeback.
	direct bool
	crc    uint32
	n      int64
	// flushed is how far the file has been handed to writeback.
	flushed int64
	done    bool
	// synced: Sync has made the file complete and durable; Commit only
	// publishes it.
	synced bool
	err    error // first write error; Commit returns it
}

// Create starts the snapshot of zxid in dir (created if missing). A stale
// temporary file of the same zxid is replaced.
func Create(fsys vfs.FS, dir string, zxid int64) (*Writer, error) {
	if zxid < 0 {
		return nil, fmt.Errorf("snap: negative zxid %d", zxid)
	}
	if err := fsys.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("snap: %w", err)
	}
	final := filepath.Join(dir, Name(zxid))
	w := &Writer{fs: fsys, dir: dir, zxid: zxid, tmp: final + tmpSuffix, final: final}
	if dc, ok := fsys.(vfs.DirectCreator); ok {
		if f, err := dc.CreateDirect(w.tmp); err == nil {
			d := newDirectWriter(f)
			if d.probe() == nil {
				w.f, w.bw, w.direct = f, d, true
			} else {
				_ = f.Close()
			}
		}
		// Refused (a file system without O_DIRECT, or one that accepts the
		// flag at open and fails the writes): the page cache below.
	}
	if w.f == nil {
		f, err := fsys.Create(w.tmp)
		if err != nil {
			return nil, fmt.Errorf("snap: %w", err)
		}
		w.f = f
		w.bw = bufio.NewWriterSize(f, writeBufferSize)
	}
	h := encodeHeader(zxid)
	if _, err := w.bw.Write(h[:]); err != nil {
		w.Abort()
		return nil, fmt.Errorf("snap: %w", err)
	}
	return w, nil
}

// Zxid returns the zxid the snapshot is named after.
func (w *Writer) Zxid() int64 { return w.zxid }

// Write appends p to the body. After Sync the body is closed: Write
// returns ErrDone.
func (w *Writer) Write(p []byte) (int, error) {
	if w.done || w.synced {
		return 0, ErrDone
	}
	if w.err != nil {
		return 0, w.err
	}
	n, err := w.bw.Write(p)
	w.crc = crc32.Update(w.crc, castagnoli, p[:n])
	w.n += int64(n)
	if err != nil {
		w.err = fmt.Errorf("snap: writing %s: %w", w.tmp, err)
		return n, w.err
	}
	if ws, ok := w.f.(vfs.WritebackStarter); ok && !w.direct && w.n-w.flushed >= writebackEvery {
		if err := w.bw.Flush(); err != nil {
			w.err = fmt.Errorf("snap: writing %s: %w", w.tmp, err)
			return n, w.err
		}
		// Best effort: failing to start early writeback costs only the
		// smoothing; Commit's fsync still makes the file durable.
		_ = ws.StartWriteback(w.flushed, 0) // 0: through the end of the file
		w.flushed = w.n
	}
	return n, nil
}

// Commit writes the trailer and publishes the snapshot atomically and
// durably: fsync, rename to snapshot.<zxid>, SyncDir. On error the
// temporary file is removed and nothing is published, except when only the
// final SyncDir fails: the complete snapshot is then left in place, and
// the error says its publication may not survive a crash.
func (w *Writer) Commit() error {
	if w.done {
		return ErrDone
	}
	if err := w.commit(); err != nil {
		w.Abort()
		return err
	}
	w.done = true
	return nil
}

// Sync writes the trailer and makes the file durable without publishing
// it, so that the slow part of Commit can run before a caller takes a lock
// it must hold while publishing. Commit after Sync only renames. On error
// the snapshot is aborted.
func (w *Writer) Sync() error {
	if w.done {
		return ErrDone
	}
	if w.synced {
		return nil
	}
	if err := w.sync(); err != nil {
		w.Abort()
		return err
	}
	w.synced = true
	return nil
}

func (w *Writer) sync() error {
	if w.err != nil {
		return w.err
	}
	t := encodeTrailer(w.n, w.crc)
	if _, err := w.bw.Write(t[:]); err != nil {
		return fmt.Errorf("snap: writing %s: %w", w.tmp, err)
	}
	if err := w.bw.Flush(); err != nil {
		return fmt.Errorf("snap: writing %s: %w", w.tmp, err)
	}
	if err := w.f.Sync(); err != nil {
		return fmt.Errorf("snap: syncing %s: %w", w.tmp, err)
	}
	err := w.f.Close()
	w.f = nil
	if err != nil {
		return fmt.Errorf("snap: closing %s: %w", w.tmp, err)
	}
	return nil
}

func (w *Writer) commit() error {
	if !w.synced {
		if err := w.sync(); err != nil {
			return err
		}
		w.synced = true
	}
	if err := w.fs.Rename(w.tmp, w.final); err != nil {
		return fmt.Errorf("snap: publishing %s: %w", w.final, err)
	}
	if err := w.fs.SyncDir(w.dir); err != nil {
		// The rename happened but may not be durable; the file is complete
		// and valid, so leave it rather than remove a good snapshot.
		w.done = true
		return fmt.Errorf("snap: syncing directory %s: %w", w.dir, err)
	}
	return nil
}

// Abort discards the snapshot. It may be called after a failed Commit, and
// is a no-op after a successful one.
func (w *Writer) Abort() {
	if w.done {
		return
	}
	w.done = true
	if w.f != nil {
		_ = w.f.Close()
		w.f = nil
	}
	// Best effort: CleanTemp removes leftovers at the next start.
	_ = w.fs.Remove(w.tmp)
}
