package server

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"path/filepath"
	"strconv"
	"time"

	"github.com/corral-db/corral/snap"
	"github.com/corral-db/corral/vfs"
	"github.com/corral-db/corral/zab"
)

// Diskless mode has no transaction log. What survives a crash is the
// newest snapshot: a busy (fuzzy) one, written continuously while writes
// flow, or a complete checkpoint, written when the server leaves
// broadcast (its leader or its quorum lost, the thesis's Algorithms 4.2
// and 4.3) and at orderly shutdown. A checkpoint is a sidecar file
// checkpoint.<A> beside snapshot.<A> with every log entry after A the
// server holds: applied ones when the snapshot is fuzzy, committed ones
// not yet applied, and proposals it accepted but has not seen committed,
// which the next leader commits (docs/design/diskless.md).
//
// The sidecar is written (and synced) before any snapshot it completes is
// published, so a snapshot.<A> with a valid checkpoint.<A> beside it is
// always complete; a snapshot without one is fuzzy, and a server restarted
// from it is recovering (zab.Config.Recovering).

const (
	checkpointPrefix = "checkpoint."
	checkpointMagic  = "CKPT2"
	// checkpointMagicV1 is the first version's: no length, the checksum
	// last in the file.
	checkpointMagicV1 = "CKPT1"
)

var crcTable = crc32.MakeTable(crc32.Castagnoli)

var errBadCheckpoint = errors.New("corrupt checkpoint")

func checkpointName(zxid int64) string {
	return checkpointPrefix + strconv.FormatInt(zxid, 16)
}

