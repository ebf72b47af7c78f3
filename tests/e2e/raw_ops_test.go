package e2e

import (
	"slices"
	"testing"

	"github.com/go-zookeeper/zk"

	"github.com/corral-db/corral/tests/harness"
	"github.com/corral-db/corral/wire"
)

var openACL = wire.OpenACLUnsafe

// TestRawOps covers, with the raw-socket client, the operations go-zk does
// not expose and the exact reply shapes (PROTOCOL §5, §9, §10, §12).
func TestRawOps(t *testing.T) {
	srv := env.Start(t)
	admin, _ := connect(t, srv)

	t.Run("Create2Stat", func(t *testing.T) {
		t.Parallel()
		base := root(t, admin)
		r := harness.DialSession(t, srv.Addr(), 30000)
		pst, _, _ := r.Exists(base, false)

		name, st, p := r.Create2(base+"/n", []byte("hello"), openACL, wire.ModePersistent)
		if p.Err != wire.CodeOK || name != base+"/n" {
			t.Fatalf("create2: %q err %v", name, p.Err)
		}
		if st.Czxid != p.Zxid || st.Mzxid != p.Zxid || st.Pzxid != p.Zxid ||
			st.Version != 0 || st.Cversion != 0 || st.Aversion != 0 || st.EphemeralOwner != 0 ||
			st.DataLength != 5 || st.NumChildren != 0 || st.Ctime == 0 || st.Ctime != st.Mtime {
			t.Errorf("create2 stat = %+v (reply zxid %#x)", st, p.Zxid)
		}
		st2, _, _ := r.Exists(base, false)
		if st2.Cversion != pst.Cversion+1 || st2.Pzxid != p.Zxid || st2.NumChildren != 1 || st2.Mzxid != pst.Mzxid {
			t.Errorf("parent after create2 = %+v (before %+v)", st2, pst)
		}

		_, est, p := r.Create2(base+"/e", nil, openACL, wire.ModeEphemeral)
		if p.Err != wire.CodeOK || est.EphemeralOwner != r.SessionID || est.DataLength != 0 {
			t.Errorf("create2 ephemeral: err %v stat %+v", p.Err, est)
		}
		// Null data (length -1) is accepted and reads back empty.
		data, _, p := r.GetData(base+"/e", false)
		if p.Err != wire.CodeOK || len(data) != 0 {
			t.Errorf("getData of null-data node = %q err %v", data, p.Err)
		}
		name, _, p = r.Create2(base+"/s-", nil, openACL, wire.ModeEphemeralSequential)
		if p.Err != wire.CodeOK || name != base+"/s-0000000002" {
			t.Errorf("create2 ephemeral sequential = %q err %v", name, p.Err)
		}

		// Error precedence and error replies have empty bodies.
		cases := []struct {
			path  string
			acl   []wire.ACL
			flags int32
			want  wire.Code
		}{
			// An invalid path is BadArguments only once its parent exists:
			// ZooKeeper looks the parent up (NoNode) before it validates
			// the full path, since a sequential suffix is appended in
			// between (PrepRequestProcessor).
			{base + "/n/", openACL, 0, wire.CodeBadArguments},
			{base + "/\x01x", openACL, 0, wire.CodeBadArguments},
			{base + "/bad/", openACL, 0, wire.CodeNoNode},
			{base + "//x", openACL, 0, wire.CodeNoNode},
			{base + "/missing/x", nil, 0, wire.CodeInvalidACL},
			{base + "/x", nil, 0, wire.CodeInvalidACL},
			{base + "/x", []wire.ACL{{Perms: 31, ID: wire.Id{Scheme: "nope", ID: "x"}}}, 0, wire.CodeInvalidACL},
			{base + "/missing/x", openACL, 0, wire.CodeNoNode},
			{base + "/n", openACL, 0, wire.CodeNodeExists},
			{base + "/e/x", openACL, 0, wire.CodeNoChildrenForEphemerals},
			{base + "/x", openACL, 7, wire.CodeBadArguments},
		}
		for _, c := range cases {
			_, _, p := r.Create2(c.path, nil, c.acl, c.flags)
			if p.Err != c.want || len(p.Body) != 0 {
				t.Errorf("create2 %s flags %d: err %v body %d bytes, want %v, empty", c.path, c.flags, p.Err, len(p.Body), c.want)
			}
		}
		// A TTL create with a non-TTL mode, and a TTL of 0, are bad arguments.
		p, _ = r.Call(wire.OpCreateTTL, harness.CreateTTLBody(base+"/t", nil, openACL, wire.ModePersistent, 1000))
		if p.Err != wire.CodeBadArguments {
			t.Errorf("createTTL with mode 0: %v", p.Err)
		}
		p, _ = r.Call(wire.OpCreateTTL, harness.CreateTTLBody(base+"/t", nil, openACL, wire.ModePersistentWithTTL, 0))
		if p.Err != wire.CodeBadArguments {
			t.Errorf("createTTL with ttl 0: %v", p.Err)
		}
	})

	t.Run("GetChildrenOp8", func(t *testing.T) {
		t.Parallel()
		base := root(t, admin)
		r := harness.DialSession(t, srv.Addr(), 30000)
		for _, n := range []string{"b", "a"} {
			r.Create2(base+"/"+n, nil, openACL, 0)
		}
		kids, p := r.GetChildren(base, false)
		slices.Sort(kids)
		if p.Err != wire.CodeOK || !slices.Equal(kids, []string{"a", "b"}) {
			t.Errorf("getChildren = %q err %v", kids, p.Err)
		}
		_, p = r.GetChildren(base+"/zz", false)
		if p.Err != wire.CodeNoNode || len(p.Body) != 0 {
			t.Errorf("getChildren missing: err %v body %d", p.Err, len(p.Body))
		}
	})

	t.Run("MultiResults", func(t *testing.T) {
		t.Parallel()
		base := root(t, admin)
		r := harness.DialSession(t, srv.Addr(), 30000)
		r.Create2(base+"/x", []byte("x"), openACL, 0)

		res, p := r.Multi(wire.OpMulti, []harness.MultiOp{
			{Op: wire.OpCreate, Body: harness.CreateBody(base+"/a", nil, openACL, 0)},
			{Op: wire.OpCreate2, Body: harness.CreateBody(base+"/b", []byte("bb"), openACL, 0)},
			{Op: wire.OpSetData, Body: harness.SetDataBody(base+"/x", []byte("y"), 0)},
			{Op: wire.OpCheck, Body: harness.PathIntBody(base+"/x", 1)},
			{Op: wire.OpDelete, Body: harness.PathIntBody(base+"/a", -1)},
		})
		if p.Err != wire.CodeOK || len(res) != 5 {
			t.Fatalf("multi: err %v, %d results", p.Err, len(res))
		}
		types := []int32{1, 15, 5, 13, 2}
		for i, rr := range res {
			if rr.Type != types[i] || rr.Err != 0 {
				t.Errorf("result %d: type %d err %v, want type %d err 0", i, rr.Type, rr.Err, types[i])
			}
		}
		// All ops of a multi share one zxid.
		if res[0].Path != base+"/a" || res[1].Path != base+"/b" || res[1].Stat.Czxid != p.Zxid ||
			res[2].Stat.Mzxid != p.Zxid || res[2].Stat.Version != 1 || res[1].Stat.DataLength != 2 {
			t.Errorf("multi results = %+v (zxid %#x)", res, p.Zxid)
		}

		before := p.Zxid
		res, p = r.Multi(wire.OpMulti, []harness.MultiOp{
			{Op: wire.OpCreate, Body: harness.CreateBody(base+"/c", nil, openACL, 0)},
			{Op: wire.OpCheck, Body: harness.PathIntBody(base+"/x", 0)},
			{Op: wire.OpDelete, Body: harness.PathIntBody(base+"/b", -1)},
		})
		// The header error is 0; ops before the failure report 0, the failing
		// op its code, the ops after it -2 (PROTOCOL §9).
		if p.Err != wire.CodeOK || len(res) != 3 {
			t.Fatalf("failed multi: header err %v, %d results", p.Err, len(res))
		}
		want := []wire.Code{wire.CodeOK, wire.CodeBadVersion, wire.CodeRuntimeInconsistency}
		for i, rr := range res {
			if rr.Type != int32(wire.OpError) || rr.Err != want[i] || rr.ErrBody != want[i] {
				t.Errorf("failed multi result %d: type %d err %v body %v, want -1 %v", i, rr.Type, rr.Err, rr.ErrBody, want[i])
			}
		}
		// A failed multi consumes a zxid but applies nothing.
		if p.Zxid <= before {
			t.Errorf("failed multi zxid %#x not after %#x", p.Zxid, before)
		}
		if _, ep, _ := r.Exists(base+"/c", false); ep.Err != wire.CodeNoNode {
			t.Errorf("created node of failed multi exists (err %v)", ep.Err)
		}
		if _, ep, _ := r.Exists(base+"/b", false); ep.Err != wire.CodeOK {
			t.Errorf("deleted node of failed multi is gone (err %v)", ep.Err)
		}
	})

	t.Run("MultiRead", func(t *testing.T) {
		t.Parallel()
		base := root(t, admin)
		r := harness.DialSession(t, srv.Addr(), 30000)
		r.Create2(base+"/d", []byte("data"), openACL, 0)
		r.Create2(base+"/d/k", nil, openACL, 0)
		res, p := r.Multi(wire.OpMultiRead, []harness.MultiOp{
			{Op: wire.OpGetData, Body: harness.PathWatchBody(base+"/d", false)},
			{Op: wire.OpGetChildren, Body: harness.PathWatchBody(base+"/d", false)},
			{Op: wire.OpGetData, Body: harness.PathWatchBody(base+"/missing", false)},
			{Op: wire.OpGetChildren, Body: harness.PathWatchBody(base+"/d/k", false)},
		})
		if p.Err != wire.CodeOK || len(res) != 4 {
			t.Fatalf("multiRead: err %v, %d results", p.Err, len(res))
		}
		if res[0].Type != int32(wire.OpGetData) || string(res[0].Data) != "data" || res[0].Stat.NumChildren != 1 {
			t.Errorf("multiRead getData = %+v", res[0])
		}
		if res[1].Type != int32(wire.OpGetChildren) || !slices.Equal(res[1].Children, []string{"k"}) {
			t.Errorf("multiRead getChildren = %+v", res[1])
		}
		// A failed read is an error result; the others still succeed.
		if res[2].Type != int32(wire.OpError) || res[2].Err != wire.CodeNoNode {
			t.Errorf("multiRead missing = %+v", res[2])
		}
		if res[3].Type != int32(wire.OpGetChildren) || len(res[3].Children) != 0 {
			t.Errorf("multiRead leaf children = %+v", res[3])
		}
	})

	t.Run("EphemeralsAndCounts", func(t *testing.T) {
		t.Parallel()
		base := root(t, admin)
		r := harness.DialSession(t, srv.Addr(), 30000)
		other := harness.DialSession(t, srv.Addr(), 30000)
		r.Create2(base+"/p", nil, openACL, 0)
		r.Create2(base+"/p/e1", nil, openACL, wire.ModeEphemeral)
		r.Create2(base+"/p/q", nil, openACL, 0)
		r.Create2(base+"/p/q/e2", nil, openACL, wire.ModeEphemeral)
		r.Create2(base+"/f", nil, openACL, wire.ModeEphemeral)
		other.Create2(base+"/p/o", nil, openACL, wire.ModeEphemeral)

		eph, p := r.GetEphemerals(base + "/p")
		slices.Sort(eph)
		if p.Err != wire.CodeOK || !slices.Equal(eph, []string{base + "/p/e1", base + "/p/q/e2"}) {
			t.Errorf("getEphemerals(%s/p) = %q err %v", base, eph, p.Err)
		}
		// The prefix is a string prefix, not a path: base+"/" also covers /f.
		eph, _ = r.GetEphemerals(base + "/")
		if len(eph) != 3 {
			t.Errorf("getEphemerals(%s/) = %q, want 3 paths", base, eph)
		}
		// "/" lists all of this session's ephemerals, none of the other's.
		eph, _ = r.GetEphemerals("/")
		slices.Sort(eph)
		if !slices.Equal(eph, []string{base + "/f", base + "/p/e1", base + "/p/q/e2"}) {
			t.Errorf("getEphemerals(/) = %q", eph)
		}

		n, p := r.GetAllChildrenNumber(base)
		if p.Err != wire.CodeOK || n != 6 {
			t.Errorf("getAllChildrenNumber(%s) = %d err %v, want 6", base, n, p.Err)
		}
		n, _ = r.GetAllChildrenNumber(base + "/p/e1")
		if n != 0 {
			t.Errorf("getAllChildrenNumber(leaf) = %d", n)
		}
		_, p = r.GetAllChildrenNumber(base + "/missing")
		if p.Err != wire.CodeNoNode {
			t.Errorf("getAllChildrenNumber(missing): %v", p.Err)
		}
	})

	t.Run("WhoAmIAndAuth", func(t *testing.T) {
		t.Parallel()
		r := harness.DialSession(t, srv.Addr(), 30000)
		infos, p := r.WhoAmI()
		if p.Err != wire.CodeOK || !slices.Equal(infos, []harness.ClientInfo{{AuthScheme: "ip", User: "127.0.0.1"}}) {
			t.Errorf("whoAmI = %+v err %v", infos, p.Err)
		}
		// Auth replies echo the xid (-4 here) and carry zxid 0.
		p = r.Auth("digest", []byte("alice:secret"))
		if p.Err != wire.CodeOK || p.Zxid != 0 || len(p.Body) != 0 {
			t.Errorf("auth reply: %+v", p)
		}
		// An auth with an ordinary xid (as go-zk sends it) is echoed too.
		xid := r.Send(wire.OpAuth, harness.AuthBody("digest", []byte("bob:pw")))
		if p, _ := r.Await(xid); p.Err != wire.CodeOK {
			t.Errorf("auth with xid %d: %v", xid, p.Err)
		}
		infos, _ = r.WhoAmI()
		want := []harness.ClientInfo{{AuthScheme: "ip", User: "127.0.0.1"}, {AuthScheme: "digest", User: "alice"}, {AuthScheme: "digest", User: "bob"}}
		if !sameInfos(infos, want) {
			t.Errorf("whoAmI after auth = %+v, want %+v", infos, want)
		}

		// An unknown scheme fails the auth and closes the connection.
		bad := harness.DialSession(t, srv.Addr(), 30000)
		p = bad.Auth("nosuchscheme", []byte("x"))
		if p.Err != wire.CodeAuthFailed {
			t.Errorf("auth with unknown scheme: %v", p.Err)
		}
		bad.ExpectClosed()
	})

	t.Run("PersistentWatch", func(t *testing.T) {
		t.Parallel()
		base := root(t, admin)
		r := harness.DialSession(t, srv.Addr(), 30000)
		p := r.AddWatch(base+"/w", wire.AddWatchPersistent)
		if p.Err != wire.CodeOK || len(p.Body) != 4 || p.Decoder().Int() != 0 {
			t.Fatalf("addWatch persistent: err %v body %x (want ErrorResponse{0})", p.Err, p.Body)
		}
		// Changes by another client; the persistent watch fires every time.
		try(admin.Create(base+"/w", nil, 0, zk.WorldACL(zk.PermAll))).must(t)
		try(admin.Set(base+"/w", []byte("1"), -1)).must(t)
		try(admin.Set(base+"/w", []byte("2"), -1)).must(t)
		try(admin.Create(base+"/w/kid", nil, 0, zk.WorldACL(zk.PermAll))).must(t)
		try(admin.Create(base+"/w/kid/grandkid", nil, 0, zk.WorldACL(zk.PermAll))).must(t)
		mustOK(t, admin.Delete(base+"/w/kid/grandkid", -1))
		mustOK(t, admin.Delete(base+"/w/kid", -1))
		mustOK(t, admin.Delete(base+"/w", -1))
		// A round trip after the changes: its reply follows every event.
		_, _, evs := r.Exists(base, false)
		want := []harness.Event{
			{Type: wire.EventNodeCreated, Path: base + "/w"},
			{Type: wire.EventNodeDataChanged, Path: base + "/w"},
			{Type: wire.EventNodeDataChanged, Path: base + "/w"},
			{Type: wire.EventNodeChildrenChanged, Path: base + "/w"},
			{Type: wire.EventNodeChildrenChanged, Path: base + "/w"},
			{Type: wire.EventNodeDeleted, Path: base + "/w"},
		}
		checkEvents(t, "persistent", evs, want)

		// removeWatches type 4 removes it; afterwards checkWatches says none.
		if p, _ := r.Call(wire.OpCheckWatches, harness.PathIntBody(base+"/w", wire.WatcherPersistent)); p.Err != wire.CodeOK {
			t.Errorf("checkWatches persistent: %v", p.Err)
		}
		if p, _ := r.Call(wire.OpRemoveWatches, harness.PathIntBody(base+"/w", wire.WatcherPersistent)); p.Err != wire.CodeOK {
			t.Errorf("removeWatches persistent: %v", p.Err)
		}
		if p, _ := r.Call(wire.OpCheckWatches, harness.PathIntBody(base+"/w", wire.WatcherPersistent)); p.Err != wire.CodeNoWatcher {
			t.Errorf("checkWatches after remove: %v, want %v", p.Err, wire.CodeNoWatcher)
		}
	})

	t.Run("PersistentRecursiveWatch", func(t *testing.T) {
		t.Parallel()
		base := root(t, admin)
		r := harness.DialSession(t, srv.Addr(), 30000)
		if p := r.AddWatch(base, wire.AddWatchPersistentRecursive); p.Err != wire.CodeOK {
			t.Fatalf("addWatch recursive: %v", p.Err)
		}
		try(admin.Create(base+"/a", nil, 0, zk.WorldACL(zk.PermAll))).must(t)
		try(admin.Create(base+"/a/b", nil, 0, zk.WorldACL(zk.PermAll))).must(t)
		try(admin.Set(base+"/a/b", []byte("x"), -1)).must(t)
		mustOK(t, admin.Delete(base+"/a/b", -1))
		try(admin.Set(base, []byte("r"), -1)).must(t)
		_, _, evs := r.Exists("/", false)
		// Events for the node and every descendant, never NodeChildrenChanged.
		want := []harness.Event{
			{Type: wire.EventNodeCreated, Path: base + "/a"},
			{Type: wire.EventNodeCreated, Path: base + "/a/b"},
			{Type: wire.EventNodeDataChanged, Path: base + "/a/b"},
			{Type: wire.EventNodeDeleted, Path: base + "/a/b"},
			{Type: wire.EventNodeDataChanged, Path: base},
		}
		checkEvents(t, "persistent recursive", evs, want)
		if p, _ := r.Call(wire.OpRemoveWatches, harness.PathIntBody(base, wire.WatcherPersistentRecursive)); p.Err != wire.CodeOK {
			t.Errorf("removeWatches recursive: %v", p.Err)
		}
	})

	t.Run("CheckRemoveWatches", func(t *testing.T) {
		t.Parallel()
		base := root(t, admin)
		r := harness.DialSession(t, srv.Addr(), 30000)
		r.Create2(base+"/n", nil, openACL, 0)
		for _, typ := range []int32{wire.WatcherChildren, wire.WatcherData, wire.WatcherAny} {
			if p, _ := r.Call(wire.OpCheckWatches, harness.PathIntBody(base+"/n", typ)); p.Err != wire.CodeNoWatcher {
				t.Errorf("checkWatches type %d with no watch: %v, want %v", typ, p.Err, wire.CodeNoWatcher)
			}
			if p, _ := r.Call(wire.OpRemoveWatches, harness.PathIntBody(base+"/n", typ)); p.Err != wire.CodeNoWatcher {
				t.Errorf("removeWatches type %d with no watch: %v, want %v", typ, p.Err, wire.CodeNoWatcher)
			}
		}
		r.GetData(base+"/n", true)
		if p, _ := r.Call(wire.OpCheckWatches, harness.PathIntBody(base+"/n", wire.WatcherData)); p.Err != wire.CodeOK {
			t.Errorf("checkWatches data after getData watch: %v", p.Err)
		}
		if p, _ := r.Call(wire.OpCheckWatches, harness.PathIntBody(base+"/n", wire.WatcherChildren)); p.Err != wire.CodeNoWatcher {
			t.Errorf("checkWatches children with only a data watch: %v", p.Err)
		}
		if p, _ := r.Call(wire.OpRemoveWatches, harness.PathIntBody(base+"/n", wire.WatcherData)); p.Err != wire.CodeOK {
			t.Errorf("removeWatches data: %v", p.Err)
		}
		// The removed watch no longer fires: a change, then a round trip
		// whose reply would follow any notification.
		try(admin.Set(base+"/n", []byte("x"), -1)).must(t)
		if _, _, evs := r.Exists(base, false); len(evs) != 0 {
			t.Errorf("removed watch fired: %+v", evs)
		}
		r.GetChildren(base+"/n", true)
		if p, _ := r.Call(wire.OpRemoveWatches, harness.PathIntBody(base+"/n", wire.WatcherAny)); p.Err != wire.CodeOK {
			t.Errorf("removeWatches any: %v", p.Err)
		}
	})

	t.Run("WatchBeforeReply", func(t *testing.T) {
		t.Parallel()
		base := root(t, admin)
		// A watches /p; B changes it; A's next request gets the
		// notification first, then the reply (PROTOCOL §4 reply ordering).
		a := harness.DialSession(t, srv.Addr(), 30000)
		a.Create2(base+"/p", []byte("0"), openACL, 0)
		if _, p, _ := a.Exists(base+"/p", true); p.Err != wire.CodeOK {
			t.Fatalf("exists: %v", p.Err)
		}
		st := try(admin.Set(base+"/p", []byte("1"), -1)).must(t)

		xid := a.Send(wire.OpExists, harness.PathWatchBody(base+"/p", false))
		first := a.MustReadPacket()
		if !first.IsNotification() {
			t.Fatalf("first frame after the change is xid %d, want the notification", first.Xid)
		}
		ev, err := first.Event()
		if err != nil || ev.Type != wire.EventNodeDataChanged || ev.Path != base+"/p" || ev.State != wire.StateSyncConnected {
			t.Errorf("notification = %+v (%v)", ev, err)
		}
		reply := a.MustReadPacket()
		if reply.Xid != xid || reply.Err != wire.CodeOK {
			t.Fatalf("second frame: xid %d err %v, want the exists reply xid %d", reply.Xid, reply.Err, xid)
		}
		var got wire.Stat
		d := reply.Decoder()
		d.Stat(&got)
		if got.Mzxid != st.Mzxid || got.Version != 1 {
			t.Errorf("exists after change: %+v, want mzxid %#x", got, st.Mzxid)
		}
		if reply.Zxid < st.Mzxid {
			t.Errorf("reply zxid %#x older than the change %#x", reply.Zxid, st.Mzxid)
		}

		// A client that watches and then writes itself gets the
		// notification before its own write's reply.
		a.GetData(base+"/p", true)
		xid = a.Send(wire.OpSetData, harness.SetDataBody(base+"/p", []byte("2"), -1))
		if f := a.MustReadPacket(); !f.IsNotification() {
			t.Fatalf("own write: first frame xid %d, want the notification", f.Xid)
		}
		if f := a.MustReadPacket(); f.Xid != xid || f.Err != wire.CodeOK {
			t.Fatalf("own write: second frame xid %d err %v, want setData reply %d", f.Xid, f.Err, xid)
		}
	})

	t.Run("SetWatchesCatchUp", func(t *testing.T) {
		t.Parallel()
		base := root(t, admin)
		r := harness.DialSession(t, srv.Addr(), 30000)
		r.Create2(base+"/changed", nil, openACL, 0)
		r.Create2(base+"/same", nil, openACL, 0)
		r.Create2(base+"/gone", nil, openACL, 0)
		r.Create2(base+"/kids", nil, openACL, 0)
		_, p, _ := r.Exists(base, false)
		rel := p.Zxid
		try(admin.Set(base+"/changed", []byte("x"), -1)).must(t)
		mustOK(t, admin.Delete(base+"/gone", -1))
		try(admin.Create(base+"/kids/k", nil, 0, zk.WorldACL(zk.PermAll))).must(t)
		try(admin.Create(base+"/born", nil, 0, zk.WorldACL(zk.PermAll))).must(t)

		// A new connection re-arms watches as of rel: immediate events for
		// what changed since, with zxid -1, before the SetWatches reply
		// (sent here with the special xid -8; the reply echoes it).
		r.SendXid(wire.XidSetWatches, wire.OpSetWatches, harness.SetWatchesBody(rel,
			[]string{base + "/changed", base + "/same", base + "/gone"},
			[]string{base + "/born", base + "/unborn"},
			[]string{base + "/kids"}))
		reply, evs := r.Await(wire.XidSetWatches)
		if reply.Err != wire.CodeOK {
			t.Fatalf("setWatches: %v", reply.Err)
		}
		want := []harness.Event{
			{Type: wire.EventNodeDataChanged, Path: base + "/changed"},
			{Type: wire.EventNodeDeleted, Path: base + "/gone"},
			{Type: wire.EventNodeCreated, Path: base + "/born"},
			{Type: wire.EventNodeChildrenChanged, Path: base + "/kids"},
		}
		checkEventSet(t, "setWatches catch-up", evs, want)
		for _, ev := range evs {
			if ev.Zxid != -1 {
				t.Errorf("catch-up event %+v: zxid %d, want -1", ev, ev.Zxid)
			}
		}
		// The watches still armed fire later with the change's zxid.
		st := try(admin.Set(base+"/same", []byte("y"), -1)).must(t)
		try(admin.Create(base+"/unborn", nil, 0, zk.WorldACL(zk.PermAll))).must(t)
		_, _, evs = r.Exists(base, false)
		checkEventSet(t, "armed by setWatches", evs, []harness.Event{
			{Type: wire.EventNodeDataChanged, Path: base + "/same"},
			{Type: wire.EventNodeCreated, Path: base + "/unborn"},
		})
		for _, ev := range evs {
			if ev.Path == base+"/same" && ev.Zxid != st.Mzxid {
				t.Errorf("event %+v: zxid %#x, want the change's %#x", ev, ev.Zxid, st.Mzxid)
			}
		}
	})

	t.Run("UnknownOpcode", func(t *testing.T) {
		t.Parallel()
		r := harness.DialSession(t, srv.Addr(), 30000)
		// Pings are answered with xid -2 and no body.
		r.SendXid(wire.XidPing, wire.OpPing, nil)
		if p, _ := r.Await(wire.XidPing); p.Err != wire.CodeOK || len(p.Body) != 0 || p.Zxid <= 0 {
			t.Errorf("ping reply: %+v", p)
		}
		// ZooKeeper answers an unknown opcode with Unimplemented (zxid -1,
		// no body) and then closes the connection (its
		// UnimplementedRequestProcessor calls sendCloseSession, which drops
		// the connection, not the session).
		p, _ := r.Call(wire.Op(999), func(e *wire.Encoder) { e.String("/") })
		if p.Err != wire.CodeUnimplemented || len(p.Body) != 0 || p.Zxid != -1 {
			t.Errorf("unknown opcode: err %v zxid %d body %d bytes, want %v, -1, empty", p.Err, p.Zxid, len(p.Body), wire.CodeUnimplemented)
		}
		if frames := r.ExpectClosed(); len(frames) != 0 {
			t.Errorf("%d frames after the Unimplemented reply", len(frames))
		}
		// The session survives: a new connection resumes it.
		again := harness.Dial(t, srv.Addr())
		resp, err := again.Connect(harness.ConnectRequest{LastZxidSeen: r.LastZxid, TimeOut: 30000, SessionID: r.SessionID, Passwd: r.Passwd})
		if err != nil || resp.SessionID != r.SessionID || resp.TimeOut <= 0 {
			t.Fatalf("resume after unknown opcode: %+v %v", resp, err)
		}
		if _, p, _ := again.Exists("/", false); p.Err != wire.CodeOK {
			t.Errorf("exists on the resumed session: %v", p.Err)
		}
	})
}

