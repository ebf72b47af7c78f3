package zab

// The learner's side (ZooKeeper's Learner, Follower and Observer): open a
// session with the elected leader, accept its epoch, take its sync, and
// then follow its proposals and commits.

// lstage is where a learner's session stands.
type lstage uint8

const (
	lsDiscover  lstage = iota // FOLLOWERINFO sent
	lsEpoch                   // ACKEPOCH sent, waiting for the sync
	lsSyncing                 // sync header received, entries arriving
	lsSynced                  // NEWLEADER received
	lsBroadcast               // UPTODATE received
)

type learnerState struct {
	session uint64
	stage   lstage
	// epoch is the leader's epoch accepted in this session; rollEpoch an
	// epoch accepted by EPOCHROLL and not yet switched to.
	epoch     uint32
	rollEpoch uint32
	// synced: the NEWLEADER of the join has been made durable and
	// acknowledged, so acknowledgements may flow.
	synced  bool
	lastAck Zxid
	// peerAcks holds the other voters' acknowledgements in this session's
	// epoch (peer_ack.go).
	peerAcks map[uint64]Zxid
	// stepStart is the tick the current step of the join began, or the
	// last tick the step made progress (tickLearner, progress.go).
	stepStart int
	lastHeard int // tick of the last message from the leader (syncLimit)
	// sawLeading: the election that chose the leader had a vote from it
	// saying it led, in leadingRound; a LOOKING vote from it in a later
	// round means it gave up (election.go).
	sawLeading   bool
	leadingRound uint64
	// retryAt is when discovery asks again, retryWait the wait before
	// that: a FOLLOWERINFO lost because the link was not up yet (a leader
	// just elected, a peer just restarted) is resent, in the same session,
	// after ElectionTick ticks, then at doubling intervals up to SyncLimit.
	retryAt   int
	retryWait int
	// asFollower: an observer in its own configuration that the leader
	// asked to follow (a change it does not hold yet names it a voter).
	asFollower bool
}

func (n *Node) becomeLearner(leader uint64) {
	n.resetRole()
	n.state = StateFollowing
	if n.observer[n.id] {
		n.state = StateObserving
	}
	n.leader = leader
	n.learn = &learnerState{stepStart: n.now}
	n.logger.Debug("following", "leader", leader, "state", n.state)
	n.connect()
}

// connect opens a new session with the leader. Messages of older sessions
// are dropped on both sides from now on, as after a TCP reconnect.
func (n *Node) connect() {
	ls := n.learn
	ls.session = n.nextSession()
	ls.stage = lsDiscover
	ls.epoch, ls.rollEpoch = 0, 0
	ls.synced = false
	ls.lastAck = 0
	ls.peerAcks = nil
	ls.lastHeard = n.now
	if ls.retryWait == 0 {
		ls.retryWait = n.cfg.ElectionTick
	}
	ls.retryAt = n.now + ls.retryWait
	n.pending = nil
	n.phase = PhaseDiscovery
	n.epoch = 0
	n.sendFollowerInfo()
}

// sendFollowerInfo asks the leader for a session, saying this learner's
// role as it knows it.
func (n *Node) sendFollowerInfo() {
	m := Message{Type: MsgFollowerInfo, To: n.leader, Session: n.learn.session, Epoch: n.hs.AcceptedEpoch, NonVoting: n.recovering}
	if n.state == StateObserving {
		m.State = StateObserving
	}
	n.send(m)
}

// reconnect restarts the join with the same leader after a gap or a
// protocol error in the session (a lost message: links lose only by
// breaking, like TCP).
func (n *Node) reconnect(reason string) {
	n.logger.Debug("reconnecting to leader", "leader", n.leader, "reason", reason)
	n.learn.stepStart = n.now
	n.connect()
}

