package zab

import "testing"

// A leader confirms its leadership once a quorum answers a round started
// after the request; cut off from its followers, it cannot, however long
// it still believes it leads.
func TestConfirmLeadership(t *testing.T) {
	tn := newTestNet(t, []uint64{1, 2, 3}, nil, nil)
	tn.start()
	l := tn.mustElect(200)
	x := tn.nodes[l]
	round, err := x.n.ConfirmLeadership()
	if err != nil {
		t.Fatal(err)
	}
	tn.process(l)
	tn.deliver()
	if got := x.n.Confirmed(); got < round {
		t.Fatalf("confirmed %d after a quorum answered round %d", got, round)
	}

	tn.cut[l] = true
	round, err = x.n.ConfirmLeadership()
	if err != nil {
		t.Fatal(err)
	}
	tn.process(l)
	tn.deliver()
	if !x.n.Status().Established() {
		t.Fatal("the leader stepped down before syncLimit")
	}
	if got := x.n.Confirmed(); got >= round {
		t.Fatalf("a leader cut off from every follower confirmed round %d", round)
	}
	for _, id := range tn.ids {
		if id != l {
			if _, err := tn.nodes[id].n.ConfirmLeadership(); err != ErrNotLeader {
				t.Fatalf("follower %d: ConfirmLeadership error %v, want ErrNotLeader", id, err)
			}
		}
	}
}
