package e2e

import (
	"fmt"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

var seqSuffix = regexp.MustCompile(`^\d{10}$`)

// TestClientOps drives every basic operation through go-zookeeper against
// one server; subtests use disjoint paths and run in parallel.
func TestClientOps(t *testing.T) {
	srv := env.Start(t)
	c, _ := connect(t, srv)
	open := zk.WorldACL(zk.PermAll)

	t.Run("CreateModes", func(t *testing.T) {
		t.Parallel()
		base := root(t, c)

		p := try(c.Create(base+"/persistent", []byte("p"), zk.FlagPersistent, open)).must(t)
		if p != base+"/persistent" {
			t.Errorf("create returned %q", p)
		}
		_, st := must2(t, c.Get, p)
		if st.EphemeralOwner != 0 {
			t.Errorf("persistent ephemeralOwner = %#x, want 0", st.EphemeralOwner)
		}

		e := try(c.Create(base+"/ephemeral", nil, zk.FlagEphemeral, open)).must(t)
		_, st = must2(t, c.Get, e)
		if st.EphemeralOwner != c.SessionID() {
			t.Errorf("ephemeral ephemeralOwner = %#x, want session %#x", st.EphemeralOwner, c.SessionID())
		}
		_, err := c.Create(e+"/child", nil, 0, open)
		wantErr(t, "create under ephemeral", err, zk.ErrNoChildrenForEphemerals)

		s1 := try(c.Create(base+"/seq-", nil, zk.FlagSequence, open)).must(t)
		s2 := try(c.Create(base+"/seq-", nil, zk.FlagEphemeralSequential, open)).must(t)
		// The counter counts every child create of the parent: persistent,
		// ephemeral and the first sequential made it 2 before s1.
		if s1 != base+"/seq-0000000002" || s2 != base+"/seq-0000000003" {
			t.Errorf("sequential names %q %q, want suffixes 0000000002 and 0000000003", s1, s2)
		}
		_, st = must2(t, c.Get, s2)
		if st.EphemeralOwner != c.SessionID() {
			t.Errorf("ephemeral-sequential owner = %#x, want %#x", st.EphemeralOwner, c.SessionID())
		}

		ct := try(c.CreateContainer(base+"/container", []byte("c"), zk.FlagContainer, open)).must(t)
		if ct != base+"/container" {
			t.Errorf("CreateContainer returned %q", ct)
		}
		_, st = must2(t, c.Get, ct)
		if st.EphemeralOwner != 0 {
			t.Errorf("container ephemeralOwner = %#x, want 0 (hidden)", st.EphemeralOwner)
		}

		ttl := try(c.CreateTTL(base+"/ttl", []byte("t"), zk.FlagTTL, open, time.Hour)).must(t)
		if ttl != base+"/ttl" {
			t.Errorf("CreateTTL returned %q", ttl)
		}
		_, st = must2(t, c.Get, ttl)
		if st.EphemeralOwner != 0 {
			t.Errorf("TTL ephemeralOwner = %#x, want 0 (hidden)", st.EphemeralOwner)
		}
		ts := try(c.CreateTTL(base+"/ttlseq-", nil, zk.FlagPersistentSequentialWithTTL, open, time.Hour)).must(t)
		if !seqSuffix.MatchString(ts[len(base+"/ttlseq-"):]) {
			t.Errorf("sequential TTL name %q", ts)
		}

		_, err = c.Create(base+"/persistent", nil, 0, open)
		wantErr(t, "create existing", err, zk.ErrNodeExists)
		_, err = c.Create(base+"/missing/child", nil, 0, open)
		wantErr(t, "create without parent", err, zk.ErrNoNode)
		_, err = c.Create(base+"/noacl", nil, 0, nil)
		wantErr(t, "create with empty ACL", err, zk.ErrInvalidACL)
		_, err = c.Create(base+"/authacl", nil, 0, zk.AuthACL(zk.PermAll))
		wantErr(t, "create with auth ACL and no auth", err, zk.ErrInvalidACL)

		kids := try(childrenOf(c, base)).must(t)
		want := []string{"authacl", "container", "ephemeral", "persistent", "seq-0000000002", "seq-0000000003", "ttl", ts[len(base)+1:]}
		want = slices.DeleteFunc(want, func(s string) bool { return s == "authacl" })
		slices.Sort(want)
		if !slices.Equal(kids, want) {
			t.Errorf("children = %q, want %q", kids, want)
		}
	})

	t.Run("DeleteVersions", func(t *testing.T) {
		t.Parallel()
		base := root(t, c)
		p := try(c.Create(base+"/n", []byte("a"), 0, open)).must(t)
		try(c.Set(p, []byte("b"), 0)).must(t)
		wantErr(t, "delete stale version", c.Delete(p, 0), zk.ErrBadVersion)
		try(c.Create(p+"/kid", nil, 0, open)).must(t)
		wantErr(t, "delete non-empty", c.Delete(p, -1), zk.ErrNotEmpty)
		mustOK(t, c.Delete(p+"/kid", 0))
		mustOK(t, c.Delete(p, 1))
		wantErr(t, "delete missing", c.Delete(p, -1), zk.ErrNoNode)
		ok, _ := must2(t, c.Exists, p)
		if ok {
			t.Error("deleted node still exists")
		}
		// version -1 matches any version.
		q := try(c.Create(base+"/any", nil, 0, open)).must(t)
		try(c.Set(q, []byte("x"), -1)).must(t)
		mustOK(t, c.Delete(q, -1))
	})

	t.Run("GetSetData", func(t *testing.T) {
		t.Parallel()
		base := root(t, c)
		p := try(c.Create(base+"/d", []byte("v0"), 0, open)).must(t)
		data, st := must2(t, c.Get, p)
		if string(data) != "v0" || st.Version != 0 || st.DataLength != 2 || st.Czxid != st.Mzxid {
			t.Fatalf("get = %q %+v", data, st)
		}
		st1 := try(c.Set(p, []byte("v1"), 0)).must(t)
		if st1.Version != 1 || st1.Mzxid <= st.Mzxid || st1.Czxid != st.Czxid || st1.Mtime < st.Mtime {
			t.Errorf("after set: %+v (before %+v)", st1, st)
		}
		_, err := c.Set(p, []byte("v2"), 0)
		wantErr(t, "set stale version", err, zk.ErrBadVersion)
		st2 := try(c.Set(p, []byte("v2"), -1)).must(t)
		if st2.Version != 2 {
			t.Errorf("set with version -1: version %d, want 2", st2.Version)
		}
		st3 := try(c.Set(p, nil, 2)).must(t)
		if st3.DataLength != 0 || st3.Version != 3 {
			t.Errorf("set empty: %+v", st3)
		}
		data, st = must2(t, c.Get, p)
		if len(data) != 0 || st.Version != 3 {
			t.Errorf("get after empty set = %q version %d", data, st.Version)
		}
		_, _, err = c.Get(base + "/missing")
		wantErr(t, "get missing", err, zk.ErrNoNode)
		_, err = c.Set(base+"/missing", nil, -1)
		wantErr(t, "set missing", err, zk.ErrNoNode)

		// A data watch fires NodeDataChanged once.
		_, _, ch, err := c.GetW(p)
		mustOK(t, err)
		try(c.Set(p, []byte("w"), -1)).must(t)
		expectEvent(t, ch, zk.EventNodeDataChanged, p)
	})

	t.Run("ACL", func(t *testing.T) {
		t.Parallel()
		base := root(t, c)
		p := try(c.Create(base+"/a", nil, 0, open)).must(t)
		acl, st, err := c.GetACL(p)
		mustOK(t, err)
		if !slices.Equal(acl, open) || st.Aversion != 0 {
			t.Errorf("getACL = %+v aversion %d", acl, st.Aversion)
		}
		readOnly := zk.WorldACL(zk.PermRead | zk.PermAdmin)
		st, err = c.SetACL(p, readOnly, 0)
		mustOK(t, err)
		if st.Aversion != 1 || st.Version != 0 {
			t.Errorf("after setACL: aversion %d version %d, want 1 and 0", st.Aversion, st.Version)
		}
		_, err = c.SetACL(p, open, 0)
		wantErr(t, "setACL stale aversion", err, zk.ErrBadVersion)
		_, err = c.Set(p, []byte("x"), -1)
		wantErr(t, "write without WRITE perm", err, zk.ErrNoAuth)
		acl, st, err = c.GetACL(p)
		mustOK(t, err)
		if !slices.Equal(acl, readOnly) || st.Aversion != 1 {
			t.Errorf("getACL after set = %+v aversion %d", acl, st.Aversion)
		}
		_, err = c.SetACL(p, open, -1)
		mustOK(t, err)
		try(c.Set(p, []byte("x"), -1)).must(t)
		_, _, err = c.GetACL(base + "/missing")
		wantErr(t, "getACL missing", err, zk.ErrNoNode)
		_, err = c.SetACL(p, nil, -1)
		wantErr(t, "setACL empty", err, zk.ErrInvalidACL)
	})

	t.Run("Children", func(t *testing.T) {
		t.Parallel()
		base := root(t, c)
		for _, n := range []string{"c", "a", "b"} {
			try(c.Create(base+"/"+n, nil, 0, open)).must(t)
		}
		kids, st, err := c.Children(base) // getChildren2
		mustOK(t, err)
		slices.Sort(kids)
		if !slices.Equal(kids, []string{"a", "b", "c"}) || st.NumChildren != 3 || st.Cversion != 3 {
			t.Errorf("children2 = %q numChildren %d cversion %d", kids, st.NumChildren, st.Cversion)
		}
		_, _, ch, err := c.ChildrenW(base)
		mustOK(t, err)
		mustOK(t, c.Delete(base+"/b", -1))
		expectEvent(t, ch, zk.EventNodeChildrenChanged, base)
		_, st, err = c.Children(base)
		mustOK(t, err)
		// cversion counts creates and deletes of children.
		if st.NumChildren != 2 || st.Cversion != 4 {
			t.Errorf("after delete: numChildren %d cversion %d, want 2 and 4", st.NumChildren, st.Cversion)
		}
		_, _, err = c.Children(base + "/missing")
		wantErr(t, "children of missing", err, zk.ErrNoNode)
	})

	t.Run("ExistsWatchCreate", func(t *testing.T) {
		t.Parallel()
		base := root(t, c)
		p := base + "/later"
		ok, _, ch, err := c.ExistsW(p)
		mustOK(t, err)
		if ok {
			t.Fatal("exists on a missing node returned true")
		}
		try(c.Create(p, nil, 0, open)).must(t)
		expectEvent(t, ch, zk.EventNodeCreated, p)

		ok, _, ch, err = c.ExistsW(p)
		mustOK(t, err)
		if !ok {
			t.Fatal("exists after create returned false")
		}
		mustOK(t, c.Delete(p, -1))
		expectEvent(t, ch, zk.EventNodeDeleted, p)
	})

	t.Run("Multi", func(t *testing.T) {
		t.Parallel()
		base := root(t, c)
		try(c.Create(base+"/x", []byte("x"), 0, open)).must(t)
		res, err := c.Multi(
			&zk.CreateRequest{Path: base + "/m1", Data: []byte("1"), Acl: open},
			&zk.SetDataRequest{Path: base + "/x", Data: []byte("x2"), Version: 0},
			&zk.CheckVersionRequest{Path: base + "/x", Version: 1},
			&zk.DeleteRequest{Path: base + "/m1", Version: 0},
			&zk.CreateRequest{Path: base + "/m2", Acl: open, Flags: zk.FlagSequence},
		)
		mustOK(t, err)
		if len(res) != 5 {
			t.Fatalf("multi returned %d results", len(res))
		}
		for i, r := range res {
			if r.Error != nil {
				t.Errorf("result %d: %v", i, r.Error)
			}
		}
		if res[0].String != base+"/m1" || res[1].Stat == nil || res[1].Stat.Version != 1 ||
			res[4].String != base+"/m20000000002" {
			t.Errorf("results: %q, %+v, %q", res[0].String, res[1].Stat, res[4].String)
		}
		kids := try(childrenOf(c, base)).must(t)
		if !slices.Equal(kids, []string{"m20000000002", "x"}) {
			t.Errorf("children after multi = %q", kids)
		}

		// One failing op rolls back all; go-zk reports per-op results and
		// the first failure.
		res, err = c.Multi(
			&zk.CreateRequest{Path: base + "/never", Acl: open},
			&zk.SetDataRequest{Path: base + "/x", Data: []byte("no"), Version: 0},
			&zk.DeleteRequest{Path: base + "/x", Version: -1},
		)
		wantErr(t, "failed multi", err, zk.ErrBadVersion)
		if len(res) != 3 {
			t.Fatalf("failed multi returned %d results", len(res))
		}
		if res[0].Error != nil || res[1].Error != zk.ErrBadVersion || res[2].Error == nil {
			t.Errorf("failed multi results: %v / %v / %v, want nil / %v / runtime inconsistency",
				res[0].Error, res[1].Error, res[2].Error, zk.ErrBadVersion)
		}
		ok, _ := must2(t, c.Exists, base+"/never")
		data, st := must2(t, c.Get, base+"/x")
		if ok || string(data) != "x2" || st.Version != 1 {
			t.Errorf("after failed multi: /never exists=%v, /x=%q v%d", ok, data, st.Version)
		}
	})

	t.Run("Sync", func(t *testing.T) {
		t.Parallel()
		base := root(t, c)
		p, err := c.Sync(base)
		mustOK(t, err)
		if p != base {
			t.Errorf("sync returned %q, want %q", p, base)
		}
	})

	t.Run("SequentialConcurrency", func(t *testing.T) {
		t.Parallel()
		base := root(t, c)
		const clients, perClient = 4, 25
		conns := []*zk.Conn{c}
		for len(conns) < clients {
			cc, _ := connect(t, srv)
			conns = append(conns, cc)
		}
		type result struct {
			names []string
			err   error
		}
		out := make(chan result, clients)
		for _, cc := range conns {
			go func() {
				var r result
				for range perClient {
					name, err := cc.Create(base+"/s-", nil, zk.FlagSequence, open)
					if err != nil {
						r.err = err
						break
					}
					r.names = append(r.names, name)
				}
				out <- r
			}()
		}
		seen := map[string]bool{}
		for range clients {
			r := <-out
			if r.err != nil {
				t.Fatal(r.err)
			}
			// One client's creates complete in the order it issued them.
			if !slices.IsSorted(r.names) {
				t.Errorf("one client's sequence numbers out of order: %q", r.names)
			}
			for _, n := range r.names {
				if seen[n] {
					t.Errorf("duplicate sequential name %s", n)
				}
				seen[n] = true
			}
		}
		// Every number from 0 to N-1 was handed out exactly once.
		for i := range clients * perClient {
			if n := fmt.Sprintf("%s/s-%010d", base, i); !seen[n] {
				t.Errorf("sequence %d missing", i)
			}
		}
	})

	t.Run("InvalidPaths", func(t *testing.T) {
		t.Parallel()
		base := root(t, c)
		// go-zk validates paths itself; what reaches the server is covered
		// by the raw tests. Here: the client refuses, and nothing is created.
		for _, p := range []string{base + "/", base + "//x", base + "/./x", "relative"} {
			if _, err := c.Create(p, nil, 0, open); err == nil {
				t.Errorf("create %q succeeded", p)
			}
		}
		if kids := try(childrenOf(c, base)).must(t); len(kids) != 0 {
			t.Errorf("children = %q", kids)
		}
	})
}

// must2 calls a go-zk getter returning (a, b, error).
func must2[A, B any](t testing.TB, f func(string) (A, B, error), path string) (A, B) {
	t.Helper()
	a, b, err := f(path)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return a, b
}

func childrenOf(c *zk.Conn, path string) ([]string, error) {
	kids, _, err := c.Children(path)
	slices.Sort(kids)
	return kids, err
}
