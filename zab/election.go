package zab

// Leader election after ZooKeeper's FastLeaderElection: each looking voter
// proposes the best server it has heard of, ranked by (currentEpoch, last
// zxid, id), sends its vote to every voter, and adopts any better vote it
// receives in its round. It decides once a quorum of the votes of its
// round name the same candidate, or once a quorum of servers outside the
// election report following (or leading) the same leader and that leader
// itself reports leading.
//
// Election only chooses who tries to lead; safety does not rest on it.
// Discovery checks that no server of the leader's quorum has a more recent
// history, so an election that decides early (there is no timed finalize
// wait) at worst costs another round. Two rules undo a decision whose
// votes have since changed, in the place of FastLeaderElection's finalize
// wait: a leader still in discovery steps down for a better vote of its
// round, and a learner rejoins a later round its candidate moved to
// (stepVote).
//
// Servers that are not voters in their own view (observers, joining
// servers) vote for no one until they hear of a candidate; voters that
// are recovering do not take part. Neither is counted where it is not a
// voter; they join a leader once a quorum of voters reports following it.

type election struct {
	round uint64
	vote  Vote
	// recv holds the votes of this round from voters, this node's own
	// included; leading marks those whose sender reported leading.
	recv    map[uint64]Vote
	leading map[uint64]bool
	// answered holds the servers this node does not count whose looking
	// vote it answered with its own in this round (once each: they may
	// count it, it ignores theirs).
	answered map[uint64]bool
	// out holds the votes of voters that are following or leading.
	out     map[uint64]outVote
	elapsed int
	timeout int
}

type outVote struct {
	vote  Vote
	state StateType
}

func (n *Node) canVote() bool { return n.voter[n.id] && !n.recovering }

// canElect: the node takes part in elections (adopts better votes and
// sends its own) though its own vote may not count in its own tally: a
// server outside every configuration it knows may be a voter of a change
// it has not seen (a joining follower, or an observer, named a voter in a
// pending configuration), and the servers that know the change count its
// vote; the others ignore it. Recovering servers never take part.
func (n *Node) canElect() bool { return !n.recovering }

// selfVote is the vote a node starts a round with: for itself, if it is
// a voter of a configuration in force in its own view. Any other server
// (an observer, a joining server, one a change removed) votes for no one
// (leader 0, the lowest vote), as a ZooKeeper observer's initial vote is
// for Long.MIN_VALUE, and adopts the first candidate it hears of. Its
// vote still counts where a configuration it has not seen makes it a
// voter, and a candidacy of its own would mislead those servers: they
// would adopt a candidate that no server without the change follows (the
// simulator found a stale pending change, kept by one server only, that
// made an observer the best candidate of that server's view, and the
// election never ended).
func (n *Node) selfVote() Vote {
	if !n.voter[n.id] {
		return Vote{Round: n.elect.round}
	}
	return Vote{Leader: n.id, Zxid: n.log.lastZxid(), Epoch: n.hs.CurrentEpoch, Round: n.elect.round}
}

func (n *Node) becomeLooking() { n.look(nil) }

// look starts a new election round voting for this node, or for adopt
// (a handover vote: transfer.go).
func (n *Node) look(adopt *Vote) {
	n.resetRole()
	n.state = StateLooking
	n.phase = PhaseElection
	e := &n.elect
	e.round++
	e.recv = map[uint64]Vote{}
	e.leading = map[uint64]bool{}
	e.answered = map[uint64]bool{}
	e.out = map[uint64]outVote{}
	e.vote = n.selfVote()
	if adopt != nil {
		e.vote = *adopt
		e.vote.Round = e.round
	}
	if n.canVote() {
		e.recv[n.id] = e.vote
	}
	n.logger.Debug("looking", "round", e.round, "zxid", e.vote.Zxid, "epoch", e.vote.Epoch)
	n.sendVotes()
	n.resetElectionTimer()
	n.checkElection()
}

func (n *Node) resetElectionTimer() {
	e := &n.elect
	e.elapsed = 0
	e.timeout = n.cfg.ElectionTick + n.rand.IntN(n.cfg.ElectionTick)
}

func (n *Node) tickElection() {
	e := &n.elect
	e.elapsed++
	if e.elapsed >= e.timeout {
		n.sendVotes()
		n.resetElectionTimer()
	}
}

// sendVote sends this node's vote to one server, reporting state. A
// handover vote carries its mark in the message's Epoch.
func (n *Node) sendVote(to uint64, state StateType) {
	m := Message{Type: MsgVote, To: to, Vote: n.elect.vote, Epoch: n.elect.vote.handover, State: state, NonVoting: !n.canElect()}
	if c := n.cfgs[0]; c.zxid != 0 {
		// The active configuration, once it is not the initial one.
		m.Membership, m.MembershipZxid = &c.m, c.zxid
	}
	n.send(m)
}

