package zab

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// join starts a server outside the ensemble's configuration (a joining
// server): its configuration is the ensemble's, with itself among the
// observers when it is to observe.
func (tn *testNet) join(id uint64, voters, observers []uint64) {
	tn.ids = append(tn.ids, id)
	slices.Sort(tn.ids)
	st := NewMemoryStorage()
	tn.nodes[id] = &tnode{st: st, cfg: Config{
		ID: id, Voters: voters, Observers: observers, Storage: st,
		Rand: rand.New(rand.NewPCG(id, 1)),
	}}
	tn.restart(id)
}

func (tn *testNet) reconfig(voters, observers []uint64) (Zxid, error) {
	l := tn.leader()
	if l == 0 {
		return 0, ErrNotLeader
	}
	z, err := tn.nodes[l].n.Propose(EncodeMembership(Membership{Voters: voters, Observers: observers}))
	tn.process(l)
	return z, err
}

func (tn *testNet) mustReconfig(voters, observers []uint64) Zxid {
	z, err := tn.reconfig(voters, observers)
	if err != nil {
		tn.t.Fatalf("reconfig %v %v: %v", voters, observers, err)
	}
	return z
}

// activeIs checks that every live server has m as its active
// configuration and none pending.
func (tn *testNet) activeIs(voters, observers []uint64) bool {
	for _, id := range tn.ids {
		x := tn.nodes[id]
		if x.n == nil || tn.cut[id] {
			continue
		}
		a, p := x.n.Membership()
		if p != nil || !slices.Equal(a.Voters, voters) || !slices.Equal(a.Observers, observers) {
			return false
		}
	}
	return true
}

func (tn *testNet) committedEverywhere(data string) bool {
	for _, id := range tn.ids {
		if x := tn.nodes[id]; x.n != nil && !tn.cut[id] && !slices.Contains(tn.appliedData(id), data) {
			return false
		}
	}
	return true
}

func (tn *testNet) mustSettle(what string, cond func() bool) {
	tn.t.Helper()
	if !tn.run(200, cond) {
		tn.t.Fatalf("%s: not reached: %s", what, tn.dump())
	}
}

func TestMembershipEncoding(t *testing.T) {
	m := Membership{Voters: []uint64{1, 2, 300000}, Observers: []uint64{7}}
	got, ok := DecodeMembership(EncodeMembership(m))
	if !ok || !slices.Equal(got.Voters, m.Voters) || !slices.Equal(got.Observers, m.Observers) {
		t.Fatalf("round trip: %v %v", got, ok)
	}
	b := EncodeMembership(m)
	for _, bad := range [][]byte{nil, []byte("data"), b[:len(b)-1], append(slices.Clone(b), 0)} {
		if _, ok := DecodeMembership(bad); ok {
			t.Errorf("%q decoded as a membership", bad)
		}
	}
	for _, bad := range []Membership{{}, {Voters: []uint64{1, 1}}, {Voters: []uint64{1}, Observers: []uint64{1}}, {Voters: []uint64{0}}} {
		if err := bad.Validate(); !errors.Is(err, ErrInvalidMembership) {
			t.Errorf("%v: err = %v", bad, err)
		}
	}
}

