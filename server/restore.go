package server

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/corral-db/corral/datatree"
	"github.com/corral-db/corral/migrate"
	"github.com/corral-db/corral/snap"
	"github.com/corral-db/corral/wire"
	"github.com/corral-db/corral/zab"
)

// Restoring a standalone server's tree from a snapshot stream: the
// AdminServer's restore command (ZooKeeper's
// ZooKeeperServer.restoreFromSnapshot). See docs/design/operability.md.

// ErrRestoreEnsemble refuses a restore on an ensemble member. ZooKeeper
// restores only the server the stream is sent to, which leaves that
// member's tree different from the others' under the same zxids: the
// replicas diverge silently and a later election decides which tree
// survives. corral refuses instead; an ensemble is restored by restoring
// one standalone server and starting the members from its dataDir.
var ErrRestoreEnsemble = errors.New("restore is refused on an ensemble member: " +
	"it would replace this member's tree alone and leave the replicas diverged; " +
	"restore into a standalone server and start the ensemble's members from its dataDir")

// ErrRestoreLogs refuses a restore on a server with replicated logs
// (rlog.root): the log payloads a tree names are not in its snapshot.
var ErrRestoreLogs = errors.New("restore is refused on a server with rlog.root: " +
	"a snapshot stream does not carry the logs' payloads")

// ErrBadSnapshot wraps every error about the stream itself (truncated,
// corrupt, not a snapshot): nothing was changed.
var ErrBadSnapshot = errors.New("bad snapshot stream")

// snapMagicCorral and snapMagicZooKeeper begin corral's snapshot format
// (datatree) and ZooKeeper's (FileSnap); 0x1f 0x8b begins a gzip stream,
// which only ZooKeeper's snapshots are (snapshot.compression.method).
var (
	snapMagicCorral    = []byte("CTRE")
	snapMagicZooKeeper = []byte("ZKSN")
)

// readRestoreStream decodes a whole snapshot stream, in either format,
// into a tree. Every check (magic, CRC or Adler-32 seals, shape) passes
// before it returns a tree, so a truncated or corrupt stream changes
// nothing.
func readRestoreStream(r io.Reader) (*datatree.Tree, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	head, err := br.Peek(4)
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%w: %d bytes, too short for a snapshot", ErrBadSnapshot, len(head))
		}
		return nil, fmt.Errorf("%w: %w", ErrBadSnapshot, err)
	}
	var t *datatree.Tree
	switch {
	case bytes.Equal(head, snapMagicCorral):
		t, err = datatree.ReadSnapshot(br)
	case bytes.Equal(head, snapMagicZooKeeper), head[0] == 0x1f && head[1] == 0x8b:
		t, err = migrate.ReadZooKeeperSnapshot(br)
	default:
		return nil, fmt.Errorf("%w: starts with %q, neither corral's snapshot (%q) nor ZooKeeper's (%q)",
			ErrBadSnapshot, head, snapMagicCorral, snapMagicZooKeeper)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadSnapshot, err)
	}
	return t, nil
}

// restoreWaitWritable bounds how long a restore waits for a server that
// has just started to become writable.
const restoreWaitWritable = 30 * time.Second

// RestoreSnapshot replaces this standalone server's tree and sessions with
// the snapshot stream r: corral's format (what the snapshot command
// streams) or ZooKeeper's (what ZooKeeper's does). It returns the zxid the
// server is at afterwards.
//
// The stream is decoded and checked whole before anything changes. Then
// prep is held (writes wait), the writes already in the pipeline are
// applied, and the restored tree takes the zxid after the server's last
// one, or the snapshot's own if that is newer: zxids never go back for
// clients that saw them, so a client's reconnection is never refused as
// "ahead of the server". The tree is written as this server's newest
// snapshot at that zxid before it is swapped in, so a restart comes back
// to it (the log before it is not replayed onto it). Afterwards:
//   - sessions not in the snapshot are gone: their connections are closed,
//     and the clients learn on reconnecting that the session expired;
//     the snapshot's sessions expire unless their clients reconnect;
//   - each watched path that the restore changed fires its watch
//     (created, deleted, data or children changed), so clients re-read.
func (s *Server) RestoreSnapshot(r io.Reader) (zxid int64, err error) {
	rp := s.rep
	if !rp.standalone {
		return 0, ErrRestoreEnsemble
	}
	if s.store.rl != nil {
		return 0, ErrRestoreLogs
	}
	start := time.Now()
	tree, err := readRestoreStream(r)
	if err != nil {
		return 0, err
	}
	s.setLocalConfig(tree)

	// Until the group of one has elected itself and applied its log, the
	// node loop may take prepMu inside Process (checkWritable), and
	// Restored below waits for Process while holding prepMu: wait for the
	// server to be writable first (it is, moments after Serve starts).
	wctx, cancel := context.WithTimeout(context.Background(), restoreWaitWritable)
	defer cancel()
	if !rp.waitWritable(wctx) {
		return 0, errors.New("the server is not serving: nothing restored")
	}
	s.prepMu.Lock()
	defer s.prepMu.Unlock()
	if err := s.drainPipeline(); err != nil {
		return 0, err
	}
	// Nothing is proposed while prepMu is held, and everything proposed is
	// applied: the driver's next zxid is the one after the server's last.
	next, err := rp.d.NextZxid()
	if err != nil {
		return 0, err
	}
	zxid = max(int64(next), tree.LastZxid())
	if err := tree.Renumber(zxid); err != nil {
		return 0, err
	}
	if err := s.store.writeRestored(tree); err != nil {
		return 0, fmt.Errorf("writing the restored snapshot: %w", err)
	}
	// The driver's log becomes the snapshot, and writes go on after it
	// (in its epoch, if that is later than the server's).
	if err := rp.d.Restored(zab.Zxid(zxid)); err != nil {
		return 0, fmt.Errorf("restoring a snapshot at %s: %w", hex(zxid), err)
	}
	rp.sm.handed.Store(zxid)
	rp.sm.durable.Store(zxid)

	s.applyMu.Lock()
	s.mu.Lock()
	old := s.tree
	dropped := s.droppedSessions(tree)
	s.installTree(tree)
	s.appliedZ.Store(zxid)
	s.releaseAppliedWaits(zxid)
	s.pending.reset()
	s.fireRestored(old, tree, zxid)
	s.mu.Unlock()
	s.applyMu.Unlock()
	for _, c := range dropped {
		c.close(errSessionClosed)
	}
	s.releaseMemory("restoring a snapshot")
	took := time.Since(start)
	s.met.restoreTime.ObserveDuration(took)
	s.log.Info("restored a snapshot", "zxid", hex(zxid), "nodes", tree.NodeCount(),
		"sessions", tree.SessionCount(), "was", hex(old.LastZxid()), "took", took)
	return zxid, nil
}

