package zab

import "testing"

// joinAsLearner makes node 2 of newBare follow leader 1 and take its
// LEADERINFO, so it waits for the sync; it returns the session.
func joinAsLearner(t *testing.T) (*Node, uint64) {
	t.Helper()
	n, _ := newBare(t, 2, HardState{})
	r := n.Status().Round
	step(t, n, Message{Type: MsgVote, From: 1, State: StateLeading, Vote: Vote{Leader: 1, Round: r}})
	step(t, n, Message{Type: MsgVote, From: 3, State: StateFollowing, Vote: Vote{Leader: 1, Round: r}})
	msgs := step(t, n, Message{Type: MsgVote, From: 4, State: StateFollowing, Vote: Vote{Leader: 1, Round: r}})
	var session uint64
	for _, m := range msgs {
		if m.Type == MsgFollowerInfo {
			session = m.Session
		}
	}
	if session == 0 {
		t.Fatalf("no FOLLOWERINFO: %v", msgs)
	}
	if !containsType(step(t, n, Message{Type: MsgLeaderInfo, From: 1, Session: session, Epoch: 1}), MsgAckEpoch) {
		t.Fatal("LEADERINFO not acknowledged")
	}
	return n, session
}

func following(t *testing.T, n *Node, session uint64, what string) {
	t.Helper()
	if s := n.Status(); s.State != StateFollowing || n.learn.session != session {
		t.Fatalf("%s: %v, want following 1 in session %d", what, s.State, session)
	}
}

// A learner waiting for its sync keeps waiting, however long, while its
// transport reports that bytes from the leader keep arriving (a large
// SNAP on the wire), and looks again InitLimit ticks after they stop.
// Reports about another server extend nothing.
func TestLearnerSyncStepExtendedByTransferProgress(t *testing.T) {
	n, session := joinAsLearner(t)
	limit := n.cfg.InitLimit
	for i := range 6 {
		tickN(n, limit-1)
		if i%2 == 0 {
			n.ReportProgress(1) // the transport: bytes arriving
		} else {
			// The leader's driver: the image is being built.
			step(t, n, Message{Type: MsgSyncProgress, From: 1})
		}
		n.ReportProgress(3) // not the leader
		step(t, n, Message{Type: MsgSyncProgress, From: 3})
	}
	following(t, n, session, "sync in progress for 6 InitLimits")
	for range limit - 1 {
		tickN(n, 1)
		n.ReportProgress(3)
		drain(n)
	}
	following(t, n, session, "InitLimit-1 ticks after the last progress")
	tickN(n, 1)
	if s := n.Status(); s.State != StateLooking {
		t.Fatalf("transfer stalled for InitLimit ticks: %v, want looking", s.State)
	}
}

// The learner's durable install of a SNAP (Advance of the Ready that
// carried it) restarts its step: a slow install does not eat the time the
// rest of the step (NEWLEADER, the durable log) is given.
func TestLearnerSnapInstallRestartsStep(t *testing.T) {
	n, session := joinAsLearner(t)
	limit := n.cfg.InitLimit
	snap := Snapshot{Zxid: NewZxid(0, 0)}
	if err := n.Step(Message{Type: MsgSync, From: 1, To: 2, Session: session, Sync: SyncSnap, Zxid: snap.Zxid, Snapshot: &snap}); err != nil {
		t.Fatal(err)
	}
	rd := n.Ready()
	if rd.Snapshot == nil {
		t.Fatalf("no snapshot to install in %+v", rd)
	}
	// The install takes InitLimit-1 ticks of the node's clock.
	for range limit - 1 {
		n.Tick()
	}
	n.Advance(rd)
	drain(n)
	tickN(n, limit-1)
	following(t, n, session, "InitLimit-1 ticks after the install")
	tickN(n, 1)
	if s := n.Status(); s.State != StateLooking {
		t.Fatalf("no NEWLEADER InitLimit ticks after the install: %v, want looking", s.State)
	}
}

