package kvserver

import (
	"context"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"io/fs"
	"log/slog"
	"path/filepath"

	"github.com/corral-db/corral/kv"
	"github.com/corral-db/corral/vfs"
	"github.com/corral-db/corral/zab"
)

// checkpointFile is diskless mode's complete checkpoint for the store
// (replica.Checkpointer): pebble flushed up to z, and beside it a file of
// every log entry after z, accepted but uncommitted ones included. The
// file exists only while the checkpoint is complete: Invalidate removes
// it, so a member restarted without it is recovering.
//
//	"CRLKVCK1" | z u64 | n u32 | n × (zxid u64 | len u32 | data) | crc32c u32
type checkpointFile struct {
	log   *slog.Logger
	fs    vfs.FS
	dir   string
	store *kv.Store
}

const (
	ckptMagic = "CRLKVCK1"
	ckptName  = "kv-checkpoint"
)

var ckptCRC = crc32.MakeTable(crc32.Castagnoli)

func (c *checkpointFile) path() string { return filepath.Join(c.dir, ckptName) }

// Checkpoint flushes the store and writes the entries after what it
// flushed, durably.
func (c *checkpointFile) Checkpoint(entries func(after zab.Zxid) ([]zab.Entry, error)) error {
	z, err := c.store.Snapshot(context.Background())
	if err != nil {
		return err
	}
	ents, err := entries(z)
	if err != nil {
		return err
	}
	b := append([]byte(ckptMagic), binary.BigEndian.AppendUint64(nil, uint64(z))...)
	b = binary.BigEndian.AppendUint32(b, uint32(len(ents)))
	for _, e := range ents {
		b = binary.BigEndian.AppendUint64(b, uint64(e.Zxid))
		b = binary.BigEndian.AppendUint32(b, uint32(len(e.Data)))
		b = append(b, e.Data...)
	}
	b = binary.BigEndian.AppendUint32(b, crc32.Checksum(b, ckptCRC))
	tmp := c.path() + ".tmp"
	f, err := c.fs.Create(tmp)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = c.fs.Rename(tmp, c.path())
	}
	if err == nil {
		err = c.fs.SyncDir(c.dir)
	}
	return err
}

// Invalidate removes the checkpoint durably.
func (c *checkpointFile) Invalidate() error {
	if err := c.fs.Remove(c.path()); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return c.fs.SyncDir(c.dir)
}

// load returns the checkpoint's entries after applied, and whether a
// complete checkpoint was found. A damaged file counts as none.
func (c *checkpointFile) load(applied zab.Zxid) ([]zab.Entry, bool, error) {
	f, err := c.fs.Open(c.path())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	b, err := io.ReadAll(f)
	f.Close()
	if err != nil {
		return nil, false, err
	}
	ents, z, err := decodeCheckpoint(b)
	if err != nil {
		// Set aside, as a corrupt snapshot is: the member restarts
		// recovering, to be synchronized by a leader.
		c.log.Warn("kv: checkpoint set aside", "path", c.path(), "err", err)
		return nil, false, c.fs.Rename(c.path(), c.path()+".damaged")
	}
	if applied < z {
		// pebble lost what the checkpoint's flush wrote: not complete.
		return nil, false, nil
	}
	var out []zab.Entry
	for _, e := range ents {
		if e.Zxid > applied {
			out = append(out, e)
		}
	}
	return out, true, nil
}

func decodeCheckpoint(b []byte) ([]zab.Entry, zab.Zxid, error) {
	bad := errors.New("damaged checkpoint")
	if len(b) < len(ckptMagic)+16 || string(b[:len(ckptMagic)]) != ckptMagic {
		return nil, 0, bad
	}
	body, sum := b[:len(b)-4], binary.BigEndian.Uint32(b[len(b)-4:])
	if crc32.Checksum(body, ckptCRC) != sum {
		return nil, 0, bad
	}
	p := body[len(ckptMagic):]
	z := zab.Zxid(binary.BigEndian.Uint64(p))
	n := binary.BigEndian.Uint32(p[8:])
	p = p[12:]
	var ents []zab.Entry
	for i := uint32(0); i < n; i++ {
		if len(p) < 12 {
			return nil, 0, bad
		}
		zx, l := binary.BigEndian.Uint64(p), binary.BigEndian.Uint32(p[8:])
		p = p[12:]
		if uint64(l) > uint64(len(p)) {
			return nil, 0, bad
		}
		ents = append(ents, zab.Entry{Zxid: zab.Zxid(zx), Data: append([]byte(nil), p[:l]...)})
		p = p[l:]
	}
	if len(p) != 0 {
		return nil, 0, bad
	}
	return ents, z, nil
}