// drainPipeline waits, with prepMu held (so no write joins), until every
// write proposed has been applied to the tree. It is bounded by
// globalOutstandingLimit writes.
func (s *Server) drainPipeline() error {
	for s.appliedZxid() < int64(s.rep.d.LastZxid()) {
		if s.ctx != nil && s.ctx.Err() != nil {
			return errors.New("server stopping")
		}
		time.Sleep(time.Millisecond)
	}
	return nil
}

// droppedSessions returns the connections whose sessions the restored
// tree does not have; the caller holds the tree's write lock.
func (s *Server) droppedSessions(t *datatree.Tree) []*conn {
	live := t.Sessions()
	var out []*conn
	s.sessions.mu.RLock()
	defer s.sessions.mu.RUnlock()
	for id, sess := range s.sessions.sessions {
		if _, ok := live[id]; ok {
			continue
		}
		if c := sess.owner.Load(); c != nil {
			out = append(out, c)
		}
	}
	return out
}

// fireRestored fires the watches on every watched path whose node the
// restore created, deleted or changed (data, or children); the caller
// holds the tree's write lock and applyMu (fire's scratch).
func (s *Server) fireRestored(old, cur *datatree.Tree, zxid int64) {
	dataPaths, childPaths := s.watches.watchedPaths()
	var evs []datatree.Event
	ev := func(typ int32, path string, t *datatree.Tree, n *datatree.Node) {
		e := datatree.Event{Type: typ, Path: path, Zxid: zxid}
		if n != nil {
			e.ACL = t.ACL(n)
		}
		evs = append(evs, e)
	}
	deleted := map[string]bool{}
	for _, p := range dataPaths {
		o, n := old.Get(p), cur.Get(p)
		switch {
		case o == nil && n != nil:
			ev(wire.EventNodeCreated, p, cur, n)
		case o != nil && n == nil:
			ev(wire.EventNodeDeleted, p, old, o)
			deleted[p] = true
		case o != nil && n != nil && !sameData(o, n):
			ev(wire.EventNodeDataChanged, p, cur, n)
		}
	}
	for _, p := range childPaths {
		o, n := old.Get(p), cur.Get(p)
		switch {
		case o != nil && n == nil && !deleted[p]:
			ev(wire.EventNodeDeleted, p, old, o)
		case o != nil && n != nil && !sameChildren(o, n):
			ev(wire.EventNodeChildrenChanged, p, cur, n)
		}
	}
	for i := range evs {
		s.fire(&evs[i], s.fired)
	}
}

func sameData(a, b *datatree.Node) bool {
	pa, pb := a.Persisted(), b.Persisted()
	return pa.Mzxid == pb.Mzxid && pa.Version == pb.Version && bytes.Equal(a.Data(), b.Data())
}

func sameChildren(a, b *datatree.Node) bool {
	pa, pb := a.Persisted(), b.Persisted()
	if pa.Pzxid != pb.Pzxid || a.NumChildren() != b.NumChildren() {
		return false
	}
	ca, cb := a.Children(nil), b.Children(nil)
	slices.Sort(ca)
	slices.Sort(cb)
	for i := range ca {
		if ca[i] != cb[i] {
			return false
		}
	}
	return true
}

// writeRestored makes a restored tree this server's newest snapshot,
// durably (the tree is not yet visible, so it is written without locks).
func (st *storage) writeRestored(t *datatree.Tree) error {
	w, err := snap.Create(st.fs, st.snapDir, t.LastZxid())
	if err != nil {
		return err
	}
	if err := t.WriteSnapshot(w, nil); err != nil {
		w.Abort()
		return err
	}
	if err := w.Sync(); err != nil {
		w.Abort()
		return err
	}
	return w.Commit()
}
