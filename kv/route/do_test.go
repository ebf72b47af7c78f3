package route

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/corral-db/corral/kv/cm"
	"github.com/corral-db/corral/kv/ring"
)

// fakeCluster answers sends like servers would: each group has a true
// leader and a true ring; any other member answers NotLeader, and a group
// asked for a row it does not own answers WrongRange.
type fakeCluster struct {
	mu      sync.Mutex
	ring    *ring.Ring
	leaders map[ring.GroupID]cm.Leader // the true leaders
	tell    bool                       // NotLeader names the leader
	sends   []Target
}

func (f *fakeCluster) send(_ context.Context, t Target, key []byte) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sends = append(f.sends, t)
	l := f.leaders[t.Group]
	if t.Addr != l.Addr {
		nl := &NotLeader{Group: t.Group, Epoch: l.Epoch}
		if f.tell {
			nl.LeaderID, nl.LeaderAddr = l.ID, l.Addr
		}
		return "", nl
	}
	if f.ring.Owner(key) != t.Group {
		return "", &WrongRange{Group: t.Group, RingVersion: f.ring.Version()}
	}
	return "value from " + t.Addr, nil
}

func (f *fakeCluster) sent() []Target {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Target(nil), f.sends...)
}

// testPolicy never gives up waiting for configuration within a test: the
// tests assert what happens, not when.
var testPolicy = Policy{MaxAttempts: 8, ConfigWait: time.Minute, Backoff: time.Millisecond}

func TestDoReroutesInOneRoundTrip(t *testing.T) {
	r := buildRing(t, 1, 2)
	rt := New()
	rt.Update(state(t, r, map[ring.GroupID][2]uint64{1: {4, 11}, 2: {1, 21}}))
	// Group 1's leader moved to member 12 in epoch 5; the CM does not know.
	f := &fakeCluster{ring: r, tell: true, leaders: map[ring.GroupID]cm.Leader{
		1: {Epoch: 5, ID: 12, Addr: addr(12)}, 2: {Epoch: 1, ID: 21, Addr: addr(21)}}}
	key := keyOf(t, r, 1)
	got, err := Do(context.Background(), rt, testPolicy, key, func(ctx context.Context, tg Target) (string, error) {
		return f.send(ctx, tg, key)
	})
	if err != nil || got != "value from "+addr(12) {
		t.Fatalf("Do: %q %v", got, err)
	}
	if s := f.sent(); len(s) != 2 || s[0].Addr != addr(11) || s[1].Addr != addr(12) {
		t.Fatalf("sends %+v, want the old leader then the new", s)
	}
}

func TestDoWaitsForConfiguration(t *testing.T) {
	r1 := buildRing(t, 1, 2)
	r2, _, err := r1.AddGroupSeeded(3, 4, 3)
	if err != nil {
		t.Fatal(err)
	}
	leaders := map[ring.GroupID][2]uint64{1: {1, 11}, 2: {1, 21}, 3: {1, 31}}
	rt := New()
	rt.Update(state(t, r1, leaders))
	// The servers already run on r2; the client's ring is r1. Its View
	// delivers r2 only after the first WrongRange.
	f := &fakeCluster{ring: r2, leaders: map[ring.GroupID]cm.Leader{}}
	for g, l := range leaders {
		f.leaders[g] = cm.Leader{Epoch: l[0], ID: l[1], Addr: addr(l[1])}
	}
	key := keyOf(t, r2, 3)
	src := &fakeSource{st: state(t, r1, leaders), ch: make(chan struct{}, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	go func() { Follow(ctx, rt, src); close(done) }()
	defer func() { cancel(); <-done }()

	got, err := Do(ctx, rt, testPolicy, key, func(ctx context.Context, tg Target) (string, error) {
		v, err := f.send(ctx, tg, key)
		var wr *WrongRange
		if errors.As(err, &wr) {
			src.publish(state(t, r2, leaders))
		}
		return v, err
	})
	if err != nil || got != "value from "+addr(31) {
		t.Fatalf("Do: %q %v", got, err)
	}
	if s := f.sent(); len(s) != 2 || s[0].Group == 3 || s[1].Group != 3 {
		t.Fatalf("sends %+v, want the old owner then group 3", s)
	}
}

func TestDoGivesUpAndPassesOtherErrors(t *testing.T) {
	r := buildRing(t, 1)
	rt := New()
	rt.Update(state(t, r, map[ring.GroupID][2]uint64{1: {1, 11}}))
	n := 0
	// A server that lags forever: bounded by MaxAttempts.
	_, err := Do(context.Background(), rt, testPolicy, []byte("k"), func(context.Context, Target) (int, error) {
		n++
		return 0, &WrongRange{Group: 1, RingVersion: 0}
	})
	if !errors.Is(err, ErrGaveUp) || n != testPolicy.MaxAttempts {
		t.Fatalf("lagging server: %v after %d sends", err, n)
	}
	boom := errors.New("boom")
	n = 0
	if _, err := Do(context.Background(), rt, testPolicy, []byte("k"), func(context.Context, Target) (int, error) {
		n++
		return 0, boom
	}); err != boom || n != 1 {
		t.Fatalf("other error: %v after %d sends", err, n)
	}
	// No leader and a context that ends: the wait ends with it.
	rt2 := New()
	rt2.Update(state(t, r, nil))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Do(ctx, rt2, testPolicy, []byte("k"), func(context.Context, Target) (int, error) {
		t.Fatal("sent without a leader")
		return 0, nil
	}); !errors.Is(err, context.Canceled) {
		t.Fatalf("no leader, cancelled: %v", err)
	}
}

type fakeSource struct {
	mu sync.Mutex
	st *cm.State
	ch chan struct{}
}

func (s *fakeSource) Current() *cm.State {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st
}

func (s *fakeSource) Changed() <-chan struct{} { return s.ch }

func (s *fakeSource) publish(st *cm.State) {
	s.mu.Lock()
	s.st = st
	s.mu.Unlock()
	select {
	case s.ch <- struct{}{}:
	default:
	}
}
