package cm

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/corral-db/corral/kv/ring"
)

func members(ids ...uint64) GroupInfo {
	var gi GroupInfo
	for _, id := range ids {
		gi.Members = append(gi.Members, Member{ID: id, Addr: fmt.Sprintf("127.0.0.1:%d", 7000+id)})
	}
	return gi
}

func leader(epoch, id uint64) Leader {
	return Leader{Epoch: epoch, ID: id, Addr: fmt.Sprintf("127.0.0.1:%d", 7000+id)}
}

func wantLeader(t *testing.T, s *Store, g ring.GroupID, want Leader) {
	t.Helper()
	got, ok, err := s.Leader(testCtx(t), g)
	if err != nil || !ok || got != want {
		t.Fatalf("leader of %v: %+v %v %v, want %+v", g, got, ok, err, want)
	}
}

func TestRecordLeaderRefusesStaleEpoch(t *testing.T) {
	srv := env.Start(t)
	s := newStore(t, connect(t, srv.Addr()))
	ctx := testCtx(t)

	if err := s.RecordLeader(ctx, 1, leader(1, 1)); !errors.Is(err, ErrUnregistered) {
		t.Fatalf("leader of an unregistered group: %v, want ErrUnregistered", err)
	}
	if err := s.RegisterGroup(ctx, 1, members(1, 2, 3)); err != nil {
		t.Fatal(err)
	}
	if err := s.RecordLeader(ctx, 1, leader(1, 9)); !errors.Is(err, ErrNotMember) {
		t.Fatalf("non-member leader: %v, want ErrNotMember", err)
	}
	if err := s.RecordLeader(ctx, 1, leader(2, 1)); err != nil {
		t.Fatalf("first leader: %v", err)
	}
	// Member 1 is deposed; member 2 leads in epoch 3.
	if err := s.RecordLeader(ctx, 1, leader(3, 2)); err != nil {
		t.Fatalf("newer leader: %v", err)
	}
	// The deposed leader's late update is refused and changes nothing.
	if err := s.RecordLeader(ctx, 1, leader(2, 1)); !errors.Is(err, ErrStaleEpoch) {
		t.Fatalf("stale leader: %v, want ErrStaleEpoch", err)
	}
	wantLeader(t, s, 1, leader(3, 2))
	// Another leader claiming the same epoch is refused too; the leader
	// itself may record again (a retry after a lost reply).
	if err := s.RecordLeader(ctx, 1, leader(3, 3)); !errors.Is(err, ErrStaleEpoch) {
		t.Fatalf("second leader in one epoch: %v, want ErrStaleEpoch", err)
	}
	if err := s.RecordLeader(ctx, 1, leader(3, 2)); err != nil {
		t.Fatalf("same leader again: %v", err)
	}
	wantLeader(t, s, 1, leader(3, 2))
}

// TestRecordLeaderConcurrent: leaders of many epochs racing, each on its
// own session, leave the newest epoch recorded; the newest always
// succeeds and the others either succeed (before it) or are refused.
func TestRecordLeaderConcurrent(t *testing.T) {
	srv := env.Start(t)
	s0 := newStore(t, connect(t, srv.Addr()))
	ctx := testCtx(t)
	if err := s0.RegisterGroup(ctx, 5, members(1, 2, 3)); err != nil {
		t.Fatal(err)
	}
	const n = 12
	stores := make([]*Store, n)
	for i := range stores {
		stores[i] = newStore(t, connect(t, srv.Addr()))
	}
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = stores[i].RecordLeader(ctx, 5, leader(uint64(10+i), uint64(1+i%3)))
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil && !errors.Is(err, ErrStaleEpoch) {
			t.Fatalf("epoch %d: %v", 10+i, err)
		}
	}
	if errs[n-1] != nil {
		t.Fatalf("the newest epoch was refused: %v", errs[n-1])
	}
	wantLeader(t, s0, 5, leader(10+n-1, 1+(n-1)%3))
}

