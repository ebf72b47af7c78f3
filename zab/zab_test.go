package zab

import (
	"errors"
	"slices"
	"strconv"
	"testing"
)

func TestZxid(t *testing.T) {
	z := NewZxid(3, 7)
	if z.Epoch() != 3 || z.Counter() != 7 || z != 3<<32|7 {
		t.Fatalf("NewZxid(3,7) = %v (epoch %d counter %d)", z, z.Epoch(), z.Counter())
	}
	if NewZxid(2, ^uint32(0)) >= NewZxid(3, 0) {
		t.Fatal("zxids must order by epoch first")
	}
	if got := z.String(); got != "0x300000007" {
		t.Fatalf("String = %q", got)
	}
}

func TestConfigValidation(t *testing.T) {
	st := NewMemoryStorage()
	bad := []Config{
		{ID: 0, Voters: []uint64{1}, Storage: st},
		{ID: 1, Storage: st},
		{ID: 1, Voters: []uint64{1, 2}, Observers: []uint64{2}, Storage: st},
		{ID: 1, Voters: []uint64{1}},
		{ID: 1, Voters: []uint64{1}, Storage: st, HeartbeatTick: 5, SyncLimit: 5},
	}
	for i, c := range bad {
		if _, err := NewNode(c); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("config %d: err = %v, want ErrInvalidConfig", i, err)
		}
	}
	// A server outside the configuration is a joining one, not an error.
	if _, err := NewNode(Config{ID: 4, Voters: []uint64{1, 2, 3}, Storage: st}); err != nil {
		t.Errorf("joining server: %v", err)
	}
}

func TestSingleVoterCommits(t *testing.T) {
	tn := newTestNet(t, []uint64{1}, nil, nil)
	tn.start()
	l := tn.mustElect(20)
	if l != 1 {
		t.Fatalf("leader %d", l)
	}
	for i := range 5 {
		tn.propose("w" + strconv.Itoa(i))
	}
	tn.deliver()
	if got := tn.appliedData(1); len(got) != 5 {
		t.Fatalf("applied %v", got)
	}
}

func TestProposeCommitsEverywhere(t *testing.T) {
	tn := newTestNet(t, []uint64{1, 2, 3}, nil, nil)
	tn.start()
	l := tn.mustElect(50)
	var want []string
	for i := range 20 {
		d := "w" + strconv.Itoa(i)
		want = append(want, d)
		z := tn.propose(d)
		if z.Epoch() != tn.nodes[l].n.Status().Epoch || z.Counter() != uint32(i+1) {
			t.Fatalf("proposal %d got zxid %v", i, z)
		}
	}
	tn.run(5, func() bool { return false })
	for _, id := range tn.ids {
		if got := tn.appliedData(id); !slices.Equal(got, want) {
			t.Fatalf("node %d applied %v, want %v", id, got, want)
		}
	}
	// Followers refuse proposals.
	for _, id := range tn.ids {
		if id != l {
			if _, err := tn.nodes[id].n.Propose([]byte("x")); !errors.Is(err, ErrNotLeader) {
				t.Fatalf("follower %d Propose err = %v", id, err)
			}
		}
	}
}

// fill writes a history into a storage before the node starts.
func fill(st *MemoryStorage, accepted, current uint32, zxids ...Zxid) {
	st.SetHardState(HardState{AcceptedEpoch: accepted, CurrentEpoch: current})
	var ents []Entry
	for _, z := range zxids {
		ents = append(ents, Entry{Zxid: z, Data: []byte(z.String())})
	}
	if err := st.Append(ents); err != nil {
		panic(err)
	}
}

func TestElectionPrefersEpochThenZxidAndTruncates(t *testing.T) {
	tn := newTestNet(t, []uint64{1, 2, 3}, nil, nil)
	// Node 1 has the longest log but an old currentEpoch; node 2 followed
	// the epoch-2 leader: it must win, and node 1's uncommitted (1,3) must
	// go (TRUNC across an epoch).
	fill(tn.nodes[1].st, 1, 1, NewZxid(1, 1), NewZxid(1, 2), NewZxid(1, 3))
	fill(tn.nodes[2].st, 2, 2, NewZxid(1, 1), NewZxid(1, 2), NewZxid(2, 1))
	fill(tn.nodes[3].st, 2, 1, NewZxid(1, 1))
	tn.start()
	l := tn.mustElect(50)
	if l != 2 {
		t.Fatalf("leader %d, want 2: %s", l, tn.dump())
	}
	want := []Zxid{NewZxid(1, 1), NewZxid(1, 2), NewZxid(2, 1)}
	for _, id := range tn.ids {
		_, ents := tn.nodes[id].st.All()
		var got []Zxid
		for _, e := range ents {
			got = append(got, e.Zxid)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("node %d log %v, want %v", id, got, want)
		}
		if hs := tn.nodes[id].n.Status().HardState; hs.CurrentEpoch != 3 || hs.AcceptedEpoch != 3 {
			t.Fatalf("node %d hard state %+v, want epoch 3", id, hs)
		}
		if got := len(tn.nodes[id].applied); got != 3 {
			t.Fatalf("node %d applied %d entries, want the 3 of the initial history", id, got)
		}
	}
	if !slices.Contains(tn.syncs, SyncTrunc) || !slices.Contains(tn.syncs, SyncDiff) {
		t.Fatalf("sync modes %v, want TRUNC and DIFF", tn.syncs)
	}
}