// sendReject refuses a FOLLOWERINFO: this node does not lead and is not
// about to. The answer says what it is doing instead (its state, and its
// vote with the round of it), so that a learner refused by a looking
// candidate joins that candidate's round (stepLearner) instead of
// starting a round of its own, in which every server would first vote
// for itself again and the learner could decide again on the same
// partial quorum of votes.
func (n *Node) sendReject(m Message) {
	n.send(Message{Type: MsgLeaderInfo, To: m.From, Session: m.Session, Reject: true,
		State: n.state, Vote: n.elect.vote})
}

// sendVotes sends this node's vote to every other voter.
func (n *Node) sendVotes() {
	for _, id := range n.peers {
		if n.voter[id] {
			n.sendVote(id, StateLooking)
		}
	}
}

func (n *Node) stepVote(m Message) {
	e := &n.elect
	if n.state != StateLooking {
		if n.state == StateLeading && n.transferVote(m) {
			return
		}
		if n.state == StateLeading && n.phase == PhaseDiscovery && m.State == StateLooking &&
			n.voter[m.From] && !m.NonVoting && m.Vote.Round >= e.round && m.Vote.betterThan(e.vote) {
			// We decided to lead on a quorum of votes, and a voter now
			// looks in our round (or a later one) for a better
			// candidate: our decision rested on votes about to change
			// (a candidate's own vote reached the voters after they
			// had decided, or a server counting a pending change
			// needs both candidates to agree). While no quorum has
			// joined us, step down and join its round with the better
			// vote: ZooKeeper's finalize wait, which changes a
			// decision for a better notification arriving within
			// finalizeWait of the quorum, stretched over discovery.
			// Otherwise two candidates could each lead on a partial
			// view, wait out initLimit out of phase, and each look
			// again while the other leads, round after round (the
			// simulator found such runs).
			n.logger.Debug("better vote in discovery", "from", m.From, "candidate", m.Vote.Leader, "round", m.Vote.Round)
			// Close the learners' sessions, as a ZooKeeper leader that
			// shuts down closes their sockets: each is refused with the
			// round and the better vote, and joins that round
			// (stepLearner) instead of waiting out initLimit in a session
			// we forget, which could leave the better candidate short of
			// a quorum of a pending configuration meanwhile (the
			// simulator found such a run).
			refuse := Message{Type: MsgLeaderInfo, Reject: true, State: StateLooking, Vote: m.Vote}
			refuse.Vote.Round = max(e.round, m.Vote.Round)
			var sessions []Message
			for _, id := range n.peers {
				if p := n.lead.peers[id]; p != nil {
					r := refuse
					r.To, r.Session = id, p.session
					sessions = append(sessions, r)
				}
			}
			e.round = max(e.round, m.Vote.Round) - 1
			n.becomeLooking()
			for _, r := range sessions {
				n.send(r)
			}
			n.stepVote(m)
			return
		}
		if n.learn != nil && m.From == n.leader && m.State == StateLooking && m.Vote.handover != 0 &&
			m.Vote.handover == n.learn.epoch {
			// Our leader handed leadership over (transfer.go) and votes
			// for its successor: join its round at once.
			n.logger.Debug("leader hands over", "leader", n.leader, "to", m.Vote.Leader)
			e.round = max(e.round, m.Vote.Round) - 1
			n.becomeLooking()
			n.stepVote(m)
			return
		}
		if m.State == StateLooking && n.learn != nil && n.learn.sawLeading && m.From == n.leader &&
			m.Vote.Round > n.learn.leadingRound {
			// Our leader is looking again, in a round after the one in
			// which it told us it led (on the same FIFO link): it gave
			// up that leadership, and the session it had with us is
			// gone (a ZooKeeper learner sees its socket close). Join the
			// election now rather than wait out initLimit or syncLimit
			// in that session. Waiting could lock in step with the
			// leader's own initLimit: followers rejoining just before it
			// gave up, and voting it back in from their stale
			// "following" state as it did (the simulator found a
			// 3-server run that never converged that way).
			n.logger.Debug("leader is looking again", "leader", n.leader, "round", m.Vote.Round)
			// Join its round rather than one past it: a round of our own
			// above the leader's would leave us unable to count its
			// votes, or its LEADING answer, in its round.
			e.round = max(e.round, m.Vote.Round) - 1
			n.becomeLooking()
			n.stepVote(m)
			return
		}
		if m.State == StateLooking && n.learn != nil && !n.learn.sawLeading && m.From == n.leader &&
			m.Vote.Round > e.round {
			// The candidate we decided for, on the votes of our round,
			// has not decided: it looks in a later round, in which
			// our vote of the earlier round does not count. Join its
			// round and vote again, or it could wait for our vote
			// while we wait out initLimit for it, and a third server
			// starting a round of its own each time could keep the
			// two a round apart (the simulator found a run that never
			// converged that way, the candidate counting a pending
			// change that needed our vote).
			n.logger.Debug("candidate looks in a later round", "leader", n.leader, "round", m.Vote.Round)
			e.round = m.Vote.Round - 1
			n.becomeLooking()
			n.stepVote(m)
			return
		}
		// Tell a looking server whom we follow.
		if m.State == StateLooking {
			n.sendVote(m.From, n.state)
		}
		return
	}
	counts := n.voter[m.From] && !m.NonVoting
	if !counts && m.State == StateLooking {
		// Votes of non-voters count for nothing. But the sender may
		// count ours (it holds a configuration change this node has not
		// seen that makes us a voter, and it sends to us though we do
		// not send to it): answer once per round.
		if n.canElect() && !m.NonVoting && !e.answered[m.From] {
			e.answered[m.From] = true
			n.sendVote(m.From, StateLooking)
		}
		return
	}
	switch m.State {
	case StateLooking:
		if !n.canElect() {
			return
		}
		switch {
		case m.Vote.Round > e.round:
			e.round = m.Vote.Round
			clear(e.recv)
			clear(e.leading)
			// A handover vote this node holds survives the round change
			// while no better history is known (transfer.go).
			base := n.selfVote()
			if e.vote.handover != 0 && !base.betterThan(e.vote) {
				base = e.vote
			}
			e.vote = base
			if m.Vote.betterThan(e.vote) {
				e.vote = m.Vote
			}
			e.vote.Round = e.round
			e.recv[n.id] = e.vote
			n.sendVotes()
		case m.Vote.Round < e.round:
			// Help a server that is behind catch up with this round.
			n.sendVote(m.From, StateLooking)
			return
		default:
			if m.Vote.betterThan(e.vote) {
				e.vote = m.Vote
				e.vote.Round = e.round
				e.recv[n.id] = e.vote
				n.sendVotes()
			} else if !m.Vote.sameCandidate(e.vote) {
				// The sender has not seen our vote: it may have been
				// following when we sent it (it answered with its
				// leader, not a vote of this round). Tell it now
				// rather than at the next resend; it adopts ours, so
				// this does not repeat.
				n.sendVote(m.From, StateLooking)
			}
		}
		e.recv[m.From] = m.Vote
		delete(e.leading, m.From)
		n.checkElection()
	case StateFollowing, StateLeading, StateObserving:
		// A server that says whom it follows (or observes) is heard even if it does not
		// vote (any more, in its own view: a reconfiguration may have
		// removed it while this one was away): its answer only tells
		// where the leader is, and only servers this node counts as
		// voters make up the support below.
		if m.Vote.Round == e.round && n.canVote() && counts {
			e.recv[m.From] = m.Vote
			e.leading[m.From] = m.State == StateLeading
			if n.votesQuorum(m.Vote) && n.leaderConfirmed(m.Vote.Leader) {
				n.decide(m.Vote)
				return
			}
		}
		e.out[m.From] = outVote{vote: m.Vote, state: m.State}
		l := m.Vote.Leader
		if l == n.id {
			return
		}
		if lv, ok := e.out[l]; (!ok || lv.state != StateLeading) && (n.voter[n.id] || n.observer[n.id]) {
			// A server outside every configuration it knows (joining, or
			// removed while it was away) may not be able to reach the
			// leader of a changed ensemble with its votes; the members'
			// answers are its only lead, and a leader that is not
			// leading after all refuses its FOLLOWERINFO.
			return
		}
		// Joining an established leader is safe whatever the quorum
		// (its discovery decided); a quorum of any configuration in force
		// following it will do, so a server whose log holds a change the
		// leader has committed finds it as well as one that holds a
		// change the leader never had.
		support := n.anyQuorum(func(id uint64) bool {
			ov, ok := e.out[id]
			return ok && ov.vote.Leader == l
		})
		if support {
			e.round = max(e.round, m.Vote.Round)
			n.decide(m.Vote)
		}
	}
}

