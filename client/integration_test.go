package client_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/corral-db/corral/client"
	"github.com/corral-db/corral/internal/testutil"
	"github.com/corral-db/corral/tests/harness"
	"github.com/corral-db/corral/wire"
)

// The same suite runs against corral (default) and Apache ZooKeeper 3.9.3
// (CORRAL_E2E_TARGET=zookeeper); it asserts only what both must do.

var open = client.WorldACL(client.PermAll)

// TestOps covers every tree operation, blocking and asynchronous.
func TestOps(t *testing.T) {
	srv := start(t)
	c := connect(t, srv.Addr())

	t.Run("CreateGetSetDelete", func(t *testing.T) {
		t.Parallel()
		ctx := testCtx(t)
		root := mkroot(t, c)
		p := root + "/n"
		if got := must[string](t)(c.Create(ctx, p, []byte("v1"), open, client.ModePersistent)); got != p {
			t.Fatalf("Create = %q, want %q", got, p)
		}
		_, err := c.Create(ctx, p, nil, open, client.ModePersistent)
		wantErr(t, "create existing", err, wire.CodeNodeExists)
		_, err = c.Create(ctx, root+"/missing/x", nil, open, client.ModePersistent)
		wantErr(t, "create under missing parent", err, wire.CodeNoNode)

		data, st, err := c.Get(ctx, p)
		ok(t, err)
		if string(data) != "v1" || st.Version != 0 || st.DataLength != 2 {
			t.Fatalf("Get = %q %+v", data, st)
		}
		st2, err := c.Set(ctx, p, []byte("v2"), 0)
		ok(t, err)
		if st2.Version != 1 || st2.Mzxid <= st.Mzxid {
			t.Fatalf("Set stat %+v after %+v", st2, st)
		}
		_, err = c.Set(ctx, p, []byte("v3"), 0)
		wantErr(t, "set with stale version", err, wire.CodeBadVersion)

		es, err := c.Exists(ctx, p)
		if err != nil || es == nil || es.Version != 1 {
			t.Fatalf("Exists = %+v, %v", es, err)
		}
		if es, err := c.Exists(ctx, root+"/none"); es != nil || err != nil {
			t.Fatalf("Exists(missing) = %+v, %v; want nil, nil", es, err)
		}
		_, _, err = c.Get(ctx, root+"/none")
		wantErr(t, "get missing", err, wire.CodeNoNode)

		path2, st3, err := c.Create2(ctx, p+"/child", []byte("c"), open, client.ModePersistent)
		ok(t, err)
		if path2 != p+"/child" || st3.Czxid == 0 || st3.DataLength != 1 {
			t.Fatalf("Create2 = %q %+v", path2, st3)
		}
		wantErr(t, "delete non-empty", c.Delete(ctx, p, -1), wire.CodeNotEmpty)
		wantErr(t, "delete bad version", c.Delete(ctx, p+"/child", 5), wire.CodeBadVersion)
		ok(t, c.Delete(ctx, p+"/child", 0))
		ok(t, c.Delete(ctx, p, 1))
		wantErr(t, "delete missing", c.Delete(ctx, p, -1), wire.CodeNoNode)
	})

	t.Run("Modes", func(t *testing.T) {
		t.Parallel()
		ctx := testCtx(t)
		root := mkroot(t, c)
		s1 := must[string](t)(c.Create(ctx, root+"/s-", nil, open, client.ModePersistentSequential))
		s2 := must[string](t)(c.Create(ctx, root+"/s-", nil, open, client.ModeEphemeralSequential))
		if s1 != root+"/s-0000000000" || s2 != root+"/s-0000000001" {
			t.Fatalf("sequential names %q %q", s1, s2)
		}
		e := must[string](t)(c.Create(ctx, root+"/e", nil, open, client.ModeEphemeral))
		if st, err := c.Exists(ctx, e); err != nil || st == nil || st.EphemeralOwner != c.SessionID() {
			t.Fatalf("ephemeral owner %+v, session %#x, %v", st, c.SessionID(), err)
		}
		_, err := c.Create(ctx, e+"/x", nil, open, client.ModePersistent)
		wantErr(t, "child of ephemeral", err, wire.CodeNoChildrenForEphemerals)

		// TTL and container nodes report ephemeralOwner 0.
		tp, tst, err := c.CreateTTL(ctx, root+"/ttl", []byte("t"), open, client.ModePersistentWithTTL, time.Hour)
		ok(t, err)
		if tp != root+"/ttl" || tst.EphemeralOwner != 0 || tst.Czxid == 0 {
			t.Fatalf("CreateTTL = %q %+v", tp, tst)
		}
		ts, _, err := c.CreateTTL(ctx, root+"/ttls-", nil, open, client.ModePersistentSequentialWithTTL, time.Hour)
		ok(t, err)
		if !strings.HasPrefix(ts, root+"/ttls-") || len(ts) != len(root+"/ttls-")+10 {
			t.Fatalf("sequential TTL path %q", ts)
		}
		cp, cst, err := c.CreateContainer(ctx, root+"/cont", nil, open)
		ok(t, err)
		if cp != root+"/cont" || cst.EphemeralOwner != 0 {
			t.Fatalf("CreateContainer = %q %+v", cp, cst)
		}
		// Create with the container mode goes out as createContainer.
		must[string](t)(c.Create(ctx, root+"/cont2", nil, open, client.ModeContainer))
		// Mode and call must agree; checked before sending.
		_, err = c.Create(ctx, root+"/bad", nil, open, client.ModePersistentWithTTL)
		wantErr(t, "Create with a TTL mode", err, wire.CodeBadArguments)
		_, _, err = c.CreateTTL(ctx, root+"/bad", nil, open, client.ModePersistent, time.Hour)
		wantErr(t, "CreateTTL with a plain mode", err, wire.CodeBadArguments)
		_, _, err = c.CreateTTL(ctx, root+"/bad", nil, open, client.ModePersistentWithTTL, 0)
		wantErr(t, "CreateTTL with ttl 0", err, wire.CodeBadArguments)
	})

	t.Run("Paths", func(t *testing.T) {
		t.Parallel()
		ctx := testCtx(t)
		_, _, err := c.Get(ctx, "relative")
		wantErr(t, "relative path", err, wire.CodeBadArguments)
		_, err = c.Create(ctx, "/.", nil, open, client.ModePersistent)
		wantErr(t, "'.' segment (server-checked)", err, wire.CodeBadArguments)
		// The connection survives bad arguments.
		if _, err := c.Exists(ctx, "/"); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("ACL", func(t *testing.T) {
		t.Parallel()
		ctx := testCtx(t)
		root := mkroot(t, c)
		acl, st, err := c.GetACL(ctx, root)
		ok(t, err)
		if !slices.Equal(acl, open) || st.Aversion != 0 {
			t.Fatalf("GetACL = %+v %+v", acl, st)
		}
		read := client.WorldACL(client.PermRead | client.PermAdmin)
		st2, err := c.SetACL(ctx, root, read, 0)
		ok(t, err)
		if st2.Aversion != 1 {
			t.Fatalf("SetACL aversion %d", st2.Aversion)
		}
		_, err = c.SetACL(ctx, root, open, 0)
		wantErr(t, "SetACL stale aversion", err, wire.CodeBadVersion)
		_, err = c.Create(ctx, root+"/x", nil, open, client.ModePersistent)
		wantErr(t, "create without CREATE", err, wire.CodeNoAuth)
		_, err = c.Set(ctx, root, nil, -1)
		wantErr(t, "set without WRITE", err, wire.CodeNoAuth)
		_, err = c.Create(ctx, root+"/y", nil, []client.ACL{{Perms: client.PermAll, ID: client.ID{Scheme: "bogus", ID: "x"}}}, client.ModePersistent)
		wantErr(t, "unknown ACL scheme", err, wire.CodeInvalidACL)
		_, err = c.SetACL(ctx, root, open, 1)
		ok(t, err)
	})

	t.Run("Children", func(t *testing.T) {
		t.Parallel()
		ctx := testCtx(t)
		root := mkroot(t, c)
		for _, n := range []string{"b", "a", "c"} {
			must[string](t)(c.Create(ctx, root+"/"+n, nil, open, client.ModePersistent))
		}
		must[string](t)(c.Create(ctx, root+"/a/deep", nil, open, client.ModePersistent))
		kids := must[[]string](t)(c.Children(ctx, root))
		sort.Strings(kids)
		if !slices.Equal(kids, []string{"a", "b", "c"}) {
			t.Fatalf("Children = %v", kids)
		}
		kids2, st, err := c.Children2(ctx, root)
		ok(t, err)
		if len(kids2) != 3 || st.NumChildren != 3 || st.Cversion != 3 {
			t.Fatalf("Children2 = %v %+v", kids2, st)
		}
		if n := must[int](t)(c.GetAllChildrenNumber(ctx, root)); n != 4 {
			t.Fatalf("GetAllChildrenNumber = %d, want 4", n)
		}
		_, err = c.Children(ctx, root+"/none")
		wantErr(t, "children of missing", err, wire.CodeNoNode)
	})

	t.Run("SyncCheck", func(t *testing.T) {
		t.Parallel()
		ctx := testCtx(t)
		root := mkroot(t, c)
		if p := must[string](t)(c.Sync(ctx, root)); p != root {
			t.Fatalf("Sync = %q", p)
		}
		ok(t, c.Check(ctx, root, 0))
		wantErr(t, "check bad version", c.Check(ctx, root, 7), wire.CodeBadVersion)
		wantErr(t, "check missing", c.Check(ctx, root+"/none", 0), wire.CodeNoNode)
	})

	t.Run("SessionInfo", func(t *testing.T) {
		t.Parallel()
		ctx := testCtx(t)
		root := mkroot(t, c)
		c2 := connect(t, srv.Addr())
		e1 := must[string](t)(c2.Create(ctx, root+"/e1", nil, open, client.ModeEphemeral))
		must[string](t)(c2.Create(ctx, root+"/p", nil, open, client.ModePersistent))
		e2 := must[string](t)(c2.Create(ctx, root+"/p/e2", nil, open, client.ModeEphemeral))
		eph := must[[]string](t)(c2.GetEphemerals(ctx, root))
		sort.Strings(eph)
		if !slices.Equal(eph, []string{e1, e2}) {
			t.Fatalf("GetEphemerals = %v", eph)
		}
		if eph := must[[]string](t)(c2.GetEphemerals(ctx, root+"/p")); !slices.Equal(eph, []string{e2}) {
			t.Fatalf("GetEphemerals(prefix) = %v", eph)
		}
		infos := must[[]client.ClientInfo](t)(c2.WhoAmI(ctx))
		if !slices.Contains(infos, client.ClientInfo{AuthScheme: "ip", User: "127.0.0.1"}) {
			t.Fatalf("WhoAmI = %+v", infos)
		}
		if c2.SessionID() == 0 || c2.SessionID() == c.SessionID() || len(c2.SessionPassword()) != 16 {
			t.Fatalf("session %#x / %#x, password %x", c2.SessionID(), c.SessionID(), c2.SessionPassword())
		}
		if c2.State() != client.StateConnected || c2.SessionTimeout() != sessionTimeout ||
			!slices.Contains(strings.Split(srv.Addr(), ","), c2.Server()) {
			t.Fatalf("state %v, timeout %v, server %s", c2.State(), c2.SessionTimeout(), c2.Server())
		}
		if c2.LastZxid() == 0 {
			t.Fatal("LastZxid 0 after writes")
		}
	})

	t.Run("SASL", func(t *testing.T) {
		t.Parallel()
		// Without SASL configured both servers answer an empty token.
		tok, err := c.SASL(testCtx(t), []byte("token"))
		if err != nil || len(tok) != 0 {
			t.Fatalf("SASL = %q, %v", tok, err)
		}
	})

	t.Run("Config", func(t *testing.T) {
		t.Parallel()
		ctx := testCtx(t)
		_, st, err := c.GetConfig(ctx)
		ok(t, err)
		_ = st
		_, _, err = c.Reconfig(ctx, "", "", "server.1=127.0.0.1:2888:3888;2181", -1)
		wantErr(t, "reconfig on a standalone server", err, wire.CodeReconfigDisabled)
	})

	t.Run("Async", func(t *testing.T) {
		t.Parallel()
		root := mkroot(t, c)
		p := root + "/n"
		fc := c.CreateAsync(p, []byte("a"), open, client.ModePersistent)
		fc2 := c.Create2Async(p+"/k", []byte("k"), open, client.ModePersistent)
		fe := c.ExistsAsync(p)
		fg := c.GetAsync(p)
		fs := c.SetAsync(p, []byte("b"), 0)
		fch := c.ChildrenAsync(p)
		fch2 := c.Children2Async(p)
		facl := c.GetACLAsync(p)
		fsacl := c.SetACLAsync(p, open, 0)
		fsync := c.SyncAsync(p)
		fck := c.CheckAsync(p, 1)
		fd := c.DeleteAsync(p+"/k", -1)
		fd2 := c.DeleteAsync(p, -1)
		fbad := c.GetAsync("rel")
		ctx := testCtx(t)
		if v, err := fc.Wait(ctx); err != nil || v != p {
			t.Fatalf("CreateAsync = %q %v", v, err)
		}
		if v, err := fc2.Result(); err != nil || v.Path != p+"/k" || v.Stat.DataLength != 1 {
			t.Fatalf("Create2Async = %+v %v", v, err)
		}
		if v, err := fe.Result(); err != nil || v == nil {
			t.Fatalf("ExistsAsync = %v %v", v, err)
		}
		if v, err := fg.Result(); err != nil || string(v.Data) != "a" {
			t.Fatalf("GetAsync = %+v %v", v, err)
		}
		if v, err := fs.Result(); err != nil || v.Version != 1 {
			t.Fatalf("SetAsync = %+v %v", v, err)
		}
		if v, err := fch.Result(); err != nil || !slices.Equal(v, []string{"k"}) {
			t.Fatalf("ChildrenAsync = %v %v", v, err)
		}
		if v, err := fch2.Result(); err != nil || v.Stat.NumChildren != 1 {
			t.Fatalf("Children2Async = %+v %v", v, err)
		}
		if v, err := facl.Result(); err != nil || len(v.ACL) != 1 {
			t.Fatalf("GetACLAsync = %+v %v", v, err)
		}
		if v, err := fsacl.Result(); err != nil || v.Aversion != 1 {
			t.Fatalf("SetACLAsync = %+v %v", v, err)
		}
		if v, err := fsync.Result(); err != nil || v != p {
			t.Fatalf("SyncAsync = %q %v", v, err)
		}
		if _, err := fck.Result(); err != nil {
			t.Fatalf("CheckAsync = %v", err)
		}
		if _, err := fd.Result(); err != nil {
			t.Fatal(err)
		}
		if _, err := fd2.Result(); err != nil {
			t.Fatal(err)
		}
		if _, err := fbad.Result(); !errors.Is(err, wire.CodeBadArguments) {
			t.Fatalf("GetAsync(relative) = %v", err)
		}
	})
}

// TestMulti covers multi and multiRead with their per-op results.
func TestMulti(t *testing.T) {
	srv := start(t)
	c := connect(t, srv.Addr())

	t.Run("Success", func(t *testing.T) {
		t.Parallel()
		ctx := testCtx(t)
		root := mkroot(t, c)
		must[string](t)(c.Create(ctx, root+"/old", []byte("o"), open, client.ModePersistent))
		res, err := c.Multi(ctx,
			client.CreateOp(root+"/a", []byte("a"), open, client.ModePersistent),
			client.CreateOp(root+"/s-", nil, open, client.ModePersistentSequential),
			client.CreateOp(root+"/c", nil, open, client.ModeContainer),
			client.CreateTTLOp(root+"/t", nil, open, client.ModePersistentWithTTL, time.Hour),
			client.SetDataOp(root+"/old", []byte("new"), 0),
			client.CheckOp(root+"/old", 1),
			client.DeleteOp(root+"/a", 0),
		)
		ok(t, err)
		if len(res) != 7 {
			t.Fatalf("%d results", len(res))
		}
		want := []struct {
			op   wire.Op
			path string
		}{
			{wire.OpCreate, root + "/a"}, {wire.OpCreate, root + "/s-0000000002"}, // old, a, s-
			{wire.OpCreateContainer, root + "/c"}, {wire.OpCreateTTL, root + "/t"},
			{wire.OpSetData, ""}, {wire.OpCheck, ""}, {wire.OpDelete, ""},
		}
		for i, w := range want {
			if res[i].Op != w.op || res[i].Path != w.path || res[i].Err != nil {
				t.Errorf("result %d = %+v, want op %d path %q", i, res[i], w.op, w.path)
			}
		}
		// Containers and TTL nodes are answered as create2 (with a Stat).
		if res[2].Stat.Czxid == 0 || res[3].Stat.Czxid == 0 {
			t.Errorf("container/TTL results lack a Stat: %+v %+v", res[2], res[3])
		}
		if res[4].Stat.Version != 1 {
			t.Errorf("setData result stat %+v", res[4].Stat)
		}
		// All ops share one zxid.
		if res[2].Stat.Czxid != res[3].Stat.Czxid || res[4].Stat.Mzxid != res[2].Stat.Czxid {
			t.Errorf("multi ops have different zxids: %#x %#x %#x", res[2].Stat.Czxid, res[3].Stat.Czxid, res[4].Stat.Mzxid)
		}
		if st, _ := c.Exists(ctx, root+"/a"); st != nil {
			t.Error("deleted in the multi but exists")
		}
	})

	t.Run("Failure", func(t *testing.T) {
		t.Parallel()
		ctx := testCtx(t)
		root := mkroot(t, c)
		res, err := c.Multi(ctx,
			client.CreateOp(root+"/a", nil, open, client.ModePersistent),
			client.CheckOp(root, 5),
			client.SetDataOp(root, []byte("x"), -1),
		)
		wantErr(t, "failed multi", err, wire.CodeBadVersion)
		if len(res) != 3 || res[0].Err != nil || !errors.Is(res[1].Err, wire.CodeBadVersion) ||
			!errors.Is(res[2].Err, wire.CodeRuntimeInconsistency) {
			t.Fatalf("results %+v", res)
		}
		if st, _ := c.Exists(ctx, root+"/a"); st != nil {
			t.Fatal("a failed multi applied its create")
		}
		res, err = c.Multi(ctx, client.DeleteOp(root+"/none", -1))
		wantErr(t, "multi delete missing", err, wire.CodeNoNode)
		if len(res) != 1 || !errors.Is(res[0].Err, wire.CodeNoNode) {
			t.Fatalf("results %+v", res)
		}
	})

	t.Run("Read", func(t *testing.T) {
		t.Parallel()
		ctx := testCtx(t)
		root := mkroot(t, c)
		must[string](t)(c.Create(ctx, root+"/a", []byte("A"), open, client.ModePersistent))
		res, err := c.MultiRead(ctx,
			client.GetDataOp(root+"/a"),
			client.GetChildrenOp(root),
			client.GetDataOp(root+"/none"),
		)
		ok(t, err)
		if len(res) != 3 {
			t.Fatalf("results %+v", res)
		}
		if res[0].Op != wire.OpGetData || string(res[0].Data) != "A" || res[0].Stat.DataLength != 1 || res[0].Err != nil {
			t.Errorf("getData result %+v", res[0])
		}
		if res[1].Op != wire.OpGetChildren || !slices.Equal(res[1].Children, []string{"a"}) {
			t.Errorf("getChildren result %+v", res[1])
		}
		if !errors.Is(res[2].Err, wire.CodeNoNode) {
			t.Errorf("missing node result %+v", res[2])
		}
	})

	t.Run("Kinds", func(t *testing.T) {
		t.Parallel()
		ctx := testCtx(t)
		_, err := c.Multi(ctx, client.GetDataOp("/"))
		wantErr(t, "read in multi", err, wire.CodeBadArguments)
		_, err = c.MultiRead(ctx, client.DeleteOp("/x", -1))
		wantErr(t, "write in multiRead", err, wire.CodeBadArguments)
		res, err := c.Multi(ctx)
		if err != nil || len(res) != 0 {
			t.Fatalf("empty multi = %v, %v", res, err)
		}
	})

	t.Run("Async", func(t *testing.T) {
		t.Parallel()
		root := mkroot(t, c)
		f1 := c.MultiAsync(client.CreateOp(root+"/a", nil, open, client.ModePersistent))
		f2 := c.MultiReadAsync(client.GetChildrenOp(root))
		if res, err := f1.Result(); err != nil || res[0].Path != root+"/a" {
			t.Fatalf("MultiAsync = %+v %v", res, err)
		}
		if res, err := f2.Result(); err != nil || !slices.Equal(res[0].Children, []string{"a"}) {
			t.Fatalf("MultiReadAsync = %+v %v", res, err)
		}
	})
}

// TestWatches covers one-shot and persistent watches and the delivery
// order guarantee.
func TestWatches(t *testing.T) {
	srv := start(t)
	c := connect(t, srv.Addr())
	other := connect(t, srv.Addr())

	t.Run("OneShot", func(t *testing.T) {
		t.Parallel()
		ctx := testCtx(t)
		root := mkroot(t, c)
		p := root + "/n"
		st, created, err := c.ExistsW(ctx, p)
		if err != nil || st != nil {
			t.Fatalf("ExistsW(missing) = %v, %v", st, err)
		}
		must[string](t)(other.Create(ctx, p, []byte("x"), open, client.ModePersistent))
		expectEvent(t, created, client.EventNodeCreated, p)
		closed(t, created, 0)

		_, _, changed, err := c.GetW(ctx, p)
		ok(t, err)
		_, _, kids, err := c.Children2W(ctx, root)
		ok(t, err)
		_, changed2, err := c.ExistsW(ctx, p) // a second data watch on the same path
		ok(t, err)
		must[client.Stat](t)(other.Set(ctx, p, []byte("y"), -1))
		ev := expectEvent(t, changed, client.EventNodeDataChanged, p)
		if ev.State != client.StateConnected {
			t.Errorf("event state %v", ev.State)
		}
		expectEvent(t, changed2, client.EventNodeDataChanged, p)
		closed(t, changed, 0)

		_, del, err := c.ChildrenW(ctx, p)
		ok(t, err)
		_, _, del2, err := c.GetW(ctx, p)
		ok(t, err)
		ok(t, other.Delete(ctx, p, -1))
		expectEvent(t, kids, client.EventNodeChildrenChanged, root)
		expectEvent(t, del, client.EventNodeDeleted, p)
		expectEvent(t, del2, client.EventNodeDeleted, p)

		// No watch is set by getData of a missing node.
		_, _, _, err = c.GetW(ctx, p)
		wantErr(t, "GetW missing", err, wire.CodeNoNode)
		wantErr(t, "no watch left", c.CheckWatches(ctx, p, client.WatchAny), wire.CodeNoWatcher)
	})

	t.Run("Order", func(t *testing.T) {
		t.Parallel()
		ctx := testCtx(t)
		root := mkroot(t, c)
		p := root + "/n"
		must[string](t)(c.Create(ctx, p, nil, open, client.ModePersistent))
		// Another client's change: the server queues the notification
		// before replying to that client, so any later reply on our
		// connection comes after it.
		_, _, ch, err := c.GetW(ctx, p)
		ok(t, err)
		must[client.Stat](t)(other.Set(ctx, p, []byte("1"), -1))
		data := must[[]byte](t)(func() ([]byte, error) { d, _, err := c.Get(ctx, p); return d, err }())
		readyEvent(t, ch, client.EventNodeDataChanged, p)
		if string(data) != "1" {
			t.Fatalf("read after the event = %q", data)
		}
		// Our own change: the event precedes our own setData reply.
		_, _, ch, err = c.GetW(ctx, p)
		ok(t, err)
		must[client.Stat](t)(c.Set(ctx, p, []byte("2"), -1))
		readyEvent(t, ch, client.EventNodeDataChanged, p)
		// And with pipelined async calls.
		_, _, ch, err = c.GetW(ctx, p)
		ok(t, err)
		f := c.SetAsync(p, []byte("3"), -1)
		g := c.GetAsync(p)
		if _, err := g.Result(); err != nil {
			t.Fatal(err)
		}
		if _, err := f.Result(); err != nil {
			t.Fatal(err)
		}
		readyEvent(t, ch, client.EventNodeDataChanged, p)
	})

	t.Run("Persistent", func(t *testing.T) {
		t.Parallel()
		ctx := testCtx(t)
		root := mkroot(t, c)
		p := root + "/n"
		w, err := c.AddWatch(ctx, p, false)
		ok(t, err)
		if w.Path() != p || w.Recursive() {
			t.Fatalf("watcher %q recursive %v", w.Path(), w.Recursive())
		}
		ok(t, c.CheckWatches(ctx, p, client.WatchPersistent))
		must[string](t)(other.Create(ctx, p, nil, open, client.ModePersistent))
		expectEvent(t, w.Events(), client.EventNodeCreated, p)
		for i := range 3 { // it keeps firing
			must[client.Stat](t)(other.Set(ctx, p, []byte{byte(i)}, -1))
			expectEvent(t, w.Events(), client.EventNodeDataChanged, p)
		}
		must[string](t)(other.Create(ctx, p+"/k", nil, open, client.ModePersistent))
		expectEvent(t, w.Events(), client.EventNodeChildrenChanged, p)
		must[client.Stat](t)(other.Set(ctx, p+"/k", nil, -1)) // a child's data: not for a non-recursive watch
		ok(t, other.Delete(ctx, p+"/k", -1))
		expectEvent(t, w.Events(), client.EventNodeChildrenChanged, p)
		ok(t, other.Delete(ctx, p, -1))
		expectEvent(t, w.Events(), client.EventNodeDeleted, p)
		must[string](t)(c.Sync(ctx, p))
		noEvent(t, w.Events())

		ok(t, w.Remove(ctx))
		closed(t, w.Events(), 0)
		wantErr(t, "Err after Remove", w.Err(), client.ErrWatchRemoved)
		wantErr(t, "server watch removed", c.CheckWatches(ctx, p, client.WatchPersistent), wire.CodeNoWatcher)
		ok(t, w.Remove(ctx)) // idempotent
	})

	t.Run("Recursive", func(t *testing.T) {
		t.Parallel()
		ctx := testCtx(t)
		root := mkroot(t, c)
		w, err := c.AddWatch(ctx, root, true)
		ok(t, err)
		w2, err := c.AddWatch(ctx, root, true) // a second watcher on the same path
		ok(t, err)
		must[string](t)(other.Create(ctx, root+"/a", nil, open, client.ModePersistent))
		must[string](t)(other.Create(ctx, root+"/a/b", nil, open, client.ModePersistent))
		must[client.Stat](t)(other.Set(ctx, root+"/a/b", []byte("x"), -1))
		ok(t, other.Delete(ctx, root+"/a/b", -1))
		for _, ch := range []<-chan client.Event{w.Events(), w2.Events()} {
			// No NodeChildrenChanged for recursive watches.
			expectEvent(t, ch, client.EventNodeCreated, root+"/a")
			expectEvent(t, ch, client.EventNodeCreated, root+"/a/b")
			expectEvent(t, ch, client.EventNodeDataChanged, root+"/a/b")
			expectEvent(t, ch, client.EventNodeDeleted, root+"/a/b")
		}
		// Removing one of two watchers is local; the other keeps firing.
		ok(t, w.Remove(ctx))
		closed(t, w.Events(), 0)
		ok(t, c.CheckWatches(ctx, root, client.WatchPersistentRecursive))
		must[client.Stat](t)(other.Set(ctx, root+"/a", nil, -1))
		expectEvent(t, w2.Events(), client.EventNodeDataChanged, root+"/a")
		ok(t, w2.Remove(ctx))
		closed(t, w2.Events(), 0)
		wantErr(t, "after last Remove", c.CheckWatches(ctx, root, client.WatchPersistentRecursive), wire.CodeNoWatcher)
	})

	t.Run("RemoveWatches", func(t *testing.T) {
		t.Parallel()
		ctx := testCtx(t)
		root := mkroot(t, c)
		_, _, data, err := c.GetW(ctx, root)
		ok(t, err)
		_, kids, err := c.ChildrenW(ctx, root)
		ok(t, err)
		w, err := c.AddWatch(ctx, root, false)
		ok(t, err)
		ok(t, c.CheckWatches(ctx, root, client.WatchData))
		ok(t, c.CheckWatches(ctx, root, client.WatchChildren))

		ok(t, c.RemoveWatches(ctx, root, client.WatchData))
		expectEvent(t, data, client.EventDataWatchRemoved, root)
		closed(t, data, 0)
		wantErr(t, "data watch gone", c.CheckWatches(ctx, root, client.WatchData), wire.CodeNoWatcher)
		ok(t, c.CheckWatches(ctx, root, client.WatchChildren))
		noEvent(t, kids)

		ok(t, c.RemoveWatches(ctx, root, client.WatchAny))
		expectEvent(t, kids, client.EventChildWatchRemoved, root)
		closed(t, kids, 0)
		closed(t, w.Events(), 0)
		wantErr(t, "watcher Err", w.Err(), client.ErrWatchRemoved)
		wantErr(t, "nothing left", c.RemoveWatches(ctx, root, client.WatchAny), wire.CodeNoWatcher)
	})
}

// TestReconnect restarts the server (same data directory) under a client
// with watches of every kind: the session survives, the watches are
// re-registered and fire.
func TestReconnect(t *testing.T) {
	srv := start(t)
	events := make(chan client.Event, 64)
	c := connect(t, srv.followerAddrs(), client.SessionTimeout(30*time.Second),
		client.EventCallback(func(ev client.Event) { events <- ev }))
	ctx := testCtx(t)
	root := mkroot(t, c)
	must[string](t)(c.Create(ctx, root+"/data", nil, open, client.ModePersistent))
	eph := must[string](t)(c.Create(ctx, root+"/eph", nil, open, client.ModeEphemeral))
	_, created, err := c.ExistsW(ctx, root+"/new")
	ok(t, err)
	_, _, changed, err := c.GetW(ctx, root+"/data")
	ok(t, err)
	_, kids, err := c.ChildrenW(ctx, root)
	ok(t, err)
	rec, err := c.AddWatch(ctx, root, true)
	ok(t, err)
	sid := c.SessionID()
	waitState(t, events, client.StateConnected)

	srv.Restart(c)
	waitState(t, events, client.StateDisconnected)
	waitState(t, events, client.StateConnected)
	if c.SessionID() != sid {
		t.Fatalf("session changed across the restart: %#x -> %#x", sid, c.SessionID())
	}
	// The persistent watcher heard about the gap.
	if ev := nextEvent(t, rec.Events()); ev.Type != client.EventSession || ev.State != client.StateDisconnected {
		t.Fatalf("watcher event %+v, want Disconnected", ev)
	}
	if ev := nextEvent(t, rec.Events()); ev.Type != client.EventSession || ev.State != client.StateConnected {
		t.Fatalf("watcher event %+v, want Connected", ev)
	}
	if st, err := c.Exists(ctx, eph); err != nil || st == nil {
		t.Fatalf("ephemeral after restart: %v %v", st, err)
	}

	other := connect(t, srv.Addr())
	must[string](t)(other.Create(ctx, root+"/new", nil, open, client.ModePersistent))
	must[client.Stat](t)(other.Set(ctx, root+"/data", []byte("x"), -1))
	expectEvent(t, created, client.EventNodeCreated, root+"/new")
	expectEvent(t, changed, client.EventNodeDataChanged, root+"/data")
	expectEvent(t, kids, client.EventNodeChildrenChanged, root)
	expectEvent(t, rec.Events(), client.EventNodeCreated, root+"/new")
	expectEvent(t, rec.Events(), client.EventNodeDataChanged, root+"/data")
}

// TestWatchCatchUp cuts the client off, changes watched nodes, and lets it
// back: SetWatches relative to the last zxid seen fires the missed
// changes at once.
func TestWatchCatchUp(t *testing.T) {
	srv := start(t)
	g := newGate()
	events := make(chan client.Event, 64)
	c := connect(t, srv.Addr(), client.Dialer(g.dial),
		client.EventCallback(func(ev client.Event) { events <- ev }))
	other := connect(t, srv.Addr())
	ctx := testCtx(t)
	root := mkroot(t, c)
	must[string](t)(c.Create(ctx, root+"/d", nil, open, client.ModePersistent))
	must[string](t)(c.Create(ctx, root+"/gone", nil, open, client.ModePersistent))
	_, _, changed, err := c.GetW(ctx, root+"/d")
	ok(t, err)
	_, deleted, err := c.ExistsW(ctx, root+"/gone")
	ok(t, err)
	_, created, err := c.ExistsW(ctx, root+"/new")
	ok(t, err)
	_, kids, err := c.ChildrenW(ctx, root)
	ok(t, err)
	_, _, still, err := c.GetW(ctx, root+"/gone") // unchanged below: stays armed... until the delete
	ok(t, err)
	waitState(t, events, client.StateConnected)

	g.Cut()
	waitState(t, events, client.StateDisconnected)
	// A call made while disconnected waits for the next connection.
	pending := c.GetAsync(root + "/d")
	must[client.Stat](t)(other.Set(ctx, root+"/d", []byte("x"), -1))
	ok(t, other.Delete(ctx, root+"/gone", -1))
	must[string](t)(other.Create(ctx, root+"/new", nil, open, client.ModePersistent))
	noEvent(t, changed)
	srv.settle(ctx, root+"/new", true) // c may come back on another member
	g.Heal()
	waitState(t, events, client.StateConnected)

	res, err := pending.Result()
	if err != nil || string(res.Data) != "x" {
		t.Fatalf("call queued while disconnected = %+v, %v", res, err)
	}
	// The catch-up events were sent before the SetWatches reply, which
	// precedes the queued call's reply.
	readyEvent(t, changed, client.EventNodeDataChanged, root+"/d")
	readyEvent(t, deleted, client.EventNodeDeleted, root+"/gone")
	readyEvent(t, created, client.EventNodeCreated, root+"/new")
	readyEvent(t, kids, client.EventNodeChildrenChanged, root)
	readyEvent(t, still, client.EventNodeDeleted, root+"/gone")
}

// TestSessionExpiry cuts the client off, takes its session over from a
// raw connection and closes it there; the client learns on reconnect that
// the session expired.
func TestSessionExpiry(t *testing.T) {
	srv := start(t)
	g := newGate()
	events := make(chan client.Event, 64)
	c := connect(t, srv.Addr(), client.Dialer(g.dial), client.EventCallback(func(ev client.Event) { events <- ev }))
	other := connect(t, srv.Addr())
	ctx := testCtx(t)
	root := mkroot(t, other)
	eph := must[string](t)(c.Create(ctx, root+"/eph", nil, open, client.ModeEphemeral))
	_, watch, err := c.ExistsW(ctx, root+"/x")
	ok(t, err)
	w, err := c.AddWatch(ctx, root, false)
	ok(t, err)
	waitState(t, events, client.StateConnected)

	g.Cut()
	waitState(t, events, client.StateDisconnected)
	raw := harness.Dial(t, srv.memberOf(c).Addr()) // a member that has seen c's zxid
	if _, err := raw.Connect(harness.ConnectRequest{LastZxidSeen: c.LastZxid(), TimeOut: 10000,
		SessionID: c.SessionID(), Passwd: c.SessionPassword()}); err != nil {
		t.Fatal(err)
	}
	if p, _ := raw.Call(wire.OpCloseSession, nil); p.Err != wire.CodeOK {
		t.Fatalf("closeSession: %v", p.Err)
	}
	// A call made while disconnected is queued, then fails with the
	// session.
	queued := c.ExistsAsync("/")
	srv.settle(ctx, eph, false) // the close, wherever c comes back
	g.Heal()
	waitState(t, events, client.StateExpired)
	if _, err := queued.Result(); !errors.Is(err, client.ErrSessionExpired) {
		t.Fatalf("queued call: %v", err)
	}
	if c.State() != client.StateExpired {
		t.Fatalf("state %v", c.State())
	}
	_, _, err = c.Get(ctx, "/")
	wantErr(t, "call after expiry", err, client.ErrSessionExpired)
	wantErr(t, "as a code", err, wire.CodeSessionExpired)
	if _, err := c.GetAsync("/").Result(); !errors.Is(err, client.ErrSessionExpired) {
		t.Fatalf("async call after expiry: %v", err)
	}
	ev := nextEvent(t, watch)
	if ev.Type != client.EventNotWatching || !errors.Is(ev.Err, client.ErrSessionExpired) || ev.Path != root+"/x" {
		t.Fatalf("one-shot watch got %+v", ev)
	}
	closed(t, watch, 0)
	closed(t, w.Events(), 1)
	wantErr(t, "watcher Err", w.Err(), client.ErrSessionExpired)
	closed(t, c.Events(), 64)
	if st, err := other.Exists(ctx, eph); err != nil || st != nil {
		t.Fatalf("ephemeral of the expired session: %v %v", st, err)
	}
	ok(t, c.Close())
}

// TestChroot runs a client rooted at a subtree.
func TestChroot(t *testing.T) {
	srv := start(t)
	top := connect(t, srv.Addr())
	ctx := testCtx(t)
	must[string](t)(top.Create(ctx, "/app", nil, open, client.ModePersistent))
	must[string](t)(top.Create(ctx, "/apple", nil, open, client.ModePersistent))

	for _, tc := range []struct {
		name string
		addr string
		opts []client.Option
	}{
		{"Suffix", srv.Addr() + "/app", nil},
		{"Option", srv.Addr(), []client.Option{client.Chroot("/app")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := connect(t, tc.addr, tc.opts...)
			base := "/" + tc.name
			if p := must[string](t)(c.Create(ctx, base, []byte("x"), open, client.ModePersistent)); p != base {
				t.Fatalf("Create = %q", p)
			}
			if d, _, err := top.Get(ctx, "/app"+base); err != nil || string(d) != "x" {
				t.Fatalf("seen from the top: %q %v", d, err)
			}
			seq := must[string](t)(c.Create(ctx, base+"/s-", nil, open, client.ModeEphemeralSequential))
			if seq != base+"/s-0000000000" {
				t.Fatalf("sequential = %q", seq)
			}
			// An ephemeral outside the chroot with a matching text prefix
			// is not reported.
			must[string](t)(top.Create(ctx, "/apple/"+tc.name, nil, open, client.ModePersistent))
			if eph := must[[]string](t)(c.GetEphemerals(ctx, "/")); !slices.Equal(eph, []string{seq}) {
				t.Fatalf("GetEphemerals = %v", eph)
			}
			kids := must[[]string](t)(c.Children(ctx, "/"))
			if !slices.Contains(kids, tc.name) {
				t.Fatalf("Children(/) = %v", kids)
			}
			if p := must[string](t)(c.Sync(ctx, base)); p != base {
				t.Fatalf("Sync = %q", p)
			}
			_, ch, err := c.ExistsW(ctx, base+"/w")
			ok(t, err)
			w, err := c.AddWatch(ctx, base, true)
			ok(t, err)
			must[string](t)(top.Create(ctx, "/app"+base+"/w", nil, open, client.ModePersistent))
			expectEvent(t, ch, client.EventNodeCreated, base+"/w")
			expectEvent(t, w.Events(), client.EventNodeCreated, base+"/w")
			res, err := c.Multi(ctx, client.CreateOp(base+"/m", nil, open, client.ModePersistent),
				client.CreateOp(base+"/c", nil, open, client.ModeContainer))
			ok(t, err)
			if res[0].Path != base+"/m" || res[1].Path != base+"/c" {
				t.Fatalf("multi paths %q %q", res[0].Path, res[1].Path)
			}
			if _, _, err := c.GetConfig(ctx); err != nil { // outside the chroot
				t.Fatal(err)
			}
			if st, err := c.Exists(ctx, "/"); err != nil || st == nil {
				t.Fatalf("Exists(/) under chroot: %v %v", st, err)
			}
		})
	}
}

// TestAuth covers digest auth, ACLs, re-sending credentials after a
// reconnect and refused credentials.
func TestAuth(t *testing.T) {
	srv := start(t)
	ctx := testCtx(t)

	t.Run("AddAuth", func(t *testing.T) {
		g := newGate()
		events := make(chan client.Event, 64)
		c := connect(t, srv.Addr(), client.Dialer(g.dial), client.EventCallback(func(ev client.Event) { events <- ev }))
		_, err := c.Create(ctx, "/creator", nil, client.CreatorACL(client.PermAll), client.ModePersistent)
		wantErr(t, "auth ACL without credentials", err, wire.CodeInvalidACL)
		ok(t, c.AddAuth(ctx, "digest", []byte("alice:secret")))
		must[string](t)(c.Create(ctx, "/alice", []byte("a"), client.CreatorACL(client.PermAll), client.ModePersistent))
		acl, _, err := c.GetACL(ctx, "/alice")
		ok(t, err)
		if !slices.Equal(acl, client.DigestACL(client.PermAll, "alice", "secret")) {
			t.Fatalf("ACL = %+v, want %+v", acl, client.DigestACL(client.PermAll, "alice", "secret"))
		}
		infos := must[[]client.ClientInfo](t)(c.WhoAmI(ctx))
		if !slices.Contains(infos, client.ClientInfo{AuthScheme: "digest", User: "alice"}) {
			t.Fatalf("WhoAmI = %+v", infos)
		}

		stranger := connect(t, srv.Addr())
		_, _, err = stranger.Get(ctx, "/alice")
		wantErr(t, "stranger reads", err, wire.CodeNoAuth)
		ok(t, stranger.AddAuth(ctx, "digest", []byte("alice:wrong")))
		_, _, err = stranger.Get(ctx, "/alice")
		wantErr(t, "wrong password", err, wire.CodeNoAuth)

		// After a reconnect the credential is re-sent before anything else.
		// The client may dial more than once: a member behind the client's
		// last zxid refuses the session and the client tries the next, as
		// ZooKeeper's does. What matters: on every later connection the
		// first request after the handshake is the credential, and the
		// read that needs it succeeds.
		waitState(t, events, client.StateConnected)
		before := g.Dials()
		g.Drop()
		waitState(t, events, client.StateDisconnected)
		waitState(t, events, client.StateConnected)
		if d, _, err := c.Get(ctx, "/alice"); err != nil || string(d) != "a" {
			t.Fatalf("read after reconnect: %q %v", d, err)
		}
		sent := g.Sent()
		if len(sent) <= before {
			t.Fatalf("%d dials after the drop, want a reconnect", len(sent)-before)
		}
		sessions := 0
		for i, frames := range sent[before:] {
			if len(frames) < 2 {
				continue // refused or closed before any request
			}
			sessions++
			d := wire.NewDecoder(frames[1])
			if xid, op := d.Int(), wire.Op(d.Int()); xid != wire.XidAuth || op != wire.OpAuth {
				t.Errorf("connection %d after the drop: first request xid %d op %d, want the credential (xid %d op %d)", i, xid, op, wire.XidAuth, wire.OpAuth)
			}
		}
		if sessions == 0 {
			t.Fatal("no connection after the drop carried a request")
		}
	})

	t.Run("Option", func(t *testing.T) {
		c := connect(t, srv.Addr(), client.AuthDigest(harness.SuperUser, harness.SuperPassword))
		// The super user bypasses every ACL.
		if d, _, err := c.Get(ctx, "/alice"); err != nil || string(d) != "a" {
			t.Fatalf("super reads: %q %v", d, err)
		}
	})

	t.Run("Refused", func(t *testing.T) {
		c := connect(t, srv.Addr())
		err := c.AddAuth(ctx, "nosuchscheme", []byte("x"))
		wantErr(t, "unknown scheme", err, wire.CodeAuthFailed)
		// The server drops the connection after refusing; the Conn
		// reconnects without the refused credential.
		testutil.Eventually(t, waitLimit, "usable after a refused AddAuth", func() bool {
			_, err := c.Exists(ctx, "/")
			return err == nil
		})

		cctx, cancel := context.WithTimeout(ctx, waitLimit)
		defer cancel()
		_, err = client.Connect(cctx, []string{srv.Addr()}, client.Auth("nosuchscheme", []byte("x")))
		wantErr(t, "Connect with a refused credential", err, client.ErrAuthFailed)
		wantErr(t, "as a code", err, wire.CodeAuthFailed)
	})
}

// TestAsyncFIFO pipelines thousands of mixed calls on one Conn and checks
// that they execute and complete in call order.
func TestAsyncFIFO(t *testing.T) {
	srv := start(t)
	c := connect(t, srv.Addr())
	ctx := testCtx(t)
	root := mkroot(t, c)
	must[string](t)(c.Create(ctx, root+"/v", nil, open, client.ModePersistent))

	const n = 3000
	type any3 interface{ Done() <-chan struct{} }
	futs := make([]any3, 0, n)
	var creates []*client.Future[string]
	var sets []*client.Future[client.Stat]
	var gets []*client.Future[client.GetResult]
	for i := range n {
		switch i % 3 {
		case 0:
			f := c.CreateAsync(root+"/s-", nil, open, client.ModePersistentSequential)
			creates = append(creates, f)
			futs = append(futs, f)
		case 1:
			f := c.SetAsync(root+"/v", []byte(fmt.Sprint(i)), -1)
			sets = append(sets, f)
			futs = append(futs, f)
		case 2:
			f := c.GetAsync(root + "/v")
			gets = append(gets, f)
			futs = append(futs, f)
		}
	}
	// Completion order: when a future is done, every earlier one is.
	for i, f := range futs {
		select {
		case <-f.Done():
		case <-ctx.Done():
			t.Fatalf("future %d not done", i)
		}
		for j := i - 1; j >= 0 && j >= i-64; j-- {
			select {
			case <-futs[j].Done():
			default:
				t.Fatalf("future %d done before future %d", i, j)
			}
		}
	}
	// Execution order: sequence numbers and versions follow call order,
	// and each read sees the write just before it.
	for k, f := range creates {
		p, err := f.Result()
		ok(t, err)
		// The parent's create counter also counted /v.
		if want := fmt.Sprintf("%s/s-%010d", root, k+1); p != want {
			t.Fatalf("create %d = %q, want %q", k, p, want)
		}
	}
	for k, f := range sets {
		st, err := f.Result()
		ok(t, err)
		if st.Version != int32(k+1) {
			t.Fatalf("set %d version %d", k, st.Version)
		}
	}
	for k, f := range gets {
		res, err := f.Result()
		ok(t, err)
		if want := fmt.Sprint(3*k + 1); string(res.Data) != want || res.Stat.Version != int32(k+1) {
			t.Fatalf("get %d = %q v%d, want %q v%d", k, res.Data, res.Stat.Version, want, k+1)
		}
	}
}

// TestConcurrent drives one Conn from many goroutines with blocking calls.
func TestConcurrent(t *testing.T) {
	srv := start(t)
	c := connect(t, srv.Addr())
	ctx := testCtx(t)
	root := mkroot(t, c)
	payload := bytes.Repeat([]byte("z"), 1024)
	must[string](t)(c.Create(ctx, root+"/n", payload, open, client.ModePersistent))
	var wg sync.WaitGroup
	errs := make(chan error, 32)
	for g := range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 100 {
				if g%8 == 0 && i%10 == 0 {
					if _, err := c.Set(ctx, root+"/n", payload, -1); err != nil {
						errs <- err
						return
					}
					continue
				}
				d, _, err := c.Get(ctx, root+"/n")
				if err != nil || !bytes.Equal(d, payload) {
					errs <- fmt.Errorf("get: %d bytes, %v", len(d), err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	_, st, err := c.Get(ctx, root+"/n")
	ok(t, err)
	if st.Version != 40 {
		t.Fatalf("version %d after 40 sets", st.Version)
	}
}

// TestClose checks that Close lets earlier calls finish, closes the
// session (ephemerals gone when it returns) and makes the Conn dead.
func TestClose(t *testing.T) {
	srv := start(t)
	other := connect(t, srv.Addr())
	ctx := testCtx(t)
	root := mkroot(t, other)

	c := connect(t, srv.Addr())
	eph := must[string](t)(c.Create(ctx, root+"/eph", nil, open, client.ModeEphemeral))
	_, watch, err := c.ExistsW(ctx, root+"/none")
	ok(t, err)
	w, err := c.AddWatch(ctx, root, true)
	ok(t, err)
	var futs []*client.Future[client.GetResult]
	for range 200 {
		futs = append(futs, c.GetAsync(root))
	}
	ok(t, c.Close())
	for i, f := range futs {
		if _, err := f.Result(); err != nil {
			t.Fatalf("call %d made before Close: %v", i, err)
		}
	}
	if st, err := other.Exists(ctx, eph); err != nil || st != nil {
		t.Fatalf("ephemeral after Close: %v %v", st, err)
	}
	if c.State() != client.StateClosed {
		t.Fatalf("state %v", c.State())
	}
	_, _, err = c.Get(ctx, "/")
	wantErr(t, "Get after Close", err, client.ErrClosed)
	wantErr(t, "Get after Close", err, wire.CodeSessionExpired)
	if _, err := c.CreateAsync("/x", nil, open, client.ModePersistent).Result(); !errors.Is(err, client.ErrClosed) {
		t.Fatalf("async after Close: %v", err)
	}
	ev := nextEvent(t, watch)
	if ev.Type != client.EventNotWatching || !errors.Is(ev.Err, client.ErrClosed) {
		t.Fatalf("watch after Close: %+v", ev)
	}
	closed(t, w.Events(), 1) // it may have seen the ephemeral go
	wantErr(t, "watcher Err", w.Err(), client.ErrClosed)
	var last client.Event
	for ev := range c.Events() {
		last = ev
	}
	if last.State != client.StateClosed {
		t.Fatalf("last session event %+v", last)
	}
	ok(t, c.Close())
}