func (n *Node) tickLearner() {
	ls := n.learn
	if ls.stage < lsBroadcast {
		if n.now-ls.stepStart >= n.cfg.InitLimit {
			n.logger.Debug("a step of the join made no progress within initLimit", "leader", n.leader, "stage", ls.stage)
			n.becomeLooking()
			return
		}
		if ls.stage == lsDiscover {
			// The leader may not have been leading yet: ask again.
			if n.now >= ls.retryAt {
				// Same session: a leader that got the first one only
				// resends its LEADERINFO, so a slow answer is not
				// thrown away by a new session.
				ls.retryWait = min(2*ls.retryWait, n.cfg.SyncLimit)
				ls.retryAt = n.now + ls.retryWait
				n.sendFollowerInfo()
			}
		}
		return
	}
	if n.now-ls.lastHeard > n.cfg.SyncLimit {
		n.logger.Debug("leader silent beyond syncLimit", "leader", n.leader)
		n.becomeLooking()
	}
}

func (n *Node) stepLearner(m Message) error {
	ls := n.learn
	ls.lastHeard = n.now
	switch m.Type {
	case MsgLeaderInfo:
		if ls.stage != lsDiscover && !(m.Reject && m.State == StateLooking) {
			// A refusal after LEADERINFO comes from a leader that
			// stepped down in discovery for a better vote (stepVote):
			// it closes the session at any stage.
			return nil
		}
		if m.Reject || m.Epoch < n.hs.AcceptedEpoch {
			// Not our leader, or one behind an epoch we promised to
			// another: elect again.
			if m.Reject && m.State == StateLooking && m.Vote.Round >= n.elect.round {
				// The candidate we decided for is still looking and
				// votes for another server: our decision rested on a
				// partial view of its round (a vote of it that it has
				// since replaced, or a quorum of a configuration it
				// does not count alone). Join its round, not one past
				// it: a new round would send every server back to its
				// own vote, and we could decide again on the first
				// quorum of those, before the better vote reaches us.
				// In its round the servers we send our vote to answer
				// with theirs (stepVote), so we learn the round's best
				// vote. The simulator found elections that never ended
				// the other way, with a configuration change in some
				// logs and not in others.
				n.elect.round = m.Vote.Round - 1
			}
			n.becomeLooking()
			return nil
		}
		if m.State == StateFollowing && n.state == StateObserving {
			// The leader holds a change that makes this observer a
			// voter: it joins as a follower, and learns the change
			// from the log (membership.go).
			n.logger.Info("joining as a follower at the leader's request", "leader", n.leader)
			n.state = StateFollowing
			ls.asFollower = true
		}
		n.hs.AcceptedEpoch = m.Epoch
		ls.epoch = m.Epoch
		n.epoch = m.Epoch
		ls.stage = lsEpoch
		ls.stepStart = n.now
		n.phase = PhaseSync
		n.send(Message{Type: MsgAckEpoch, To: n.leader, Session: ls.session, Epoch: m.Epoch,
			CurrentEpoch: n.hs.CurrentEpoch, Zxid: n.log.lastZxid()})
	case MsgSync:
		if ls.stage != lsEpoch {
			n.reconnect("unexpected SYNC")
			return nil
		}
		return n.learnerSync(m)
	case MsgProposal:
		if ls.stage < lsSyncing {
			n.reconnect("PROPOSAL before SYNC")
			return nil
		}
		if n.learnerAppend(m.Prev, m.Entries) && ls.stage == lsSyncing {
			// The DIFF after the sync header: its entries are the
			// step's progress. Once NEWLEADER came, proposals are
			// broadcast and extend nothing (progress.go).
			ls.stepStart = n.now
		}
	case MsgNewLeader:
		n.learnerNewLeader(m)
	case MsgUpToDate:
		if ls.stage != lsSynced || !ls.synced {
			n.reconnect("UPTODATE before NEWLEADER")
			return nil
		}
		ls.stage = lsBroadcast
		n.phase = PhaseBroadcast
		n.recovering = false
		n.learnCommit(m.Commit)
		n.maybeAck()
	case MsgCommit:
		if ls.stage == lsBroadcast {
			n.learnCommit(m.Commit)
		}
	case MsgInform:
		if ls.stage != lsBroadcast || n.state != StateObserving {
			n.reconnect("unexpected INFORM")
			return nil
		}
		if n.learnerAppend(m.Prev, m.Entries) {
			n.learnCommit(m.Commit)
		}
	case MsgPing:
		if ls.stage == lsBroadcast {
			n.learnCommit(m.Commit)
		}
		var a Zxid
		if n.state == StateFollowing && ls.synced {
			a = n.ackable()
		}
		// Vote.Round echoes the leader's confirmation round (confirm.go).
		n.sendMergeable(Message{Type: MsgAck, To: n.leader, Session: ls.session, Zxid: a, Vote: Vote{Round: m.Vote.Round}})
	case MsgTimeoutNow:
		n.learnerTimeoutNow(m)
	case MsgEpochRoll:
		if n.state != StateFollowing || ls.stage < lsSynced {
			n.reconnect("unexpected EPOCHROLL")
			return nil
		}
		switch {
		case m.Epoch > n.hs.AcceptedEpoch:
			n.hs.AcceptedEpoch = m.Epoch
			ls.rollEpoch = m.Epoch
		case m.Epoch == ls.rollEpoch:
		default:
			// We promised a later epoch to someone else.
			n.becomeLooking()
			return nil
		}
		n.send(Message{Type: MsgAckEpochRoll, To: n.leader, Session: ls.session, Epoch: m.Epoch})
	}
	return nil
}