// encodeCheckpoint writes the magic, the length of the body, the body
// (count, then zxid, length and data per entry) and a CRC-32C of
// everything before it. The length lets the file be longer than what it
// holds: a checkpoint is written over the spare in place
// (checkpoint_spare.go), whose tail keeps older bytes. It streams through
// a buffer: a sidecar can hold a hundred thousand entries (20 MB), and
// building it in one slice cost more than writing it (growing copies and
// page faults, measured at 60-200 ms on a loaded two-core machine). The
// entries are appended to a 1 MiB chunk, and the checksum and the write
// take a whole chunk at a time: through a bufio.Writer and an
// io.MultiWriter with the checksum, two small writes per entry cost
// 1.8-2.0 ms for 20k entries, 1.0-1.3 ms this way (BenchmarkEncodeCheckpoint;
// a survivor writes its checkpoint while the ensemble is down, so it is
// all restoration time).
//
// Each chunk written to a file that can (vfs.WritebackStarter) is sent on
// to the disk at once, so the disk writes while the next chunks are
// encoded and the final fsync has little left to do: 20k entries written
// and fsynced in 5.3-5.5 ms against 7.0-8.7 before
// (BenchmarkWriteCheckpointFile, this machine's ext4).
func encodeCheckpoint(w io.Writer, ents []zab.Entry) error {
	const chunk = 1 << 20
	buf := make([]byte, 0, chunk+binary.MaxVarintLen64*2)
	var crc uint32
	ws, _ := w.(vfs.WritebackStarter)
	var off int64
	flush := func() error {
		crc = crc32.Update(crc, crcTable, buf)
		n, err := w.Write(buf)
		if ws != nil && err == nil {
			// Best effort: without it the fsync writes the chunk.
			_ = ws.StartWriteback(off, int64(n))
		}
		off += int64(n)
		buf = buf[:0]
		return err
	}
	buf = append(buf, checkpointMagic...)
	buf = binary.BigEndian.AppendUint64(buf, checkpointBodySize(ents))
	buf = binary.AppendUvarint(buf, uint64(len(ents)))
	for _, e := range ents {
		buf = binary.AppendUvarint(buf, uint64(e.Zxid))
		buf = binary.AppendUvarint(buf, uint64(len(e.Data)))
		for d := e.Data; len(d) > 0; {
			n := min(len(d), chunk-len(buf))
			if n <= 0 {
				if err := flush(); err != nil {
					return err
				}
				continue
			}
			buf = append(buf, d[:n]...)
			d = d[n:]
		}
		if len(buf) >= chunk {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	crc = crc32.Update(crc, crcTable, buf)
	_, err := w.Write(binary.BigEndian.AppendUint32(buf, crc))
	return err
}

// checkpointBodySize is the length of the body encodeCheckpoint writes for
// ents: the count, and each entry's zxid, length and data.
func checkpointBodySize(ents []zab.Entry) uint64 {
	n := uvarintLen(uint64(len(ents)))
	for _, e := range ents {
		n += uvarintLen(uint64(e.Zxid)) + uvarintLen(uint64(len(e.Data))) + uint64(len(e.Data))
	}
	return n
}

func uvarintLen(v uint64) uint64 {
	n := uint64(1)
	for ; v >= 0x80; v >>= 7 {
		n++
	}
	return n
}

// decodeCheckpoint decodes what encodeCheckpoint wrote, ignoring any bytes
// after the checksum. It also reads the first version's sidecars (magic
// CKPT1: no length, the checksum in the file's last four bytes), which a
// server upgraded while stopped finds on disk.
func decodeCheckpoint(b []byte) ([]zab.Entry, error) {
	var body []byte
	switch {
	case len(b) >= len(checkpointMagic)+8+4 && string(b[:len(checkpointMagic)]) == checkpointMagic:
		n := binary.BigEndian.Uint64(b[len(checkpointMagic):])
		start := uint64(len(checkpointMagic) + 8)
		if n > uint64(len(b))-start-4 {
			return nil, fmt.Errorf("%w: shorter than its length", errBadCheckpoint)
		}
		end := start + n
		if crc32.Checksum(b[:end], crcTable) != binary.BigEndian.Uint32(b[end:]) {
			return nil, fmt.Errorf("%w: checksum", errBadCheckpoint)
		}
		body = b[start:end]
	case len(b) >= len(checkpointMagicV1)+4 && string(b[:len(checkpointMagicV1)]) == checkpointMagicV1:
		end := len(b) - 4
		if crc32.Checksum(b[:end], crcTable) != binary.BigEndian.Uint32(b[end:]) {
			return nil, fmt.Errorf("%w: checksum", errBadCheckpoint)
		}
		body = b[len(checkpointMagicV1):end]
	default:
		return nil, errBadCheckpoint
	}
	p := body
	next := func() (uint64, bool) {
		v, n := binary.Uvarint(p)
		if n <= 0 {
			return 0, false
		}
		p = p[n:]
		return v, true
	}
	count, ok := next()
	if !ok || count > uint64(len(p)) {
		return nil, errBadCheckpoint
	}
	ents := make([]zab.Entry, 0, count)
	var last zab.Zxid
	for range count {
		z, ok1 := next()
		n, ok2 := next()
		if !ok1 || !ok2 || n > uint64(len(p)) || zab.Zxid(z) <= last {
			return nil, errBadCheckpoint
		}
		ents = append(ents, zab.Entry{Zxid: zab.Zxid(z), Data: p[:n:n]})
		p = p[n:]
		last = zab.Zxid(z)
	}
	if len(p) != 0 {
		return nil, errBadCheckpoint
	}
	return ents, nil
}

// readCheckpoint returns the entries of checkpoint.<zxid>, or ok false
// when there is none (the snapshot is a busy one) or it is damaged.
func (st *storage) readCheckpoint(zxid int64) (ents []zab.Entry, ok bool) {
	path := filepath.Join(st.snapDir, checkpointName(zxid))
	f, err := st.fs.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false
	}
	if err != nil {
		st.log.Warn("cannot read checkpoint; recovering as from a busy snapshot", "file", path, "err", err)
		return nil, false
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err == nil {
		ents, err = decodeCheckpoint(b)
	}
	if err != nil {
		st.log.Warn("damaged checkpoint; recovering as from a busy snapshot", "file", path, "err", err)
		return nil, false
	}
	return ents, true
}

// writeCheckpoint makes what is on disk complete: a snapshot plus a
// sidecar holding every log entry after it that this server holds.
//
// Where it can, it names the newest snapshot already on disk, a busy
// (fuzzy) one, and writes only the sidecar: the entries after that
// snapshot's zxid, applied ones included. A restart then recovers as sync
// mode does, fuzzy snapshot plus replay (transactions are idempotent), and
// the checkpoint costs O(writes since the last busy snapshot) instead of
// O(tree): it is written while the ensemble waits to elect, so its cost is
// the restoration time after a leader fails (the thesis's Fig. 5.4).
//
// Otherwise (no snapshot yet, or the in-memory log no longer reaches back
// to the newest one, as after a SNAP sync) it writes a complete snapshot of
// the tree under the read lock, exact at its zxid A, and the entries after
// A: committed ones not yet applied and proposals not yet committed.
//
// entriesAfter returns the log after a zxid, or an error if the log no
// longer holds all of it.
func (st *storage) writeCheckpoint(s *Server, entriesAfter func(zxid int64) ([]zab.Entry, error)) error {
	// A busy snapshot still running stops and is not published after this
	// (see storage.snapshot): the sidecar must stay beside the newest
	// snapshot. Waiting for it to stop (its file removed at its next
	// 64 KiB chunk) keeps its CPU and its dirty pages, which the
	// sidecar's fsync could otherwise have to write, out of the way.
	start := time.Now()
	defer st.checkpointWritten(start)
	st.ckptMu.Lock()
	st.ckptSeq.Add(1)
	st.ckptMu.Unlock()
	if st.snapping.Load() {
		// Up to a second: a snapshot stuck on a slow disk must not hold
		// the election back.
		t := time.NewTimer(time.Second)
		select {
		case <-*st.snapDone.Load():
		case <-t.C:
		}
		t.Stop()
	}
	waited := time.Since(start)
	st.ckptMu.Lock()
	defer st.ckptMu.Unlock()
	if infos, err := snap.Newest(st.fs, st.snapDir); err == nil && len(infos) > 0 {
		base := infos[0].Zxid
		if ents, err := entriesAfter(base); err == nil {
			t, err := st.writeSidecar(base, ents)
			if err != nil {
				return err
			}
			st.log.Info("checkpoint written beside the newest snapshot", "snapshot", hex(base), "entriesAfter", len(ents),
				"took", time.Since(start), "waitedForSnapshot", waited, "wrote", t.wrote, "synced", t.synced, "renamed", t.renamed)
			return nil
		}
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	zxid := s.tree.LastZxid()
	ents, err := entriesAfter(zxid)
	if err != nil {
		st.log.Warn("checkpoint without the log after the tree", "zxid", hex(zxid), "err", err)
	}
	if _, err := st.writeSidecar(zxid, ents); err != nil {
		return err
	}
	w, err := snap.Create(st.fs, st.snapDir, zxid)
	if err != nil {
		return err
	}
	if err := s.tree.WriteSnapshot(w, nil); err != nil {
		w.Abort()
		return err
	}
	if err := w.Commit(); err != nil {
		return err
	}
	st.countSnapshot(snapCheckpoint)
	st.log.Info("checkpoint written with a complete snapshot", "zxid", hex(zxid), "entriesAfter", len(ents), "took", time.Since(start))
	return nil
}

// sidecarTimes says where a sidecar's time went (for the log line): the
// time to create and write it, to sync it, and to rename it into place and
// sync the directory.
type sidecarTimes struct{ wrote, synced, renamed time.Duration }

// writeSidecar writes checkpoint.<zxid> durably (file synced, then
// renamed into place; the snapshot's publication or the caller's syncs the
// directory).
func (st *storage) writeSidecar(zxid int64, ents []zab.Entry) (sidecarTimes, error) {
	var t sidecarTimes
	t0 := time.Now()
	path := filepath.Join(st.snapDir, checkpointName(zxid))
	f, tmp, err := st.openCheckpointFile(path)
	if err != nil {
		return t, fmt.Errorf("checkpoint log: %w", err)
	}
	err = encodeCheckpoint(f, ents)
	t1 := time.Now()
	t.wrote = t1.Sub(t0)
	if err == nil {
		err = f.Sync()
	}
	t2 := time.Now()
	t.synced = t2.Sub(t1)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = st.fs.Rename(tmp, path)
	}
	if err == nil {
		err = st.fs.SyncDir(st.snapDir)
	}
	t.renamed = time.Since(t2)
	if err != nil {
		return t, fmt.Errorf("checkpoint log: %w", err)
	}
	st.sidecarWritten(ents)
	return t, nil
}

// purgeCheckpoints removes sidecars whose snapshot is gone.
func (st *storage) purgeCheckpoints() {
	names, err := st.fs.List(st.snapDir)
	if err != nil {
		return
	}
	have := map[int64]bool{}
	infos, _ := snap.Newest(st.fs, st.snapDir)
	for _, in := range infos {
		have[in.Zxid] = true
	}
	for _, n := range names {
		hexZ, ok := cutPrefix(n, checkpointPrefix)
		if !ok {
			continue
		}
		z, err := strconv.ParseInt(hexZ, 16, 64)
		if err != nil || have[z] {
			continue
		}
		st.fs.Remove(filepath.Join(st.snapDir, n))
	}
}

func cutPrefix(s, prefix string) (string, bool) {
	if len(s) < len(prefix) || s[:len(prefix)] != prefix {
		return "", false
	}
	return s[len(prefix):], true
}

// invalidateCheckpoints removes every checkpoint sidecar, durably. A
// server calls it when it leaves election: from then on it may
// acknowledge proposals no snapshot of it holds, so a restart from what
// is on disk must be a recovering one until the next checkpoint.
//
// The first it finds becomes the spare the next checkpoint is written over
// (checkpoint_spare.go); a rename is as durable as a removal once the
// directory is synced.
func (st *storage) invalidateCheckpoints() error {
	st.ckptMu.Lock()
	defer st.ckptMu.Unlock()
	names, err := st.fs.List(st.snapDir)
	if err != nil {
		return err
	}
	removed := false
	for _, n := range names {
		if _, ok := cutPrefix(n, checkpointPrefix); ok {
			path := filepath.Join(st.snapDir, n)
			if removed {
				err = st.fs.Remove(path)
			} else {
				err = st.fs.Rename(path, filepath.Join(st.snapDir, spareCheckpointName))
			}
			if err != nil {
				return err
			}
			removed = true
		}
	}
	if removed {
		t0 := time.Now()
		err := st.fs.SyncDir(st.snapDir)
		st.log.Info("checkpoints removed: this server acknowledges beyond them now", "took", time.Since(t0))
		return err
	}
	return nil
}
