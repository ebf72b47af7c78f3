package zab

import (
	"errors"
	"math/rand/v2"
	"slices"
	"testing"
)

// A transfer to each other voter in turn, with writes between, moves
// leadership to exactly that voter every time (including the lowest id,
// which an ordinary election among equal histories never picks), refuses
// proposals while it runs, and loses no committed write.
func TestTransferLeadershipToEachVoter(t *testing.T) {
	for _, size := range []int{3, 5} {
		var voters []uint64
		for i := 1; i <= size; i++ {
			voters = append(voters, uint64(i))
		}
		tn := newTestNet(t, voters, nil, nil)
		tn.start()
		l := tn.mustElect(200)
		var want []string
		for round, target := range []uint64{1, 2, uint64(size), 1} {
			for i := range 3 {
				d := string(rune('a'+round)) + string(rune('0'+i))
				tn.propose(d)
				want = append(want, d)
			}
			if target == l {
				continue
			}
			if err := tn.nodes[l].n.TransferLeadership(target); err != nil {
				t.Fatalf("size %d: transfer %d->%d: %v", size, l, target, err)
			}
			if got := tn.nodes[l].n.Status().Transferee; got != target {
				t.Fatalf("size %d: Transferee %d, want %d", size, got, target)
			}
			if _, err := tn.nodes[l].n.Propose([]byte("refused")); !errors.Is(err, ErrTransferring) {
				t.Fatalf("size %d: Propose during transfer: %v, want ErrTransferring", size, err)
			}
			tn.process(l)
			l = tn.mustElect(200)
			if l != target {
				t.Fatalf("size %d: transfer to %d elected %d:%s", size, target, l, tn.dump())
			}
		}
		tn.run(20, func() bool { return false })
		for _, id := range tn.ids {
			// Applied lists restart with each node; nobody restarted here.
			if got := tn.appliedData(id); !slices.Equal(got, want) {
				t.Fatalf("size %d: node %d applied %v, want %v", size, id, got, want)
			}
		}
	}
}

// A transfer whose target is down never sends TIMEOUTNOW; after
// TransferTicks the leader aborts it and accepts proposals again, still
// leading.
func TestTransferLeadershipAbortsWhenTargetDown(t *testing.T) {
	tn := newTestNet(t, []uint64{1, 2, 3}, nil, func(c *Config) { c.TransferTicks = 3 })
	tn.start()
	l := tn.mustElect(200)
	target := tn.others(l)[0]
	tn.crash(target)
	tn.propose("a")
	if err := tn.nodes[l].n.TransferLeadership(target); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if tn.nodes[l].n.Status().Transferee != target {
			t.Fatalf("transfer ended after %d ticks, before TransferTicks", i)
		}
		tn.tick()
	}
	st := tn.nodes[l].n.Status()
	if !st.Established() || st.Transferee != 0 {
		t.Fatalf("after TransferTicks: %+v, want an established leader with no transfer", st.SoftState)
	}
	tn.propose("b")
	tn.deliver()
	if got := tn.appliedData(l); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("leader applied %v", got)
	}
}

// The target crashes right after TIMEOUTNOW reached it: its handover vote
// never arrives, the leader aborts after TransferTicks, and the ensemble
// keeps its leader.
func TestTransferLeadershipTargetCrashesAfterTimeoutNow(t *testing.T) {
	tn := newTestNet(t, []uint64{1, 2, 3}, nil, func(c *Config) { c.TransferTicks = 4 })
	tn.start()
	l := tn.mustElect(200)
	target := tn.others(l)[0]
	tn.propose("a")
	tn.deliver()
	tn.drop = func(m Message) bool {
		if m.Type == MsgTimeoutNow {
			tn.crash(m.To)
			return true
		}
		return false
	}
	if err := tn.nodes[l].n.TransferLeadership(target); err != nil {
		t.Fatal(err)
	}
	tn.process(l)
	tn.deliver()
	tn.drop = nil
	if !tn.nodes[target].down {
		t.Fatal("TIMEOUTNOW was never sent")
	}
	tn.run(10, func() bool { return tn.nodes[l].n.Status().Transferee == 0 })
	if st := tn.nodes[l].n.Status(); !st.Established() || st.Transferee != 0 {
		t.Fatalf("leader after the target crashed: %+v", st.SoftState)
	}
	tn.propose("b")
	tn.deliver()
	if got := tn.appliedData(l); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("leader applied %v", got)
	}
}

func TestTransferLeadershipRefused(t *testing.T) {
	tn := newTestNet(t, []uint64{1, 2, 3}, []uint64{4}, nil)
	tn.start()
	l := tn.mustElect(200)
	n := tn.nodes[l].n
	for _, to := range []uint64{4, 9} {
		if err := n.TransferLeadership(to); !errors.Is(err, ErrTransferTarget) {
			t.Errorf("transfer to %d: %v, want ErrTransferTarget", to, err)
		}
	}
	if err := n.TransferLeadership(l); err != nil || n.Status().Transferee != 0 {
		t.Errorf("transfer to self: %v, transferee %d; want a no-op", err, n.Status().Transferee)
	}
	f := tn.others(l)[0]
	if err := tn.nodes[f].n.TransferLeadership(l); !errors.Is(err, ErrNotLeader) {
		t.Errorf("transfer from follower %d: %v, want ErrNotLeader", f, err)
	}
	if _, err := n.Propose([]byte("x")); err != nil {
		t.Errorf("Propose after refused transfers: %v", err)
	}
}

