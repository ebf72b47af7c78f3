package zab

import (
	"slices"
	"testing"
)

// persist reports id's whole log durable.
func (tn *testNet) persist(id uint64) {
	x := tn.nodes[id]
	last, _ := x.st.LastZxid()
	x.n.Persisted(last)
	tn.process(id)
}

// With the leader's COMMITs lost, followers still commit a proposal once a
// quorum's logs hold it durably, from the voters' peer acknowledgements;
// with peer acknowledgements off they wait for the COMMIT, as in
// ZooKeeper. A follower whose own log is not durable yet commits too (the
// quorum is the leader and the other follower), as it would on a COMMIT.
func TestFollowersCommitOnPeerAcks(t *testing.T) {
	for _, disabled := range []bool{false, true} {
		tn := newTestNet(t, []uint64{1, 2, 3}, nil, func(c *Config) { c.DisablePeerAcks = disabled })
		tn.start()
		l := tn.mustElect(200)
		fs := tn.others(l)
		tn.manual = true
		tn.drop = func(m Message) bool { return m.Type == MsgCommit }
		z := tn.propose("x")
		tn.deliver()
		tn.persist(l)
		tn.persist(fs[0])
		tn.deliver()
		for _, f := range fs {
			got := tn.nodes[f].n.Status().Commit
			applied := slices.Contains(tn.appliedData(f), "x")
			if disabled {
				if got >= z || applied {
					t.Errorf("peer acks off: follower %d committed %v (applied %v) without a COMMIT", f, got, applied)
				}
				continue
			}
			if got < z || !applied {
				t.Errorf("follower %d: commit %v applied %v, want %v committed and applied from peer acks%s", f, got, applied, z, tn.dump())
			}
		}
		if got := tn.nodes[l].n.Status().Commit; got < z {
			t.Errorf("leader commit %v, want %v", got, z)
		}
	}
}

// A peer acknowledgement counts only between voters in broadcast in the
// same epoch: one naming another epoch, or from an observer, commits
// nothing.
func TestPeerAcksOfAnotherEpochOrAnObserverDoNotCount(t *testing.T) {
	tn := newTestNet(t, []uint64{1, 2, 3}, []uint64{4}, nil)
	tn.start()
	l := tn.mustElect(200)
	voters := slices.DeleteFunc(tn.others(l), func(id uint64) bool { return id == 4 })
	f, other := voters[0], voters[1]
	tn.manual = true
	tn.drop = func(m Message) bool { return m.Type == MsgCommit || m.Type == MsgPeerAck }
	z := tn.propose("x")
	tn.deliver()
	tn.persist(f)
	epoch := tn.nodes[f].n.Status().Epoch
	for _, m := range []Message{
		{Type: MsgPeerAck, From: l, To: f, Epoch: epoch + 1, Zxid: z},
		{Type: MsgPeerAck, From: other, To: f, Epoch: epoch - 1, Zxid: z},
		{Type: MsgPeerAck, From: 4, To: f, Epoch: epoch, Zxid: z},
	} {
		if err := tn.nodes[f].n.Step(m); err != nil {
			t.Fatal(err)
		}
		tn.process(f)
		if got := tn.nodes[f].n.Status().Commit; got >= z {
			t.Fatalf("%v committed %v", m, got)
		}
	}
	if err := tn.nodes[f].n.Step(Message{Type: MsgPeerAck, From: other, To: f, Epoch: epoch, Zxid: z}); err != nil {
		t.Fatal(err)
	}
	tn.process(f)
	if got := tn.nodes[f].n.Status().Commit; got < z {
		t.Fatalf("a voter's peer ack in the same epoch did not commit: %v < %v", got, z)
	}
}