// Grow 3 -> 5 with two joining servers, lose two of the five, shrink to
// three servers that do not include the leader.
func TestReconfigGrowAndShrink(t *testing.T) {
	tn := newTestNet(t, []uint64{1, 2, 3}, nil, nil)
	tn.start()
	l := tn.mustElect(100)
	tn.propose("a")
	tn.join(4, []uint64{1, 2, 3}, nil)
	tn.join(5, []uint64{1, 2, 3}, nil)
	tn.mustSettle("joiners follow", func() bool { return tn.allFollow(l) })
	if st := tn.nodes[4].n.Status(); st.State != StateFollowing {
		t.Fatalf("joiner state %v, want following", st.State)
	}
	tn.mustReconfig([]uint64{1, 2, 3, 4, 5}, nil)
	tn.propose("b")
	tn.mustSettle("grown", func() bool {
		return tn.activeIs([]uint64{1, 2, 3, 4, 5}, nil) && tn.committedEverywhere("b")
	})
	if got := tn.appliedData(4); !slices.Contains(got, "a") {
		t.Fatalf("joiner 4 applied %q, missing the history before it joined", got)
	}
	// Two of five down: the other three are a quorum of the new
	// configuration (they were not of the old one plus the joiners).
	var down []uint64
	for _, id := range tn.others(l) {
		if len(down) < 2 && id <= 3 {
			down = append(down, id)
		}
	}
	for _, id := range down {
		tn.crash(id)
	}
	tn.propose("c")
	tn.mustSettle("commit with 3 of 5", func() bool { return tn.committedEverywhere("c") })
	for _, id := range down {
		tn.restart(id)
	}
	tn.mustSettle("restarted rejoin", func() bool {
		return tn.allFollow(l) && tn.activeIs([]uint64{1, 2, 3, 4, 5}, nil)
	})

	// Shrink to three voters without the leader: it designates a successor.
	var keep []uint64
	for _, id := range []uint64{1, 2, 3} {
		if id != l && len(keep) == 0 {
			keep = append(keep, id)
		}
	}
	keep = append(keep, 4, 5)
	tn.mustReconfig(keep, nil)
	var nl uint64
	tn.mustSettle("shrunk", func() bool {
		nl = tn.leader()
		return nl != 0 && slices.Contains(keep, nl) && tn.allFollow(nl) && tn.activeIs(keep, nil)
	})
	if st := tn.nodes[l].n.Status(); st.State != StateFollowing {
		t.Fatalf("removed leader %d is %v, want a non-voting follower", l, st.State)
	}
	// The removed servers no longer count: with them down the rest
	// commits.
	for _, id := range []uint64{1, 2, 3} {
		if !slices.Contains(keep, id) {
			tn.crash(id)
		}
	}
	tn.propose("d")
	tn.mustSettle("commit without the removed", func() bool { return tn.committedEverywhere("d") })
}

// A change that removes two of three voters and adds two joiners needs
// the new voters' acknowledgements: the old quorum alone commits neither
// it nor anything after it.
func TestReconfigNeedsJointQuorum(t *testing.T) {
	tn := newTestNet(t, []uint64{1, 2, 3}, nil, nil)
	tn.start()
	l := tn.mustElect(100)
	tn.join(4, []uint64{1, 2, 3}, nil)
	tn.join(5, []uint64{1, 2, 3}, nil)
	tn.mustSettle("joiners follow", func() bool { return tn.allFollow(l) })
	newVoters := []uint64{l, 4, 5}
	slices.Sort(newVoters)
	// The joiners' acknowledgements are lost from now on.
	tn.drop = func(m Message) bool { return (m.From == 4 || m.From == 5) && m.Type == MsgAck }
	z := tn.mustReconfig(newVoters, nil)
	zx := tn.propose("x")
	tn.deliver()
	for range 3 {
		tn.tick()
	}
	st := tn.nodes[l].n.Status()
	if st.Commit >= z {
		t.Fatalf("change %v committed at %v by the old quorum alone", z, st.Commit)
	}
	if st.PendingMembership == nil {
		t.Fatalf("no pending membership on the leader")
	}
	tn.drop = nil
	tn.mustSettle("joint quorum", func() bool { return tn.activeIs(newVoters, nil) && tn.committedEverywhere("x") })
	if c := tn.nodes[l].n.Status().Commit; c < zx {
		t.Fatalf("commit %v below %v", c, zx)
	}
}

func TestReconfigRefused(t *testing.T) {
	tn := newTestNet(t, []uint64{1, 2, 3}, nil, nil)
	tn.start()
	l := tn.mustElect(100)
	// 4, 5 and 6 are not connected: a quorum of the new voters is not
	// synchronized.
	if _, err := tn.reconfig([]uint64{1, 2, 3, 4, 5, 6}, nil); !errors.Is(err, ErrNewConfigNoQuorum) {
		t.Fatalf("err = %v, want ErrNewConfigNoQuorum", err)
	}
	// One change at a time: hold the first uncommitted.
	tn.drop = func(m Message) bool { return m.Type == MsgAck }
	tn.mustReconfig([]uint64{1, 2}, nil)
	if _, err := tn.reconfig([]uint64{1, 3}, nil); !errors.Is(err, ErrReconfigInProgress) {
		t.Fatalf("err = %v, want ErrReconfigInProgress", err)
	}
	if st := tn.nodes[l].n.Status(); st.PendingMembership == nil || !slices.Equal(st.PendingMembership.Voters, []uint64{1, 2}) {
		t.Fatalf("pending %v, want voters [1 2]", st.PendingMembership)
	}
}

