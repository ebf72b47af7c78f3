package cm

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/corral-db/corral/client"
	"github.com/corral-db/corral/internal/testutil"
	"github.com/corral-db/corral/kv/ring"
	"github.com/corral-db/corral/tests/harness"
)

// waitState waits until the View's state satisfies ok.
func waitState(t *testing.T, v *View, what string, ok func(*State) bool) {
	t.Helper()
	deadline := time.After(waitLimit)
	for {
		if ok(v.Current()) {
			return
		}
		select {
		case <-v.Changed():
		case <-v.Done():
			t.Fatalf("view stopped (%v) waiting for %s", v.Err(), what)
		case <-deadline:
			t.Fatalf("view never showed %s; last error %v; state %+v", what, v.LastError(), v.Current())
		}
	}
}

func TestViewFollowsChanges(t *testing.T) {
	srv := env.Start(t)
	s := newStore(t, connect(t, srv.Addr()))
	ctx := testCtx(t)

	// The view starts before anything exists.
	v, err := Watch(ctx, connect(t, srv.Addr()), "")
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	if st := v.Current(); st.Ring != nil || len(st.Groups) != 0 {
		t.Fatalf("empty configuration read as %+v", st)
	}

	for _, g := range []ring.GroupID{1, 2} {
		if err := s.RegisterGroup(ctx, g, members(1, 2, 3)); err != nil {
			t.Fatal(err)
		}
	}
	r0, _ := ring.Build([]ring.GroupID{1, 2}, 2, 5)
	if err := s.Init(ctx, r0); err != nil {
		t.Fatal(err)
	}
	waitState(t, v, "the first ring and both groups", func(st *State) bool {
		return st.Ring != nil && st.Ring.Version() == r0.Version() && len(st.Groups) == 2
	})

	if err := s.RecordLeader(ctx, 1, leader(4, 2)); err != nil {
		t.Fatal(err)
	}
	waitState(t, v, "group 1's leader", func(st *State) bool {
		l, ok := st.LeaderOf(1)
		return ok && l == leader(4, 2)
	})
	if err := s.RecordLeader(ctx, 1, leader(5, 3)); err != nil {
		t.Fatal(err)
	}
	waitState(t, v, "group 1's new leader", func(st *State) bool {
		l, ok := st.LeaderOf(1)
		return ok && l == leader(5, 3)
	})

	if err := s.RegisterGroup(ctx, 3, members(4, 5, 6)); err != nil {
		t.Fatal(err)
	}
	r1, err := s.UpdateRing(ctx, func(cur *ring.Ring) (*ring.Ring, error) {
		nr, _, err := cur.AddGroupSeeded(3, 2, 5)
		return nr, err
	})
	if err != nil {
		t.Fatal(err)
	}
	waitState(t, v, "the grown ring", func(st *State) bool {
		return st.Ring.Version() == r1.Version() && st.Ring.Has(3) && len(st.Groups[3].Info.Members) == 3
	})

	// Shrink again and deregister: the group leaves the view.
	if _, err := s.UpdateRing(ctx, func(cur *ring.Ring) (*ring.Ring, error) {
		nr, _, err := cur.RemoveGroup(3)
		return nr, err
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.DeregisterGroup(ctx, 3); err != nil {
		t.Fatal(err)
	}
	waitState(t, v, "group 3 gone", func(st *State) bool {
		_, ok := st.Groups[3]
		return !ok && !st.Ring.Has(3)
	})

	// The view's state agrees with a fresh read.
	fresh, err := s.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cur := v.Current()
	if string(cur.Ring.Encode()) != string(fresh.Ring.Encode()) || len(cur.Groups) != len(fresh.Groups) {
		t.Fatalf("view %+v, fresh read %+v", cur, fresh)
	}
	for g, gs := range fresh.Groups {
		l1, ok1 := cur.LeaderOf(g)
		l2, ok2 := fresh.LeaderOf(g)
		if l1 != l2 || ok1 != ok2 || len(cur.Groups[g].Info.Members) != len(gs.Info.Members) {
			t.Fatalf("group %v: view %+v, fresh %+v", g, cur.Groups[g], gs)
		}
	}
}

// TestViewStops: Close ends the view and its goroutines; so does closing
// its session.
func TestViewStops(t *testing.T) {
	srv := env.Start(t)
	v, err := Watch(testCtx(t), connect(t, srv.Addr()), "/other")
	if err != nil {
		t.Fatal(err)
	}
	v.Close()
	if !errors.Is(v.Err(), context.Canceled) {
		t.Fatalf("after Close: %v", v.Err())
	}

	c := connect(t, srv.Addr())
	v, err = Watch(testCtx(t), c, "/other")
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	select {
	case <-v.Done():
	case <-time.After(waitLimit):
		t.Fatal("view kept running after its session closed")
	}
	if v.Err() == nil {
		t.Fatal("view stopped without saying why")
	}
}

// TestViewBadRecordKeepsLastGood: a record that does not parse is
// reported by LastError and the last good value kept; znodes that are not
// part of the layout are ignored.
func TestViewBadRecordKeepsLastGood(t *testing.T) {
	srv := env.Start(t)
	c := connect(t, srv.Addr())
	s := newStore(t, c)
	ctx := testCtx(t)
	if err := s.RegisterGroup(ctx, 1, members(1, 2, 3)); err != nil {
		t.Fatal(err)
	}
	if err := s.RecordLeader(ctx, 1, leader(2, 1)); err != nil {
		t.Fatal(err)
	}
	v, err := Watch(ctx, connect(t, srv.Addr()), "")
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	if l, ok := v.Current().LeaderOf(1); !ok || l != leader(2, 1) {
		t.Fatalf("initial leader %+v %v", l, ok)
	}
	for _, p := range []string{DefaultRoot + "/junk", s.l.groupsPath() + "/not-a-group", s.l.groupsPath() + "/01"} {
		if _, err := c.Create(ctx, p, []byte("x"), openACL, 0); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Set(ctx, s.l.leaderPath(1), []byte("{broken"), -1); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, waitLimit, "a broken leader record reported", func() bool {
		return v.LastError() != nil
	})
	if !errors.Is(v.LastError(), ErrBadRecord) {
		t.Fatalf("LastError %v, want ErrBadRecord", v.LastError())
	}
	st := v.Current()
	if l, ok := st.LeaderOf(1); !ok || l != leader(2, 1) || len(st.Groups) != 1 {
		t.Fatalf("after a broken record: %+v", st)
	}
	// Repaired, it is read again (the View retries on its own).
	if _, err := c.Set(ctx, s.l.leaderPath(1), encodeLeader(leader(3, 2)), -1); err != nil {
		t.Fatal(err)
	}
	waitState(t, v, "the repaired leader", func(st *State) bool {
		l, ok := st.LeaderOf(1)
		return ok && l == leader(3, 2)
	})
}

// TestViewCatchesUpAfterReconnect: changes made while the View's session
// is disconnected (its server stopped) are not replayed as events; the
// View re-reads everything once its session is back (on the same member,
// restarted: it is the only address the View's client has).
func TestViewCatchesUpAfterReconnect(t *testing.T) {
	ens := env.StartEnsemble(t, 3, harness.EnsembleConfig{TickTime: harness.TickTime})
	leaderIdx := ens.WaitAll()
	// The View's session on a follower, so that stopping it needs no
	// election.
	var follower int
	for _, i := range ens.Followers(leaderIdx) {
		follower = i
		break
	}
	vc, err := client.Connect(testCtx(t), []string{ens.Server(follower).Addr()}, client.SessionTimeout(10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { vc.Close() })
	v, err := Watch(testCtx(t), vc, "")
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	s := newStore(t, connect(t, ens.Server(leaderIdx).Addr()))
	ctx := testCtx(t)
	if err := s.RegisterGroup(ctx, 1, members(1, 2, 3)); err != nil {
		t.Fatal(err)
	}
	waitState(t, v, "group 1", func(st *State) bool { _, ok := st.Groups[1]; return ok })

	ens.Server(follower).Stop()
	if err := s.RecordLeader(ctx, 1, leader(7, 3)); err != nil {
		t.Fatal(err)
	}
	if err := s.RegisterGroup(ctx, 2, members(4)); err != nil {
		t.Fatal(err)
	}
	ens.Server(follower).StartAgain()
	waitState(t, v, "the changes made while disconnected", func(st *State) bool {
		l, ok := st.LeaderOf(1)
		_, two := st.Groups[2]
		return ok && l == leader(7, 3) && two
	})
}
