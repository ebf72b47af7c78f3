package server

// A session moves to another connection when its client reconnects. The
// client then asks, on the new connection, what became of the requests
// whose replies the old one lost (the recipes look for an ephemeral
// sequential node by the GUID in its name before creating it again), so
// the server must order one session's requests across its connections,
// as ZooKeeper does:
//
//   - a write the old connection handed to prep before the move is
//     applied before the client hears that the new connection is up, so
//     the client's first read sees it (moveSession waits for it);
//   - a write the old connection hands over after the move (frames its
//     reader had already taken from the socket, or a reconnect racing
//     with a late frame) is refused with SessionMoved (checkSession), so
//     it cannot land after the client looked and found nothing.
//
// Without both, a lock request sent just before a connection dropped
// could be created after the client's look-up on the new connection
// missed it: the client queues a second node, and the first stays, owned
// by a live session that no longer knows of it, in front of every later
// waiter.
//
// Both hold on a standalone server, where prep runs under prepMu. In an
// ensemble the owner test covers the connections of the member that
// preps (the leader), and the wait is left to the client's sync, which
// its learner forwards behind the writes it forwarded before. Not yet
// covered there: a write forwarded for the old connection by another
// learner, or by the same learner after the move (ZooKeeper's leader
// records which learner owns a session and refuses the others').

// appliedWait is a reconnect waiting until the tree has applied zxid.
type appliedWait struct {
	zxid int64
	ch   chan struct{}
}

// moveSession makes c the connection of sess, an existing session
// reconnecting, and on a standalone server waits until every write
// prepped before the move has been applied. It returns false if the
// server stops first.
func (s *Server) moveSession(c *conn, sess *session) bool {
	s.prepMu.Lock()
	c.attach(sess)
	// Writes are proposed under prepMu, so the driver's last zxid is
	// the newest write any connection of sess handed over.
	z := int64(s.rep.d.LastZxid())
	s.prepMu.Unlock()
	if !s.standalone {
		return true // the client's sync orders it; see above
	}
	return s.waitApplied(z)
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
