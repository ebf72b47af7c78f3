package zab

// Discovery, the leader's side: agree with a quorum on an epoch above every
// epoch they accepted, and check that none of them has a more recent
// history than the leader's (the leader's history becomes the initial
// history of the epoch).
//
// An epoch is counted only from sessions whose FOLLOWERINFO showed an
// acceptedEpoch below it. A learner accepts a LEADERINFO epoch equal to its
// acceptedEpoch (it may be rejoining this very leader), so without that
// rule one server could lend its acceptance of epoch e to two prospective
// leaders in turn and both could reach a quorum for e. With it, a quorum
// for e persisted acceptedEpoch = e for exactly one leader.

func (n *Node) leaderFollowerInfo(m Message) {
	l := n.lead
	if p := l.peers[m.From]; p != nil && p.session == m.Session {
		p.lastHeard = n.now
		// A resend (learner.go): the LEADERINFO may have been lost, so
		// send it again while the learner has not answered it.
		if p.stage == stageEpochSent && p.syncEpoch == l.epoch {
			n.send(Message{Type: MsgLeaderInfo, To: p.id, Session: p.session, Epoch: l.epoch, State: sessionState(p)})
		}
		return
	}
	// The learner's own view of its role decides how it is served: one
	// that does not yet know a change of its role rejoins once it commits
	// it (membership.go).
	p := &peer{
		id:            m.From,
		session:       m.Session,
		observer:      m.State == StateObserving && !n.voter[m.From],
		recovering:    m.NonVoting,
		acceptedEpoch: m.Epoch,
		lastHeard:     n.now,
	}
	l.peers[m.From] = p
	n.addPeer(m.From)
	if !l.epochFixed {
		n.maybeFixEpoch()
		return
	}
	if l.established && p.acceptedEpoch > l.epoch {
		// The learner promised a later epoch to a leader that never got
		// established; it would refuse ours forever (as it would in
		// ZooKeeper). Move the ensemble past its promise in place (roll.go)
		// and let it in then.
		n.maybeStartRoll()
		return
	}
	n.sendLeaderInfo(p)
}

// maybeFixEpoch fixes the new epoch once a quorum has opened sessions: one
// above every acceptedEpoch heard, this leader's included.
func (n *Node) maybeFixEpoch() {
	l := n.lead
	if l.epochFixed {
		return
	}
	maxEpoch := n.hs.AcceptedEpoch
	for _, id := range n.peers {
		if p := l.peers[id]; p != nil {
			maxEpoch = max(maxEpoch, p.acceptedEpoch)
		}
	}
	if !n.leaderHasQuorum(func(*peer) bool { return true }) {
		return
	}
	if maxEpoch == ^uint32(0) {
		n.logger.Error("zab: epoch space exhausted")
		return
	}
	l.epoch = maxEpoch + 1
	if last := n.log.lastZxid(); n.cfg.KeepEpoch && n.hs.CurrentEpoch == n.hs.AcceptedEpoch &&
		(last.Epoch() < n.hs.AcceptedEpoch || last.Counter() < n.cfg.rollAt()) {
		// A group of one keeps its epoch (Config.KeepEpoch), unless its
		// counter is past the point where an epoch rolls. A log already in
		// a later epoch (a restored snapshot whose epoch was not yet
		// written: Node.RestoreSnapshot) sets the epoch kept.
		l.epoch = max(n.hs.AcceptedEpoch, last.Epoch())
	}
	l.epochFixed = true
	// Each of the leader's waits for a quorum (to fix the epoch, to
	// acknowledge it, to acknowledge NEWLEADER) has InitLimit ticks of
	// its own, as ZooKeeper's getEpochToPropose, waitForEpochAck and
	// waitForNewLeaderAck each wait initLimit (tickLeader).
	l.start = n.now
	n.epoch = l.epoch
	n.hs.AcceptedEpoch = l.epoch
	n.logger.Debug("epoch fixed", "epoch", l.epoch)
	for _, id := range n.peers {
		if p := l.peers[id]; p != nil {
			n.sendLeaderInfo(p)
		}
	}
	n.maybeStartSync()
}

func (n *Node) sendLeaderInfo(p *peer) {
	l := n.lead
	p.stage = stageEpochSent
	p.syncEpoch = l.epoch
	p.countsEpoch = n.eligible(p) && p.acceptedEpoch < l.epoch && !l.established
	n.send(Message{Type: MsgLeaderInfo, To: p.id, Session: p.session, Epoch: l.epoch, State: sessionState(p)})
}

