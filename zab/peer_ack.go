package zab

// Peer acknowledgements. In ZooKeeper's broadcast a follower learns that a
// proposal is committed only from the leader's COMMIT, sent once a
// quorum's ACKs have reached the leader: after the follower's own fsync a
// write it forwarded still waits for two hops (an ACK to the leader, the
// COMMIT back) before the follower may apply it and answer its client.
// corral's voters also send their acknowledgement to one another — a
// follower along with each ACK, the leader its own once durable if it has
// not committed that far — and a follower commits what a quorum of voters
// acknowledged, the rule the leader applies. With three servers the
// follower whose client waits commits as soon as its own log and one other
// voter's are durable; the COMMIT still comes and finds nothing to do.
//
// Why it is safe: a MsgPeerAck of z in epoch e says what the sender's MsgAck
// to the leader of e says, that its log is durable up to z (bounded by
// ackable, as every acknowledgement), and every voter in broadcast in e
// holds a prefix of that one leader's history (learners append only what
// it sends, in order; it never truncates its own log). A quorum of them
// for z is therefore the very condition on which the leader commits z;
// the follower only learns it sooner. Acknowledgements are counted only
// between voters in broadcast in the same epoch (an established leader's,
// after UPTODATE on a learner, so never a recovering server's); any other
// is ignored and the leader's COMMIT still arrives. The simulator checks
// the result with the leader-only rule's invariants (sim/checker.go).
//
// The cost is one message per acknowledgement to each other voter; like
// ACKs they are cumulative and merge, so under load there is one per
// group of proposals made durable together, not one per proposal.

// sendPeerAcks tells the other voters that this node's log is durable up to
// a. A follower calls it with each ACK; a leader with its own durable zxid
// when that is past its commit (otherwise its COMMIT says more).
func (n *Node) sendPeerAcks(a Zxid) {
	if n.cfg.DisablePeerAcks || !n.voter[n.id] {
		return
	}
	for _, id := range n.peers {
		if !n.voter[id] || id == n.leader {
			continue
		}
		if n.state == StateLeading {
			if p := n.lead.peers[id]; p == nil || p.stage != stageUpToDate {
				continue
			}
		}
		n.sendMergeable(Message{Type: MsgPeerAck, To: id, Epoch: n.epoch, Zxid: a})
	}
}

// leaderPeerAck sends the leader's own acknowledgement to its followers if
// it is ahead of the commit; called when the leader's ackable grows.
func (n *Node) leaderPeerAck() {
	if n.state != StateLeading || !n.lead.established {
		return
	}
	if a := n.ackable(); a > n.commit && a > n.lead.peerAcked {
		n.lead.peerAcked = a
		n.sendPeerAcks(a)
	}
}

// stepPeerAck counts another voter's acknowledgement on a follower.
func (n *Node) stepPeerAck(m Message) {
	if n.state != StateFollowing || n.learn == nil || n.learn.stage != lsBroadcast ||
		m.Epoch != n.learn.epoch || !n.voter[m.From] || !n.voter[n.id] {
		return
	}
	ls := n.learn
	if ls.peerAcks == nil {
		ls.peerAcks = map[uint64]Zxid{}
	}
	if m.Zxid <= ls.peerAcks[m.From] {
		return
	}
	ls.peerAcks[m.From] = m.Zxid
	n.followerCommit()
}

// followerCommit commits what this follower and the peer acknowledgements
// it holds make a quorum.
func (n *Node) followerCommit() {
	ls := n.learn
	if len(ls.peerAcks) == 0 || !ls.synced || ls.stage != lsBroadcast || n.joint() {
		// While a configuration change is uncommitted the follower waits
		// for the leader's COMMIT, which counts the joint quorums.
		return
	}
	if !n.voter[n.id] {
		// Removed by a reconfiguration: it counts toward nothing.
		return
	}
	acks := append(n.ackBuf[:0], n.ackable())
	for id, a := range ls.peerAcks {
		if n.voter[id] {
			acks = append(acks, a)
		}
	}
	n.ackBuf = acks
	n.learnCommit(quorumZxid(acks, n.quorum))
}