// learnerAppend appends entries that must directly follow prev.
func (n *Node) learnerAppend(prev Zxid, ents []Entry) bool {
	if prev != n.log.lastZxid() {
		n.reconnect("gap in the leader's stream")
		return false
	}
	last := prev
	for i := range ents {
		z := ents[i].Zxid
		if z <= last || z.Epoch() > n.learn.epoch {
			n.reconnect("entries out of order")
			return false
		}
		last = z
	}
	n.appendLog(ents...)
	return true
}

func (n *Node) learnerNewLeader(m Message) {
	ls := n.learn
	if ls.stage < lsSyncing {
		n.reconnect("NEWLEADER before SYNC")
		return
	}
	if m.Zxid != n.log.lastZxid() {
		n.reconnect("NEWLEADER does not match the log")
		return
	}
	if ls.stage == lsSyncing {
		if m.Epoch != ls.epoch {
			n.reconnect("NEWLEADER of another epoch")
			return
		}
		ls.stage = lsSynced
		ls.stepStart = n.now
	} else {
		// An in-place epoch switch (roll.go).
		if n.state != StateFollowing || m.Epoch != ls.rollEpoch || m.Epoch <= ls.epoch {
			n.reconnect("unexpected epoch switch")
			return
		}
		ls.epoch = m.Epoch
		ls.rollEpoch = 0
		ls.peerAcks = nil
		n.epoch = m.Epoch
	}
	n.pending = append(n.pending, epochPoint{epoch: m.Epoch, zxid: m.Zxid})
	n.completeEpochs()
	n.maybeAck()
}

// learnerEpochDone: the history up to p.zxid is durable and currentEpoch
// is p.epoch (in this Ready's HardState, written before its messages).
func (n *Node) learnerEpochDone(p epochPoint) {
	if !n.learn.synced {
		// The wait for UPTODATE starts when ACKNEWLEADER leaves.
		n.learn.stepStart = n.now
	}
	n.learn.synced = true
	n.send(Message{Type: MsgAckNewLeader, To: n.leader, Session: n.learn.session, Epoch: p.epoch, Zxid: p.zxid})
}

func (n *Node) learnCommit(c Zxid) {
	c = min(c, n.log.lastZxid())
	n.setCommit(c)
}

// maybeAck acknowledges what became durable.
func (n *Node) maybeAck() {
	if n.state != StateFollowing || !n.learn.synced {
		return
	}
	ls := n.learn
	if a := n.ackable(); a > ls.lastAck {
		ls.lastAck = a
		n.sendMergeable(Message{Type: MsgAck, To: n.leader, Session: ls.session, Zxid: a})
		if ls.stage == lsBroadcast {
			n.sendPeerAcks(a)
			n.followerCommit()
		}
	}
}