func TestRing(t *testing.T) {
	srv := env.Start(t)
	c := connect(t, srv.Addr())
	s := newStore(t, c)
	ctx := testCtx(t)

	if _, err := s.Ring(ctx); !errors.Is(err, ErrNotInitialized) {
		t.Fatalf("ring before Init: %v", err)
	}
	r0, err := ring.Build([]ring.GroupID{1, 2}, 4, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Init(ctx, r0); !errors.Is(err, ErrUnregistered) {
		t.Fatalf("Init naming unregistered groups: %v, want ErrUnregistered", err)
	}
	if _, err := s.Ring(ctx); !errors.Is(err, ErrNotInitialized) {
		t.Fatalf("a refused Init stored a ring: %v", err)
	}
	for _, g := range []ring.GroupID{1, 2} {
		if err := s.RegisterGroup(ctx, g, members(1, 2, 3)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Init(ctx, r0); err != nil {
		t.Fatal(err)
	}
	if err := s.Init(ctx, r0); !errors.Is(err, ErrInitialized) {
		t.Fatalf("second Init: %v, want ErrInitialized", err)
	}
	got, err := s.Ring(ctx)
	if err != nil || string(got.Encode()) != string(r0.Encode()) {
		t.Fatalf("stored ring %v (%v), want %v", got, err, r0)
	}

	add := func(g ring.GroupID) func(*ring.Ring) (*ring.Ring, error) {
		return func(cur *ring.Ring) (*ring.Ring, error) {
			nr, _, err := cur.AddGroupSeeded(g, 4, 1)
			return nr, err
		}
	}
	if _, err := s.UpdateRing(ctx, add(3)); !errors.Is(err, ErrUnregistered) {
		t.Fatalf("ring naming an unregistered group: %v, want ErrUnregistered", err)
	}
	if _, err := s.UpdateRing(ctx, func(cur *ring.Ring) (*ring.Ring, error) {
		return ring.New(cur.Version(), cur.Tokens())
	}); !errors.Is(err, ErrStaleRing) {
		t.Fatalf("ring without a newer version: %v, want ErrStaleRing", err)
	}
	if err := s.DeregisterGroup(ctx, 2); !errors.Is(err, ErrGroupOnRing) {
		t.Fatalf("deregistering a group on the ring: %v, want ErrGroupOnRing", err)
	}

	// Two writers adding different groups at once, each on its own
	// session: the compare-and-set keeps both.
	for _, g := range []ring.GroupID{3, 4} {
		if err := s.RegisterGroup(ctx, g, members(1, 2, 3)); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, g := range []ring.GroupID{3, 4} {
		other := newStore(t, connect(t, srv.Addr()))
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = other.UpdateRing(ctx, add(g))
		}()
	}
	wg.Wait()
	if errs[0] != nil || errs[1] != nil {
		t.Fatalf("concurrent updates: %v", errs)
	}
	got, err = s.Ring(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got.Version() != r0.Version()+2 || !got.Has(3) || !got.Has(4) {
		t.Fatalf("after two concurrent additions: %v", got)
	}

	// Off the ring, a group can go, with its leader record.
	if err := s.RecordLeader(ctx, 2, leader(1, 1)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.UpdateRing(ctx, func(cur *ring.Ring) (*ring.Ring, error) {
		nr, _, err := cur.RemoveGroup(2)
		return nr, err
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.DeregisterGroup(ctx, 2); err != nil {
		t.Fatalf("deregister: %v", err)
	}
	if _, err := s.Group(ctx, 2); !errors.Is(err, ErrUnregistered) {
		t.Fatalf("group after deregistering: %v", err)
	}
	if err := s.DeregisterGroup(ctx, 2); !errors.Is(err, ErrUnregistered) {
		t.Fatalf("deregistering twice: %v", err)
	}
}

func TestDeregisterBeforeInit(t *testing.T) {
	srv := env.Start(t)
	s := newStore(t, connect(t, srv.Addr()))
	ctx := testCtx(t)
	if err := s.RegisterGroup(ctx, 7, members(1)); err != nil {
		t.Fatal(err)
	}
	if err := s.DeregisterGroup(ctx, 7); err != nil {
		t.Fatalf("deregister with no ring: %v", err)
	}
	if _, err := s.Ring(ctx); !errors.Is(err, ErrNotInitialized) {
		t.Fatalf("deregister left a ring behind: %v", err)
	}
}

func TestBadInput(t *testing.T) {
	if _, err := NewStore(nil, "relative"); err == nil {
		t.Error("relative root accepted")
	}
	if _, err := NewStore(nil, "/a/../b"); err == nil {
		t.Error("unclean root accepted")
	}
	srv := env.Start(t)
	c := connect(t, srv.Addr())
	s := newStore(t, c)
	ctx := testCtx(t)
	if err := s.RegisterGroup(ctx, 1, GroupInfo{}); err == nil {
		t.Error("group with no members accepted")
	}
	if err := s.RegisterGroup(ctx, 1, GroupInfo{Members: []Member{{1, "a:1"}, {1, "b:1"}}}); err == nil {
		t.Error("duplicate member ids accepted")
	}
	if err := s.RegisterGroup(ctx, 0, members(1)); !errors.Is(err, ring.ErrZeroGroup) {
		t.Errorf("group 0: %v", err)
	}
	// A record that does not parse is reported, not guessed at.
	if err := s.RegisterGroup(ctx, 1, members(1)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Set(ctx, s.l.groupPath(1), []byte(`{"v":2}`), -1); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Group(ctx, 1); !errors.Is(err, ErrBadRecord) {
		t.Errorf("group record of an unknown version: %v", err)
	}
	if _, err := c.Create(ctx, s.l.ringPath(), []byte("junk"), openACL, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Ring(ctx); !errors.Is(err, ring.ErrCorrupt) {
		t.Errorf("corrupt ring: %v", err)
	}
}