// Between the sync header and NEWLEADER, the DIFF's proposals are the
// step's progress; once NEWLEADER came, neither proposals, pings nor
// transfer reports extend the wait for UPTODATE (an ACKNEWLEADER lost on a
// link that broke unnoticed, simulator seed 38110).
func TestLearnerDiffProgressButNotAfterNewLeader(t *testing.T) {
	n, session := joinAsLearner(t)
	limit := n.cfg.InitLimit
	step(t, n, Message{Type: MsgSync, From: 1, Session: session, Sync: SyncDiff})
	prev := Zxid(0)
	for i := range 3 {
		tickN(n, limit-1)
		z := NewZxid(1, uint32(i+1))
		step(t, n, Message{Type: MsgProposal, From: 1, Session: session, Prev: prev, Entries: []Entry{{Zxid: z, Data: []byte("x")}}})
		prev = z
	}
	following(t, n, session, "DIFF arriving for 3 InitLimits")
	msgs := step(t, n, Message{Type: MsgNewLeader, From: 1, Session: session, Epoch: 1, Zxid: prev})
	if !containsType(msgs, MsgAckNewLeader) {
		n.Persisted(prev)
		msgs = drain(n)
	}
	if !containsType(msgs, MsgAckNewLeader) {
		t.Fatalf("NEWLEADER not acknowledged: %v", msgs)
	}
	for range limit - 1 {
		tickN(n, 1)
		n.ReportProgress(1)
		z := prev + 1
		step(t, n, Message{Type: MsgProposal, From: 1, Session: session, Prev: prev, Entries: []Entry{{Zxid: z, Data: []byte("y")}}})
		prev = z
		step(t, n, Message{Type: MsgPing, From: 1, Session: session})
	}
	following(t, n, session, "UPTODATE due")
	tickN(n, 1)
	if s := n.Status(); s.State != StateLooking {
		t.Fatalf("no UPTODATE InitLimit ticks after ACKNEWLEADER: %v, want looking", s.State)
	}
}

// A leader keeps the session of a learner it is synchronizing while its
// transport reports the sync's bytes moving to it, and forgets it
// InitLimit ticks after they stop.
func TestLeaderKeepsLearnerWhileSyncMoves(t *testing.T) {
	n, _ := newBare(t, 1, HardState{})
	limit := n.cfg.InitLimit
	elect(t, n)
	for id, s := range map[uint64]uint64{2: 7, 3: 8, 4: 9} {
		step(t, n, Message{Type: MsgFollowerInfo, From: id, Session: s})
	}
	for id, s := range map[uint64]uint64{2: 7, 3: 8, 4: 9} {
		step(t, n, Message{Type: MsgAckEpoch, From: id, Session: s, Epoch: 1})
	}
	if p := n.lead.peers[4]; p == nil || p.stage != stageSyncSent {
		t.Fatalf("learner 4 not being synchronized: %+v", p)
	}
	step(t, n, Message{Type: MsgAckNewLeader, From: 2, Session: 7, Epoch: 1})
	step(t, n, Message{Type: MsgAckNewLeader, From: 3, Session: 8, Epoch: 1})
	if st := n.Status(); st.Phase != PhaseBroadcast {
		t.Fatalf("not established: %+v", st)
	}
	for range 4 * limit {
		tickN(n, 1)
		n.ReportProgress(4)
		step(t, n, Message{Type: MsgAck, From: 2, Session: 7})
		step(t, n, Message{Type: MsgAck, From: 3, Session: 8})
	}
	if n.lead.peers[4] == nil {
		t.Fatal("learner 4 forgotten while its sync was moving")
	}
	for range limit + 1 {
		tickN(n, 1)
		step(t, n, Message{Type: MsgAck, From: 2, Session: 7})
		step(t, n, Message{Type: MsgAck, From: 3, Session: 8})
	}
	if n.lead.peers[4] != nil {
		t.Fatal("learner 4 kept after InitLimit ticks without progress")
	}
}