func TestSnapSyncWhenLeaderCompacted(t *testing.T) {
	tn := newTestNet(t, []uint64{1, 2, 3}, nil, nil)
	tn.start()
	l := tn.mustElect(50)
	var lagger uint64
	for _, id := range tn.ids {
		if id != l {
			lagger = id
			break
		}
	}
	tn.crash(lagger)
	for i := range 10 {
		tn.propose("w" + strconv.Itoa(i))
	}
	tn.deliver()
	// Compact every live log past what the lagger has.
	for _, id := range tn.ids {
		if id == lagger {
			continue
		}
		x := tn.nodes[id]
		app := x.applied[len(x.applied)-1].Zxid
		if err := x.st.Compact(Snapshot{Zxid: app, Data: []byte("state")}); err != nil {
			t.Fatal(err)
		}
	}
	tn.syncs = nil
	tn.restart(lagger)
	tn.run(50, func() bool { return tn.allFollow(tn.leader()) })
	if !slices.Contains(tn.syncs, SyncSnap) {
		t.Fatalf("sync modes %v, want SNAP", tn.syncs)
	}
	snap, _ := tn.nodes[lagger].st.Snapshot()
	if string(snap.Data) != "state" {
		t.Fatalf("lagger snapshot %+v", snap)
	}
	tn.propose("after")
	tn.run(5, func() bool { return false })
	if got := tn.appliedData(lagger); !slices.Equal(got, []string{"after"}) {
		t.Fatalf("lagger applied %v after the snapshot", got)
	}
}

func TestLeaderStepsDownWithoutQuorum(t *testing.T) {
	tn := newTestNet(t, []uint64{1, 2, 3}, nil, nil)
	tn.start()
	l := tn.mustElect(50)
	tn.cut[l] = true
	stepped := tn.run(30, func() bool { return tn.nodes[l].n.Status().State == StateLooking })
	if !stepped {
		t.Fatalf("cut-off leader %d did not step down: %s", l, tn.dump())
	}
	// The others elect a new leader with a higher epoch.
	old := tn.nodes[l].n.Status().HardState.CurrentEpoch
	nl := tn.mustElect(50)
	if nl == l || tn.nodes[nl].n.Status().Epoch <= old {
		t.Fatalf("new leader %d epoch %d (old %d)", nl, tn.nodes[nl].n.Status().Epoch, old)
	}
	delete(tn.cut, l)
	tn.mustElect(50)
	if !tn.allFollow(nl) {
		t.Fatalf("old leader did not rejoin: %s", tn.dump())
	}
}

// TestLeaderStepsDownWhenLinksToQuorumBreak: a leader told that its links
// to both followers broke steps down at once, without a tick, as
// ZooKeeper's leader does when its learner handlers' sockets close; one
// broken link leaves it leading, and that follower rejoins.
func TestLeaderStepsDownWhenLinksToQuorumBreak(t *testing.T) {
	tn := newTestNet(t, []uint64{1, 2, 3}, nil, nil)
	tn.start()
	l := tn.mustElect(50)
	fs := tn.others(l)
	tn.nodes[l].n.ReportUnreachable(fs[0])
	tn.nodes[fs[0]].n.ReportUnreachable(l)
	tn.process(l)
	tn.process(fs[0])
	if st := tn.nodes[l].n.Status().State; st != StateLeading {
		t.Fatalf("leader %d is %v after one follower's link broke, want leading", l, st)
	}
	if !tn.run(50, func() bool { return tn.allFollow(l) }) {
		t.Fatalf("follower %d did not rejoin leader %d: %s", fs[0], l, tn.dump())
	}
	tn.propose("after-rejoin")
	tn.nodes[l].n.ReportUnreachable(fs[0])
	tn.nodes[l].n.ReportUnreachable(fs[1])
	if st := tn.nodes[l].n.Status().State; st != StateLooking {
		t.Fatalf("leader %d is %v after both followers' links broke, want looking", l, st)
	}
}