func sameInfos(got, want []harness.ClientInfo) bool {
	g := slices.Clone(got)
	w := slices.Clone(want)
	less := func(a, b harness.ClientInfo) int {
		if a.AuthScheme+a.User < b.AuthScheme+b.User {
			return -1
		}
		return 1
	}
	slices.SortFunc(g, less)
	slices.SortFunc(w, less)
	return slices.Equal(g, w)
}

// checkEvents compares events by type and path, in order.
func checkEvents(t testing.TB, what string, got, want []harness.Event) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d events %+v, want %d %+v", what, len(got), got, len(want), want)
		return
	}
	for i := range got {
		if got[i].Type != want[i].Type || got[i].Path != want[i].Path {
			t.Errorf("%s: event %d = %d %s, want %d %s", what, i, got[i].Type, got[i].Path, want[i].Type, want[i].Path)
		}
		if got[i].State != wire.StateSyncConnected {
			t.Errorf("%s: event %d state %d", what, i, got[i].State)
		}
	}
}

// checkEventSet compares events by type and path, in any order.
func checkEventSet(t testing.TB, what string, got, want []harness.Event) {
	t.Helper()
	key := func(e harness.Event) string { return string(rune('0'+e.Type)) + e.Path }
	g, w := make([]string, 0, len(got)), make([]string, 0, len(want))
	for _, e := range got {
		g = append(g, key(e))
	}
	for _, e := range want {
		w = append(w, key(e))
	}
	slices.Sort(g)
	slices.Sort(w)
	if !slices.Equal(g, w) {
		t.Errorf("%s: events %+v, want (any order) %+v", what, got, want)
	}
}
