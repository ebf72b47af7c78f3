package cm

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/corral-db/corral/internal/testutil"
)

// waitRecorded waits until a has finished with epoch.
func waitRecorded(t *testing.T, a *Announcer, epoch uint64) error {
	t.Helper()
	var err error
	testutil.Eventually(t, waitLimit, fmt.Sprintf("epoch %d recorded", epoch), func() bool {
		var e uint64
		e, err = a.Recorded()
		return e >= epoch
	})
	return err
}

func TestAnnouncer(t *testing.T) {
	srv := env.Start(t)
	s := newStore(t, connect(t, srv.Addr()))
	ctx, cancel := context.WithCancel(testCtx(t))
	if err := s.RegisterGroup(ctx, 1, members(1, 2)); err != nil {
		t.Fatal(err)
	}
	gi, _ := s.Group(ctx, 1)
	a1 := NewAnnouncer(newStore(t, connect(t, srv.Addr())), 1, gi.Members[0])
	a2 := NewAnnouncer(newStore(t, connect(t, srv.Addr())), 1, gi.Members[1])
	done := make(chan struct{}, 2)
	for _, a := range []*Announcer{a1, a2} {
		go func() { a.Run(ctx); done <- struct{}{} }()
	}
	defer func() { cancel(); <-done; <-done }()

	a2.Leading(4)
	if err := waitRecorded(t, a2, 4); err != nil {
		t.Fatalf("member 2 in epoch 4: %v", err)
	}
	wantLeader(t, s, 1, leader(4, 2))
	// Member 1's report of leading in epoch 3 arrives late (it was
	// deposed before its announcement got through): refused.
	a1.Leading(3)
	if err := waitRecorded(t, a1, 3); !errors.Is(err, ErrStaleEpoch) {
		t.Fatalf("deposed member 1: %v, want ErrStaleEpoch", err)
	}
	wantLeader(t, s, 1, leader(4, 2))
	// Re-elected in epoch 5, it is recorded.
	a1.Leading(5)
	if err := waitRecorded(t, a1, 5); err != nil {
		t.Fatalf("member 1 in epoch 5: %v", err)
	}
	wantLeader(t, s, 1, leader(5, 1))
	// An older epoch reported late changes nothing.
	a2.Leading(2)
	if e, err := a2.Recorded(); e != 4 || err != nil {
		t.Fatalf("after a late older epoch: %d %v", e, err)
	}
}
