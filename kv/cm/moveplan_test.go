package cm

import (
	"errors"
	"testing"

	"github.com/corral-db/corral/kv/ring"
)

func testRing(t *testing.T, v uint64, tokens ...ring.Token) *ring.Ring {
	t.Helper()
	r, err := ring.New(v, tokens)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestPlanMoveAndSteps(t *testing.T) {
	r := testRing(t, 4, ring.Token{Token: 100, Group: 1}, ring.Token{Token: 200, Group: 2}, ring.Token{Token: 300, Group: 1})
	if _, err := PlanMove(r, 150, 2, 1); !errors.Is(err, ErrNoSuchToken) {
		t.Fatalf("a hash that is not a token: %v", err)
	}
	if _, err := PlanMove(r, 200, 2, 1); !errors.Is(err, ErrSameOwner) {
		t.Fatalf("to its owner: %v", err)
	}
	m, err := PlanMove(r, 300, 2, 9)
	if err != nil {
		t.Fatal(err)
	}
	if want := (Move{ID: 9, Token: 300, Start: 200, From: 1, To: 2, Ring: 5}); m != want {
		t.Fatalf("plan %+v, want %+v", m, want)
	}
	// The wrapping range of the first token.
	if w, _ := PlanMove(r, 100, 2, 9); w.Start != 300 || w.Range().Contains(150) || !w.Range().Contains(5) {
		t.Fatalf("first token's range %v", w.Range())
	}
	if st, err := NextStep(r, m); err != nil || st != StepCopy {
		t.Fatalf("before the switch: %v %v", st, err)
	}
	next, err := MoveTarget(r, m)
	if err != nil {
		t.Fatal(err)
	}
	if next.Version() != 5 || next.OwnerOfHash(250) != 2 || next.OwnerOfHash(50) != 1 || next.OwnerOfHash(350) != 1 {
		t.Fatalf("after the move: %v", next)
	}
	if st, err := NextStep(next, m); err != nil || st != StepDrop {
		t.Fatalf("after the switch: %v %v", st, err)
	}
	if _, err := MoveTarget(next, m); !errors.Is(err, ErrMoveConflict) {
		t.Fatalf("switching twice: %v", err)
	}
	// A ring that changed otherwise: neither the start nor the result.
	other := testRing(t, 5, ring.Token{Token: 100, Group: 1}, ring.Token{Token: 200, Group: 2}, ring.Token{Token: 300, Group: 3})
	if _, err := NextStep(other, m); !errors.Is(err, ErrMoveConflict) {
		t.Fatalf("a foreign ring: %v", err)
	}
	skipped := testRing(t, 7, ring.Token{Token: 100, Group: 1}, ring.Token{Token: 200, Group: 2}, ring.Token{Token: 300, Group: 1})
	if _, err := NextStep(skipped, m); !errors.Is(err, ErrMoveConflict) {
		t.Fatalf("a newer ring without the move: %v", err)
	}
	// An aborted move: undone while the ring is the start one; never
	// after the switch.
	ab := m
	ab.Abort = 99
	if st, err := NextStep(r, ab); err != nil || st != StepAbort {
		t.Fatalf("aborted before the switch: %v %v", st, err)
	}
	if _, err := NextStep(next, ab); !errors.Is(err, ErrMoveConflict) {
		t.Fatalf("aborted after the switch: %v", err)
	}
	bumped := testRing(t, 5, r.Tokens()...)
	if st, err := NextStep(bumped, ab); err != nil || st != StepAbort {
		t.Fatalf("aborted, its ring version stored unmoved: %v %v", st, err)
	}
	if _, err := NextStep(bumped, m); !errors.Is(err, ErrMoveConflict) {
		t.Fatalf("the move itself on the unmoved ring of its version: %v", err)
	}
	if _, err := MoveTarget(r, ab); !errors.Is(err, ErrMoveConflict) {
		t.Fatalf("switching an aborted move: %v", err)
	}
	split := testRing(t, 4, ring.Token{Token: 100, Group: 1}, ring.Token{Token: 250, Group: 2}, ring.Token{Token: 300, Group: 1})
	if _, err := NextStep(split, m); !errors.Is(err, ErrMoveConflict) {
		t.Fatalf("the range changed: %v", err)
	}
}

func TestPlanRemoval(t *testing.T) {
	r := testRing(t, 1,
		ring.Token{Token: 10, Group: 3}, ring.Token{Token: 20, Group: 1}, ring.Token{Token: 30, Group: 2},
		ring.Token{Token: 40, Group: 3}, ring.Token{Token: 50, Group: 1}, ring.Token{Token: 60, Group: 1})
	// Retire rg3 move by move, as the mover does.
	for i := 0; ; i++ {
		if i > 10 {
			t.Fatal("removal does not end")
		}
		tok, to, ok, err := PlanRemoval(r, 3)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		if i == 0 && (tok != 10 || to != 2) {
			t.Fatalf("first: token %d to %v, want 10 to rg2 (fewest tokens)", tok, to)
		}
		m, err := PlanMove(r, tok, to, uint64(i+1))
		if err != nil {
			t.Fatal(err)
		}
		if r, err = MoveTarget(r, m); err != nil {
			t.Fatal(err)
		}
	}
	if r.Has(3) || r.Len() != 6 {
		t.Fatalf("after removal: %v", r)
	}
	one := testRing(t, 1, ring.Token{Token: 10, Group: 3})
	if _, _, _, err := PlanRemoval(one, 3); !errors.Is(err, ring.ErrLastGroup) {
		t.Fatalf("the last group: %v", err)
	}
}

func TestMoveRecordDecode(t *testing.T) {
	m := Move{ID: 1, Token: 2, Start: 3, From: 1, To: 2, Ring: 4}
	got, err := decodeMove(encodeMove(m))
	if err != nil || got != m {
		t.Fatalf("round trip %+v %v", got, err)
	}
	for _, b := range []string{``, `{}`, `{"v":2,"id":1,"from":1,"to":2,"ring":1}`, `{"v":1,"id":1,"from":1,"to":1,"ring":1}`, `{"v":1,"id":0,"from":1,"to":2,"ring":1}`} {
		if _, err := decodeMove([]byte(b)); !errors.Is(err, ErrBadRecord) {
			t.Fatalf("%q: %v", b, err)
		}
	}
}

func TestMoveRecordStore(t *testing.T) {
	srv := env.Start(t)
	s := newStore(t, connect(t, srv.Addr()))
	ctx := testCtx(t)
	for g := ring.GroupID(1); g <= 2; g++ {
		if err := s.RegisterGroup(ctx, g, members(1, 2, 3)); err != nil {
			t.Fatal(err)
		}
	}
	r := testRing(t, 1, ring.Token{Token: 100, Group: 1}, ring.Token{Token: 200, Group: 2})
	if err := s.Init(ctx, r); err != nil {
		t.Fatal(err)
	}
	m, err := PlanMove(r, 100, 2, 77)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.BeginMove(ctx, m); err != nil {
		t.Fatal(err)
	}
	if err := s.BeginMove(ctx, m); err != nil {
		t.Fatalf("the same move again: %v", err)
	}
	other := m
	other.ID = 78
	if err := s.BeginMove(ctx, other); !errors.Is(err, ErrMovePending) {
		t.Fatalf("a second move: %v", err)
	}
	if got, ok, err := s.PendingMove(ctx); err != nil || !ok || got != m {
		t.Fatalf("pending %+v %v %v", got, ok, err)
	}
	// A move that is not the recorded one never switches the ring.
	if _, err := s.SwitchRing(ctx, other); !errors.Is(err, ErrMoveConflict) {
		t.Fatalf("switching a move not recorded: %v", err)
	}
	if cur, err := s.Ring(ctx); err != nil || cur.Version() != 1 {
		t.Fatalf("ring after a refused switch: %v %v", cur, err)
	}
	for range 2 { // switching is idempotent
		nr, err := s.SwitchRing(ctx, m)
		if err != nil || nr.Version() != 2 || nr.OwnerOfHash(50) != 2 {
			t.Fatalf("switch: %v %v", nr, err)
		}
	}
	if _, err := s.MarkAbort(ctx, m, 5); !errors.Is(err, ErrCannotAbort) {
		t.Fatalf("aborting a switched move: %v", err)
	}
	if err := s.EndMove(ctx, 78); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := s.PendingMove(ctx); !ok {
		t.Fatal("EndMove of another id deleted the record")
	}
	if err := s.EndMove(ctx, 77); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := s.PendingMove(ctx); ok || err != nil {
		t.Fatalf("after EndMove: %v %v", ok, err)
	}
	// A move planned on a ring that has changed since is refused.
	if err := s.BeginMove(ctx, m); !errors.Is(err, ErrMoveConflict) {
		t.Fatalf("a stale plan: %v", err)
	}
	// Aborting: the record is marked, and the unmarked move can no
	// longer switch the ring.
	r2, err := s.Ring(ctx)
	if err != nil {
		t.Fatal(err)
	}
	back, err := PlanMove(r2, 100, 1, 80)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.BeginMove(ctx, back); err != nil {
		t.Fatal(err)
	}
	marked, err := s.MarkAbort(ctx, back, 81)
	if err != nil || marked.Abort != 81 {
		t.Fatalf("mark abort: %+v %v", marked, err)
	}
	if again, err := s.MarkAbort(ctx, back, 82); err != nil || again.Abort != 81 {
		t.Fatalf("marking twice: %+v %v", again, err)
	}
	if _, err := s.SwitchRing(ctx, back); !errors.Is(err, ErrMoveConflict) {
		t.Fatalf("switching an aborted move: %v", err)
	}
	if got, ok, err := s.PendingMove(ctx); err != nil || !ok || got != marked {
		t.Fatalf("pending after marking: %+v %v %v", got, ok, err)
	}
	for range 2 { // idempotent
		if err := s.AbortRing(ctx, marked); err != nil {
			t.Fatal(err)
		}
	}
	if cur, err := s.Ring(ctx); err != nil || cur.Version() != back.Ring || cur.OwnerOfHash(50) != 2 {
		t.Fatalf("ring after AbortRing: %v %v, want v%d with the range unmoved", cur, err, back.Ring)
	}
}
