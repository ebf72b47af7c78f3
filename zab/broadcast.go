package zab

// Broadcast, the leader's side: proposals are appended to the leader's log
// and pipelined to every follower whose session has been synchronized (or
// is being: they follow the sync on the same session); acknowledgements
// are cumulative, so a proposal is committed once a quorum's
// acknowledgements reach its zxid, and commits go out in zxid order.

// Propose appends data to the history as a new transaction and returns
// its zxid. Only an established leader accepts proposals (ErrNotLeader
// otherwise). The entry reaches the driver in Ready.Entries and, once a
// quorum has it durably, in Ready.Committed.
//
// Data that Config.DecodeMembership reads as a configuration change is a
// reconfiguration (membership.go): it fails with ErrReconfigInProgress
// while another change is uncommitted and with ErrNewConfigNoQuorum unless
// a quorum of its voters is synchronized with this leader.
func (n *Node) Propose(data []byte) (Zxid, error) {
	if n.state != StateLeading || !n.lead.established {
		return 0, ErrNotLeader
	}
	defer n.afterEvent()
	l := n.lead
	if l.transfer != nil {
		return 0, ErrTransferring
	}
	if l.next > n.cfg.MaxCounter {
		return 0, ErrEpochExhausted
	}
	z := NewZxid(l.epoch, l.next)
	e := Entry{Zxid: z, Data: data}
	if m, ok := n.membershipOf(e); ok {
		if err := n.checkMembershipChange(m); err != nil {
			return 0, err
		}
	}
	l.next++
	prev := n.log.lastZxid()
	n.appendLog(e)
	for _, id := range n.peers {
		if p := l.peers[id]; p != nil && !p.observer && p.stage >= stageSyncSent {
			n.sendMergeable(Message{Type: MsgProposal, To: id, Session: p.session, Prev: prev, Entries: []Entry{e}})
		}
	}
	n.maybeStartRoll()
	// A single-voter ensemble commits on its own durability.
	n.maybeCommit()
	return z, nil
}

// NextZxid returns the zxid the next Propose will assign, or the error it
// would return. A driver that must write the zxid into the entry's data
// calls both without letting the node step in between.
func (n *Node) NextZxid() (Zxid, error) {
	if n.state != StateLeading || !n.lead.established {
		return 0, ErrNotLeader
	}
	if n.lead.transfer != nil {
		return 0, ErrTransferring
	}
	if n.lead.next > n.cfg.MaxCounter {
		return 0, ErrEpochExhausted
	}
	return NewZxid(n.lead.epoch, n.lead.next), nil
}

func (n *Node) leaderAck(p *peer, z Zxid) {
	if p.observer || p.stage < stageSynced {
		return
	}
	z = min(z, n.log.lastZxid())
	if z > p.ack {
		p.ack = z
		n.maybeCommit()
		n.maybeTimeoutNow()
	}
}

// maybeCommit advances the commit zxid to what a quorum acknowledged.
func (n *Node) maybeCommit() {
	if n.state != StateLeading || !n.lead.established {
		return
	}
	l := n.lead
	var c Zxid
	if n.joint() {
		c = n.jointCommit(func(id uint64) (Zxid, bool) {
			if id == n.id {
				return n.ackable(), true
			}
			if p := l.peers[id]; p != nil && n.eligible(p) && p.stage >= stageSynced {
				return p.ack, true
			}
			return 0, false
		})
	} else {
		acks := n.ackBuf[:0]
		if n.voter[n.id] {
			acks = append(acks, n.ackable())
		}
		for _, id := range n.peers {
			if p := l.peers[id]; p != nil && n.eligible(p) && p.stage >= stageSynced {
				acks = append(acks, p.ack)
			}
		}
		n.ackBuf = acks
		c = quorumZxid(acks, n.quorum)
	}
	if c <= n.commit {
		return
	}
	n.commit = c
	for _, id := range n.peers {
		p := l.peers[id]
		if p == nil || p.stage != stageUpToDate {
			continue
		}
		if p.observer {
			n.inform(p)
		} else {
			n.sendMergeable(Message{Type: MsgCommit, To: id, Session: p.session, Commit: c})
		}
	}
	n.activateConfigs()
}

// inform sends an observer the entries committed since it last heard.
func (n *Node) inform(p *peer) {
	for p.informed < n.commit {
		ents, err := n.log.entries(p.informed, n.commit, n.cfg.MaxBatchBytes)
		if err != nil || len(ents) == 0 {
			n.logger.Error("zab: cannot inform observer", "peer", p.id, "after", p.informed, "err", err)
			delete(n.lead.peers, p.id)
			return
		}
		last := ents[len(ents)-1].Zxid
		n.send(Message{Type: MsgInform, To: p.id, Session: p.session, Prev: p.informed, Entries: ents, Commit: last})
		p.informed = last
	}
}
