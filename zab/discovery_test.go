package zab

import (
	"fmt"
	"testing"
)

// newBare returns a node of a 5-voter ensemble with a storage whose hard
// state is hs, and drains its first Ready.
func newBare(t *testing.T, id uint64, hs HardState) (*Node, *MemoryStorage) {
	t.Helper()
	st := NewMemoryStorage()
	st.SetHardState(hs)
	n, err := NewNode(Config{ID: id, Voters: []uint64{1, 2, 3, 4, 5}, Storage: st})
	if err != nil {
		t.Fatal(err)
	}
	drain(n)
	return n, st
}

func drain(n *Node) []Message {
	var out []Message
	for n.HasReady() {
		rd := n.Ready()
		out = append(out, rd.Messages...)
		n.Advance(rd)
	}
	return out
}

func step(t *testing.T, n *Node, m Message) []Message {
	t.Helper()
	m.To = n.ID()
	if err := n.Step(m); err != nil {
		t.Fatalf("Step(%v): %v", m, err)
	}
	return drain(n)
}

// elect makes node 1 leader with votes from 2 and 3.
func elect(t *testing.T, n *Node) {
	t.Helper()
	v := Vote{Leader: 1, Round: n.Status().Round}
	step(t, n, Message{Type: MsgVote, From: 2, Vote: v})
	step(t, n, Message{Type: MsgVote, From: 3, Vote: v})
	if st := n.Status(); st.State != StateLeading {
		t.Fatalf("node 1 not leading: %+v", st)
	}
}

func TestLeaderStepsDownForMoreRecentFollower(t *testing.T) {
	n, _ := newBare(t, 1, HardState{})
	elect(t, n)
	step(t, n, Message{Type: MsgFollowerInfo, From: 2, Session: 7})
	step(t, n, Message{Type: MsgFollowerInfo, From: 3, Session: 8})
	if n.Status().Epoch != 1 {
		t.Fatalf("epoch %d, want 1", n.Status().Epoch)
	}
	step(t, n, Message{Type: MsgAckEpoch, From: 2, Session: 7, Epoch: 1})
	// Server 3 has entries the leader lacks: the leader must not go on.
	step(t, n, Message{Type: MsgAckEpoch, From: 3, Session: 8, Epoch: 1, Zxid: NewZxid(0, 5)})
	if st := n.Status(); st.State != StateLooking {
		t.Fatalf("leader kept leading with a more recent follower in its quorum: %+v", st)
	}
}

func TestEpochCountsOnlyFromLowerAcceptedEpoch(t *testing.T) {
	n, _ := newBare(t, 1, HardState{})
	elect(t, n)
	step(t, n, Message{Type: MsgFollowerInfo, From: 2, Session: 7})
	step(t, n, Message{Type: MsgFollowerInfo, From: 3, Session: 8})
	// Server 4 already accepted epoch 1 (from another prospective
	// leader): its acceptance must not count for this one.
	step(t, n, Message{Type: MsgFollowerInfo, From: 4, Session: 9, Epoch: 1})
	step(t, n, Message{Type: MsgAckEpoch, From: 2, Session: 7, Epoch: 1})
	step(t, n, Message{Type: MsgAckEpoch, From: 4, Session: 9, Epoch: 1})
	if ph := n.Status().Phase; ph != PhaseDiscovery {
		t.Fatalf("phase %v after acks of 1, 2 and a non-counting 4; want discovery", ph)
	}
	msgs := step(t, n, Message{Type: MsgAckEpoch, From: 3, Session: 8, Epoch: 1})
	if ph := n.Status().Phase; ph != PhaseSync {
		t.Fatalf("phase %v after a quorum of counting acks; want sync", ph)
	}
	// All three get synchronized, server 4 included.
	synced := map[uint64]bool{}
	for _, m := range msgs {
		if m.Type == MsgNewLeader {
			synced[m.To] = true
		}
	}
	if !synced[2] || !synced[3] || !synced[4] {
		t.Fatalf("NEWLEADER sent to %v", synced)
	}
}

func TestLearnerRefusesOlderEpoch(t *testing.T) {
	n, st := newBare(t, 2, HardState{AcceptedEpoch: 5, CurrentEpoch: 2})
	r := n.Status().Round
	step(t, n, Message{Type: MsgVote, From: 1, State: StateLeading, Vote: Vote{Leader: 1, Round: r}})
	step(t, n, Message{Type: MsgVote, From: 3, State: StateFollowing, Vote: Vote{Leader: 1, Round: r}})
	msgs := step(t, n, Message{Type: MsgVote, From: 4, State: StateFollowing, Vote: Vote{Leader: 1, Round: r}})
	if s := n.Status(); s.State != StateFollowing || s.Leader != 1 {
		t.Fatalf("not following 1: %+v", s)
	}
	var info Message
	for _, m := range msgs {
		if m.Type == MsgFollowerInfo {
			info = m
		}
	}
	if info.Epoch != 5 {
		t.Fatalf("FOLLOWERINFO %v, want acceptedEpoch 5", info)
	}
	step(t, n, Message{Type: MsgLeaderInfo, From: 1, Session: info.Session, Epoch: 4})
	if s := n.Status(); s.State != StateLooking || s.AcceptedEpoch != 5 {
		t.Fatalf("accepted an epoch below its promise: %+v", s)
	}
	if hs, _ := st.HardState(); hs.AcceptedEpoch != 5 {
		t.Fatalf("hard state %+v", hs)
	}
}

