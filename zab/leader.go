package zab

// The leader's side of a session with each learner (ZooKeeper's
// LearnerHandler) and its clock.

// stage is where a learner's session stands, seen from the leader.
type stage uint8

const (
	stageInfo       stage = iota // FOLLOWERINFO received; epoch not yet fixed
	stageEpochSent               // LEADERINFO sent
	stageEpochAcked              // ACKEPOCH received; sync not yet sent
	stageSyncSent                // sync and NEWLEADER sent; proposals flow
	stageSynced                  // NEWLEADER acknowledged
	stageUpToDate                // UPTODATE sent
)

// peer is one learner session.
type peer struct {
	id         uint64
	session    uint64
	observer   bool
	recovering bool // recovering and not yet synchronized by this established leader

	acceptedEpoch uint32 // from FOLLOWERINFO
	// countsEpoch: this session may count toward the quorum that accepts
	// the new epoch (a voter, not recovering, whose acceptedEpoch was below
	// it when the session opened).
	countsEpoch bool
	stage       stage
	syncEpoch   uint32 // epoch in LEADERINFO / NEWLEADER of the join
	syncZxid    Zxid   // zxid of the join's NEWLEADER

	currentEpoch uint32 // from ACKEPOCH
	lastZxid     Zxid   // from ACKEPOCH
	ack          Zxid   // highest acknowledged, durable zxid
	informed     Zxid   // observers: last zxid sent
	lastHeard    int
	confirmed    uint64 // highest confirmation round it echoed
}

type leaderState struct {
	epoch       uint32 // fixed epoch (proposed, then established)
	epochFixed  bool
	established bool
	initZxid    Zxid // last zxid of the initial history of the epoch
	start       int  // tick the current wait for a quorum began (discovery.go, progress.go)
	heartbeat   int
	next        uint32 // counter of the next proposal
	peers       map[uint64]*peer
	roll        *epochRoll
	// confirmRound is the last confirmation round started, confirmed the
	// highest one a quorum echoed (confirm.go).
	confirmRound uint64
	confirmed    uint64
	// peerAcked is the last zxid of its own the leader sent its followers
	// in a MsgPeerAck (peer_ack.go).
	peerAcked Zxid
	// transfer is the leadership transfer in progress, if any
	// (transfer.go).
	transfer *transferState
}

func (n *Node) becomeLeader() {
	early := n.early
	n.resetRole()
	n.state = StateLeading
	n.phase = PhaseDiscovery
	n.leader = n.id
	n.lead = &leaderState{start: n.now, peers: map[uint64]*peer{}}
	n.logger.Debug("leading", "round", n.elect.round)
	// Learners that decided before this server did have already sent
	// FOLLOWERINFO; take them now rather than make them resend.
	for _, id := range n.peers {
		if m, ok := early[id]; ok {
			n.leaderFollowerInfo(m)
		}
	}
	n.maybeFixEpoch()
}

// eligible reports whether p counts toward quorums.
func (n *Node) eligible(p *peer) bool {
	return !p.observer && !p.recovering && n.voter[p.id]
}

// sessionPeer returns the peer of m's session, refreshing its liveness.
func (n *Node) sessionPeer(m Message) *peer {
	p := n.lead.peers[m.From]
	if p == nil || p.session != m.Session {
		return nil
	}
	p.lastHeard = n.now
	return p
}

func (n *Node) stepLeader(m Message) {
	p := n.sessionPeer(m)
	if p == nil {
		return
	}
	switch m.Type {
	case MsgAckEpoch:
		n.leaderAckEpoch(p, m)
	case MsgAckNewLeader:
		n.leaderAckNewLeader(p, m)
	case MsgAck:
		n.leaderAck(p, m.Zxid)
		n.leaderConfirmAck(p, m.Vote.Round)
	case MsgAckEpochRoll:
		n.leaderAckEpochRoll(p, m)
	}
}

func (n *Node) stepDown(reason string) {
	n.logger.Info("leader stepping down", "reason", reason, "epoch", n.lead.epoch)
	n.becomeLooking()
}

// hearsQuorum reports whether the leader and the synced voters it still
// has sessions with form a quorum.
func (n *Node) hearsQuorum() bool {
	return n.leaderHasQuorum(func(p *peer) bool { return p.stage >= stageSynced })
}

// leaderLostLink drops the session of a learner whose link broke, as
// ZooKeeper's leader drops a LearnerHandler whose socket closed, and steps
// down at once if the rest no longer make a quorum: otherwise a leader
// whose followers were killed kept serving its clients (writes hanging,
// reads ever staler) for SyncLimit ticks while the others elected a new
// leader. The learner saw the same link break and is looking already, so
// it rejoins with a new session.
func (n *Node) leaderLostLink(id uint64) {
	if _, ok := n.lead.peers[id]; !ok {
		return
	}
	delete(n.lead.peers, id)
	if n.lead.established && !n.hearsQuorum() {
		n.stepDown("lost the links to a quorum")
	}
}

func (n *Node) tickLeader() {
	l := n.lead
	if !l.established && n.now-l.start >= n.cfg.InitLimit {
		n.stepDown("not established within initLimit")
		return
	}
	// Forget learners gone silent; they must open a new session.
	for _, id := range n.peers {
		p := l.peers[id]
		if p == nil {
			continue
		}
		limit := n.cfg.SyncLimit
		if p.stage < stageSynced {
			// A learner being synchronized: its silence while its
			// sync's bytes move does not count (progress.go).
			limit = n.cfg.InitLimit
		}
		if n.now-p.lastHeard > limit {
			delete(l.peers, id)
		}
	}
	if l.established && !n.hearsQuorum() {
		n.stepDown("cannot hear a quorum within syncLimit")
		return
	}
	if l.transfer != nil && n.now-l.transfer.start >= n.cfg.TransferTicks {
		n.abortTransfer("target did not take over within TransferTicks")
	}
	if l.roll != nil && n.now-l.roll.start > n.cfg.InitLimit {
		n.stepDown("epoch roll not acknowledged within initLimit")
		return
	}
	l.heartbeat++
	if l.heartbeat >= n.cfg.HeartbeatTick {
		l.heartbeat = 0
		for _, id := range n.peers {
			if p := l.peers[id]; p != nil && p.stage >= stageSyncSent {
				n.send(Message{Type: MsgPing, To: id, Session: p.session, Commit: n.commit})
			}
		}
	}
}
