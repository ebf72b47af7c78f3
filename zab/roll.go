package zab

// Counter rollover without an election. ZooKeeper forces a re-election
// when a zxid counter reaches 2^32-1; corral's leader instead moves the
// ensemble to a new epoch in place, a discovery and synchronization
// reduced to what an established leader still needs:
//
//  1. Past rollAt (three quarters of the counter space) the leader picks
//     e' = max(acceptedEpoch, epoch)+1, persists acceptedEpoch = e' and
//     sends EPOCHROLL(e') to its followers, which accept it only if it is
//     above their acceptedEpoch (strictly: see discovery.go) and answer.
//     Proposals continue in the old epoch meanwhile.
//  2. Once a quorum has accepted e', no other leader can ever be
//     established in e'. The leader sends NEWLEADER(e', Z), Z being its
//     last zxid, on every session, and numbers new proposals (e', 1), ...
//  3. Each follower, like the leader itself, sets currentEpoch = e' once
//     its log is durable up to Z, and until then acknowledges nothing past
//     Z; so an entry of e' commits only on a quorum that holds the whole
//     history of the old epoch under currentEpoch e', exactly as if e' had
//     been established by an election.
//
// Proposals fail with ErrEpochExhausted only if the counter runs out
// before step 2; a roll not acknowledged within initLimit makes the leader
// step down.
//
// The same roll admits a learner whose acceptedEpoch is above the leader's
// epoch (it accepted the epoch of a prospective leader that never got
// established, and would refuse this leader's LEADERINFO forever): the
// leader rolls past that epoch, then sends the learner its LEADERINFO.

type epochRoll struct {
	epoch uint32
	start int
	acks  map[uint64]bool
}

func (n *Node) maybeStartRoll() {
	l := n.lead
	if !l.established || l.roll != nil {
		return
	}
	ahead := n.waitingAhead()
	if l.next <= n.cfg.rollAt() && ahead <= l.epoch {
		return
	}
	e := max(n.hs.AcceptedEpoch, l.epoch, ahead)
	if e == ^uint32(0) {
		return
	}
	e++
	n.hs.AcceptedEpoch = e
	l.roll = &epochRoll{epoch: e, start: n.now, acks: map[uint64]bool{}}
	n.logger.Info("rolling epoch", "from", l.epoch, "to", e)
	for _, id := range n.peers {
		if p := l.peers[id]; p != nil && !p.observer && p.stage >= stageSyncSent {
			n.send(Message{Type: MsgEpochRoll, To: id, Session: p.session, Epoch: e})
		}
	}
	n.maybeSwitchEpoch()
}

func (n *Node) leaderAckEpochRoll(p *peer, m Message) {
	l := n.lead
	if l.roll == nil || m.Epoch != l.roll.epoch || !n.eligible(p) {
		return
	}
	l.roll.acks[p.id] = true
	n.maybeSwitchEpoch()
}

func (n *Node) maybeSwitchEpoch() {
	l := n.lead
	r := l.roll
	if !n.leaderHasQuorum(func(p *peer) bool { return r.acks[p.id] }) {
		return
	}
	z := n.log.lastZxid()
	l.epoch = r.epoch
	l.next = 1
	l.roll = nil
	n.epoch = r.epoch
	n.pending = append(n.pending, epochPoint{epoch: r.epoch, zxid: z})
	n.logger.Info("epoch rolled", "epoch", r.epoch, "zxid", z)
	for _, id := range n.peers {
		p := l.peers[id]
		switch {
		case p == nil:
		case !p.observer && p.stage >= stageSyncSent:
			n.send(Message{Type: MsgNewLeader, To: id, Session: p.session, Epoch: r.epoch, Zxid: z})
		case p.stage == stageInfo && p.acceptedEpoch <= l.epoch:
			n.sendLeaderInfo(p)
		}
	}
	n.completeEpochs()
	n.maybeStartRoll()
}

// waitingAhead returns the highest acceptedEpoch of the learners waiting
// for the leader to roll past it (0 if none).
func (n *Node) waitingAhead() uint32 {
	var ahead uint32
	for _, id := range n.peers {
		if p := n.lead.peers[id]; p != nil && p.stage == stageInfo && p.acceptedEpoch > n.lead.epoch {
			ahead = max(ahead, p.acceptedEpoch)
		}
	}
	return ahead
}
