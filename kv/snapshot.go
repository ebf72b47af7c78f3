package kv

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"strings"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/corral-db/corral/zab"
)

// The snapshot stream is a pebble checkpoint's files:
//
//	magic "CRLKVSN1" | zxid u64
//	per file: nameLen u32 | name | size u64 | bytes | crc32c(bytes) u32
//	nameLen 0
//
// The zxid is read from the checkpoint itself, so it is exactly the state
// the files hold. The checkpoint is taken after a flush: with no WAL, a
// checkpoint holds only what pebble has flushed.
const snapMagic = "CRLKVSN1"

// maxSnapFileName bounds a file name in the stream.
const maxSnapFileName = 255

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// installMarker is written last into a fully received install directory:
// an install directory without it is incomplete and is discarded.
const installMarker = "CORRAL-KV-INSTALL-COMPLETE"

var ckptSeq atomic.Uint64

func (s *Store) installDir() string { return s.opts.Dir + ".install" }

// WriteSnapshot streams a checkpoint of the store to w and returns the
// zxid it reflects. It runs concurrently with Apply.
func (s *Store) WriteSnapshot(ctx context.Context, w io.Writer) (zab.Zxid, error) {
	s.dbMu.RLock()
	defer s.dbMu.RUnlock()
	if s.db == nil {
		return 0, errClosed
	}
	before := s.Applied()
	s.releaseNearStallLocked()
	if err := s.db.Flush(); err != nil {
		return 0, fmt.Errorf("kv: flush: %w", err)
	}
	s.advanceDurable(before)
	dir := fmt.Sprintf("%s.ckpt-%d", s.opts.Dir, ckptSeq.Add(1))
	_ = s.fs.RemoveAll(dir)
	defer s.fs.RemoveAll(dir)
	if err := s.db.Checkpoint(dir); err != nil {
		return 0, fmt.Errorf("kv: checkpoint: %w", err)
	}
	z, err := checkpointZxid(s.fs, dir)
	if err != nil {
		return 0, err
	}
	names, err := s.fs.List(dir)
	if err != nil {
		return 0, err
	}
	bw := bufio.NewWriterSize(w, 256<<10)
	hdr := append([]byte(snapMagic), binary.BigEndian.AppendUint64(nil, uint64(z))...)
	if _, err := bw.Write(hdr); err != nil {
		return 0, err
	}
	for _, name := range names {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		if err := writeSnapFile(s.fs, bw, dir, name); err != nil {
			return 0, err
		}
	}
	if _, err := bw.Write(make([]byte, 4)); err != nil {
		return 0, err
	}
	return z, bw.Flush()
}

func writeSnapFile(fs vfs.FS, w io.Writer, dir, name string) error {
	path := fs.PathJoin(dir, name)
	st, err := fs.Stat(path)
	if err != nil {
		return err
	}
	if st.IsDir() {
		return fmt.Errorf("kv: checkpoint has a directory %q", name)
	}
	f, err := fs.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	h := binary.BigEndian.AppendUint32(nil, uint32(len(name)))
	h = append(h, name...)
	h = binary.BigEndian.AppendUint64(h, uint64(st.Size()))
	if _, err := w.Write(h); err != nil {
		return err
	}
	crc := crc32.New(crcTable)
	n, err := io.Copy(io.MultiWriter(crc, w), io.LimitReader(f, st.Size()))
	if err != nil {
		return err
	}
	if n != st.Size() {
		return fmt.Errorf("kv: checkpoint file %q shrank", name)
	}
	_, err = w.Write(binary.BigEndian.AppendUint32(nil, crc.Sum32()))
	return err
}

// checkpointZxid opens a checkpoint read-only and returns its applied
// zxid.
func checkpointZxid(fs vfs.FS, dir string) (zab.Zxid, error) {
	db, err := pebble.Open(dir, &pebble.Options{FS: fs, ReadOnly: true, DisableWAL: true, Logger: pebbleLogger{discardLogger}})
	if err != nil {
		return 0, fmt.Errorf("kv: open checkpoint: %w", err)
	}
	defer db.Close()
	z, err := getUint64(db, keyApplied)
	return zab.Zxid(z), err
}

// InstallSnapshot replaces the store with a stream written by
// WriteSnapshot. The files are received into a side directory and synced;
// only then is the old database closed and replaced, so a bad or cut
// stream leaves the store as it was.
func (s *Store) InstallSnapshot(ctx context.Context, r io.Reader) (zab.Zxid, error) {
	tmp := s.installDir()
	if err := s.fs.RemoveAll(tmp); err != nil {
		return 0, err
	}
	z, err := receiveSnapshot(ctx, s.fs, tmp, bufio.NewReaderSize(r, 256<<10))
	if err != nil {
		_ = s.fs.RemoveAll(tmp)
		return 0, fmt.Errorf("kv: install snapshot: %w", err)
	}
	s.dbMu.Lock()
	defer s.dbMu.Unlock()
	if s.db != nil {
		// The state is being replaced: what it held in memory is moot.
		if err := s.db.Close(); err != nil {
			s.log.Warn("kv: closing the replaced database", "err", err)
		}
		s.db = nil
	}
	if err := s.swapInstall(); err != nil {
		return 0, err
	}
	if err := s.openDB(); err != nil {
		return 0, err
	}
	if got := s.Applied(); got != z {
		return 0, fmt.Errorf("kv: installed snapshot holds zxid %v, its header says %v", got, z)
	}
	return z, nil
}

