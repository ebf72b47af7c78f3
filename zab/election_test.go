package zab

import "testing"

// A follower whose leader votes LOOKING in a round after the one in which
// it said it led goes looking at once, in the leader's round: the leader
// gave that leadership up and forgot the follower's session. A LOOKING
// vote of that round or an earlier one (sent before it led) changes
// nothing.
func TestFollowerLooksWhenItsLeaderLooksAgain(t *testing.T) {
	tn := newTestNet(t, []uint64{1, 2, 3}, nil, nil)
	tn.start()
	l := tn.mustElect(200)
	var f uint64
	for _, id := range tn.others(l) {
		if ls := tn.nodes[id].n.learn; ls != nil && ls.sawLeading {
			f = id
		}
	}
	if f == 0 {
		t.Fatalf("no follower saw a LEADING vote from leader %d:%s", l, tn.dump())
	}
	n := tn.nodes[f].n
	r := n.learn.leadingRound
	vote := func(round uint64) Message {
		st := tn.nodes[l].n.Status()
		return Message{Type: MsgVote, From: l, To: f, State: StateLooking,
			Vote: Vote{Leader: l, Zxid: st.LastZxid, Epoch: st.HardState.CurrentEpoch, Round: round}}
	}
	session := n.learn.session
	for _, round := range []uint64{r - 1, r} {
		if err := n.Step(vote(round)); err != nil {
			t.Fatal(err)
		}
		if st := n.Status().State; st != StateFollowing || n.learn.session != session {
			t.Fatalf("LOOKING vote of round %d (leader said LEADING in %d): follower is %v, session %d (was %d)",
				round, r, st, n.learn.session, session)
		}
	}
	if err := n.Step(vote(r + 1)); err != nil {
		t.Fatal(err)
	}
	// It looked, in the leader's round, and with the leader's vote and its
	// own for the leader (the leader's history is the best) decided at
	// once: it follows the leader again in a new session.
	if got := n.elect.round; got != r+1 {
		t.Fatalf("follower's round %d, want the leader's %d", got, r+1)
	}
	if st := n.Status().State; st == StateFollowing && n.learn.session == session {
		t.Fatalf("LOOKING vote of round %d after LEADING in %d: follower kept its session %d", r+1, r, session)
	}
}

func lookingVote(from, to, leader, round uint64) Message {
	return Message{Type: MsgVote, From: from, To: to, State: StateLooking, Vote: Vote{Leader: leader, Round: round}}
}

func mustStep(t *testing.T, n *Node, m Message) {
	t.Helper()
	if err := n.Step(m); err != nil {
		t.Fatal(err)
	}
}

// A leader still in discovery steps down and joins the round of a voter
// that looks, in its round or a later one, for a better candidate: its
// decision rested on votes that have since changed. A worse vote, or a
// better one of an earlier round, changes nothing.
func TestDiscoveryLeaderStepsDownForBetterVote(t *testing.T) {
	tn := newTestNet(t, []uint64{1, 2, 3}, nil, nil)
	tn.start()
	n := tn.nodes[2].n
	mustStep(t, n, lookingVote(1, 2, 2, 1))
	if st := n.Status(); st.State != StateLeading || st.Phase != PhaseDiscovery {
		t.Fatalf("2 with the votes of 1 and 2 in round 1: %v/%v, want leading/discovery", st.State, st.Phase)
	}
	for _, m := range []Message{lookingVote(1, 2, 1, 1), lookingVote(3, 2, 3, 0)} {
		mustStep(t, n, m)
		if st := n.Status(); st.State != StateLeading {
			t.Fatalf("vote for %d of round %d (leader's round 1): %v, want leading", m.Vote.Leader, m.Vote.Round, st.State)
		}
	}
	// 1 joined it; stepping down closes 1's session with a refusal that
	// carries the round and the better vote.
	mustStep(t, n, Message{Type: MsgFollowerInfo, From: 1, To: 2, Session: 7})
	n.Advance(n.Ready())
	mustStep(t, n, lookingVote(3, 2, 3, 1))
	refused := false
	for _, m := range n.Ready().Messages {
		if m.Type == MsgLeaderInfo && m.To == 1 && m.Session == 7 && m.Reject &&
			m.State == StateLooking && m.Vote.Round == 1 && m.Vote.Leader == 3 {
			refused = true
		}
	}
	if !refused {
		t.Fatalf("leader stepping down did not refuse learner 1's session with round 1 and the vote for 3")
	}
	// It votes for 3 in round 1, and with 3's vote and its own decides at
	// once to follow 3.
	if st := n.Status(); st.State == StateLeading || n.elect.round != 1 || n.elect.vote.Leader != 3 {
		t.Fatalf("better vote of the leader's round: %v in round %d voting %d, want no longer leading, round 1, voting 3",
			st.State, n.elect.round, n.elect.vote.Leader)
	}
}

// A learner that decided for a candidate on the votes of its round, and
// never saw it leading, joins the candidate's round when the candidate
// looks in a later one: its vote of the earlier round no longer counts
// there. A LOOKING vote of the learner's own round changes nothing.
func TestLearnerJoinsItsCandidatesLaterRound(t *testing.T) {
	tn := newTestNet(t, []uint64{1, 2, 3}, nil, nil)
	tn.start()
	n := tn.nodes[1].n
	mustStep(t, n, lookingVote(3, 1, 3, 1))
	mustStep(t, n, lookingVote(2, 1, 3, 1))
	if st := n.Status(); st.State != StateFollowing || n.leader != 3 || n.learn.sawLeading {
		t.Fatalf("1 with round-1 votes for 3: %v leader %d, want following 3 (not seen leading)", st.State, n.leader)
	}
	session := n.learn.session
	mustStep(t, n, lookingVote(3, 1, 3, 1))
	if st := n.Status(); st.State != StateFollowing || n.learn.session != session {
		t.Fatalf("candidate's LOOKING vote of the learner's round: %v, want still following in session %d", st.State, session)
	}
	mustStep(t, n, lookingVote(3, 1, 3, 2))
	if n.elect.round != 2 {
		t.Fatalf("learner's round %d, want its candidate's 2", n.elect.round)
	}
	if st := n.Status(); st.State == StateFollowing && n.learn.session == session {
		t.Fatalf("candidate looks in round 2: learner kept following in its round-1 session")
	}
}

// An observer is a voter of no configuration: it starts each round with a
// vote for no one and adopts the first candidate it hears of.
func TestObserverVotesForNoOne(t *testing.T) {
	tn := newTestNet(t, []uint64{1, 2, 3}, []uint64{4}, nil)
	tn.start()
	n := tn.nodes[4].n
	if v := n.elect.vote; v.Leader != 0 {
		t.Fatalf("observer's first vote is for %d, want 0 (no one)", v.Leader)
	}
	mustStep(t, n, lookingVote(1, 4, 1, 1))
	if v := n.elect.vote; v.Leader != 1 {
		t.Fatalf("observer heard a vote for 1: votes for %d, want 1", v.Leader)
	}
}
