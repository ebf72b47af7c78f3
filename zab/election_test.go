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