// A handover vote ranks above an ordinary vote for an equal history and
// below any more recent history.
func TestHandoverVoteOrder(t *testing.T) {
	base := Vote{Leader: 1, Zxid: NewZxid(2, 5), Epoch: 2}
	hand := base
	hand.handover = 2
	higherID := base
	higherID.Leader = 3
	newer := Vote{Leader: 2, Zxid: NewZxid(2, 6), Epoch: 2}
	if !hand.betterThan(higherID) || higherID.betterThan(hand) {
		t.Error("handover vote does not beat an equal history with a higher id")
	}
	if hand.betterThan(newer) || !newer.betterThan(hand) {
		t.Error("handover vote beats a more recent history")
	}
}

// Random transfers among proposals, crashes and restarts: at most one
// established leader per epoch, applied histories agree, and every write
// any server applied is applied by every server at the end.
func TestTransferLeadershipRandomized(t *testing.T) {
	handovers := 0
	for seed := uint64(1); seed <= 60; seed++ {
		r := rand.New(rand.NewPCG(seed, 7))
		size := 3 + 2*r.IntN(2)
		var voters []uint64
		for i := 1; i <= size; i++ {
			voters = append(voters, uint64(i))
		}
		tn := newTestNet(t, voters, nil, func(c *Config) { c.TransferTicks = 2 + r.IntN(6) })
		tn.start()
		var target uint64 // the target of the transfer in progress
		leaders := map[uint32]uint64{}
		applied := map[string]bool{}
		down := 0
		next := 0
		check := func() {
			var longest []string
			for _, id := range tn.ids {
				x := tn.nodes[id]
				if x.n == nil {
					continue
				}
				if st := x.n.Status(); st.Established() {
					if l, ok := leaders[st.Epoch]; ok && l != id {
						t.Fatalf("seed %d: epoch %d led by %d and %d", seed, st.Epoch, l, id)
					}
					leaders[st.Epoch] = id
				}
				got := tn.appliedData(id)
				n := min(len(got), len(longest))
				if !slices.Equal(got[:n], longest[:n]) {
					t.Fatalf("seed %d: node %d applied %v, another %v", seed, id, got, longest)
				}
				if len(got) > len(longest) {
					longest = got
				}
				for _, d := range got {
					applied[d] = true
				}
			}
		}
		for range 150 {
			switch k := r.IntN(10); {
			case k < 4:
				if l := tn.leader(); l != 0 {
					if _, err := tn.nodes[l].n.Propose([]byte{byte('a' + next%26), byte('0' + next/26%10), byte('0' + next/260)}); err == nil {
						next++
					}
					tn.process(l)
				}
			case k < 6:
				if l := tn.leader(); l != 0 {
					to := voters[r.IntN(size)]
					if tn.nodes[l].n.TransferLeadership(to) == nil && to != l {
						target = to
					}
					tn.process(l)
				}
			case k < 7:
				if id := voters[r.IntN(size)]; !tn.nodes[id].down && down < (size-1)/2 {
					tn.crash(id)
					tn.queue = slices.DeleteFunc(tn.queue, func(m Message) bool { return m.From == id || m.To == id })
					down++
				}
			case k < 8:
				for _, id := range voters {
					if tn.nodes[id].down {
						tn.restart(id)
						down--
						break
					}
				}
			default:
				tn.tick()
			}
			tn.deliver()
			check()
			if l := tn.leader(); target != 0 && l == target {
				handovers++
				target = 0
			}
		}
		for _, id := range voters {
			if tn.nodes[id].down {
				tn.restart(id)
			}
		}
		l := tn.mustElect(300)
		if _, err := tn.nodes[l].n.Propose([]byte("final")); err != nil {
			// A transfer may be under way: wait it out.
			tn.run(20, func() bool { return tn.nodes[l].n.Status().Transferee == 0 })
			l = tn.mustElect(300)
			tn.propose("final")
		} else {
			tn.process(l)
		}
		tn.run(50, func() bool {
			for _, id := range voters {
				if !slices.Contains(tn.appliedData(id), "final") {
					return false
				}
			}
			return true
		})
		check()
		want := tn.appliedData(l)
		for d := range applied {
			if !slices.Contains(want, d) {
				t.Fatalf("seed %d: %q was applied somewhere and is lost", seed, d)
			}
		}
		for _, id := range voters {
			if got := tn.appliedData(id); !slices.Equal(got, want) {
				t.Fatalf("seed %d: node %d applied %v, leader %d %v", seed, id, got, l, want)
			}
		}
	}
	// The runs must exercise completed transfers, not only aborted ones.
	if handovers < 60 {
		t.Fatalf("only %d transfers reached their target in 60 runs", handovers)
	}
	t.Logf("%d transfers reached their target", handovers)
}
