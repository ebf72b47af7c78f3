package e2e

import (
	"testing"
	"time"

	"github.com/corral-db/corral/internal/testutil"
	"github.com/go-zookeeper/zk"
)

// TestReaper: containers and TTL nodes are deleted by the server's
// periodic reaper (1 s here; PROTOCOL §8). Waits are generous polls; no
// test asserts how soon the reaper acts.
func TestReaper(t *testing.T) {
	srv := env.Start(t)
	c, _ := connect(t, srv)
	open := zk.WorldACL(zk.PermAll)

	t.Run("Container", func(t *testing.T) {
		t.Parallel()
		base := root(t, c)
		never := try(c.CreateContainer(base+"/never-used", nil, zk.FlagContainer, open)).must(t)
		ct := try(c.CreateContainer(base+"/c", nil, zk.FlagContainer, open)).must(t)
		try(c.Create(ct+"/kid", nil, 0, open)).must(t)
		_, _, ch, err := c.ExistsW(ct)
		mustOK(t, err)
		// A container with a child stays; once the child is gone the
		// reaper deletes it (watchers see NodeDeleted).
		mustOK(t, c.Delete(ct+"/kid", -1))
		expectEventWithin(t, ch, reapTimeout, zk.EventNodeDeleted, ct)
		if ok, _ := must2(t, c.Exists, ct); ok {
			t.Error("reaped container still exists")
		}
		// The reaper pass that removed c also saw never-used, which never
		// had a child: it stays (maxNeverUsedIntervalMs defaults to off).
		if ok, _ := must2(t, c.Exists, never); !ok {
			t.Error("never-used container was reaped")
		}
	})

	t.Run("ContainerWithChildStays", func(t *testing.T) {
		t.Parallel()
		base := root(t, c)
		ct := try(c.CreateContainer(base+"/c", nil, zk.FlagContainer, open)).must(t)
		try(c.Create(ct+"/a", nil, 0, open)).must(t)
		try(c.Create(ct+"/b", nil, 0, open)).must(t)
		mustOK(t, c.Delete(ct+"/a", -1))
		// A sibling container that is emptied acts as a marker that the
		// reaper has run since; c still has a child and must survive it.
		marker := try(c.CreateContainer(base+"/marker", nil, zk.FlagContainer, open)).must(t)
		try(c.Create(marker+"/k", nil, 0, open)).must(t)
		mustOK(t, c.Delete(marker+"/k", -1))
		testutil.Eventually(t, reapTimeout, "marker container reaped", func() bool {
			ok, _, err := c.Exists(marker)
			return err == nil && !ok
		})
		if ok, _ := must2(t, c.Exists, ct); !ok {
			t.Error("container with a child was reaped")
		}
	})

	t.Run("TTL", func(t *testing.T) {
		t.Parallel()
		base := root(t, c)
		p := try(c.CreateTTL(base+"/short", []byte("x"), zk.FlagTTL, open, time.Second)).must(t)
		s := try(c.CreateTTL(base+"/seq-", nil, zk.FlagPersistentSequentialWithTTL, open, time.Second)).must(t)
		long := try(c.CreateTTL(base+"/long", nil, zk.FlagTTL, open, time.Hour)).must(t)
		_, _, ch, err := c.ExistsW(p)
		mustOK(t, err)
		expectEventWithin(t, ch, reapTimeout, zk.EventNodeDeleted, p)
		testutil.Eventually(t, reapTimeout, "sequential TTL node reaped", func() bool {
			ok, _, err := c.Exists(s)
			return err == nil && !ok
		})
		if ok, _ := must2(t, c.Exists, long); !ok {
			t.Error("TTL node with a 1 h TTL was reaped")
		}
	})

	t.Run("TTLWithChildStays", func(t *testing.T) {
		t.Parallel()
		base := root(t, c)
		p := try(c.CreateTTL(base+"/parent", nil, zk.FlagTTL, open, time.Second)).must(t)
		try(c.Create(p+"/kid", nil, 0, open)).must(t)
		marker := try(c.CreateTTL(base+"/marker", nil, zk.FlagTTL, open, time.Second)).must(t)
		testutil.Eventually(t, reapTimeout, "marker TTL node reaped", func() bool {
			ok, _, err := c.Exists(marker)
			return err == nil && !ok
		})
		// Expired but not empty: kept. Once empty it goes.
		if ok, _ := must2(t, c.Exists, p); !ok {
			t.Fatal("TTL node with a child was reaped")
		}
		mustOK(t, c.Delete(p+"/kid", -1))
		testutil.Eventually(t, reapTimeout, "emptied TTL node reaped", func() bool {
			ok, _, err := c.Exists(p)
			return err == nil && !ok
		})
	})
}

func expectEventWithin(t testing.TB, ch <-chan zk.Event, limit time.Duration, typ zk.EventType, path string) {
	t.Helper()
	select {
	case ev := <-ch:
		if ev.Type != typ || ev.Path != path {
			t.Fatalf("watch event = %v %q, want %v %q", ev.Type, ev.Path, typ, path)
		}
	case <-time.After(limit):
		t.Fatalf("no %v on %s within %s", typ, path, limit)
	}
}
