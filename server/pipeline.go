package server

import (
	"fmt"
	"time"

	"github.com/corral-db/corral/datatree"
	"github.com/corral-db/corral/internal/probe"
	"github.com/corral-db/corral/wire"
)

// fatal stops the process after a storage failure, as ZooKeeper does:
// continuing would acknowledge writes that are not durable, and every
// write already acknowledged is safe on disk.
func (s *Server) fatal(msg string, err error) {
	s.log.Error(msg+"; exiting", "err", err)
	s.opts.OnFatal(fmt.Errorf("%s: %w", msg, err))
}

// applyLoop applies committed groups to the tree and answers them.
func (s *Server) applyLoop() {
	for batch := range s.applyCh {
		s.applyMu.Lock()
		s.applyBatch(batch)
		s.applyMu.Unlock()
		s.applyQueued.Add(-1)
	}
}

// handToApply passes a committed group to the apply goroutine, or, if
// inline and the apply goroutine has nothing queued or in hand, applies
// and answers it on the caller's goroutine (a standalone server's lone
// write: replica.drive). Callers are serialised by the driver's Process,
// so a group applied here follows every group handed over before. It
// reports whether it applied the group here: the caller may then reuse
// batch's array; a group handed over is the apply goroutine's.
func (s *Server) handToApply(batch []*request, inline bool) bool {
	if inline && s.applyQueued.Load() == 0 {
		s.applyMu.Lock()
		s.applyBatch(batch)
		s.applyMu.Unlock()
		s.stats.inlineWrites.Add(int64(len(batch)))
		return true
	}
	s.applyQueued.Add(1)
	s.stats.handedWrites.Add(int64(len(batch)))
	s.applyCh <- batch
	return false
}

// applyBatch applies a durable group to the tree and answers it; the
// caller holds applyMu.
func (s *Server) applyBatch(batch []*request) {
	f := s.fired
	// The connections answered here are held, so their replies do not
	// wake their writer goroutines one by one; once the tree's lock is
	// released this goroutine writes them itself, without blocking
	// (tryRelease). A wake-up and the writer's park cost more CPU than
	// the write, and with one request in flight per client nothing else
	// would share it.
	ans := s.answering[:0]
	for _, r := range batch {
		if r.c != nil && r.onDone == nil {
			r.c.out.hold()
			ans = append(ans, r.c)
		}
	}
	s.mu.Lock()
	for _, r := range batch {
		if r.install != nil {
			s.installTree(r.install)
			s.releaseMemory("installing the leader's snapshot")
			continue
		}
		r.res.Events = s.events[:0]
		probe.Mark("apply", r.hdr.Zxid)
		var rm []removed
		if rl := s.store.rl; rl != nil {
			rm = rl.removedRefs(s.nodeData, &r.tx, nil)
		}
		s.tree.Apply(&r.hdr, &r.tx, &r.res)
		if rm != nil {
			s.store.rl.noteRemoved(s.nodeData, r.hdr.Zxid, rm)
		}
		s.afterApply(r)
		for i := range r.res.Events {
			s.fire(&r.res.Events[i], f)
		}
		clear(r.res.Events) // the paths and ACLs they name
		s.events, r.res.Events = r.res.Events[:0], nil
		if r.onApplied != nil {
			r.onApplied(r)
		}
		if r.onDone == nil && r.c != nil {
			// Answer now, before the next write is applied: reads this
			// connection queued behind r must see r and nothing later.
			r.done.Store(true)
			r.c.drain(true)
		}
	}
	last := s.tree.LastZxid()
	s.appliedZ.Store(last)
	s.releaseAppliedWaits(last)
	s.rep.releaseBarriers(last)
	s.mu.Unlock()
	for i, c := range ans {
		c.out.tryRelease(c.tryWrite, c.onWrite)
		ans[i] = nil
	}
	s.answering = ans[:0]
	s.rep.checkWritable(last)
	for _, r := range batch {
		s.applied(r)
	}
	for _, r := range batch {
		if r.onDone != nil {
			r.onDone(r)
		}
	}
}

// afterApply keeps the session tracker in step with the tree.
func (s *Server) afterApply(r *request) {
	s.auditCloseSession(r)
	switch r.hdr.Type {
	case wire.OpCreateSession:
		s.sessions.add(r.hdr.SessionID, r.tx.Timeout)
	case wire.OpCloseSession:
		if sess := s.sessions.remove(r.hdr.SessionID); sess != nil {
			if c := sess.owner.Load(); c != nil && r.c != c {
				// Expired (or closed from elsewhere): drop its connection,
				// sending nothing (PROTOCOL §11).
				c.close(errSessionClosed)
			}
		}
	}
}

