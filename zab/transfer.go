package zab

// Leadership transfer, after etcd-io/raft's MsgTransferLeader and
// MsgTimeoutNow. Zab has no terms for a candidate to outbid the leader
// with, and its election picks the best history with ties broken by id, so
// a transfer needs both the leader's abdication and a way for the target
// to win among servers exactly as up to date as it:
//
//  1. TransferLeadership(to) on the established leader stops proposals
//     (Propose and NextZxid fail with ErrTransferring, SoftState.Transferee
//     names the target) and waits until the target's session is in
//     broadcast and has acknowledged, durably, the leader's last zxid.
//  2. It then sends the target MsgTimeoutNow (Epoch, and the last zxid).
//     The target, finding its log ends there too, starts an election at
//     once with a handover vote for itself: a vote marked with the
//     leader's epoch, which ranks above ordinary votes for equal histories
//     (Vote.betterThan) and never above a more recent history.
//  3. The leader steps down when that vote reaches it, adopts it and
//     votes for the target in the target's round; its followers, seeing
//     their leader's handover vote, join the election at once and adopt it
//     as the better vote. The target wins with a quorum that holds its
//     history, and discovery and synchronization run as after any
//     election: nothing committed, so nothing acknowledged, is lost (the
//     target held every proposal, committed or not).
//
// If the target has not taken over within TransferTicks (it lags, crashed,
// or its election vote never reached the leader), the leader aborts the
// transfer and accepts proposals again. A transfer to the leader itself is
// a no-op; to an observer, an unknown id or a recovering voter it is
// refused (ErrTransferTarget). A new transfer replaces one in progress.

type transferState struct {
	to    uint64
	start int
	// sent: MsgTimeoutNow went out; the leader now waits for the target's
	// handover vote.
	sent bool
}

// TransferLeadership asks the established leader to hand leadership to
// voter to. It returns at once; the transfer proceeds with Step and Tick
// and shows in SoftState.Transferee until it completes (this node stops
// leading) or is aborted.
func (n *Node) TransferLeadership(to uint64) error {
	if n.state != StateLeading || !n.lead.established {
		return ErrNotLeader
	}
	if to == n.id {
		return nil
	}
	if !n.voter[to] {
		return ErrTransferTarget
	}
	l := n.lead
	if p := l.peers[to]; p != nil && p.recovering {
		return ErrTransferTarget
	}
	if l.transfer != nil {
		if l.transfer.to == to {
			return nil
		}
		n.abortTransfer("replaced by a transfer to another server")
	}
	n.logger.Info("transferring leadership", "to", to, "epoch", l.epoch, "zxid", n.log.lastZxid())
	l.transfer = &transferState{to: to, start: n.now}
	n.maybeTimeoutNow()
	return nil
}

func (n *Node) abortTransfer(reason string) {
	n.logger.Info("leadership transfer aborted", "to", n.lead.transfer.to, "reason", reason)
	n.lead.transfer = nil
}

// maybeTimeoutNow tells the target to take over once it holds, durably,
// everything the leader proposed.
func (n *Node) maybeTimeoutNow() {
	l := n.lead
	t := l.transfer
	if t == nil || t.sent {
		return
	}
	p := l.peers[t.to]
	if p == nil || p.stage != stageUpToDate || !n.eligible(p) || p.ack < n.log.lastZxid() {
		return
	}
	t.sent = true
	n.send(Message{Type: MsgTimeoutNow, To: t.to, Session: p.session, Epoch: l.epoch, Zxid: n.log.lastZxid()})
}

// transferVote handles, on a leader, the target's handover vote: the
// leader steps down and votes for it. It reports whether m was that vote.
func (n *Node) transferVote(m Message) bool {
	t := n.lead.transfer
	if t == nil || !t.sent || m.From != t.to || m.State != StateLooking ||
		m.Vote.Leader != t.to || m.Vote.handover != n.lead.epoch {
		return false
	}
	n.logger.Info("handing leadership over", "to", t.to, "epoch", n.lead.epoch)
	v := m.Vote
	n.elect.round = max(n.elect.round, v.Round) - 1
	n.look(&v)
	n.stepVote(m)
	return true
}

// learnerTimeoutNow: the leader hands leadership to this follower. It
// starts an election with a handover vote for itself if its log ends
// where the leader's does; otherwise it ignores the message and the
// leader aborts the transfer after TransferTicks.
func (n *Node) learnerTimeoutNow(m Message) {
	if m.Vote.Leader != 0 {
		// A removed leader's designation (membership.go).
		n.learnerDesignated(m)
		return
	}
	ls := n.learn
	if n.state != StateFollowing || ls.stage != lsBroadcast || !n.canVote() ||
		m.Epoch != ls.epoch || m.Zxid != n.log.lastZxid() || n.ackable() < m.Zxid {
		n.logger.Debug("TIMEOUTNOW ignored", "epoch", m.Epoch, "zxid", m.Zxid, "last", n.log.lastZxid())
		return
	}
	n.logger.Info("taking over leadership", "from", n.leader, "epoch", m.Epoch)
	v := n.selfVote()
	v.handover = m.Epoch
	n.look(&v)
}
