package route

import (
	"errors"
	"fmt"
	"testing"

	"github.com/corral-db/corral/kv/cm"
	"github.com/corral-db/corral/kv/ring"
)

func addr(id uint64) string { return fmt.Sprintf("10.0.0.%d:7000", id) }

// state builds a configuration of groups 1..3, three members each; leaders
// maps a group to (epoch, member id).
func state(t *testing.T, r *ring.Ring, leaders map[ring.GroupID][2]uint64) *cm.State {
	t.Helper()
	st := &cm.State{Ring: r, Groups: map[ring.GroupID]cm.GroupState{}}
	for _, g := range r.Groups() {
		var gs cm.GroupState
		for i := uint64(1); i <= 3; i++ {
			id := uint64(g)*10 + i
			gs.Info.Members = append(gs.Info.Members, cm.Member{ID: id, Addr: addr(id)})
		}
		if l, ok := leaders[g]; ok {
			gs.Leader = &cm.Leader{Epoch: l[0], ID: l[1], Addr: addr(l[1])}
		}
		st.Groups[g] = gs
	}
	return st
}

func buildRing(t *testing.T, groups ...ring.GroupID) *ring.Ring {
	t.Helper()
	r, err := ring.Build(groups, 4, 3)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// keyOf finds a key that r places on group g.
func keyOf(t *testing.T, r *ring.Ring, g ring.GroupID) []byte {
	t.Helper()
	for i := 0; i < 10000; i++ {
		k := []byte(fmt.Sprintf("row%d", i))
		if r.Owner(k) == g {
			return k
		}
	}
	t.Fatalf("no key found for %v", g)
	return nil
}

func TestRouteToOwnersLeader(t *testing.T) {
	rt := New()
	if _, err := rt.Route([]byte("k")); !errors.Is(err, ErrNoRing) {
		t.Fatalf("before Update: %v", err)
	}
	r := buildRing(t, 1, 2, 3)
	rt.Update(state(t, r, map[ring.GroupID][2]uint64{1: {4, 11}, 2: {2, 22}}))
	for _, g := range []ring.GroupID{1, 2} {
		tg, err := rt.Route(keyOf(t, r, g))
		if err != nil {
			t.Fatal(err)
		}
		l := map[ring.GroupID]string{1: addr(11), 2: addr(22)}[g]
		if tg.Group != g || tg.Addr != l || tg.RingVersion != r.Version() {
			t.Fatalf("route for a row of %v: %+v", g, tg)
		}
	}
	if _, err := rt.Route(keyOf(t, r, 3)); !errors.Is(err, ErrNoLeader) {
		t.Fatalf("group without leader: %v", err)
	}
}

func TestNotLeaderReroutesOnlyForward(t *testing.T) {
	r := buildRing(t, 1, 2)
	rt := New()
	rt.Update(state(t, r, map[ring.GroupID][2]uint64{1: {4, 11}, 2: {1, 21}}))
	key := keyOf(t, r, 1)
	t0, _ := rt.Route(key)

	// The old leader names the new one: one round trip to re-route.
	if a := rt.Observe(t0, &NotLeader{Group: 1, Epoch: 5, LeaderID: 12, LeaderAddr: addr(12)}); a != RetryNow {
		t.Fatalf("newer NotLeader: %v, want RetryNow", a)
	}
	t1, err := rt.Route(key)
	if err != nil || t1.Addr != addr(12) || t1.Epoch != 5 {
		t.Fatalf("after NotLeader: %+v %v", t1, err)
	}
	// A late answer from another old member, naming an older leader, is
	// ignored; the request it answered may go again to the newer route.
	if a := rt.Observe(t0, &NotLeader{Group: 1, Epoch: 4, LeaderID: 11, LeaderAddr: addr(11)}); a != RetryNow {
		t.Fatalf("stale NotLeader for an outdated route: %v, want RetryNow", a)
	}
	if t2, _ := rt.Route(key); t2.Addr != addr(12) {
		t.Fatalf("a stale NotLeader moved the route to %+v", t2)
	}
	// The current leader itself says it is not leader, knowing no newer
	// epoch: nothing to learn, wait for the CM.
	if a := rt.Observe(t1, &NotLeader{Group: 1, Epoch: 5}); a != WaitConfig {
		t.Fatalf("no-news NotLeader: %v, want WaitConfig", a)
	}
	// A stale CM state (epoch 4) does not undo what was learnt...
	rt.Update(state(t, r, map[ring.GroupID][2]uint64{1: {4, 11}, 2: {1, 21}}))
	if t2, _ := rt.Route(key); t2.Addr != addr(12) {
		t.Fatalf("a stale CM state moved the route to %+v", t2)
	}
	// ...a newer one replaces it.
	rt.Update(state(t, r, map[ring.GroupID][2]uint64{1: {6, 13}, 2: {1, 21}}))
	if t2, _ := rt.Route(key); t2.Addr != addr(13) || t2.Epoch != 6 {
		t.Fatalf("after the CM recorded epoch 6: %+v", t2)
	}
	// Other groups were never affected.
	if t3, _ := rt.Route(keyOf(t, r, 2)); t3.Addr != addr(21) {
		t.Fatalf("group 2 routed to %+v", t3)
	}
}

func TestNotLeaderWithoutLeaderWaits(t *testing.T) {
	r := buildRing(t, 1)
	rt := New()
	rt.Update(state(t, r, map[ring.GroupID][2]uint64{1: {4, 11}}))
	t0, _ := rt.Route([]byte("k"))
	// An election is under way in epoch 5: no leader known yet.
	if a := rt.Observe(t0, &NotLeader{Group: 1, Epoch: 5}); a != WaitConfig {
		t.Fatalf("NotLeader naming nobody: %v, want WaitConfig", a)
	}
	if _, err := rt.Route([]byte("k")); !errors.Is(err, ErrNoLeader) {
		t.Fatalf("during the election: %v, want ErrNoLeader", err)
	}
	// The new leader records itself in the CM for epoch 5.
	rt.Update(state(t, r, map[ring.GroupID][2]uint64{1: {5, 12}}))
	if t1, err := rt.Route([]byte("k")); err != nil || t1.Addr != addr(12) {
		t.Fatalf("after the CM update: %+v %v", t1, err)
	}
}

func TestWrongRange(t *testing.T) {
	r1 := buildRing(t, 1, 2)
	rt := New()
	leaders := map[ring.GroupID][2]uint64{1: {1, 11}, 2: {1, 21}, 3: {1, 31}}
	rt.Update(state(t, r1, leaders))
	r2, moves, err := r1.AddGroupSeeded(3, 4, 3)
	if err != nil {
		t.Fatal(err)
	}
	// A row that moved from its old group to group 3.
	key := keyOf(t, r2, 3)
	t0, _ := rt.Route(key)
	if t0.Group == 3 || moves[0].To != 3 {
		t.Fatalf("old ring routes to %+v", t0)
	}

	// The server has the newer ring: wait for it.
	if a := rt.Observe(t0, &WrongRange{Group: t0.Group, RingVersion: r2.Version()}); a != WaitConfig {
		t.Fatalf("WrongRange from a newer ring: %v, want WaitConfig", a)
	}
	if _, err := rt.Route(key); !errors.Is(err, ErrRingBehind) {
		t.Fatalf("with a stale ring: %v, want ErrRingBehind", err)
	}
	// A stale State does not satisfy it, the newer one does.
	rt.Update(state(t, r1, leaders))
	if _, err := rt.Route(key); !errors.Is(err, ErrRingBehind) {
		t.Fatalf("after a stale State: %v, want ErrRingBehind", err)
	}
	rt.Update(state(t, r2, leaders))
	t1, err := rt.Route(key)
	if err != nil || t1.Group != 3 || t1.Addr != addr(31) {
		t.Fatalf("after the new ring: %+v %v", t1, err)
	}
	// A server still on the old ring: back off and retry the same route.
	if a := rt.Observe(t1, &WrongRange{Group: 3, RingVersion: r1.Version()}); a != Backoff {
		t.Fatalf("WrongRange from a lagging server: %v, want Backoff", a)
	}
	// A request routed by the old ring, answered after the update: go again.
	if a := rt.Observe(t0, &WrongRange{Group: t0.Group, RingVersion: r1.Version()}); a != RetryNow {
		t.Fatalf("WrongRange for an outdated route: %v, want RetryNow", a)
	}
	// A ring older than the held one is ignored by Update.
	rt.Update(state(t, r1, leaders))
	if t2, _ := rt.Route(key); t2.Group != 3 {
		t.Fatalf("an older ring replaced the newer: %+v", t2)
	}
	if a := rt.Observe(t1, errors.New("disk full")); a != NotRouting {
		t.Fatalf("other errors: %v", a)
	}
	// Wrapped routing errors are recognised.
	if a := rt.Observe(t1, fmt.Errorf("get: %w", &WrongRange{RingVersion: r2.Version() + 5})); a != WaitConfig {
		t.Fatalf("wrapped WrongRange: %v", a)
	}
}

func TestSplit(t *testing.T) {
	r := buildRing(t, 1, 2, 3)
	rt := New()
	rt.Update(state(t, r, map[ring.GroupID][2]uint64{1: {1, 11}, 2: {1, 22}}))
	keys := [][]byte{keyOf(t, r, 1), keyOf(t, r, 2), keyOf(t, r, 3), keyOf(t, r, 1)}
	bs, err := rt.Split(keys)
	if err != nil {
		t.Fatal(err)
	}
	if len(bs) != 3 {
		t.Fatalf("batches %+v", bs)
	}
	for _, b := range bs {
		switch b.Target.Group {
		case 1:
			if b.Err != nil || b.Target.Addr != addr(11) || len(b.Indexes) != 2 || b.Indexes[0] != 0 || b.Indexes[1] != 3 {
				t.Fatalf("group 1 batch %+v", b)
			}
		case 2:
			if b.Err != nil || b.Target.Addr != addr(22) || len(b.Indexes) != 1 || b.Indexes[0] != 1 {
				t.Fatalf("group 2 batch %+v", b)
			}
		case 3:
			if !errors.Is(b.Err, ErrNoLeader) || len(b.Indexes) != 1 || b.Indexes[0] != 2 {
				t.Fatalf("group 3 batch %+v", b)
			}
		}
	}
}

func TestUnknownGroup(t *testing.T) {
	r := buildRing(t, 1, 2)
	st := state(t, r, map[ring.GroupID][2]uint64{1: {1, 11}, 2: {1, 21}})
	delete(st.Groups, 2)
	rt := New()
	rt.Update(st)
	if _, err := rt.Route(keyOf(t, r, 2)); !errors.Is(err, ErrUnknownGroup) {
		t.Fatalf("ring naming an unlisted group: %v, want ErrUnknownGroup", err)
	}
}

// TestConcurrentUse is for the race detector: routing, learning and
// updating from several goroutines.
func TestConcurrentUse(t *testing.T) {
	r := buildRing(t, 1, 2)
	rt := New()
	rt.Update(state(t, r, map[ring.GroupID][2]uint64{1: {1, 11}, 2: {1, 21}}))
	done := make(chan struct{})
	for w := 0; w < 4; w++ {
		go func() {
			defer func() { done <- struct{}{} }()
			for i := 0; i < 200; i++ {
				tg, err := rt.Route([]byte(fmt.Sprint(i)))
				if err != nil {
					continue
				}
				rt.Observe(tg, &NotLeader{Group: tg.Group, Epoch: uint64(i), LeaderID: 12, LeaderAddr: addr(12)})
				if i%50 == 0 {
					rt.Update(state(t, r, map[ring.GroupID][2]uint64{1: {uint64(i), 11}, 2: {1, 21}}))
				}
			}
		}()
	}
	for w := 0; w < 4; w++ {
		<-done
	}
	// Group 1's newest epoch is the largest i whose key it owns.
	want := uint64(0)
	for i := 0; i < 200; i++ {
		if r.Owner([]byte(fmt.Sprint(i))) == 1 {
			want = uint64(i)
		}
	}
	tg, err := rt.Route(keyOf(t, r, 1))
	if err != nil || tg.Epoch != want {
		t.Fatalf("after all: %+v %v, want the newest epoch %d", tg, err, want)
	}
}