func tickN(n *Node, ticks int) {
	for range ticks {
		n.Tick()
		drain(n)
	}
}

// A new leader's waits for a quorum (to fix the epoch, to acknowledge it,
// to acknowledge NEWLEADER) have InitLimit ticks each, as ZooKeeper's
// getEpochToPropose, waitForEpochAck and waitForNewLeaderAck: a join
// whose steps each take most of InitLimit ends established, and a wait
// that takes InitLimit ends the leadership. Simulator seed 37501 never
// converged while InitLimit bounded the whole join: on slow links with
// fast clocks no leader got a quorum through all of it in time.
func TestLeaderInitLimitBoundsEachWait(t *testing.T) {
	n, _ := newBare(t, 1, HardState{})
	limit := n.cfg.InitLimit
	elect(t, n)
	tickN(n, limit-1)
	step(t, n, Message{Type: MsgFollowerInfo, From: 2, Session: 7})
	step(t, n, Message{Type: MsgFollowerInfo, From: 3, Session: 8})
	if st := n.Status(); st.State != StateLeading || st.Epoch != 1 {
		t.Fatalf("FOLLOWERINFO from 2 and 3 after %d ticks: %v epoch %d, want leading with epoch 1", limit-1, st.State, st.Epoch)
	}
	tickN(n, limit-1)
	step(t, n, Message{Type: MsgAckEpoch, From: 2, Session: 7, Epoch: 1})
	step(t, n, Message{Type: MsgAckEpoch, From: 3, Session: 8, Epoch: 1})
	if st := n.Status(); st.State != StateLeading || st.Phase != PhaseSync {
		t.Fatalf("epoch acknowledged %d ticks after it was fixed (%d after the election): %v/%v, want leading/sync",
			limit-1, 2*(limit-1), st.State, st.Phase)
	}
	tickN(n, limit-1)
	step(t, n, Message{Type: MsgAckNewLeader, From: 2, Session: 7, Epoch: 1})
	step(t, n, Message{Type: MsgAckNewLeader, From: 3, Session: 8, Epoch: 1})
	if st := n.Status(); st.State != StateLeading || st.Phase != PhaseBroadcast {
		t.Fatalf("NEWLEADER acknowledged %d ticks after the sync began (%d after the election): %v/%v, want leading/broadcast",
			limit-1, 3*(limit-1), st.State, st.Phase)
	}

	// Each wait is still bounded: the epoch fixed, no acknowledgement.
	n, _ = newBare(t, 1, HardState{})
	elect(t, n)
	step(t, n, Message{Type: MsgFollowerInfo, From: 2, Session: 7})
	step(t, n, Message{Type: MsgFollowerInfo, From: 3, Session: 8})
	tickN(n, limit-1)
	if st := n.Status(); st.State != StateLeading {
		t.Fatalf("%d ticks waiting for ACKEPOCH: %v, want still leading", limit-1, st.State)
	}
	tickN(n, 1)
	if st := n.Status(); st.State != StateLooking {
		t.Fatalf("%d ticks waiting for ACKEPOCH: %v, want looking", limit, st.State)
	}
}

// Each step of a learner's join has InitLimit ticks, as ZooKeeper's
// learner reads each with a socket timeout of initLimit, not the whole
// join: the leader may need a quorum's answers before it sends the next
// step (LEADERINFO, UPTODATE). Pings do not extend a step: an
// ACKNEWLEADER lost on a link that broke unnoticed left an observer
// waiting for UPTODATE for good while the leader pinged it (simulator
// seed 38110).
func TestLearnerInitLimitBoundsEachStep(t *testing.T) {
	n, _ := newBare(t, 2, HardState{})
	limit := n.cfg.InitLimit
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
	if s := n.Status(); s.State != StateFollowing || s.Leader != 1 || session == 0 {
		t.Fatalf("not following 1 with a FOLLOWERINFO sent: %+v", s)
	}
	following := func(what string) {
		t.Helper()
		if s := n.Status(); s.State != StateFollowing || n.learn.session != session {
			t.Fatalf("%s: %v, want following 1 in session %d", what, s.State, session)
		}
	}
	tickN(n, limit-1)
	following("LEADERINFO due")
	step(t, n, Message{Type: MsgLeaderInfo, From: 1, Session: session, Epoch: 1})
	tickN(n, limit-1)
	following("sync due")
	step(t, n, Message{Type: MsgSync, From: 1, Session: session, Sync: SyncDiff})
	msgs = step(t, n, Message{Type: MsgNewLeader, From: 1, Session: session, Epoch: 1})
	if !containsType(msgs, MsgAckNewLeader) {
		t.Fatalf("NEWLEADER not acknowledged: %v", msgs)
	}
	for range limit - 1 {
		tickN(n, 1)
		step(t, n, Message{Type: MsgPing, From: 1, Session: session})
	}
	following(fmt.Sprintf("UPTODATE due, %d ticks after the decision", 3*(limit-1)))
	tickN(n, 1)
	if s := n.Status(); s.State != StateLooking {
		t.Fatalf("no UPTODATE %d ticks after NEWLEADER, pinged every tick: %v, want looking", limit, s.State)
	}
}

func containsType(msgs []Message, typ MsgType) bool {
	for _, m := range msgs {
		if m.Type == typ {
			return true
		}
	}
	return false
}
