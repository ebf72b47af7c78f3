package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync/atomic"
	"time"

	"github.com/corral-db/corral/internal/probe"
	"github.com/corral-db/corral/replica/snapstream"
	"github.com/corral-db/corral/txn"
	"github.com/corral-db/corral/wire"
	"github.com/corral-db/corral/zab"
)

// treeSM is the znode tree as the driver's repl.StateMachine. Apply
// matches committed entries to the requests waiting for them and hands
// them to the server's apply goroutine (pipeline.go), which applies them
// to the tree, answers clients and fires watches; it does not wait for
// that, so Applied is what was handed over.
type treeSM struct {
	rp *replica
	st *storage
	// handed is the zxid of the last entry handed to the apply goroutine.
	handed atomic.Int64
	// durable is the zxid of the newest busy snapshot or installed one.
	durable atomic.Int64
	// scratch is the array of the last group Apply applied on its own
	// goroutine, reused for the next (Apply runs inside Process, one at a
	// time).
	scratch []*request
}

// maxScratchBatch bounds the group array treeSM.Apply keeps for reuse.
const maxScratchBatch = 64

func newTreeSM(rp *replica, st *storage, snapZxid int64) *treeSM {
	sm := &treeSM{rp: rp, st: st}
	sm.handed.Store(snapZxid)
	sm.durable.Store(snapZxid)
	return sm
}

func (sm *treeSM) Apply(ents []zab.Entry) error {
	rp := sm.rp
	// On Drive's goroutine the group is likely applied right here
	// (handToApply): it is built in scratch, kept if so.
	inline := rp.d.InDrive()
	var dst []*request
	if inline {
		dst, sm.scratch = sm.scratch, nil
	}
	batch, lost := rp.committedRequests(dst, ents)
	for _, r := range lost {
		rp.s.abandon(r, errors.New("forwarded request lost on the way to the leader"))
	}
	for _, r := range batch {
		if r.hdr.Type == wire.OpReconfig {
			rp.reconfigCommitted(r.tx.Data, r.hdr.Zxid)
		}
	}
	if rl := sm.st.rl; rl != nil {
		for _, r := range batch {
			if err := rl.forApply(r); err != nil {
				return err
			}
		}
	}
	if len(batch) > 0 {
		probe.Mark("node-to-apply", batch[len(batch)-1].hdr.Zxid)
		if rp.s.handToApply(batch, inline) && cap(batch) <= maxScratchBatch {
			clear(batch)
			sm.scratch = batch[:0]
		}
	}
	sm.handed.Store(int64(ents[len(ents)-1].Zxid))
	return nil
}

func (sm *treeSM) Applied() zab.Zxid { return zab.Zxid(sm.handed.Load()) }
func (sm *treeSM) Durable() zab.Zxid { return zab.Zxid(sm.durable.Load()) }

// Snapshot writes a fuzzy snapshot of the tree (storage.takeSnapshot)
// when the driver's scheduler says one is due; the driver cuts its log to
// the busy ones. A snapshot a checkpoint overtook is dropped (the
// checkpoint is newer): the durable zxid stays.
func (sm *treeSM) Snapshot(context.Context) (zab.Zxid, error) {
	// Counted by kind through the driver's OnSnapshot, which knows it.
	z, err := sm.st.takeSnapshot(sm.rp.s, false, "")
	if err != nil || z < 0 {
		return sm.Durable(), err
	}
	sm.durable.Store(z)
	return zab.Zxid(z), nil
}

// driveSnapshots is the server's snapshot goroutine: it asks the
// driver's scheduler every idleCheck (Driver.MaybeSnapshot), which owns
// when snapshots are taken (busy by count, diskless idle lulls, spacing).
func (sm *treeSM) driveSnapshots(ctx context.Context) {
	st := sm.st
	if st.wal == nil {
		if err := st.makeSpareCheckpoint(ctx); err != nil && ctx.Err() == nil {
			st.log.Warn("cannot make the spare checkpoint file; checkpoints are written into new files", "err", err)
		}
	}
	t := time.NewTicker(st.idleCheck)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if _, err := sm.rp.d.MaybeSnapshot(ctx); err != nil && ctx.Err() == nil {
			st.log.Error("snapshot failed", "err", err)
		}
	}
}

