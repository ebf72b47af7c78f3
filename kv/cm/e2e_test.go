package cm_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/corral-db/corral/client"
	"github.com/corral-db/corral/kv/cm"
	"github.com/corral-db/corral/kv/ring"
	"github.com/corral-db/corral/kv/route"
)

// fakeGroups plays the KV members: for each group, which member leads in
// which epoch. A member that does not lead answers NotLeader naming no
// one (it has not heard of the new leader), so the client must learn it
// from the CM.
type fakeGroups struct {
	mu     sync.Mutex
	leader map[ring.GroupID]cm.Leader
	sends  map[string]int
}

func (f *fakeGroups) set(g ring.GroupID, l cm.Leader) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.leader[g] = l
}

func (f *fakeGroups) send(_ context.Context, t route.Target) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sends[t.Addr]++
	if l := f.leader[t.Group]; l.Addr != t.Addr {
		return "", &route.NotLeader{Group: t.Group, Epoch: l.Epoch}
	}
	return t.Addr, nil
}

func memberAddr(id uint64) string { return fmt.Sprintf("127.0.0.1:%d", 9000+id) }

// TestLeaderChangeReachesClients: a group's new leader announces itself
// in the CM; a client whose request the old leader refused (without
// naming the new one) is re-routed once the View sees the record, and the
// other group is untouched.
func TestLeaderChangeReachesClients(t *testing.T) {
	srv := cm.HarnessEnv().Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	conn := func() *client.Conn {
		c, err := client.Connect(ctx, []string{srv.Addr()}, client.SessionTimeout(10*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	admin, err := cm.NewStore(conn(), "")
	if err != nil {
		t.Fatal(err)
	}
	member := func(id uint64) cm.Member { return cm.Member{ID: id, Addr: memberAddr(id)} }
	for _, g := range []ring.GroupID{1, 2} {
		gi := cm.GroupInfo{}
		for i := uint64(1); i <= 3; i++ {
			gi.Members = append(gi.Members, member(uint64(g)*10+i))
		}
		if err := admin.RegisterGroup(ctx, g, gi); err != nil {
			t.Fatal(err)
		}
	}
	r, err := ring.Build([]ring.GroupID{1, 2}, 4, 11)
	if err != nil {
		t.Fatal(err)
	}
	if err := admin.Init(ctx, r); err != nil {
		t.Fatal(err)
	}

	// Each member runs an Announcer on its own session.
	announcers := map[uint64]*cm.Announcer{}
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	for _, id := range []uint64{11, 12, 21} {
		s, err := cm.NewStore(conn(), "")
		if err != nil {
			t.Fatal(err)
		}
		g := ring.GroupID(id / 10)
		a := cm.NewAnnouncer(s, g, member(id))
		announcers[id] = a
		wg.Add(1)
		go func() { defer wg.Done(); a.Run(ctx) }()
	}
	fake := &fakeGroups{leader: map[ring.GroupID]cm.Leader{}, sends: map[string]int{}}
	fake.set(1, cm.Leader{Epoch: 1, ID: 11, Addr: memberAddr(11)})
	fake.set(2, cm.Leader{Epoch: 1, ID: 21, Addr: memberAddr(21)})
	announcers[11].Leading(1)
	announcers[21].Leading(1)

	// The client: a View following the CM, feeding a Router.
	v, err := cm.Watch(ctx, conn(), "")
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	rt := route.New()
	wg.Add(1)
	go func() { defer wg.Done(); route.Follow(ctx, rt, v) }()

	key := func(g ring.GroupID) []byte {
		for i := 0; ; i++ {
			k := []byte(fmt.Sprint("row", i))
			if r.Owner(k) == g {
				return k
			}
		}
	}
	policy := route.Policy{MaxAttempts: 32, ConfigWait: 20 * time.Second, Backoff: time.Millisecond}
	got, err := route.Do(ctx, rt, policy, key(1), fake.send)
	if err != nil || got != memberAddr(11) {
		t.Fatalf("before the change: %q %v", got, err)
	}

	// Member 11 is gone; 12 leads group 1 in epoch 2 and announces it.
	fake.set(1, cm.Leader{Epoch: 2, ID: 12, Addr: memberAddr(12)})
	announcers[12].Leading(2)
	got, err = route.Do(ctx, rt, policy, key(1), fake.send)
	if err != nil || got != memberAddr(12) {
		t.Fatalf("after the change: %q %v", got, err)
	}
	got, err = route.Do(ctx, rt, policy, key(2), fake.send)
	if err != nil || got != memberAddr(21) {
		t.Fatalf("group 2: %q %v", got, err)
	}
	fake.mu.Lock()
	defer fake.mu.Unlock()
	if fake.sends[memberAddr(22)] != 0 || fake.sends[memberAddr(23)] != 0 || fake.sends[memberAddr(21)] != 1 {
		t.Fatalf("group 2 saw sends %v", fake.sends)
	}
}
