package rlog

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/corral-db/corral/rlog/datalog"
	"github.com/corral-db/corral/vfs"
	"github.com/corral-db/corral/wal"
	"github.com/corral-db/corral/zab"
)

// Store is the replication driver's log store (replica.LogStore) for a
// State: the hook that splits each entry before the WAL. Append writes an
// append's payload to the data log at once (Persist) and buffers the WAL
// form, which names this member's position instead of carrying the bytes;
// Sync waits until the data log has synced every payload appended so far,
// then syncs the WAL: an append's data is durable before its commit
// record, and the driver acknowledges only after Sync.
type Store struct {
	s *State
	w *wal.Log
}

// OpenStore opens the WAL in dir/wal for s.
func OpenStore(s *State, fsys vfs.FS, dir string, opts wal.Options) (*Store, error) {
	w, err := wal.Open(fsys, filepath.Join(dir, "wal"), opts)
	if err != nil {
		return nil, err
	}
	st := &Store{s: s, w: w}
	s.mu.Lock()
	s.hasStore = true
	s.onDurable = st.purge
	s.mu.Unlock()
	return st, nil
}

// Append persists payloads and buffers the WAL records.
func (st *Store) Append(ents []zab.Entry) error {
	for _, e := range ents {
		walData, _, err := st.s.Persist(context.Background(), e)
		if err != nil {
			return err
		}
		if err := st.w.Append(int64(e.Zxid), walData); err != nil {
			return err
		}
	}
	return nil
}

// Sync syncs the data log up to everything written so far (every payload
// the WAL's records name, and any Apply wrote early), then the WAL. It
// waits for the data log's current end rather than a remembered one: a
// SNAP or TRUNC may have cut the data log below it.
func (st *Store) Sync() error {
	if err := st.s.WaitData(context.Background(), st.s.dl.Written()); err != nil {
		return err
	}
	return st.w.Sync()
}

// TruncateAfter cuts the WAL after z, then the data log at the first
// payload of a cut entry (TRUNC cuts both logs).
func (st *Store) TruncateAfter(z zab.Zxid) error {
	if err := st.w.TruncateAfter(int64(z)); err != nil {
		return err
	}
	return st.s.cutAfter(z)
}

// Load returns the WAL's entries after the State's applied zxid in the
// proposal form (payloads read back from the data log), for the driver's
// Config.Log, and notes where each payload is so Apply does not store it
// twice.
func (st *Store) Load() ([]zab.Entry, error) {
	var out []zab.Entry
	referenced := map[datalog.Pos]bool{}
	err := st.w.ReadFrom(int64(st.s.Applied())+1, func(z int64, data []byte) error {
		m, err := Decode(data)
		if err != nil {
			return fmt.Errorf("rlog: WAL record %#x: %w", z, err)
		}
		if m.Op != OpAppend || m.Local == nil {
			out = append(out, zab.Entry{Zxid: zab.Zxid(z), Data: append([]byte(nil), data...)})
			return nil
		}
		referenced[*m.Local] = true
		payload, err := st.s.Payload(*m.Local)
		if err != nil {
			return fmt.Errorf("rlog: WAL record %#x: %w", z, err)
		}
		prop, err := AttachPayload(data, payload)
		if err != nil {
			return err
		}
		st.s.notePersisted(zab.Zxid(z), *m.Local)
		out = append(out, zab.Entry{Zxid: zab.Zxid(z), Data: prop})
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, st.s.CutOrphans(referenced)
}

// purge drops the WAL segments whose records a local snapshot at z
// covers: a restart replays the WAL only after the snapshot, and the
// driver serves learners from its in-memory log. A failure is only
// logged (the segments stay, and the next snapshot tries again).
func (st *Store) purge(z zab.Zxid) {
	if err := st.w.PurgeBefore(int64(z) + 1); err != nil {
		st.s.opts.Logger.Warn("rlog: purging the WAL", "below", fmt.Sprintf("%#x", int64(z)+1), "err", err)
	}
}

// Close closes the WAL.
func (st *Store) Close() error { return st.w.Close() }