// WriteSnapshot writes the tree under its read lock. The server sends
// snapshot files instead (Env.SnapshotImage); this serves other drivers
// of the tree.
func (sm *treeSM) WriteSnapshot(_ context.Context, w io.Writer) (zab.Zxid, error) {
	s := sm.rp.s
	s.mu.RLock()
	defer s.mu.RUnlock()
	return zab.Zxid(s.tree.LastZxid()), s.tree.WriteSnapshot(w, nil)
}

// InstallSnapshot replaces the tree with the leader's snapshot (SNAP):
// written to disk as this server's newest, then swapped in by the apply
// goroutine after what it applies before.
func (sm *treeSM) InstallSnapshot(_ context.Context, r io.Reader) (zab.Zxid, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return 0, err
	}
	var img treeImage
	switch {
	case snapstream.IsHeader(data):
		var done func()
		if img, done, err = sm.rp.streamedTree(data); err != nil {
			return 0, err
		}
		defer done()
	case sm.st.rl != nil && isImage(data):
		if data, err = sm.st.rl.install(data); err != nil {
			return 0, err
		}
		img = bytesImage(data)
	case isImage(data):
		return 0, errors.New("the leader's snapshot carries log payloads (rlog.root) and this member has no rlog.root: " +
			"every member needs the same rlog.root")
	default:
		img = bytesImage(data)
	}
	tree, err := sm.st.installSnapshot(img)
	if err != nil {
		return 0, err
	}
	// The apply goroutine owns the tree once it is handed over: read
	// what the log line needs first.
	z, nodes := tree.LastZxid(), tree.NodeCount()
	sm.rp.s.handToApply([]*request{{install: tree, hdr: txn.Header{Zxid: z}}}, false)
	sm.handed.Store(z)
	sm.durable.Store(z)
	sm.rp.log.Info("installed the leader's snapshot", "zxid", hex(z), "nodes", nodes)
	return zab.Zxid(z), nil
}

// walStore is the transaction log as the driver's replica.LogStore.
type walStore struct {
	rp *replica
	st *storage
}

func (w walStore) Append(ents []zab.Entry) error {
	for _, e := range ents {
		if err := w.st.appendEntry(e); err != nil {
			return err
		}
		w.rp.s.stats.lastProposalSize.Store(int64(len(e.Data)))
	}
	return nil
}

// Sync makes the appended records durable (storage.syncEntries).
func (w walStore) Sync() error { return w.st.syncEntries() }

func (w walStore) TruncateAfter(z zab.Zxid) error {
	w.st.positions.dropAfter(int64(z))
	if err := w.st.wal.TruncateAfter(int64(z)); err != nil {
		return err
	}
	return w.st.wal.Sync()
}

// hardStateFile is the epoch files as the driver's HardStateStore.
type hardStateFile struct {
	st   *storage
	prev zab.HardState
}

func (h *hardStateFile) SaveHardState(hs zab.HardState) error {
	if err := h.st.writeHardState(hs, h.prev); err != nil {
		return fmt.Errorf("writing the epochs: %w", err)
	}
	h.prev = hs
	return nil
}

// checkpointFiles is the diskless checkpoint (checkpoint.go) as the
// driver's Checkpointer.
type checkpointFiles struct {
	rp *replica
	st *storage
}

func (c checkpointFiles) Checkpoint(entries func(after zab.Zxid) ([]zab.Entry, error)) error {
	return c.st.writeCheckpoint(c.rp.s, func(zxid int64) ([]zab.Entry, error) { return entries(zab.Zxid(zxid)) })
}

func (c checkpointFiles) Invalidate() error { return c.st.invalidateCheckpoints() }