func TestObserverGetsCommitsAndDoesNotCount(t *testing.T) {
	tn := newTestNet(t, []uint64{1, 2, 3}, []uint64{4}, nil)
	tn.start()
	l := tn.mustElect(50)
	if l == 4 {
		t.Fatal("observer elected")
	}
	tn.propose("a")
	tn.propose("b")
	tn.run(5, func() bool { return false })
	if got := tn.appliedData(4); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("observer applied %v", got)
	}
	if st := tn.nodes[4].n.Status(); st.State != StateObserving || st.Leader != l {
		t.Fatalf("observer status %+v", st)
	}
	ls := tn.nodes[l].n.Status().Learners
	if len(ls) != 3 || !ls[len(ls)-1].Observer || ls[len(ls)-1].ID != 4 {
		t.Fatalf("leader's learners %+v", ls)
	}
	for _, x := range ls {
		if !x.Synced || (!x.Observer && x.Ack == 0) {
			t.Fatalf("learner %+v not synced", x)
		}
	}
	// With two voters cut off, the observer does not make a quorum.
	for _, id := range []uint64{1, 2, 3} {
		if id != l {
			tn.cut[id] = true
		}
	}
	tn.nodes[l].n.Propose([]byte("c"))
	tn.process(l)
	tn.run(3, func() bool { return false })
	if got := len(tn.nodes[l].applied); got != 2 {
		t.Fatalf("leader committed with observer support: applied %d", got)
	}
}

func TestEpochRollsWithoutElection(t *testing.T) {
	tn := newTestNet(t, []uint64{1, 2, 3}, nil, func(c *Config) { c.MaxCounter = 8 })
	tn.start()
	l := tn.mustElect(50)
	first := tn.nodes[l].n.Status().Epoch
	var want []string
	var zxids []Zxid
	for i := 0; i < 60; i++ {
		d := "w" + strconv.Itoa(i)
		z, err := tn.nodes[l].n.Propose([]byte(d))
		if errors.Is(err, ErrEpochExhausted) {
			tn.process(l)
			tn.deliver()
			i--
			continue
		}
		if err != nil {
			t.Fatalf("propose %d: %v (%s)", i, err, tn.dump())
		}
		if z.Counter() > 8 {
			t.Fatalf("counter %d beyond MaxCounter", z.Counter())
		}
		want = append(want, d)
		zxids = append(zxids, z)
		tn.process(l)
		if i%3 == 0 {
			tn.deliver()
		}
	}
	tn.run(5, func() bool { return false })
	if tn.leader() != l {
		t.Fatalf("leader changed from %d: %s", l, tn.dump())
	}
	if e := tn.nodes[l].n.Status().Epoch; e < first+5 {
		t.Fatalf("epoch %d after 60 proposals with MaxCounter 8 (started %d)", e, first)
	}
	for i := 1; i < len(zxids); i++ {
		if zxids[i] <= zxids[i-1] {
			t.Fatalf("zxids not increasing: %v then %v", zxids[i-1], zxids[i])
		}
	}
	for _, id := range tn.ids {
		if got := tn.appliedData(id); !slices.Equal(got, want) {
			t.Fatalf("node %d applied %d entries, want %d", id, len(got), len(want))
		}
		if hs := tn.nodes[id].n.Status().HardState; hs.CurrentEpoch != tn.nodes[l].n.Status().Epoch {
			t.Fatalf("node %d currentEpoch %d", id, hs.CurrentEpoch)
		}
	}
}

func TestRecoveringServerNeitherVotesNorCounts(t *testing.T) {
	tn := newTestNet(t, []uint64{1, 2, 3}, nil, func(c *Config) { c.Recovering = c.ID == 3 })
	tn.cut[2] = true
	tn.start()
	// 1 and a recovering 3 are two of three voters, but 3 does not count.
	tn.run(40, func() bool { return false })
	if l := tn.leader(); l != 0 {
		t.Fatalf("leader %d elected with a recovering server's help: %s", l, tn.dump())
	}
	delete(tn.cut, 2)
	l := tn.mustElect(60)
	if l == 3 {
		t.Fatal("recovering server elected")
	}
	if st := tn.nodes[3].n.Status(); st.Recovering {
		t.Fatalf("server 3 still recovering after sync: %+v", st)
	}
}

func TestAcksWaitForPersistence(t *testing.T) {
	tn := newTestNet(t, []uint64{1, 2, 3}, nil, nil)
	tn.start()
	l := tn.mustElect(50)
	tn.manual = true
	tn.propose("x")
	tn.deliver()
	for _, id := range tn.ids {
		if n := len(tn.nodes[id].applied); n != 0 {
			t.Fatalf("node %d applied before anything was persisted", id)
		}
	}
	// Only the leader persists: one of three is not a quorum.
	x := tn.nodes[l]
	last, _ := x.st.LastZxid()
	x.n.Persisted(last)
	tn.process(l)
	tn.deliver()
	if len(x.applied) != 0 {
		t.Fatal("committed on the leader's durability alone")
	}
	tn.persistAll()
	tn.deliver()
	if len(x.applied) != 1 {
		t.Fatalf("leader applied %d after a quorum persisted", len(x.applied))
	}
}