// fire delivers one watch event to the connections it triggers, filtered
// by READ permission on the node at trigger time. It runs under the tree's
// write lock, which is what puts the notification ahead of any reply that
// could show the change.
func (s *Server) fire(ev *datatree.Event, f *fired) {
	s.watches.trigger(ev.Type, ev.Path, f)
	for _, set := range [2]map[*conn]struct{}{f.data, f.child} {
		for c := range set {
			if ev.ACL != nil && !datatree.CheckPerm(ev.ACL, wire.PermRead, c.authIDs()) {
				continue
			}
			c.notify(ev.Type, ev.Path, ev.Zxid)
		}
	}
}

// replyWrite answers a write once it is applied and its turn has come.
func (s *Server) replyWrite(r *request) {
	s.auditWrite(r)
	c := r.c
	zxid := r.hdr.Zxid
	code := r.res.Err
	if r.hdr.Type == wire.OpError {
		code = r.tx.Err
	}
	if code == wire.CodeSessionMoved || r.op == wire.OpMulti && multiMoved(&r.res) {
		// A connection-level error: the connection is closed, not
		// answered, as ZooKeeper's FinalRequestProcessor does
		// (ZOOKEEPER-710); the client is on another one already.
		c.close(errSessionMoved)
		return
	}
	var body wire.Record
	if code == wire.CodeOK {
		switch r.op {
		case wire.OpCreate:
			body = &wire.CreateResponse{Path: r.res.Path}
		case wire.OpCreate2, wire.OpCreateContainer, wire.OpCreateTTL:
			body = &wire.Create2Response{Path: r.res.Path, Stat: r.res.Stat}
		case wire.OpSetData, wire.OpSetACL:
			body = &wire.StatResponse{Stat: r.res.Stat}
		case wire.OpReconfig:
			// ZooKeeper answers the configuration now committed and the
			// stat of /zookeeper/config.
			body = &wire.GetDataResponse{Data: r.tx.Data, Stat: r.res.Stat}
		case wire.OpMulti:
			body = multiResponse(&r.res)
		case wire.OpSync:
			body = &wire.SyncResponse{Path: r.rec.(*wire.PathRequest).Path}
		}
	}
	c.reply(r.xid, zxid, code, body)
	s.recordLatency(c, r, zxid)
	if r.op == wire.OpCloseSession {
		c.out.finish()
	}
}

// multiMoved reports whether a multi failed with SessionMoved.
func multiMoved(res *datatree.Result) bool {
	for i := range res.Multi {
		if res.Multi[i].Err == wire.CodeSessionMoved {
			return true
		}
	}
	return false
}

func multiResponse(res *datatree.Result) *wire.MultiResponse {
	out := &wire.MultiResponse{Results: make([]wire.MultiResult, len(res.Multi))}
	for i := range res.Multi {
		m := &res.Multi[i]
		o := &out.Results[i]
		o.Type, o.Err, o.Path, o.Stat = m.Type, m.Err, m.Path, m.Stat
		if m.Err != wire.CodeOK || m.Type == wire.OpError {
			o.Type = wire.OpError
		}
	}
	return out
}

// installTree replaces the tree with a snapshot from the leader (SNAP);
// the caller holds the write lock. The session table follows the tree.
func (s *Server) installTree(t *datatree.Tree) {
	packLogs(&s.opts, t) // restore's; a SNAP's is packed already

	s.tree = t
	s.setLocalConfig(t)
	live := t.Sessions()
	s.sessions.mu.Lock()
	for id := range s.sessions.sessions {
		if _, ok := live[id]; !ok {
			delete(s.sessions.sessions, id)
		}
	}
	s.sessions.mu.Unlock()
	for id, to := range live {
		s.sessions.add(id, to)
	}
}

// setLocalConfig writes this member's configuration into a tree it starts
// from or installs (a leader's snapshot carries the leader's copy).
func (s *Server) setLocalConfig(t *datatree.Tree) {
	e := s.opts.Ensemble
	if e == nil {
		return
	}
	text, version := e.Config, e.ConfigVersion
	if s.rep != nil {
		if s.rep.adoptTreeConfig(t) {
			// The tree holds a newer committed configuration: keep it.
			return
		}
		text, version = s.rep.configText()
	}
	if len(text) > 0 {
		// The version as the node's mzxid, as ZooKeeper's
		// initConfigInZKDatabase leaves it: a SNAP of this tree tells a
		// member that starts from it which configuration it holds
		// (adoptTreeConfig).
		t.SetLocalConfig(text, version, time.Now().UnixMilli())
	}
}