func receiveSnapshot(ctx context.Context, fs vfs.FS, dir string, r io.Reader) (zab.Zxid, error) {
	hdr := make([]byte, len(snapMagic)+8)
	if _, err := io.ReadFull(r, hdr); err != nil {
		return 0, err
	}
	if string(hdr[:len(snapMagic)]) != snapMagic {
		return 0, errors.New("not a key-value snapshot")
	}
	z := zab.Zxid(binary.BigEndian.Uint64(hdr[len(snapMagic):]))
	if err := fs.MkdirAll(dir, 0o755); err != nil {
		return 0, err
	}
	var b4 [4]byte
	var b8 [8]byte
	for {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		if _, err := io.ReadFull(r, b4[:]); err != nil {
			return 0, err
		}
		n := binary.BigEndian.Uint32(b4[:])
		if n == 0 {
			break
		}
		if n > maxSnapFileName {
			return 0, fmt.Errorf("file name of %d bytes", n)
		}
		nb := make([]byte, n)
		if _, err := io.ReadFull(r, nb); err != nil {
			return 0, err
		}
		name := string(nb)
		if name == "." || name == ".." || name == installMarker || strings.ContainsAny(name, "/\\\x00") {
			return 0, fmt.Errorf("bad file name %q", name)
		}
		if _, err := io.ReadFull(r, b8[:]); err != nil {
			return 0, err
		}
		size := int64(binary.BigEndian.Uint64(b8[:]))
		if size < 0 {
			return 0, fmt.Errorf("file %q of size %d", name, size)
		}
		if err := receiveFile(fs, fs.PathJoin(dir, name), r, size); err != nil {
			return 0, fmt.Errorf("file %q: %w", name, err)
		}
	}
	m, err := fs.Create(fs.PathJoin(dir, installMarker), vfs.WriteCategoryUnspecified)
	if err != nil {
		return 0, err
	}
	if err := m.Sync(); err != nil {
		m.Close()
		return 0, err
	}
	if err := m.Close(); err != nil {
		return 0, err
	}
	return z, syncDir(fs, dir)
}

func receiveFile(fs vfs.FS, path string, r io.Reader, size int64) error {
	f, err := fs.Create(path, vfs.WriteCategoryUnspecified)
	if err != nil {
		return err
	}
	crc := crc32.New(crcTable)
	// The checksum first: pebble's MemFS (under its invariants, as in
	// race builds) scribbles on a buffer after Write has copied it.
	_, err = io.CopyN(io.MultiWriter(crc, f), r, size)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	var b4 [4]byte
	if _, err := io.ReadFull(r, b4[:]); err != nil {
		return err
	}
	if binary.BigEndian.Uint32(b4[:]) != crc.Sum32() {
		return errors.New("checksum mismatch")
	}
	return nil
}

func syncDir(fs vfs.FS, dir string) error {
	d, err := fs.OpenDir(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// swapInstall replaces the database directory with a complete install
// directory. Each step is safe to crash after: recoverInstall finishes
// the job at the next Open.
func (s *Store) swapInstall() error {
	tmp := s.installDir()
	if err := s.fs.RemoveAll(s.opts.Dir); err != nil {
		return err
	}
	if err := s.fs.Rename(tmp, s.opts.Dir); err != nil {
		return err
	}
	if err := syncDir(s.fs, s.fs.PathDir(s.opts.Dir)); err != nil {
		return err
	}
	return s.fs.Remove(s.fs.PathJoin(s.opts.Dir, installMarker))
}

// recoverInstall finishes an install a crash interrupted: a complete
// install directory replaces the database; an incomplete one is
// discarded; a marker left in the database directory is removed.
func (s *Store) recoverInstall() error {
	tmp := s.installDir()
	if _, err := s.fs.Stat(s.fs.PathJoin(tmp, installMarker)); err == nil {
		s.log.Info("kv: finishing an interrupted snapshot install", "dir", s.opts.Dir)
		return s.swapInstall()
	}
	if err := s.fs.RemoveAll(tmp); err != nil {
		return err
	}
	marker := s.fs.PathJoin(s.opts.Dir, installMarker)
	if _, err := s.fs.Stat(marker); err == nil {
		return s.fs.Remove(marker)
	}
	return nil
}