func TestMemoryStorage(t *testing.T) {
	st := NewMemoryStorage()
	fill(st, 1, 1, NewZxid(1, 1), NewZxid(1, 2), NewZxid(1, 3), NewZxid(2, 1))
	if f, _ := st.Floor(NewZxid(1, 9)); f != NewZxid(1, 3) {
		t.Fatalf("Floor = %v", f)
	}
	ents, _ := st.Entries(NewZxid(1, 1), NewZxid(2, 1), 1)
	if len(ents) != 1 || ents[0].Zxid != NewZxid(1, 2) {
		t.Fatalf("Entries with a byte limit = %v", ents)
	}
	if cap(ents) != len(ents) {
		t.Fatal("Entries must not expose spare capacity")
	}
	if err := st.Compact(Snapshot{Zxid: NewZxid(1, 2)}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Floor(NewZxid(1, 1)); !errors.Is(err, ErrCompacted) {
		t.Fatalf("Floor below snapshot err = %v", err)
	}
	if err := st.Truncate(NewZxid(1, 3)); err != nil {
		t.Fatal(err)
	}
	if last, _ := st.LastZxid(); last != NewZxid(1, 3) {
		t.Fatalf("LastZxid after truncate = %v", last)
	}
}

func TestLearnerAheadOfLeaderEpochRejoinsByRoll(t *testing.T) {
	tn := newTestNet(t, []uint64{1, 2, 3}, nil, nil)
	tn.start()
	l := tn.mustElect(50)
	epoch := tn.nodes[l].n.Status().Epoch
	var x uint64
	for _, id := range tn.ids {
		if id != l {
			x = id
			break
		}
	}
	// x promised a later epoch to a leader that never got established.
	tn.crash(x)
	hs, _ := tn.nodes[x].st.HardState()
	hs.AcceptedEpoch = epoch + 3
	tn.nodes[x].st.SetHardState(hs)
	tn.restart(x)
	if !tn.run(50, func() bool { return tn.allFollow(l) }) {
		t.Fatalf("server %d did not rejoin leader %d: %s", x, l, tn.dump())
	}
	if e := tn.nodes[l].n.Status().Epoch; e <= epoch+3 {
		t.Fatalf("leader epoch %d, want above %d", e, epoch+3)
	}
	tn.propose("after")
	tn.run(5, func() bool { return false })
	if got := tn.appliedData(x); len(got) == 0 || got[len(got)-1] != "after" {
		t.Fatalf("server %d applied %v", x, got)
	}
}

// TestRecycleMessagesReusesTheArray: a recycled Messages slice is cleared
// and becomes the array the node queues its next messages in, while the
// messages a driver copied out before are unaffected; a slice handed
// back while the node already queues new messages is ignored.
func TestRecycleMessagesReusesTheArray(t *testing.T) {
	tn := newTestNet(t, []uint64{1, 2, 3}, nil, nil)
	tn.start()
	l := tn.mustElect(50)
	n := tn.nodes[l].n
	tn.deliver()
	if _, err := n.Propose([]byte("a")); err != nil {
		t.Fatal(err)
	}
	rd := n.Ready()
	if len(rd.Messages) == 0 {
		t.Fatal("a proposal on a leader of three sent nothing")
	}
	sent := slices.Clone(rd.Messages)
	arr := rd.Messages[:cap(rd.Messages)]
	n.RecycleMessages(rd.Messages)
	for i := range arr {
		if arr[i].Type != 0 || arr[i].Entries != nil {
			t.Fatalf("recycled message %d not cleared: %v", i, arr[i])
		}
	}
	tn.nodes[l].st.Append(rd.Entries)
	n.Advance(rd)
	if _, err := n.Propose([]byte("b")); err != nil {
		t.Fatal(err)
	}
	rd2 := n.Ready()
	if len(rd2.Messages) == 0 || &rd2.Messages[0] != &arr[0] {
		t.Fatal("the next Ready's messages are not in the recycled array")
	}
	if sent[0].Entries == nil || string(sent[0].Entries[0].Data) != "a" {
		t.Fatalf("a copy taken before recycling changed: %v", sent[0])
	}
	// New messages already queued: a recycled slice is not taken.
	other := make([]Message, 1, 8)
	if _, err := n.Propose([]byte("c")); err != nil {
		t.Fatal(err)
	}
	n.RecycleMessages(other)
	if cap(n.msgs) == cap(other) && &n.msgs[:1][0] == &other[0] {
		t.Fatal("a slice was recycled over queued messages")
	}
}