// The leader fails while its change is in the followers' logs but not
// committed: the next leader's history holds it, so discovery needs both
// quorums and establishment commits it. When no follower has it, the
// change is lost with the leader and the old configuration stays.
func TestReconfigLeaderFailsMidChange(t *testing.T) {
	for _, reached := range []bool{true, false} {
		t.Run(fmt.Sprintf("reached=%v", reached), func(t *testing.T) {
			tn := newTestNet(t, []uint64{1, 2, 3}, nil, nil)
			tn.start()
			l := tn.mustElect(100)
			tn.join(4, []uint64{1, 2, 3}, nil)
			tn.mustSettle("joiner follows", func() bool { return tn.allFollow(l) })
			tn.drop = func(m Message) bool {
				if reached {
					return m.Type == MsgAck || m.Type == MsgCommit || m.Type == MsgPeerAck
				}
				return m.Type == MsgProposal
			}
			tn.mustReconfig([]uint64{1, 2, 3, 4}, nil)
			tn.deliver()
			tn.crash(l)
			tn.drop = nil
			want := []uint64{1, 2, 3}
			if reached {
				want = []uint64{1, 2, 3, 4}
			}
			var nl uint64
			tn.mustSettle("new leader", func() bool {
				nl = tn.leader()
				return nl != 0 && tn.allFollow(nl) && tn.activeIs(want, nil)
			})
			tn.propose("after")
			tn.mustSettle("commits", func() bool { return tn.committedEverywhere("after") })
			tn.restart(l)
			tn.mustSettle("old leader rejoins", func() bool { return tn.allFollow(nl) && tn.activeIs(want, nil) })
		})
	}
}

// Observers are added, promoted and removed like voters.
func TestReconfigObservers(t *testing.T) {
	tn := newTestNet(t, []uint64{1, 2, 3}, nil, nil)
	tn.start()
	l := tn.mustElect(100)
	tn.join(6, []uint64{1, 2, 3}, []uint64{6})
	tn.mustSettle("observer joins", func() bool { return tn.allFollow(l) })
	if st := tn.nodes[6].n.Status(); st.State != StateObserving {
		t.Fatalf("joining observer is %v", st.State)
	}
	tn.mustReconfig([]uint64{1, 2, 3}, []uint64{6})
	tn.propose("o1")
	tn.mustSettle("observer added", func() bool {
		return tn.activeIs([]uint64{1, 2, 3}, []uint64{6}) && tn.committedEverywhere("o1")
	})
	// Promote it: it rejoins as a follower.
	tn.mustReconfig([]uint64{1, 2, 3, 6}, nil)
	tn.propose("o2")
	tn.mustSettle("observer promoted", func() bool {
		return tn.activeIs([]uint64{1, 2, 3, 6}, nil) && tn.committedEverywhere("o2") &&
			tn.nodes[6].n.Status().State == StateFollowing && tn.allFollow(tn.leader())
	})
	// Demote it again, then remove it.
	tn.mustReconfig([]uint64{1, 2, 3}, []uint64{6})
	tn.mustSettle("demoted", func() bool {
		return tn.activeIs([]uint64{1, 2, 3}, []uint64{6}) && tn.nodes[6].n.Status().State == StateObserving &&
			tn.allFollow(tn.leader())
	})
	tn.mustReconfig([]uint64{1, 2, 3}, nil)
	tn.propose("o3")
	tn.mustSettle("removed", func() bool { return tn.activeIs([]uint64{1, 2, 3}, nil) && tn.committedEverywhere("o3") })
}

// A restarted server reads the changes in its log after Applied.
func TestReconfigSurvivesRestart(t *testing.T) {
	tn := newTestNet(t, []uint64{1, 2, 3}, nil, nil)
	tn.start()
	l := tn.mustElect(100)
	tn.join(4, []uint64{1, 2, 3}, nil)
	tn.mustSettle("joiner follows", func() bool { return tn.allFollow(l) })
	tn.mustReconfig([]uint64{1, 2, 3, 4}, nil)
	tn.mustSettle("grown", func() bool { return tn.activeIs([]uint64{1, 2, 3, 4}, nil) })
	for _, id := range tn.ids {
		tn.crash(id)
	}
	for _, id := range tn.ids {
		tn.restart(id)
	}
	tn.mustSettle("restarted", func() bool {
		l := tn.leader()
		return l != 0 && tn.allFollow(l) && tn.activeIs([]uint64{1, 2, 3, 4}, nil)
	})
}