// votesQuorum reports whether the votes of this round for v's candidate
// form a quorum of every configuration in force.
func (n *Node) votesQuorum(v Vote) bool {
	return n.hasQuorum(func(id uint64) bool {
		rv, ok := n.elect.recv[id]
		return ok && rv.sameCandidate(v)
	})
}

// leaderConfirmed: a candidate other than this node must itself have said
// it leads before we follow it on the strength of same-round votes.
func (n *Node) leaderConfirmed(l uint64) bool {
	if l == n.id {
		return true
	}
	if n.elect.leading[l] {
		return true
	}
	ov, ok := n.elect.out[l]
	return ok && ov.state == StateLeading
}

func (n *Node) checkElection() {
	if n.state != StateLooking || !n.canVote() {
		return
	}
	if n.votesQuorum(n.elect.vote) {
		n.decide(n.elect.vote)
	}
}

func (n *Node) decide(v Vote) {
	v.Round = n.elect.round
	n.elect.vote = v
	n.logger.Debug("elected", "leader", v.Leader, "round", v.Round)
	switch {
	case v.Leader == n.id:
		n.becomeLeader()
	default:
		// The round of the LEADING vote from the leader that this
		// decision rests on: a LOOKING vote from it in a later round
		// means it gave up that leadership.
		saw, round := false, uint64(0)
		if n.elect.leading[v.Leader] {
			saw, round = true, n.elect.round
		}
		if ov, ok := n.elect.out[v.Leader]; ok && ov.state == StateLeading {
			saw, round = true, max(round, ov.vote.Round)
		}
		n.becomeLearner(v.Leader)
		n.learn.sawLeading, n.learn.leadingRound = saw, round
	}
}