// sessionState is how a learner's session is served, told in LEADERINFO:
// an observer that a change in this leader's log makes a voter is asked
// to follow (membership.go).
func sessionState(p *peer) StateType {
	if p.observer {
		return StateObserving
	}
	return StateFollowing
}

func (n *Node) leaderAckEpoch(p *peer, m Message) {
	l := n.lead
	if p.stage != stageEpochSent || m.Epoch != p.syncEpoch {
		return
	}
	if m.Epoch != l.epoch {
		// The leader moved to a new epoch since; start this join again.
		n.sendLeaderInfo(p)
		return
	}
	p.currentEpoch = m.CurrentEpoch
	p.lastZxid = m.Zxid
	p.stage = stageEpochAcked
	if n.phase == PhaseDiscovery {
		if p.countsEpoch && moreRecent(p.currentEpoch, p.lastZxid, n.hs.CurrentEpoch, n.log.lastZxid()) {
			// Zab requires the leader's history to be the most recent of
			// its quorum; ZooKeeper gives up leadership here too.
			n.stepDown("a follower has a more recent history")
			return
		}
		n.maybeStartSync()
		return
	}
	n.syncPeer(p)
}

func moreRecent(epochA uint32, zxidA Zxid, epochB uint32, zxidB Zxid) bool {
	if epochA != epochB {
		return epochA > epochB
	}
	return zxidA > zxidB
}

// maybeStartSync moves to synchronization once a quorum accepted the
// epoch: the leader's log is now the initial history of the epoch.
func (n *Node) maybeStartSync() {
	l := n.lead
	if n.phase != PhaseDiscovery || !l.epochFixed {
		return
	}
	if !n.leaderHasQuorum(func(p *peer) bool { return p.countsEpoch && p.stage >= stageEpochAcked }) {
		return
	}
	n.phase = PhaseSync
	l.start = n.now // the wait for NEWLEADER acknowledgements (maybeFixEpoch)
	l.initZxid = n.log.lastZxid()
	// The leader adopts the epoch once its own history is durable, like
	// any follower; only then does it count itself.
	n.pending = append(n.pending, epochPoint{epoch: l.epoch, zxid: l.initZxid})
	for _, id := range n.peers {
		if p := l.peers[id]; p != nil && p.stage == stageEpochAcked {
			n.syncPeer(p)
			if n.state != StateLeading {
				return
			}
		}
	}
	n.completeEpochs()
}

func (n *Node) leaderAckNewLeader(p *peer, m Message) {
	l := n.lead
	if p.stage == stageSyncSent && m.Epoch == p.syncEpoch && m.Zxid == p.syncZxid {
		p.stage = stageSynced
		if l.established {
			n.sendUpToDate(p)
		} else {
			n.maybeEstablish()
		}
	}
	if n.state == StateLeading && p.stage >= stageSynced {
		n.leaderAck(p, m.Zxid)
	}
}

// maybeEstablish: the leader is established once a quorum (itself
// included) durably holds the initial history with currentEpoch = epoch.
// The initial history is then committed.
func (n *Node) maybeEstablish() {
	l := n.lead
	if l.established || n.phase != PhaseSync || n.hs.CurrentEpoch != l.epoch {
		return
	}
	if !n.leaderHasQuorum(func(p *peer) bool { return p.stage >= stageSynced }) {
		return
	}
	l.established = true
	l.next = 1
	if l.initZxid.Epoch() == l.epoch {
		// A kept epoch (Config.KeepEpoch) goes on after its log.
		l.next = l.initZxid.Counter() + 1
	}
	n.phase = PhaseBroadcast
	n.commit = max(n.commit, l.initZxid)
	n.logger.Info("leader established", "epoch", l.epoch, "zxid", l.initZxid)
	for _, id := range n.peers {
		p := l.peers[id]
		switch {
		case p == nil:
		case p.stage == stageSynced:
			n.sendUpToDate(p)
		case p.observer && p.stage == stageEpochAcked:
			n.syncPeer(p)
		}
	}
	// The initial history is committed, and with it any configuration
	// change it holds.
	n.activateConfigs()
}

func (n *Node) sendUpToDate(p *peer) {
	p.stage = stageUpToDate
	// Synchronized by an established leader: a recovering server counts
	// from now on.
	p.recovering = false
	n.send(Message{Type: MsgUpToDate, To: p.id, Session: p.session, Commit: n.commit})
	if p.observer {
		n.inform(p)
	}
}
