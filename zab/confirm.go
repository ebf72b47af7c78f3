package zab

import "slices"

// Leadership confirmation, for linearizable reads after sync.
//
// A leader that has been cut off (a process paused, a partition) keeps
// believing it leads until syncLimit passes without a quorum, and in that
// window a quorum elsewhere may have moved on. ZooKeeper answers `sync`
// from such a leader, so a read after sync can miss a write acknowledged
// by the new leader. A driver closes the window the way Raft's ReadIndex
// does: ConfirmLeadership starts a round (immediate PINGs numbered by the
// round, echoed in the learners' ACKs), and once a quorum of voters has
// echoed a round started after the sync arrived, no other leader was
// established when the sync was received, so everything committed before
// it is in this leader's log.

// ConfirmLeadership starts a confirmation round and returns its number;
// Confirmed reaches it once a quorum (this leader included) has answered.
func (n *Node) ConfirmLeadership() (uint64, error) {
	if n.state != StateLeading || !n.lead.established {
		return 0, ErrNotLeader
	}
	l := n.lead
	l.confirmRound++
	for _, id := range n.peers {
		if p := l.peers[id]; p != nil && n.eligible(p) && p.stage >= stageSynced {
			n.send(Message{Type: MsgPing, To: id, Session: p.session, Commit: n.commit, Vote: Vote{Round: l.confirmRound}})
		}
	}
	n.maybeConfirm()
	return l.confirmRound, nil
}

// Confirmed is the highest confirmation round a quorum has answered in
// this leadership; 0 when not leading.
func (n *Node) Confirmed() uint64 {
	if n.state != StateLeading || n.lead == nil {
		return 0
	}
	return n.lead.confirmed
}

func (n *Node) leaderConfirmAck(p *peer, round uint64) {
	if round > p.confirmed && round <= n.lead.confirmRound {
		p.confirmed = round
		n.maybeConfirm()
	}
}

// maybeConfirm advances confirmed to the highest round a quorum echoed:
// the quorum-th highest round among this leader (which has them all) and
// its synchronized voters.
func (n *Node) maybeConfirm() {
	l := n.lead
	rounds := []uint64{l.confirmRound}
	for _, id := range n.peers {
		if p := l.peers[id]; p != nil && n.eligible(p) && p.stage >= stageSynced {
			rounds = append(rounds, p.confirmed)
		}
	}
	if n.joint() {
		// The highest round echoed by a quorum of every configuration.
		slices.Sort(rounds)
		for i := len(rounds) - 1; i >= 0 && rounds[i] > l.confirmed; i-- {
			r := rounds[i]
			if n.leaderHasQuorum(func(p *peer) bool { return p.stage >= stageSynced && p.confirmed >= r }) {
				l.confirmed = r
				return
			}
		}
		return
	}
	if len(rounds) < n.quorum {
		return
	}
	slices.Sort(rounds)
	if r := rounds[len(rounds)-n.quorum]; r > l.confirmed {
		l.confirmed = r
	}
}
