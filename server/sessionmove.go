package server

import "time"

// A session moves to another connection when its client reconnects. The
// client then asks, on the new connection, what became of the requests
// whose replies the old one lost (the recipes look for an ephemeral
// sequential node by the GUID in its name before creating it again), so
// the server must order one session's requests across its connections,
// as ZooKeeper does:
//
//   - a write the old connection handed over before the move is applied
//     before the client can look for it: on a standalone server before
//     the new connection is answered (moveSession waits for it); in an
//     ensemble before the client's sync on the new connection is
//     answered (if it reached the leader before the revalidation below,
//     the leader prepped it ahead of that, and so ahead of the sync);
//   - a write the old connection hands over after the move (frames its
//     reader had already taken from the socket, a reconnect racing with a
//     late frame, or a write its learner forwarded and the leader had not
//     prepped yet) is refused with SessionMoved, so it cannot land after
//     the client looked and found nothing.
//
// Without both, a lock request sent just before a connection dropped
// could be created after the client's look-up on the new connection
// missed it: the client queues a second node, and the first stays, owned
// by a live session that no longer knows of it, in front of every later
// waiter.
//
// The leader, which preps every write, keeps who owns each session
// (session.member; ZooKeeper's SessionImpl.owner, leader-local state):
//
//   - createSession: the member the client connected to;
//   - a reconnect to a learner: the learner attaches the session under
//     prepMu, sends a revalidation on the link its forwarded writes take,
//     and answers the client only when the leader has recorded it as the
//     owner (answerRevalidate; ZooKeeper's REVALIDATE, whose answer the
//     learner's client waits for too). A session the leader does not
//     know as live is refused;
//   - a reconnect to the leader: the leader itself;
//   - a new leader knows no owners (they are not replicated; clients
//     reconnect when the leader changes) and the first checked write
//     adopts its member, as SessionTrackerImpl.checkSession does.
//
// prep refuses, with SessionMoved, a write from another member than the
// owner, and on any server a write from a connection that no longer holds
// the session: the leader in prep (checkSession), a learner before
// forwarding (forward), since the leader cannot tell two connections of
// one learner apart. closeSession is not checked (the expirer sends it
// without being the owner), nor are reads and syncs (ZooKeeper's leader
// checks those, but answers a forwarded sync whatever the check says, and
// a learner serves reads without asking the leader). The client never
// sees SessionMoved: the connection that sent the refused write is
// closed instead of answered (replyWrite), as ZooKeeper's
// FinalRequestProcessor does.

// appliedWait is a reconnect waiting until the tree has applied zxid.
type appliedWait struct {
	zxid int64
	ch   chan struct{}
}

// moveResult is what became of a reconnect (moveSession).
type moveResult int

const (
	moveOK      moveResult = iota
	moveRefused            // the leader does not know the session as live
	moveFailed             // no answer (the leader was lost, or the server stops)
)

// moveSession makes c the connection of sess, an existing session
// reconnecting. A standalone server waits until every write prepped
// before the move has been applied; a learner waits until the leader
// has recorded it as the session's owner.
func (s *Server) moveSession(c *conn, sess *session) moveResult {
	s.prepMu.Lock()
	c.attach(sess)
	// Writes are proposed under prepMu, so the driver's last zxid is
	// the newest write any connection of sess handed over.
	z := int64(s.rep.d.LastZxid())
	var id int64
	var reval chan bool
	switch {
	case s.standalone:
	case s.rep.isLeader():
		sess.member.Store(s.rep.id)
	default:
		if id, reval = s.rep.revalidate(sess.id); reval == nil {
			s.prepMu.Unlock()
			return moveFailed
		}
	}
	s.prepMu.Unlock()
	switch {
	case s.standalone:
		if !s.waitApplied(z) {
			return moveFailed
		}
		return moveOK
	case reval == nil:
		return moveOK
	}
	t := time.NewTimer(time.Duration(c.timeout) * time.Millisecond)
	defer t.Stop()
	select {
	case valid, answered := <-reval:
		switch {
		case !answered:
			return moveFailed
		case !valid:
			return moveRefused
		}
		return moveOK
	case <-t.C:
	case <-s.ctx.Done():
	}
	s.rep.fw.takeReval(id)
	return moveFailed
}

// waitApplied waits until the tree has applied zxid, or the server stops.
func (s *Server) waitApplied(zxid int64) bool {
	s.waitMu.Lock()
	if s.appliedZ.Load() >= zxid {
		s.waitMu.Unlock()
		return true
	}
	w := appliedWait{zxid: zxid, ch: make(chan struct{})}
	s.appliedWaits = append(s.appliedWaits, w)
	s.waitMu.Unlock()
	select {
	case <-w.ch:
		return true
	case <-s.ctx.Done():
		return false
	}
}

// releaseAppliedWaits wakes the waits the tree has reached. Apply calls it
// after publishing appliedZ.
func (s *Server) releaseAppliedWaits(applied int64) {
	s.waitMu.Lock()
	defer s.waitMu.Unlock()
	if len(s.appliedWaits) == 0 {
		return
	}
	keep := s.appliedWaits[:0]
	for _, w := range s.appliedWaits {
		if w.zxid <= applied {
			close(w.ch)
		} else {
			keep = append(keep, w)
		}
	}
	clear(s.appliedWaits[len(keep):])
	s.appliedWaits = keep
}
