package zab

import (
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
